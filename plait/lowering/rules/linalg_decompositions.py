"""Lowering of ``cholesky`` and ``triangular_solve`` to jaxlib's LAPACK kernels.

As JAX 0.10.2 lowers them on CPU: a ``stablehlo.custom_call`` to the FFI handler
(``lapack_?potrf_ffi``, ``lapack_?trsm_ffi``), its attributes in
``mhlo.backend_config`` (LAPACK's character flags as ``ui8``), matrices in
column-major layout (``operand_layouts``/``result_layouts``), leading dimensions as
the batch the kernel loops over, the factored or solved operand's buffer reused for
the result (``output_operand_aliases``).  A Cholesky factorization that fails
(``info != 0``) gives a matrix of NaNs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from plait.ir import dtypes as dt
from plait.ir import primitives as P
from plait.ir.avals import ShapedArray, shaped
from plait.lowering.attributes import aliases_attr, layouts_attr
from plait.lowering.emitter import FuncEmitter, Value, i64_array, tensor_type
from plait.lowering.lapack import target_name
from plait.lowering.lower import LoweringContext
from plait.lowering.rules._util import compare, register

__all__ = ["lapack_call", "column_major"]


def column_major(ndim: int) -> tuple[int, ...]:
    """The layout (minor to major) of a batch of Fortran-order matrices."""
    return (ndim - 2, ndim - 1) + tuple(range(ndim - 3, -1, -1))


def _layouts(avals: Sequence[ShapedArray], matrix_rank: int) -> str:
    # As JAX: the arrays of full rank hold matrices (column-major); the others (info
    # arrays, one per matrix) keep the default row-major layout.
    return layouts_attr([column_major(a.ndim) if a.ndim == matrix_rank
                         else tuple(range(a.ndim - 1, -1, -1)) for a in avals])


def _attribute(value: bool | int | tuple[int, str]) -> str:
    # A bare int is a ui8 (LAPACK's character flags, JAX's enums); a pair gives the type;
    # a bool is MLIR's (ormqr's ``left`` and ``transpose``).
    if isinstance(value, bool):
        return "true" if value else "false"
    number, kind = (value, "ui8") if isinstance(value, int) else value
    return f"{number} : {kind}"


def lapack_call(fn: FuncEmitter, target: str, operands: Sequence[Value],
                avals_in: Sequence[ShapedArray], avals_out: Sequence[ShapedArray],
                config: Mapping[str, bool | int | tuple[int, str]],
                aliases: Mapping[int, int]) -> list[Value]:
    """Emit a custom call to the LAPACK handler ``target``; ``config`` holds its
    attributes (an int is a ``ui8``; ``(value, "i32")`` gives another integer type, as
    ``gehrd``'s ``low``/``high``), ``aliases`` maps operand indices to the results reusing
    their buffers."""
    rank = max(a.ndim for a in avals_in)
    types = [tensor_type(a) for a in avals_out]
    props = (f'api_version = 1 : i32, backend_config = "", call_target_name = "{target}", '
             f"called_computations = [], has_side_effect = false, "
             f"operand_layouts = {_layouts(avals_in, rank)}, "
             f"output_operand_aliases = {aliases_attr(aliases.items(), len(avals_out) == 1)}, "
             f"result_layouts = {_layouts(avals_out, rank)}")
    backend = ", ".join(f"{k} = {_attribute(v)}" for k, v in sorted(config.items()))
    discardable = (f"mhlo.backend_config = {{{backend}}}, "
                   f'mhlo.frontend_attributes = {{num_batch_dims = "{rank - 2}"}}')
    return fn.op("stablehlo.custom_call", operands, types, props, discardable=discardable)


def _splat(fn: FuncEmitter, value: Any, aval: ShapedArray) -> Value:
    """``value`` broadcast to ``aval`` (a scalar constant and a broadcast, as JAX)."""
    scalar = fn.constant(value, ShapedArray((), aval.dtype))
    return fn.op1("stablehlo.broadcast_in_dim", [scalar], tensor_type(aval),
                  f"broadcast_dimensions = {i64_array(())}")


def _nan_where_failed(fn: FuncEmitter, info: Value, x: Value, x_aval: ShapedArray) -> Value:
    """``x``, with the matrices whose factorization failed (``info != 0``) all NaN."""
    batch = x_aval.shape[:-2]
    info_aval = ShapedArray(batch, dt.int32)
    ok = compare(fn, "EQ", info, _splat(fn, 0, info_aval), dt.int32, batch)
    ok_matrix = fn.op1("stablehlo.broadcast_in_dim", [ok],
                       tensor_type((batch + (1, 1), dt.bool_)),
                       f"broadcast_dimensions = {i64_array(range(len(batch)))}")
    nan = complex(np.nan, np.nan) if dt.is_complex(x_aval.dtype) else np.nan
    nans = _splat(fn, nan, x_aval)
    which = fn.op1("stablehlo.broadcast_in_dim", [ok_matrix],
                   tensor_type((x_aval.shape, dt.bool_)),
                   f"broadcast_dimensions = {i64_array(range(x_aval.ndim))}")
    return fn.op1("stablehlo.select", [which, x, nans], tensor_type(x_aval))


@register(P.cholesky_p)
def _cholesky(ctx: LoweringContext, x: Value) -> Sequence[Value]:
    aval = shaped(ctx.avals_in[0])
    info_aval = ShapedArray(aval.shape[:-2], dt.int32)
    factor, info = lapack_call(ctx.fn, target_name("potrf", aval.dtype), [x], [aval],
                               [aval, info_aval], {"uplo": ord("L")}, {0: 0})
    return [_nan_where_failed(ctx.fn, info, factor, aval)]


@register(P.triangular_solve_p)
def _triangular_solve(ctx: LoweringContext, a: Value, b: Value, *, left_side: bool, lower: bool,
                      transpose_a: bool, conjugate_a: bool,
                      unit_diagonal: bool) -> Sequence[Value]:
    a_aval, b_aval = (shaped(v) for v in ctx.avals_in)
    if conjugate_a and not transpose_a:
        # LAPACK's trsm conjugates only along with transposing ('C').
        if dt.is_complex(a_aval.dtype):
            a = ctx.fn.op1("chlo.conj", [a], tensor_type(a_aval))
        conjugate_a = False
    trans = ("C" if conjugate_a else "T") if transpose_a else "N"
    config = {"diag": ord("U" if unit_diagonal else "N"),
              "side": ord("L" if left_side else "R"),
              "trans_x": ord(trans), "uplo": ord("L" if lower else "U")}
    return lapack_call(ctx.fn, target_name("trsm", a_aval.dtype), [a, b], [a_aval, b_aval],
                       [b_aval], config, {1: 0})


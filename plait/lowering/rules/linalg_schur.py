"""Lowering of ``hessenberg``, ``tridiagonal`` and ``schur`` to jaxlib's LAPACK kernels, as
JAX 0.10.2 lowers them on CPU.

``hessenberg`` calls ``?gehrd`` with ``low = 1``, ``high = n`` (``i32`` attributes:
LAPACK's 1-based ``ilo``/``ihi``, the whole matrix); ``tridiagonal`` calls ``?sytrd``
(``?hetrd`` for complex matrices) with ``uplo``; ``schur`` calls ``?gees`` with ``mode``
``'V'`` or ``'N'`` and ``sort`` ``'N'``, whose eigenvalue results (real and imaginary
parts for a real matrix) and ``sdim`` go unused.  Each result of a reduction whose
``info`` reports a failure is NaN, and the first result reuses the operand's buffer.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from plait.ir import dtypes as dt
from plait.ir import primitives as P
from plait.ir.avals import ShapedArray, shaped
from plait.lowering.emitter import Value
from plait.lowering.lapack import target_name
from plait.lowering.lower import LoweringContext
from plait.lowering.rules._util import register
from plait.lowering.rules.linalg_decompositions import lapack_call
from plait.lowering.rules.linalg_factorizations import _info_ok, _nan_unless

_I32 = dt.int32


def _checked(ctx: LoweringContext, outs: Sequence[Value], info: Value,
             avals: Sequence[ShapedArray]) -> list[Value]:
    """``outs``, NaN for the batch members whose ``info`` is not zero (JAX's order: the
    comparison once, then a select per result)."""
    batch = shaped(ctx.avals_in[0]).shape[:-2]
    ok = _info_ok(ctx.fn, info, batch, "EQ")
    return [_nan_unless(ctx.fn, ok, x, a, batch) for x, a in zip(outs, avals)]


@register(P.hessenberg_p)
def _hessenberg(ctx: LoweringContext, a: Value) -> Sequence[Value]:
    aval = shaped(ctx.avals_in[0])
    outs = [shaped(o) for o in ctx.avals_out]
    info = ShapedArray(aval.shape[:-2], _I32)
    config = {"low": (1, "i32"), "high": (aval.shape[-1], "i32")}
    h, taus, info_v = lapack_call(ctx.fn, target_name("gehrd", aval.dtype), [a], [aval],
                                  [*outs, info], config, {0: 0})
    return _checked(ctx, [h, taus], info_v, outs)


@register(P.tridiagonal_p)
def _tridiagonal(ctx: LoweringContext, a: Value, *, lower: bool) -> Sequence[Value]:
    aval = shaped(ctx.avals_in[0])
    outs = [shaped(o) for o in ctx.avals_out]
    info = ShapedArray(aval.shape[:-2], _I32)
    routine = "hetrd" if dt.is_complex(aval.dtype) else "sytrd"
    *results, info_v = lapack_call(ctx.fn, target_name(routine, aval.dtype), [a], [aval],
                                   [*outs, info], {"uplo": ord("L" if lower else "U")},
                                   {0: 0})
    return _checked(ctx, results, info_v, outs)


@register(P.schur_p)
def _schur(ctx: LoweringContext, x: Value, *, compute_schur_vectors: bool,
           sort_eig_vals: bool, select_callable: Any) -> Sequence[Value]:
    if sort_eig_vals:
        raise NotImplementedError(
            "The sort feature of LAPACK's gees routine is not implemented.")
    aval = shaped(ctx.avals_in[0])
    batch = aval.shape[:-2]
    info = ShapedArray(batch, _I32)
    eigvals = ShapedArray(aval.shape[:-1], aval.dtype)
    n_eigvals = 1 if dt.is_complex(aval.dtype) else 2
    avals_out = [aval, aval] + [eigvals] * n_eigvals + [info, info]
    config = {"mode": ord("V" if compute_schur_vectors else "N"), "sort": ord("N")}
    t, vs, *_, info_v = lapack_call(ctx.fn, target_name("gees", aval.dtype), [x], [aval],
                                    avals_out, config, {0: 0})
    outs = [t, vs] if compute_schur_vectors else [t]
    return _checked(ctx, outs, info_v, [aval] * len(outs))

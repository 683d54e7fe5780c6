"""``lax.reduce_window`` with ``jax.lax``'s signature: a monoid (``lax.add`` from 0,
``lax.max`` from its identity, ``lax.min`` from its identity) binds
``reduce_window_sum``/``_max``/``_min``, as in JAX; any other computation, or
several operands, binds the generic ``reduce_window`` with the computation traced
to a jaxpr over scalars."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from plait.frontend.core.trace_to_jaxpr import trace_to_jaxpr
from plait.frontend.core.tracing import Tracer, bind1, bind_n
from plait.frontend.core.tree_util import tree_flatten, tree_structure, tree_unflatten
from plait.frontend.lax import ops
from plait.frontend.lax.convolution import padtype_to_pads
from plait.frontend.lax.ops import _operands, _shape_of
from plait.ir import dtypes as dt
from plait.ir import primitives as P
from plait.ir.avals import ShapedArray
from plait.ir.errors import ArgumentError
from plait.ir.primitive import Primitive
from plait.ir.primitives.windowed import window_output_shape

__all__ = ["reduce_window", "reduce_window_shape_tuple"]


def reduce_window_shape_tuple(operand_shape: Sequence[int], window_dimensions: Sequence[int],
                              window_strides: Sequence[int],
                              padding: Sequence[tuple[int, int]],
                              base_dilation: Sequence[int] | None = None,
                              window_dilation: Sequence[int] | None = None) -> tuple[int, ...]:
    """The shape of ``reduce_window``'s result for an operand of ``operand_shape``."""
    return window_output_shape(tuple(operand_shape), tuple(window_dimensions),
                               tuple(window_strides),
                               tuple((int(lo), int(hi)) for lo, hi in padding),
                               base_dilation, window_dilation)


def _ints(name: str, value: Sequence[int] | None, rank: int, default: int) -> tuple[int, ...]:
    if value is None:
        return (default,) * rank
    out = tuple(int(v) for v in value)
    if len(out) != rank:
        raise TypeError(f"reduce_window: expected {rank} {name} for an operand of rank "
                        f"{rank}, but got {tuple(value)}")
    return out


def _dtype_of(x: Any) -> np.dtype[Any]:
    av = getattr(x, "aval", None)
    return np.dtype(av.dtype if av is not None else dt.canonicalize(np.result_type(x)))


def _identity(prim: Primitive, dtype: np.dtype[Any]) -> Any:
    if prim is P.reduce_window_sum_p:
        return 0
    is_max = prim is P.reduce_window_max_p
    if dt.is_bool(dtype):
        return not is_max
    if dt.is_integer(dtype):
        return np.iinfo(dtype).min if is_max else np.iinfo(dtype).max
    return -np.inf if is_max else np.inf


def _monoid(computation: Callable[..., Any], init: Any) -> Primitive | None:
    # As JAX: only lax.add, lax.max and lax.min from a concrete scalar that is the identity
    # of the init value's own dtype (so a Python 0 is not max's identity for uint8).
    prim = {id(ops.add): P.reduce_window_sum_p, id(ops.max): P.reduce_window_max_p,
            id(ops.min): P.reduce_window_min_p}.get(id(computation))
    if prim is None or type(init) is Tracer or np.ndim(init) != 0:
        return None
    return prim if bool(np.asarray(init) == _identity(prim, _dtype_of(init))) else None


def reduce_window(operand: Any, init_value: Any, computation: Callable[..., Any],
                  window_dimensions: Sequence[int], window_strides: Sequence[int] | None = None,
                  padding: str | Sequence[tuple[int, int]] = "VALID",
                  base_dilation: Sequence[int] | None = None,
                  window_dilation: Sequence[int] | None = None) -> Any:
    """Reduce each window of ``operand`` (an array or a pytree of equally shaped arrays)
    with ``computation(accumulator, element)``, starting from ``init_value`` (which also
    fills the padding); ``padding`` is ``'VALID'``, ``'SAME'``, ``'SAME_LOWER'`` or
    ``(low, high)`` pairs."""
    flat_ops, op_tree = tree_flatten(operand)
    flat_inits, init_tree = tree_flatten(init_value)
    if op_tree != init_tree:
        raise ValueError(f"Operands must have the same tree structure as init_values: "
                         f"{op_tree} vs. {init_tree}")
    if not flat_ops:
        raise ValueError("reduce_window must have at least one operand.")
    shape = _shape_of(flat_ops[0])
    rank = len(shape)
    window = _ints("window_dimensions", window_dimensions, rank, 1)
    strides = _ints("window_strides", window_strides, rank, 1)
    window_dil = _ints("window_dilation", window_dilation, rank, 1)
    if isinstance(padding, str):  # for the dilated window, as in JAX
        span = [(w - 1) * d + 1 for w, d in zip(window, window_dil)]
        pads = tuple(padtype_to_pads(shape, span, strides, padding))
    else:
        pads = tuple((int(lo), int(hi)) for lo, hi in padding)
    params = dict(window_dimensions=window, window_strides=strides, padding=pads,
                  base_dilation=_ints("base_dilation", base_dilation, rank, 1),
                  window_dilation=window_dil)
    dtypes = [_dtype_of(x) for x in flat_ops]
    if len(flat_ops) == 1:
        prim = _monoid(computation, flat_inits[0])
        if prim is not None:
            return bind1(prim, flat_ops[0], **params)
    inits = [_operands("reduce_window", x, init)[1] for x, init in zip(flat_ops, flat_inits)]
    scalars = [ShapedArray((), d) for d in dtypes]
    example = tree_unflatten(init_tree, [0] * len(scalars))
    traced = trace_to_jaxpr(computation, tree_structure((example, example)), scalars * 2,
                            "reduce_window")
    if traced.closed.consts:
        raise ArgumentError("reduce_window: expected a computation that closes over no "
                            f"arrays, but it captured {len(traced.closed.consts)}; pass "
                            "them as operands instead")
    got = [a.update(weak_type=False) for a in traced.out_avals]
    if traced.out_tree != op_tree:
        raise ValueError(f"reduce_window output must have the same tree structure as the "
                         f"operands {op_tree} vs. {traced.out_tree}")
    if got != scalars:
        raise TypeError(f"reduce_window: expected the computation to return "
                        f"{[s.str_short() for s in scalars]} (structured as the init values), "
                        f"but it returned {[a.str_short() for a in traced.out_avals]}")
    outs = bind_n(P.reduce_window_p, *flat_ops, *inits, jaxpr=traced.closed.jaxpr, consts=(),
                  **params)
    return tree_unflatten(op_tree, outs)

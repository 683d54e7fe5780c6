"""``lax.reduce`` and ``lax.reduce_window`` with ``jax.lax``'s signatures.

For ``reduce``, ``lax.add``/``mul``/``max``/``min`` and the bitwise operations from
their identities bind the dedicated reductions; other computations bind the
generic ``reduce``.  For ``reduce_window``, a monoid (``lax.add`` from 0,
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
from plait.frontend.lax.ops import _dtype_of, _operands, _shape_of
from plait.ir import dtypes as dt
from plait.ir import primitives as P
from plait.ir.avals import ShapedArray
from plait.ir.errors import ArgumentError
from plait.ir.jaxpr import ClosedJaxpr
from plait.ir.primitives.windowed import window_output_shape

__all__ = ["reduce", "reduce_window", "reduce_window_shape_tuple"]


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


def _is_weak(x: Any) -> bool:
    aval = getattr(x, "aval", None)
    return bool(aval.weak_type) if aval is not None else type(x) in (int, float, complex)


def _identity(op: str, dtype: np.dtype[Any]) -> Any:
    """The identity of the monoid ``op`` on ``dtype`` (JAX's ``_get_*_identity``)."""
    if op in ("add", "or", "xor"):
        return 0
    if op == "mul":
        return 1
    if op == "and":
        if dt.is_bool(dtype):
            return True
        return dt.int_range(dtype)[1] if dt.is_unsigned(dtype) else -1
    return dt.max_identity(dtype) if op == "max" else dt.min_identity(dtype)


def _monoid(table: dict[int, tuple[str, Any]], computation: Callable[..., Any],
            inits: Sequence[Any]) -> Any:
    """The entry of ``table`` (keyed by ``id`` of a lax function) for ``computation``, when
    the single init value is a concrete scalar equal to its identity on the init value's
    own dtype (so that, as in JAX, a Python 0 is not max's identity for uint8)."""
    entry = table.get(id(computation))
    if entry is None or len(inits) != 1 or type(inits[0]) is Tracer or np.ndim(inits[0]):
        return None
    dtype = _dtype_of(inits[0])
    if entry[0] in ("or", "and", "xor") and not (dt.is_bool(dtype) or dt.is_integer(dtype)):
        return None
    return entry[1] if bool(np.asarray(inits[0]) == _identity(entry[0], dtype)) else None


_WINDOW_MONOIDS = {id(ops.add): ("add", P.reduce_window_sum_p),
                   id(ops.max): ("max", P.reduce_window_max_p),
                   id(ops.min): ("min", P.reduce_window_min_p)}
_REDUCE_MONOIDS = {id(ops.add): ("add", ops.reduce_sum), id(ops.mul): ("mul", ops.reduce_prod),
                   id(ops.max): ("max", ops.reduce_max), id(ops.min): ("min", ops.reduce_min),
                   id(ops.bitwise_or): ("or", ops.reduce_or),
                   id(ops.bitwise_and): ("and", ops.reduce_and),
                   id(ops.bitwise_xor): ("xor", ops.reduce_xor)}


def _flatten(name: str, operands: Any, init_values: Any) -> tuple[list[Any], list[Any], Any]:
    flat_ops, op_tree = tree_flatten(operands)
    flat_inits, init_tree = tree_flatten(init_values)
    if op_tree != init_tree:
        raise ValueError(f"Operands must have the same tree structure as init_values: "
                         f"{op_tree} vs. {init_tree}")
    if not flat_ops:
        raise ValueError(f"{name} must have at least one operand.")
    return flat_ops, flat_inits, op_tree


def _computation(name: str, computation: Callable[..., Any], flat_ops: Sequence[Any],
                 flat_inits: Sequence[Any], tree: Any) -> tuple[list[Any], ClosedJaxpr]:
    """The init values in the operands' dtypes, and ``computation`` traced over scalars."""
    inits = [_operands(name, x, init)[1] for x, init in zip(flat_ops, flat_inits)]
    scalars = [ShapedArray((), _dtype_of(x)) for x in flat_ops]
    example = tree_unflatten(tree, [0] * len(scalars))
    traced = trace_to_jaxpr(computation, tree_structure((example, example)), scalars * 2, name)
    if traced.closed.consts:
        raise ArgumentError(f"{name}: expected a computation that closes over no arrays, but "
                            f"it captured {len(traced.closed.consts)}; pass them as operands "
                            "instead")
    if traced.out_tree != tree:
        raise ValueError(f"{name} output must have the same tree structure as the operands "
                         f"{tree} vs. {traced.out_tree}")
    if [a.update(weak_type=False) for a in traced.out_avals] != scalars:
        raise TypeError(f"{name}: expected the computation to return "
                        f"{[s.str_short() for s in scalars]} (structured as the init values), "
                        f"but it returned {[a.str_short() for a in traced.out_avals]}")
    return inits, traced.closed


def reduce(operands: Any, init_values: Any, computation: Callable[[Any, Any], Any],
           dimensions: Sequence[int]) -> Any:
    """Reduce ``operands`` (an array or a pytree of equally shaped arrays) over
    ``dimensions`` with ``computation(accumulator, element)`` from ``init_values``.
    ``lax.add``, ``mul``, ``max``, ``min`` and the bitwise ops from their identities bind
    the dedicated reductions, as in JAX."""
    flat_ops, flat_inits, tree = _flatten("reduce", operands, init_values)
    dims = tuple(int(d) for d in dimensions)
    reducer = _monoid(_REDUCE_MONOIDS, computation, flat_inits)
    if reducer is not None:
        out = reducer(flat_ops[0], dims)
        # Weak only when the operand and the init value both are, as in JAX.
        weak = all(_is_weak(v) for v in (flat_ops[0], flat_inits[0]))
        return out if out.aval.weak_type == weak else ops.convert_element_type(
            out, out.dtype, weak)
    inits, closed = _computation("reduce", computation, flat_ops, flat_inits, tree)
    outs = bind_n(P.reduce_p, *flat_ops, *inits, jaxpr=closed, dimensions=dims)
    return tree_unflatten(tree, outs)


def reduce_window(operand: Any, init_value: Any, computation: Callable[..., Any],
                  window_dimensions: Sequence[int], window_strides: Sequence[int] | None = None,
                  padding: str | Sequence[tuple[int, int]] = "VALID",
                  base_dilation: Sequence[int] | None = None,
                  window_dilation: Sequence[int] | None = None) -> Any:
    """Reduce each window of ``operand`` (an array or a pytree of equally shaped arrays)
    with ``computation(accumulator, element)``, starting from ``init_value`` (which also
    fills the padding); ``padding`` is ``'VALID'``, ``'SAME'``, ``'SAME_LOWER'`` or
    ``(low, high)`` pairs."""
    flat_ops, flat_inits, tree = _flatten("reduce_window", operand, init_value)
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
    prim = _monoid(_WINDOW_MONOIDS, computation, flat_inits)
    if prim is not None:
        return bind1(prim, flat_ops[0], **params)
    inits, closed = _computation("reduce_window", computation, flat_ops, flat_inits, tree)
    outs = bind_n(P.reduce_window_p, *flat_ops, *inits, jaxpr=closed.jaxpr, consts=(),
                  **params)
    return tree_unflatten(tree, outs)

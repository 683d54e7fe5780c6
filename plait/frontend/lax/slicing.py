"""``gather`` and the scatters, with ``jax.lax``'s signatures, and the functions over them."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from plait.frontend.core.array_base import Array
from plait.frontend.core.trace_to_jaxpr import trace_to_jaxpr
from plait.frontend.core.tracing import bind1, bind_n
from plait.frontend.core.tree_util import tree_structure
from plait.frontend.lax.ops import (
    _dtype_of,
    _operands,
    _shape_of,
    add,
    concatenate,
    dynamic_update_slice_in_dim,
    expand_dims,
    rem,
)
from plait.ir import primitives as P
from plait.ir.avals import ShapedArray
from plait.ir.errors import ArgumentError
from plait.ir.jaxpr import Jaxpr
from plait.ir.primitive import Primitive
from plait.ir.primitives.indexing import (
    GatherDimensionNumbers,
    GatherScatterMode,
    ScatterDimensionNumbers,
    combiner_jaxpr,
    default_fill_value,
)

__all__ = [
    "GatherDimensionNumbers", "ScatterDimensionNumbers", "GatherScatterMode", "gather",
    "scatter", "scatter_add", "scatter_sub", "scatter_mul", "scatter_min", "scatter_max",
    "scatter_apply", "index_take", "dynamic_update_index_in_dim", "top_k", "approx_max_k",
    "approx_min_k",
]


def _ints(xs: Sequence[Any]) -> tuple[int, ...]:
    return tuple(int(x) for x in xs)


def _python_scalar(v: Any) -> Any:
    # Params hold Python scalars (hashable, printed as JAX prints them).
    return v.item() if isinstance(v, np.generic | np.ndarray) else v


def gather(operand: Any, start_indices: Any, dimension_numbers: GatherDimensionNumbers,
           slice_sizes: Sequence[int], *, unique_indices: bool = False,
           indices_are_sorted: bool = False, mode: str | GatherScatterMode | None = None,
           fill_value: Any = None) -> Array:
    """XLA's gather: slices of ``operand`` of size ``slice_sizes`` starting at the index
    vectors in the last dimension of ``start_indices``.

    ``mode`` (default ``'promise_in_bounds'``, which clamps) says what happens to
    out-of-bounds starts; with ``'fill'`` their whole slice reads ``fill_value``
    (default: NaN, the lowest signed or highest unsigned integer, or True).
    """
    if not isinstance(dimension_numbers, GatherDimensionNumbers):
        raise TypeError(f"gather: expected GatherDimensionNumbers, but got "
                        f"{dimension_numbers!r}")
    parsed = (GatherScatterMode.PROMISE_IN_BOUNDS if mode is None
              else GatherScatterMode.from_any(mode))
    if parsed == GatherScatterMode.FILL_OR_DROP:
        fill = (default_fill_value(_dtype_of(operand)) if fill_value is None
                else _python_scalar(fill_value))
    else:
        fill = None
    dn = GatherDimensionNumbers(*(_ints(f) for f in dimension_numbers))
    return bind1(P.gather_p, operand, start_indices, dimension_numbers=dn,
                 slice_sizes=_ints(slice_sizes), indices_are_sorted=bool(indices_are_sorted),
                 unique_indices=bool(unique_indices), mode=parsed, fill_value=fill)


def _scatter(prim: Primitive, operand: Any, scatter_indices: Any,
             updates: Any, dimension_numbers: ScatterDimensionNumbers,
             indices_are_sorted: bool, unique_indices: bool,
             mode: str | GatherScatterMode | None,
             update_jaxpr: Jaxpr | None = None) -> Array:
    if not isinstance(dimension_numbers, ScatterDimensionNumbers):
        raise TypeError(f"{prim.name}: expected ScatterDimensionNumbers, but got "
                        f"{dimension_numbers!r}")
    operand, updates = _operands(prim.name, operand, updates)
    if prim is not P.scatter_p:
        update_jaxpr = combiner_jaxpr(prim, _dtype_of(operand))
    dn = ScatterDimensionNumbers(*(_ints(f) for f in dimension_numbers))
    return bind1(prim, operand, scatter_indices, updates, dimension_numbers=dn,
                 indices_are_sorted=bool(indices_are_sorted),
                 unique_indices=bool(unique_indices), mode=GatherScatterMode.from_any(mode),
                 update_jaxpr=update_jaxpr, update_consts=())


def _scatter_fn(prim: Primitive, doc: str) -> Callable[..., Array]:
    def fn(operand: Any, scatter_indices: Any, updates: Any,
           dimension_numbers: ScatterDimensionNumbers, *, indices_are_sorted: bool = False,
           unique_indices: bool = False,
           mode: str | GatherScatterMode | None = None) -> Array:
        return _scatter(prim, operand, scatter_indices, updates, dimension_numbers,
                        indices_are_sorted, unique_indices, mode)
    fn.__doc__ = (f"XLA's scatter: {doc} ``updates`` at the windows starting at the index "
                  "vectors in the last dimension of ``scatter_indices``.\n\n"
                  "``mode`` (default ``'fill'``, which drops out-of-bounds windows) or "
                  "``'clip'`` (which clamps them into bounds).")
    fn.__name__ = fn.__qualname__ = prim.name.replace("-", "_")  # scatter-add: scatter_add
    return fn


scatter = _scatter_fn(P.scatter_p, "``operand`` overwritten by")
scatter_add = _scatter_fn(P.scatter_add_p, "``operand`` plus")
scatter_sub = _scatter_fn(P.scatter_sub_p, "``operand`` minus")
scatter_mul = _scatter_fn(P.scatter_mul_p, "``operand`` times")
scatter_min = _scatter_fn(P.scatter_min_p, "the minimum of ``operand`` and")
scatter_max = _scatter_fn(P.scatter_max_p, "the maximum of ``operand`` and")


def scatter_apply(operand: Any, scatter_indices: Any, func: Callable[[Any], Any],
                  dimension_numbers: ScatterDimensionNumbers, *,
                  update_shape: Sequence[int] = (), indices_are_sorted: bool = False,
                  unique_indices: bool = False,
                  mode: str | GatherScatterMode | None = None) -> Array:
    """``operand`` with ``func`` applied at the scattered positions (once per index, so
    repeated indices apply it repeatedly); ``update_shape`` is the updates' shape."""
    dtype = _dtype_of(operand)
    scalar = ShapedArray((), dtype)
    traced = trace_to_jaxpr(lambda x, _: func(x), tree_structure((0, 0)), (scalar, scalar),
                            "scatter_apply")
    if traced.closed.consts:
        raise ArgumentError("scatter_apply: expected a func that closes over no traced "
                            "values, but it captured "
                            f"{len(traced.closed.consts)}; pass them through the operand")
    if traced.out_avals != (scalar,):
        raise TypeError(f"scatter_apply: expected func to return a {scalar.str_short()} "
                        f"for a {scalar.str_short()}, but got "
                        f"{[a.str_short() for a in traced.out_avals]}")
    unused = np.zeros(_ints(update_shape), dtype)
    return _scatter(P.scatter_p, operand, scatter_indices, unused, dimension_numbers,
                    indices_are_sorted, unique_indices, mode, traced.closed.jaxpr)


def index_take(src: Any, idxs: Sequence[Any], axes: Sequence[int]) -> Array:
    """``src`` indexed along ``axes`` by the equally shaped index arrays ``idxs``
    (negative indices count from the end)."""
    axes = _ints(axes)
    shape = _shape_of(src)
    indices = concatenate([expand_dims(i, (1,)) for i in idxs], 1)
    sizes = np.broadcast_to(np.array([shape[a] for a in axes], _dtype_of(indices)),
                            _shape_of(indices))
    indices = rem(add(rem(indices, sizes), sizes), sizes)
    slice_sizes = [1 if d in axes else s for d, s in enumerate(shape)]
    dn = GatherDimensionNumbers(offset_dims=tuple(range(1, len(shape) - len(axes) + 1)),
                                collapsed_slice_dims=axes, start_index_map=axes)
    return gather(src, indices, dn, slice_sizes)


def dynamic_update_index_in_dim(operand: Any, update: Any, index: Any, axis: int, *,
                                allow_negative_indices: bool = True) -> Array:
    """``operand`` with the slice at ``index`` along ``axis`` replaced by ``update`` (which
    may lack that axis)."""
    shape = _shape_of(operand)
    axis = int(axis)
    if len(_shape_of(update)) == len(shape) - 1:
        update = expand_dims(update, (axis,))
    return dynamic_update_slice_in_dim(operand, update, index, axis,
                                       allow_negative_indices=allow_negative_indices)


def top_k(operand: Any, k: int, *, axis: int = -1) -> tuple[Array, Array]:
    """The ``k`` largest entries of ``operand`` along ``axis`` (NaN counts as largest;
    ties keep index order) and their indices (int32)."""
    nd = len(_shape_of(operand))
    if nd == 0:
        raise TypeError("top_k operand must have >= 1 dimension, got ()")
    ax = int(axis)
    if not -nd <= ax < nd:
        raise ValueError(f"top_k: expected an axis in [{-nd}, {nd}), but got {axis}")
    k = int(k)
    if k < 0:
        raise ValueError(f"k argument to top_k must be nonnegative, got {k}")
    values, indices = bind_n(P.top_k_p, operand, k=k, axis=ax % nd)
    return values, indices


def _approx_k(operand: Any, k: int, reduction_dimension: int, recall_target: float,
              is_max_k: bool, reduction_input_size_override: int,
              aggregate_to_topk: bool) -> tuple[Array, Array]:
    what = "approx_max_k" if is_max_k else "approx_min_k"
    nd = len(_shape_of(operand))
    if nd == 0:
        raise TypeError(f"{what}: expected an operand of rank at least 1, but got a scalar")
    if not -nd <= reduction_dimension < nd:
        raise ValueError(f"{what}: expected reduction_dimension in [{-nd}, {nd}), but got "
                         f"{reduction_dimension}")
    if not aggregate_to_topk:
        raise NotImplementedError(f"{what}: aggregate_to_topk=False (the approximate, "
                                  "TPU-sized result) is not implemented; plait computes the "
                                  "exact top k, as JAX does on CPU")
    values, indices = bind_n(P.approx_top_k_p, operand, k=int(k),
                             reduction_dimension=int(reduction_dimension),
                             recall_target=float(recall_target), is_max_k=is_max_k,
                             reduction_input_size_override=int(reduction_input_size_override),
                             aggregate_to_topk=True)
    return values, indices


def approx_max_k(operand: Any, k: int, reduction_dimension: int = -1,
                 recall_target: float = 0.95, reduction_input_size_override: int = -1,
                 aggregate_to_topk: bool = True) -> tuple[Array, Array]:
    """The ``k`` largest entries of a floating-point ``operand`` along
    ``reduction_dimension`` and their indices.  Approximate on TPUs in JAX; exact on
    CPU, where plait runs (NaN counts as largest, ties keep index order)."""
    return _approx_k(operand, k, reduction_dimension, recall_target, True,
                     reduction_input_size_override, aggregate_to_topk)


def approx_min_k(operand: Any, k: int, reduction_dimension: int = -1,
                 recall_target: float = 0.95, reduction_input_size_override: int = -1,
                 aggregate_to_topk: bool = True) -> tuple[Array, Array]:
    """The ``k`` smallest entries of a floating-point ``operand`` along
    ``reduction_dimension`` and their indices (exact on CPU; NaN counts as largest)."""
    return _approx_k(operand, k, reduction_dimension, recall_target, False,
                     reduction_input_size_override, aggregate_to_topk)

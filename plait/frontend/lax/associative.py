"""``lax.associative_scan``: all prefix combinations of a pytree of arrays along one
axis under an associative function, in O(log n) rounds of batched calls (the
odd/even recursion of Ladner and Fischer, which JAX uses too, so the jaxpr has
the same slices, pads and concatenations)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from plait.frontend.core.array_base import Array
from plait.frontend.core.tree_util import tree_flatten, tree_unflatten
from plait.frontend.lax.ops import (
    _shape_of,
    add,
    bitwise_or,
    concatenate,
    pad,
    rev,
    slice_in_dim,
)
from plait.ir import dtypes as dt

__all__ = ["associative_scan"]


def associative_scan(fn: Callable[[Any, Any], Any], elems: Any, reverse: bool = False,
                     axis: int = 0) -> Any:
    """The inclusive scan of ``elems`` (a pytree of arrays equally long along ``axis``)
    under ``fn(a, b)``, which must be associative and act elementwise on pytrees shaped
    like ``elems``; from the end when ``reverse``."""
    leaves, tree = tree_flatten(elems)
    if not leaves:
        return elems
    ndim = len(_shape_of(leaves[0]))
    if not -ndim <= axis < max(ndim, 1) or ndim == 0:
        raise ValueError(f"associative_scan: axis {axis} is out of bounds for arrays of "
                         f"rank {ndim}")
    axis %= ndim
    lengths = [_shape_of(x)[axis] for x in leaves]
    if len(set(lengths)) > 1:
        raise ValueError(f"Array inputs to associative_scan must have the same first "
                         f"dimension. (saw: {[_shape_of(x) for x in leaves]})")

    def combine(a: list[Any], b: list[Any]) -> list[Any]:
        out, out_tree = tree_flatten(fn(tree_unflatten(tree, a), tree_unflatten(tree, b)))
        # (Only the leaves must agree, as in JAX: a tuple for a namedtuple's fields.)
        if len(out) != len(a):
            raise TypeError(f"associative_scan: expected fn to return the {len(a)} leaves of "
                            f"elems, {tree}, but got {out_tree}")
        return out

    def strided(xs: list[Any], start: int, stop: int | None, stride: int = 1) -> list[Any]:
        return [slice_in_dim(x, start, stop, stride, axis) for x in xs]

    def scan(xs: list[Any]) -> list[Any]:
        n = _shape_of(xs[0])[axis]
        if n < 2:
            return xs
        # Combine neighbouring pairs, scan those (the odd positions' results), then
        # fill in the even positions from the odd ones before them.
        odd = scan(combine(strided(xs, 0, -1, 2), strided(xs, 1, None, 2)))
        before = strided(odd, 0, -1) if n % 2 == 0 else odd
        even = combine(before, strided(xs, 2, None, 2))
        even = [concatenate([slice_in_dim(x, 0, 1, 1, axis), e], axis)
                for x, e in zip(xs, even)]
        return [_interleave(e, o, axis) for e, o in zip(even, odd)]

    if reverse:
        leaves = [rev(x, (axis,)) for x in leaves]
    out = scan(leaves)
    if reverse:
        out = [rev(x, (axis,)) for x in out]
    return tree_unflatten(tree, out)


def _interleave(a: Any, b: Any, axis: int) -> Array:
    """``a[0], b[0], a[1], b[1], ...`` along ``axis`` (``a`` as long as ``b`` or one
    longer): each padded with zeros between its elements, then the two summed."""
    same = _shape_of(a)[axis] == _shape_of(b)[axis]
    a_cfg = [(0, 0, 0)] * len(_shape_of(a))
    b_cfg = list(a_cfg)
    a_cfg[axis] = (0, 1 if same else 0, 1)
    b_cfg[axis] = (1, 0 if same else 1, 1)
    is_bool = getattr(a, "dtype", None) == dt.bool_
    merge = bitwise_or if is_bool else add
    zero = False if is_bool else 0
    return merge(pad(a, zero, a_cfg), pad(b, zero, b_cfg))

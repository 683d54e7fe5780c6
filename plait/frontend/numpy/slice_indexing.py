"""Indices holding a :class:`~plait.frontend.core.slices.Slice` (``plait.ds``), beside
other entries: each ``Slice`` is taken out of the array first (a ``dynamic_slice``, or a
clamped gather when strided), and the rest of the index applies to what it took as to
a full slice.  An index of only ints, unit-step slices and unit-stride ``Slice``s is one
``dynamic_slice`` instead, in ``indexing.py``, as JAX prints it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from plait.frontend import lax
from plait.frontend.core.array_base import Array
from plait.frontend.core.slices import Slice, is_static_int
from plait.frontend.numpy._core import aval_of, shape
from plait.ir import dtypes as dt

__all__ = ["check_size", "has_slice", "peel", "put_slice", "slice_axes", "take_slice"]


def has_slice(index: Any) -> bool:
    """Whether ``index`` (an entry or a tuple of them) holds a ``Slice``."""
    # (Every NumPy index asks: a membership test of the entries' types is the cheapest.)
    if type(index) is tuple:
        return Slice in map(type, index)
    return type(index) is Slice


def _axes_of(e: Any) -> int:
    # How many operand dimensions an entry consumes (a boolean mask: its rank).
    if e is None or e is Ellipsis:
        return 0
    if isinstance(e, list):
        e = np.asarray(e)
    av = aval_of(e)
    if isinstance(e, np.ndarray | Array) and av is not None and av.dtype == dt.bool_:
        return len(av.shape)
    return 1


def slice_axes(index: tuple[Any, ...], nd: int) -> list[tuple[int, int]]:
    """``(position in index, operand axis)`` of each ``Slice`` of ``index``."""
    n_real = sum(_axes_of(e) for e in index)
    if n_real > nd:
        raise IndexError(f"too many indices for an array of {nd} dimensions: {n_real} were given")
    out: list[tuple[int, int]] = []
    axis = 0
    for pos, e in enumerate(index):
        if type(e) is Slice:
            out.append((pos, axis))
        axis += nd - n_real if e is Ellipsis else _axes_of(e)
    return out


def _as_int32(start: Any) -> Any:
    """A ``Slice``'s start as an int32 scalar."""
    if is_static_int(start):
        return np.int32(start)
    av = aval_of(start)
    if av is None or av.shape != () or not dt.is_integer(av.dtype):
        raise TypeError(f"the start of a Slice must be an integer scalar, but got {start!r}")
    return start if av.dtype == dt.int32 else lax.convert_element_type(start, dt.int32)


def _element_indices(s: Slice, n: int) -> Any:
    """A strided ``Slice``'s element indices along an axis of ``n``, each clamped into
    bounds; as in JAX, a negative start is not counted from the end."""
    steps = lax.mul(lax.iota(dt.int32, s.size), np.int32(s.stride))
    return lax.clamp(np.int32(0), lax.add(steps, _as_int32(s.start)), np.int32(n - 1))


def check_size(s: Slice, n: int, axis: int) -> None:
    """Refuse a ``Slice`` spanning more than the ``n`` elements of ``axis``, as JAX does."""
    if s.extent > n:
        raise TypeError(f"expected a Slice spanning at most the {n} elements of axis {axis}, "
                        f"but got one of {s.size} elements (stride {s.stride}) spanning "
                        f"{s.extent}")


def _with(sizes: tuple[int, ...], axis: int, size: int) -> tuple[int, ...]:
    return sizes[:axis] + (size,) + sizes[axis + 1:]


def take_slice(x: Array, s: Slice, axis: int, wrap: bool) -> Array:
    """The elements ``s`` names along ``axis`` (the axis keeps its place); with ``wrap``
    a negative start of a unit-stride ``s`` counts from the end."""
    n = shape(x)[axis]
    check_size(s, n, axis)
    if s.stride == 1:
        if wrap:
            return lax.dynamic_slice_in_dim(x, _as_int32(s.start), s.size, axis)
        starts: list[Any] = [np.int32(0)] * len(shape(x))
        starts[axis] = _as_int32(s.start)
        return lax.bind_dynamic_slice(x, starts, _with(shape(x), axis, s.size))
    idx = _element_indices(s, n)
    dnums = lax.GatherDimensionNumbers(
        offset_dims=tuple(d for d in range(len(shape(x))) if d != axis),
        collapsed_slice_dims=(axis,), start_index_map=(axis,))
    sizes = _with(shape(x), axis, 1)
    # (The gather's one batch dimension stands where the offset dimensions leave room:
    # at ``axis``.)
    return lax.gather(x, lax.expand_dims(idx, (1,)), dnums, sizes, mode="clip",
                      indices_are_sorted=True)


def put_slice(x: Array, update: Array, s: Slice, axis: int) -> Array:
    """``x`` with ``update`` written where :func:`take_slice` read with ``wrap``."""
    n = shape(x)[axis]
    if s.stride == 1:
        return lax.dynamic_update_slice_in_dim(x, update, _as_int32(s.start), axis)
    idx = _element_indices(s, n)
    dnums = lax.ScatterDimensionNumbers(
        update_window_dims=tuple(d for d in range(len(shape(x))) if d != axis),
        inserted_window_dims=(axis,), scatter_dims_to_operand_dims=(axis,))
    return lax.scatter(x, lax.expand_dims(idx, (1,)), update, dnums, indices_are_sorted=True,
                       mode="clip")


def peel(x: Array, index: tuple[Any, ...], apply: Callable[[Array, tuple[Any, ...]], Array],
         write: bool) -> Array:
    """``apply`` to the part of ``x`` the ``Slice``s of ``index`` name, with them replaced
    by ``:``; with ``write``, the result is written back into ``x``.

    As in JAX, a read here (of an index with arrays or strides, which JAX gathers) does
    not count a negative start from the end; an update does, to write the window
    ``x[ds(i, n)]`` reads.  An update takes one ``Slice`` at a time (``apply`` meets the
    others).
    """
    places = slice_axes(index, len(shape(x)))
    if write:
        places = places[:1]
    part = x
    for pos, axis in places:
        part = take_slice(part, index[pos], axis, wrap=write)
    taken = {pos for pos, _ in places}
    rest = tuple(slice(None) if k in taken else e for k, e in enumerate(index))
    out = apply(part, rest)
    if not write:
        return out
    (pos, axis), = places
    return put_slice(x, out, index[pos], axis)

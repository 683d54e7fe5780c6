"""Advanced indexing (``x[idx]``, ``x[mask]``, ``x[i, :, j]``) as one ``gather``.

As in ``jax.numpy``: every index becomes part of one gather.  Integer arrays (and,
next to them, integer scalars) are *advanced* indices, broadcast together; their
result dimensions stand where the first of them stood, or first when a slice,
``None`` or ``...`` separates them (NumPy's rule).  A boolean mask must be concrete:
it becomes the integer arrays of its true positions.  Negative indices count from
the end; out-of-bounds ones are clamped, or handled as ``mode`` says.
The :class:`GatherIndexer` is shared with ``.at[]``, whose scatters write the
windows the gather reads.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

from plait.frontend import lax
from plait.frontend.core.array_base import Array
from plait.frontend.core.tracing import has_value
from plait.frontend.numpy._core import as_array, aval_of
from plait.frontend.numpy._core import shape as shape_of
from plait.ir import dtypes as dt
from plait.ir.errors import NonConcreteBooleanIndexError
from plait.ir.primitives.indexing import GatherDimensionNumbers, GatherScatterMode

__all__ = ["GatherIndexer", "index_to_gather", "gather_getitem", "is_advanced"]

# The kinds of index entries: ``_INT`` is a static Python int, ``_ARRAY`` an integer
# array (of any rank, NumPy's or plait's, concrete or traced).
_NONE, _ELLIPSIS, _SLICE, _INT, _ARRAY, _BOOL = range(6)


class _Entry(NamedTuple):
    kind: int
    index: Any
    axes: int  # how many operand dimensions it consumes


class GatherIndexer(NamedTuple):
    """An index as one gather, and what to do to its result."""

    slice_shape: tuple[int, ...]
    """The shape of the result (before reversals; with ``None`` axes)."""
    gather_slice_shape: tuple[int, ...]
    """The gather's ``slice_sizes``."""
    gather_indices: Any
    """The gather's start indices (last dimension: the index vector)."""
    dnums: GatherDimensionNumbers
    """The gather's dimension numbers."""
    advanced: bool
    """Whether there were array indices (which may repeat or be unsorted)."""
    reversed_y_dims: tuple[int, ...]
    """Result dimensions of slices with negative steps, reversed after the gather."""
    newaxis_dims: tuple[int, ...]
    """Result dimensions that ``None`` inserted."""
    scalar_bool_dims: tuple[int, ...]
    """Operand dimensions that scalar booleans inserted before indexing."""


def _entry(e: Any, position: int) -> _Entry:
    if e is None:
        return _Entry(_NONE, None, 0)
    if e is Ellipsis:
        return _Entry(_ELLIPSIS, None, 0)
    if isinstance(e, slice):
        return _Entry(_SLICE, e, 1)
    if isinstance(e, bool | np.bool_):
        return _Entry(_BOOL, bool(e), 0)
    if isinstance(e, int | np.integer):
        return _Entry(_INT, int(e), 1)
    if isinstance(e, list | tuple):
        if any(x is None or x is Ellipsis or isinstance(x, slice) for x in np.ravel(
                np.asarray(e, dtype=object))):
            raise TypeError(f"a list index may hold only integers or booleans, but index "
                            f"{position} is {e!r}; use a tuple for multidimensional indexing")
        e = np.asarray(e) if len(e) else np.zeros((0,), np.int32)
        if e.dtype != np.bool_:  # as jax.numpy: a list index is an array in the program
            e = as_array(e.astype(dt.canonicalize(e.dtype)))
    av = aval_of(e)
    if av is None and isinstance(e, np.ndarray):
        d: np.dtype[Any] = e.dtype
        nd = e.ndim
    elif av is not None:
        d, nd = av.dtype, av.ndim
    else:
        raise TypeError(f"only integers, slices (`:`), ellipsis (`...`), None and integer or "
                        f"boolean arrays are valid indices, but index {position} is {e!r} of "
                        f"type {type(e).__name__}")
    if d == dt.bool_:
        if not (isinstance(e, np.ndarray) or has_value(e)):
            what = av.str_short(short_dtypes=False) if av is not None else repr(e)
            raise NonConcreteBooleanIndexError(
                f"Array boolean indices must be concrete; got {what}: the number "
                "of true values is the size of the result, which is unknown while tracing. "
                "Use pnp.where(mask, x, fill_value) to keep the shape, or "
                "pnp.nonzero(mask, size=...) for a static size.")
        if nd == 0:
            return _Entry(_BOOL, bool(np.asarray(e)), 0)
        return _Entry(_BOOL, np.asarray(e), nd)
    if not dt.is_integer(d):
        # (A TypeError, as JAX's; NumPy raises an IndexError.)
        raise TypeError(f"expected integer or boolean indexers, but index {position} has "
                        f"dtype {d.name}")
    return _Entry(_ARRAY, e, 1)


def parse(index: Any) -> list[_Entry]:
    """The entries of a raw index, before ellipsis expansion."""
    raw = list(index) if isinstance(index, tuple) else [index]
    return [_entry(e, i) for i, e in enumerate(raw)]


def is_advanced(index: Any) -> bool:
    """Whether ``index`` holds an array, list or boolean index, which needs a gather."""
    for e in index if isinstance(index, tuple) else (index,):
        if isinstance(e, list | bool | np.bool_):
            return True
        if isinstance(e, np.ndarray) and (e.ndim > 0 or e.dtype == np.bool_):
            return True
        av = aval_of(e)
        if av is not None and (av.ndim > 0 or av.dtype == dt.bool_):
            return True
    return False


def _expand_bools(entries: list[_Entry], shape: Sequence[int]) -> list[_Entry]:
    out: list[_Entry] = []
    axis = 0
    for pos, e in enumerate(entries):
        if e.kind == _BOOL and e.axes:
            want = list(shape[axis:axis + e.axes])
            got = list(np.shape(e.index))
            if len(want) != len(got) or not all(g in (0, w) for g, w in zip(got, want)):
                raise IndexError(f"boolean index did not match shape of indexed array in index "
                                 f"{pos}: got {got}, expected {want}")
            out += [_Entry(_ARRAY, i.astype(dt.canonicalize(i.dtype)), 1)
                    for i in np.nonzero(e.index)]
        else:
            out.append(e)
        if e.kind == _ELLIPSIS:
            axis = len(shape) - sum(x.axes for x in entries[pos + 1:])
        else:
            axis += e.axes
    return out


def _as_index_dtype(a: Any, dtype: np.dtype[Any]) -> Any:
    if isinstance(a, int):
        return np.asarray(a, dtype)
    # A NumPy index of another dtype is converted in the program, as in JAX.
    d = a.dtype if isinstance(a, np.ndarray) else aval_of(a).dtype  # type: ignore[union-attr]  # an Array
    return a if d == dtype else lax.convert_element_type(a, dtype)


def _normalize(i: Any, size: int) -> Any:
    """A signed index in [-size, size) moved into [0, size) (static ints statically)."""
    if isinstance(i, int):
        return i + size if i < 0 else i
    av = aval_of(i)
    d = av.dtype if av is not None else i.dtype
    if dt.is_unsigned(d):
        return i
    neg = np.less(i, 0) if isinstance(i, np.ndarray) else lax.lt(i, 0)
    return lax.select(neg, lax.add(i, np.asarray(size, d)), i)


def _shape(i: Any) -> tuple[int, ...]:
    av = aval_of(i)
    return tuple(av.shape) if av is not None else np.shape(i)


def index_to_gather(x_shape: Sequence[int], index: Any, normalize: bool = True) -> GatherIndexer:
    """The gather that computes ``x[index]`` for an ``x`` of shape ``x_shape``."""
    entries = _expand_bools(parse(index), x_shape)
    if sum(e.kind == _ELLIPSIS for e in entries) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    adv_pos = [k for k, e in enumerate(entries) if e.kind in (_INT, _ARRAY)]
    contiguous = bool(np.all(np.diff(adv_pos) == 1))
    scalar_bool_dims = tuple(k for k, e in enumerate(entries) if e.kind == _BOOL)
    # Scalar booleans add an axis of size 1, indexed by arange(0 or 1).
    shape = list(x_shape)
    for k in scalar_bool_dims:
        shape.insert(k, 1)
    entries = [_Entry(_ARRAY, np.arange(int(e.index), dtype=np.int32), 1) if e.kind == _BOOL
               else e for e in entries]
    used = sum(e.axes for e in entries)
    if used > len(shape):
        raise IndexError(f"too many indices for an array of {len(x_shape)} dimensions: "
                         f"{used} were given")
    fill = [_Entry(_SLICE, slice(None), 1)] * (len(shape) - used)
    if any(e.kind == _ELLIPSIS for e in entries):
        k = next(k for k, e in enumerate(entries) if e.kind == _ELLIPSIS)
        entries[k:k + 1] = fill
    else:
        entries += fill
    axis_of = []
    axis = 0
    for e in entries:
        axis_of.append(axis)
        axis += e.axes
    if normalize:
        entries = [e._replace(index=_normalize(e.index, shape[axis_of[k]]))
                   if e.kind in (_INT, _ARRAY) else e for k, e in enumerate(entries)]
    advanced = any(e.kind == _ARRAY and len(_shape(e.index)) > 0 for e in entries)
    adv = [(k, e.index, axis_of[k]) for k, e in enumerate(entries)
           if advanced and e.kind in (_INT, _ARRAY)]
    return _build(shape, entries, axis_of, adv, contiguous, scalar_bool_dims)


def _build(shape: Sequence[int], entries: list[_Entry], axis_of: list[int],
           adv: list[tuple[int, Any, int]], contiguous: bool,
           scalar_bool_dims: tuple[int, ...]) -> GatherIndexer:
    index_dtype = dt.int64 if max(shape, default=0) >= 2**31 else dt.int32
    offset_dims: list[int] = []
    collapsed: list[int] = []
    start_index_map: list[int] = []
    pieces: list[tuple[Any, int]] = []  # (index array, its first dimension in the indices)
    ind_shape: list[int] = []
    slice_shape: list[int] = []
    gather_slice_shape: list[int] = []
    newaxis: list[int] = []
    reversed_dims: list[int] = []
    y_axis = collapsed_y = 0
    adv_positions = [k for k, _, _ in adv]
    for k, e in enumerate(entries):
        if adv and k == (adv_positions[0] if contiguous else 0):
            arrays = _broadcast([_as_index_dtype(i, index_dtype) for _, i, _ in adv])
            bshape = list(_shape(arrays[0]))
            start = len(ind_shape)
            pieces += [(_as_index_dtype(a, index_dtype), start) for a in arrays]
            ind_shape += bshape
            start_index_map += [a for _, _, a in adv]
            collapsed += [a for _, _, a in adv]
            slice_shape += bshape
            y_axis += len(bshape)
            collapsed_y += len(bshape)
        if k in adv_positions:
            gather_slice_shape.append(1)
            continue
        x_axis = axis_of[k]
        if e.kind in (_INT, _ARRAY):  # a scalar index, no arrays around
            if shape[x_axis] == 0:
                raise IndexError(f"index is out of bounds for axis {x_axis} with size 0")
            pieces.append((_as_index_dtype(e.index, index_dtype), len(ind_shape)))
            collapsed.append(x_axis)
            gather_slice_shape.append(1)
            start_index_map.append(x_axis)
        elif e.kind == _NONE:
            slice_shape.append(1)
            newaxis.append(y_axis)
            y_axis += 1
        else:
            start, stop, step = e.index.indices(shape[x_axis])
            size = len(range(start, stop, step))
            slice_shape.append(size)
            if step == 1:
                if size != shape[x_axis]:
                    pieces.append((np.asarray(start, index_dtype), len(ind_shape)))
                    start_index_map.append(x_axis)
                gather_slice_shape.append(size)
                offset_dims.append(collapsed_y)
            else:
                positions: Any = lax.add(np.asarray(start, index_dtype), lax.mul(
                    np.asarray(step, index_dtype), lax.iota(index_dtype, size)))
                if step < 0:  # increasing positions, reversed after the gather
                    reversed_dims.append(collapsed_y)
                    positions = lax.rev(positions, (0,))
                pieces.append((positions, len(ind_shape)))
                start_index_map.append(x_axis)
                ind_shape.append(size)
                collapsed.append(x_axis)
                gather_slice_shape.append(1)
            collapsed_y += 1
            y_axis += 1
    indices = _stack(pieces, ind_shape, index_dtype)
    dnums = GatherDimensionNumbers(offset_dims=tuple(offset_dims),
                                   collapsed_slice_dims=tuple(sorted(collapsed)),
                                   start_index_map=tuple(start_index_map))
    return GatherIndexer(tuple(slice_shape), tuple(gather_slice_shape), indices, dnums,
                         bool(adv), tuple(reversed_dims), tuple(newaxis), scalar_bool_dims)


def _broadcast(arrays: list[Any]) -> list[Any]:
    shapes = [_shape(a) for a in arrays]
    try:
        target = np.broadcast_shapes(*shapes)
    except ValueError:
        # (ValueError, as JAX; NumPy raises IndexError.)
        raise ValueError(f"Incompatible shapes for broadcasting: shapes={shapes}: the index "
                         "arrays must broadcast together") from None
    out = []
    for a, s in zip(arrays, shapes):
        if s != target:
            a = lax.broadcast_in_dim(a, target, tuple(range(len(target) - len(s), len(target))))
        out.append(a)
    return out


def _stack(pieces: list[tuple[Any, int]], ind_shape: list[int], dtype: np.dtype[Any]) -> Any:
    if not pieces:
        return np.zeros((0,), dtype)
    if len(pieces) == 1:
        g = pieces[0][0]
        return lax.expand_dims(g, (len(_shape(g)),))
    full = (*ind_shape, 1)
    return lax.concatenate([lax.broadcast_in_dim(g, full, tuple(range(i, i + len(_shape(g)))))
                            for g, i in pieces], len(ind_shape))


def gather_getitem(x: Array, index: Any, *, mode: str | GatherScatterMode | None = None,
                   fill_value: Any = None, indices_are_sorted: bool = False,
                   unique_indices: bool = False, normalize: bool = True) -> Array:
    """``x[index]`` through one gather (and a reverse and new axes after); with
    ``normalize=False`` negative indices are out of bounds rather than from the end."""
    ix = index_to_gather(shape_of(x), index, normalize)
    y: Any = x
    if ix.scalar_bool_dims:
        y = lax.expand_dims(y, ix.scalar_bool_dims)
    if 0 in ix.slice_shape:
        return lax.full(ix.slice_shape, 0, aval_of(x).dtype)  # type: ignore[union-attr]  # x is an Array
    if 0 not in _shape(ix.gather_indices):
        y = lax.gather(y, ix.gather_indices, ix.dnums, ix.gather_slice_shape,
                       unique_indices=unique_indices or not ix.advanced,
                       indices_are_sorted=indices_are_sorted or not ix.advanced,
                       mode=mode, fill_value=fill_value)
    if ix.reversed_y_dims:
        y = lax.rev(y, ix.reversed_y_dims)
    if ix.newaxis_dims:
        y = lax.expand_dims(y, ix.newaxis_dims)
    out: Array = y
    return out

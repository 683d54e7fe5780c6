"""Taking and putting by index: ``take``, ``take_along_axis``, ``put``,
``put_along_axis``, ``place``, ``compress``, ``extract``.

Each is one gather or scatter with ``jax.numpy``'s dimension numbers and
out-of-bounds modes.  The functions that keep masked elements (``compress``,
``extract``, ``place``) have a result or work size set by the mask: they need its
value, or a static ``size=``, as in JAX.
"""

from __future__ import annotations

import operator
import string
from typing import Any

import numpy as np

from plait.frontend import lax
from plait.frontend.core.array_base import Array
from plait.frontend.numpy._core import as_array, canonical_axis, check_arraylike, ndim, shape
from plait.frontend.numpy.arithmetic import remainder
from plait.frontend.numpy.einsum import einsum
from plait.frontend.numpy.index_tricks import unravel_index
from plait.frontend.numpy.manipulation import (
    argsort,
    broadcast_shapes,
    broadcast_to,
    expand_dims,
    moveaxis,
    ravel,
    reshape,
)
from plait.frontend.numpy.nonzero import nonzero
from plait.frontend.numpy.reductions import any as any_
from plait.frontend.numpy.ufuncs import clip, where
from plait.ir import dtypes as dt
from plait.ir.primitives.indexing import GatherDimensionNumbers, GatherScatterMode

__all__ = ["take", "take_along_axis", "put", "put_along_axis", "place", "compress", "extract"]


def _normalized(indices: Array, size: int) -> Array:
    """Negative indices counted from the end (unsigned ones are left alone)."""
    if dt.is_unsigned(indices.dtype):
        return indices
    return lax.select(lax.lt(indices, 0), lax.add(indices, lax.full((), size, indices.dtype)),
                      indices)


def take(a: Any, indices: Any, axis: int | None = None, out: None = None,
         mode: str | None = None, unique_indices: bool = False,
         indices_are_sorted: bool = False, fill_value: Any = None) -> Array:
    """Elements of ``a`` at ``indices`` along ``axis`` (of the flattened ``a`` when
    ``axis`` is None).  ``mode``: ``'fill'`` (default; out-of-bounds indices read
    ``fill_value``, NaN by default), ``'clip'`` or ``'wrap'``."""
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.take is not supported.")
    check_arraylike("take", a, indices)
    arr, idx = as_array(a), as_array(indices)
    if axis is None:
        arr, axis_ = ravel(arr), 0
    else:
        axis_ = canonical_axis(operator.index(axis), ndim(arr))
    n = shape(arr)[axis_]
    if mode is None or mode == "fill":
        gather_mode = GatherScatterMode.FILL_OR_DROP
        idx = _normalized(idx, n)
    elif mode == "raise":
        raise NotImplementedError("The 'raise' mode to jnp.take is not supported.")
    elif mode == "wrap":
        idx = remainder(idx, lax.full((), n, idx.dtype))
        gather_mode = GatherScatterMode.PROMISE_IN_BOUNDS
    elif mode == "clip":
        gather_mode = GatherScatterMode.CLIP
    else:
        raise ValueError(f"Invalid mode '{mode}' for np.take")
    sizes = list(shape(arr))
    ishape = shape(idx)
    if n == 0:
        if idx.size:
            raise IndexError("Cannot do a non-empty jnp.take() from an empty axis.")
        return arr
    if idx.size == 0:
        return lax.full((*sizes[:axis_], *ishape, *sizes[axis_ + 1:]), 0, arr.dtype)
    sizes[axis_] = 1
    k = len(ishape)
    dn = GatherDimensionNumbers(
        offset_dims=(*range(axis_), *range(axis_ + k, ndim(arr) + k - 1)),
        collapsed_slice_dims=(axis_,), start_index_map=(axis_,))
    return lax.gather(arr, lax.expand_dims(idx, (k,)), dn, sizes, mode=gather_mode,
                      unique_indices=unique_indices, indices_are_sorted=indices_are_sorted,
                      fill_value=fill_value)


def _index_dtype(d: np.dtype[Any], size: int) -> np.dtype[Any]:
    # The index dtype must hold the axis size, and negative values when they wrap.
    if dt.is_signed(d) and dt.int_range(d)[1] >= size:
        return d
    return dt.int64 if size >= 2**31 and dt.canonicalize(dt.int64) == dt.int64 else dt.int32


def take_along_axis(arr: Any, indices: Any, axis: int | None = -1,
                    mode: str | GatherScatterMode | None = None, fill_value: Any = None, *,
                    wrap_negative_indices: bool | None = None) -> Array:
    """``arr`` indexed along ``axis`` by ``indices`` of the same rank, whose other
    dimensions broadcast against ``arr``'s (as ``argsort``'s result does)."""
    check_arraylike("take_along_axis", arr, indices)
    a, idx = as_array(arr), as_array(indices)
    if not dt.is_integer(idx.dtype):
        raise TypeError(f"take_along_axis indices must be of integer type, got {idx.dtype}")
    if axis is None:
        if ndim(idx) != 1:
            raise ValueError(f"take_along_axis indices must be 1D if axis=None, got shape "
                             f"{shape(idx)}")
        a, axis = ravel(a), 0
    rank = ndim(a)
    if rank != ndim(idx):
        raise ValueError(f"indices and arr must have the same number of dimensions; "
                         f"{ndim(idx)} vs. {rank}")
    ax = canonical_axis(operator.index(axis), rank)
    a_shape, i_shape = shape(a), shape(idx)
    size = a_shape[ax]
    arr_shape = tuple(1 if d == ax else s for d, s in enumerate(a_shape))
    out_shape = broadcast_shapes(i_shape, arr_shape)
    if size == 0:
        return lax.full(out_shape, 0, a.dtype)
    if wrap_negative_indices is None:
        wrap_negative_indices = mode != "promise_in_bounds"
    d = _index_dtype(idx.dtype, size) if wrap_negative_indices else idx.dtype
    if d != idx.dtype:
        idx = lax.convert_element_type(idx, d)
    if wrap_negative_indices:
        idx = _normalized(idx, size)
    if mode == "one_hot":
        return _take_one_hot(a, idx, ax, size)
    index_dims = [d for d, s in enumerate(i_shape) if d == ax or s != 1]
    idx = reshape(idx, (*(out_shape[d] for d in index_dims), 1))
    slice_sizes, offset, start_map, collapsed, obatch, ibatch, squeeze = [], [], [], [], [], [], []
    new_i = j = 0
    for i in range(rank):
        if i == ax:
            slice_sizes.append(1)
            start_map.append(new_i)
            collapsed.append(new_i)
            new_i += 1
            j += 1
        elif i_shape[i] == 1:  # the whole axis of arr: no index needed
            offset.append(i)
            slice_sizes.append(a_shape[i])
            new_i += 1
        elif a_shape[i] == 1:  # arr broadcasts: squeeze it away
            squeeze.append(i)
            j += 1
        else:  # paired dimensions: a batched gather
            slice_sizes.append(0 if a_shape[i] == 0 else 1)
            obatch.append(new_i)
            ibatch.append(j)
            new_i += 1
            j += 1
    if squeeze:
        a = lax.squeeze(a, squeeze)
    dn = GatherDimensionNumbers(tuple(offset), tuple(collapsed), tuple(start_map),
                                tuple(obatch), tuple(ibatch))
    return lax.gather(a, idx, dn, slice_sizes, mode="fill" if mode is None else mode,
                      fill_value=fill_value)


def _take_one_hot(a: Array, idx: Array, axis: int, size: int) -> Array:
    # A contraction with the one-hot encoding of the indices (JAX's mode="one_hot").
    hot = lax.eq(lax.expand_dims(idx, (ndim(idx),)),
                 lax.broadcast_in_dim(lax.iota(idx.dtype, size), (*shape(idx), size),
                                      (ndim(idx),)))
    if ndim(a) == 1:
        return einsum("...b,b->...", hot, a, preferred_element_type=a.dtype)
    if axis > len(string.ascii_letters) - 2:
        raise ValueError("One Hot indexing is only supported for up to 50 leading dimensions.")
    labels = string.ascii_letters[:axis]
    return einsum(f"{labels}y...z,{labels}z...->{labels}y...", hot, a,
                  preferred_element_type=a.dtype)


def _inplace_error(name: str) -> ValueError:
    return ValueError(f"jax.numpy.{name} cannot modify arrays in-place, because JAX arrays "
                      "are immutable. Pass inplace=False to instead return an updated array.")


def put_along_axis(arr: Any, indices: Any, values: Any, axis: int | None,
                   inplace: bool = True, *, mode: str | None = None) -> Array:
    """A copy of ``arr`` with ``values`` written where ``take_along_axis`` reads
    (``inplace=False`` is required: arrays are immutable)."""
    if inplace:
        raise _inplace_error("put_along_axis")
    check_arraylike("put_along_axis", arr, indices, values)
    a, idx, v = as_array(arr), as_array(indices), as_array(values)
    original = shape(a)
    if axis is None:
        a, axis = ravel(a), 0
    if ndim(a) != ndim(idx):
        raise ValueError(f"put_along_axis arguments 'arr' and 'indices' must have same ndim. "
                         f"Got arr.ndim={ndim(a)} and indices.ndim={ndim(idx)}.")
    try:
        v = broadcast_to(v, shape(idx))
    except ValueError:
        raise ValueError(f"put_along_axis argument 'values' must be broadcastable to "
                         f"'indices'. Got values.shape={shape(v)} and "
                         f"indices.shape={shape(idx)}.") from None
    ax = canonical_axis(operator.index(axis), ndim(a))
    grids: list[Any] = [lax.broadcasted_iota(dt.int32, tuple(
        s if k == d else 1 for k, s in enumerate(shape(a))), d) for d in range(ndim(a))]
    grids[ax] = idx
    return reshape(a.at[tuple(grids)].set(v, mode=mode), original)


def _tile_to(v: Array, n: int) -> Array:
    reps = -(-n // v.size)
    flat = ravel(v)
    if reps > 1:
        flat = lax.concatenate([flat] * reps, 0)
    return flat[:n]


def put(a: Any, ind: Any, v: Any, mode: str | None = None, *, inplace: bool = True) -> Array:
    """A copy of ``a`` with the flat positions ``ind`` set to ``v`` (repeated to fit);
    ``mode``: ``None`` (as JAX: positions past the end go to the last element),
    ``'clip'`` or ``'wrap'``."""
    if inplace:
        raise _inplace_error("put")
    check_arraylike("put", a, ind, v)
    arr, idx, vals = as_array(a), ravel(as_array(ind)), ravel(as_array(v))
    if not arr.size or not idx.size or not vals.size:
        return arr
    vals = _tile_to(vals, idx.size)
    if mode is None:
        scatter_mode = "drop"
    elif mode == "clip":
        idx = clip(idx, 0, arr.size - 1)
        scatter_mode = "promise_in_bounds"
    elif mode == "wrap":
        idx = remainder(idx, lax.full((), arr.size, idx.dtype))
        scatter_mode = "promise_in_bounds"
    elif mode == "raise":
        raise NotImplementedError("The 'raise' mode to jnp.put is not supported.")
    else:
        raise ValueError(f"mode should be one of 'wrap' or 'clip'; got mode={mode!r}")
    # (unravel_index clamps flat positions into the array, as JAX's does.)
    return arr.at[unravel_index(idx, shape(arr))].set(vals, mode=scatter_mode)


def place(arr: Any, mask: Any, vals: Any, *, inplace: bool = True) -> Array:
    """A copy of ``arr`` with its ``mask``-ed elements, in order, set from ``vals``
    (repeated to fit)."""
    if inplace:
        raise _inplace_error("place")
    check_arraylike("place", arr, mask, vals)
    data, m, v = as_array(arr), as_array(mask), ravel(as_array(vals))
    if data.size != m.size:
        raise ValueError("place: arr and mask must be the same size")
    if not v.size:
        raise ValueError("Cannot place values from an empty array")
    if not data.size:
        return data
    indices = nonzero(ravel(m), size=m.size, fill_value=m.size)[0]
    return reshape(ravel(data).at[indices].set(_tile_to(v, m.size), mode="drop"), shape(data))


def compress(condition: Any, a: Any, axis: int | None = None, *, size: int | None = None,
             fill_value: Any = 0, out: None = None) -> Array:
    """The slices of ``a`` along ``axis`` where ``condition`` is true (``size=`` makes
    the length static, padding with ``fill_value``); ``a`` is cut to the condition's
    length, and true entries past ``a``'s end are an error."""
    check_arraylike("compress", condition, a, fill_value)
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.compress is not supported.")
    cond, arr = as_array(condition).astype(bool), as_array(a)
    if ndim(cond) != 1:
        raise ValueError("condition must be a 1D array")
    if axis is None:
        axis, arr = 0, ravel(arr)
    else:
        arr = moveaxis(arr, axis, 0)
    n = shape(arr)[0]
    cond, extra = cond[:n], cond[n:]
    arr = arr[:shape(cond)[0]]
    if size is None:
        if any_(extra):
            raise ValueError("condition contains entries that are out of bounds")
        result = arr[cond]
    elif not 0 <= size <= shape(arr)[0]:
        raise ValueError("size must be positive and not greater than the size of the array "
                         f"axis; got size={size} for a.shape[axis]={shape(arr)[0]}")
    else:
        mask = expand_dims(cond, tuple(range(1, ndim(arr))))
        arr = where(mask, arr, as_array(np.asarray(fill_value)).astype(arr.dtype))
        result = arr[argsort(cond, stable=True, descending=True)][:size]
    return moveaxis(result, 0, axis)


def extract(condition: Any, arr: Any, *, size: int | None = None, fill_value: Any = 0) -> Array:
    """The elements of ``arr`` where ``condition`` is nonzero, flattened."""
    check_arraylike("extract", condition, arr)
    return compress(ravel(as_array(condition)), ravel(as_array(arr)), size=size,
                    fill_value=fill_value)

"""``insert`` and ``delete`` along an axis, as ``jax.numpy`` computes them: scatters of
the kept and the new entries into place, and gathers of the kept ones."""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from plait.frontend import lax
from plait.frontend.core.array_base import Array
from plait.frontend.core.tracing import has_value
from plait.frontend.numpy._core import as_array, canonical_axis, check_arraylike, ndim, shape
from plait.frontend.numpy.creation import arange, asarray, full, ones, zeros
from plait.frontend.numpy.manipulation import (
    argsort,
    broadcast_shapes,
    concatenate,
    moveaxis,
    ravel,
    sort,
)
from plait.frontend.numpy.nonzero import nonzero
from plait.frontend.numpy.reductions import sum as sum_
from plait.frontend.numpy.ufuncs import clip, greater_equal, where
from plait.ir import dtypes as dt
from plait.ir.errors import ConcretizationTypeError

__all__ = ["insert", "delete"]


def _leading(axis: int) -> tuple[slice, ...]:
    return (slice(None),) * axis


def delete(arr: Any, obj: Any, axis: int | None = None, *,
           assume_unique_indices: bool = False) -> Array:
    """``arr`` without the entries ``obj`` (an int, a slice, integer indices or a boolean
    mask) along ``axis`` (of the flattened array when None).  Integer indices must be
    concrete unless ``assume_unique_indices=True``."""
    check_arraylike("delete", arr)
    a = as_array(arr)
    if axis is None:
        a, axis = ravel(a), 0
    ax = canonical_axis(operator.index(axis), ndim(a))
    n = shape(a)[ax]
    if isinstance(obj, int | np.integer):
        i = canonical_axis(int(obj), n, "obj")
        lead = _leading(ax)
        return concatenate([a[lead + (slice(0, i),)], a[lead + (slice(i + 1, None),)]], axis=ax)
    if isinstance(obj, slice):
        obj, assume_unique_indices = np.arange(n)[obj], True
    check_arraylike("delete", a, obj)
    obj_dtype = obj.dtype if hasattr(obj, "dtype") else np.asarray(obj).dtype
    if dt.is_integer(np.dtype(obj_dtype)) and assume_unique_indices:
        # Position i of the result reads i plus the number of deleted positions before it.
        idx = sort(clip(ravel(asarray(obj)), -n, n - 1))
        idx = where(idx < 0, idx + n, idx)
        idx = idx - arange(shape(idx)[0], dtype=idx.dtype)
        kept = arange(n - shape(idx)[0], dtype=idx.dtype)
        kept = kept + sum_(greater_equal(kept[None, :], idx[:, None]), axis=0, dtype=idx.dtype)
        return a[_leading(ax) + (kept,)]
    if not has_value(obj):
        raise ConcretizationTypeError(
            "The 'obj' array argument of jnp.delete() must be concrete: the length of the "
            "result depends on its values. Pass assume_unique_indices=True for unique "
            "integer indices under jit.")
    values = np.asarray(obj)
    if dt.is_integer(values.dtype):
        mask = np.ones(n, dtype=bool)
        mask[values] = False
    elif values.dtype == bool:
        if values.shape != (n,):
            raise ValueError("np.delete(arr, obj): for boolean obj, obj.shape must match "
                             f"arr.shape[axis]={(n,)}; got obj.shape={values.shape}")
        mask = ~values
    else:
        raise ValueError(f"np.delete(arr, obj): got obj.dtype={values.dtype}; must be integer "
                         "or bool.")
    return a[_leading(ax) + (mask,)]


def insert(arr: Any, obj: Any, values: Any, axis: int | None = None) -> Array:
    """``arr`` with ``values`` inserted before the positions ``obj`` (an int, a slice or
    integer indices) along ``axis`` (of the flattened array when None)."""
    check_arraylike("insert", arr, 0 if isinstance(obj, slice) else obj, values)
    a = as_array(arr)
    if axis is None:
        a, axis = ravel(a), 0
    ax = canonical_axis(operator.index(axis), ndim(a))
    n = shape(a)[ax]
    indices = arange(*obj.indices(n)) if isinstance(obj, slice) else asarray(obj)
    if ndim(indices) > 1:
        raise ValueError("jnp.insert(): obj must be a slice, a one-dimensional array, or a "
                         f"scalar; got {obj}")
    if not dt.is_integer(indices.dtype):
        if indices.size == 0 and not isinstance(obj, Array):
            indices = indices.astype(dt.canonicalize(np.dtype(int)))
        else:
            raise ValueError(f"jnp.insert(): index array must be integer typed; got {obj}")
    vals = asarray(values, dtype=a.dtype)
    if ndim(vals) < ndim(a):
        vals = lax.reshape(vals, (1,) * (ndim(a) - ndim(vals)) + shape(vals))
    if indices.size == 1:
        index = ravel(indices)[0]
        if ndim(indices) == 0:
            vals = moveaxis(vals, 0, ax)
        indices = full(shape(vals)[ax], index)
    n_insert = broadcast_shapes(shape(indices), (shape(vals)[ax],))[0]
    out_shape = list(shape(a))
    out_shape[ax] += n_insert
    out = zeros(tuple(out_shape), a.dtype)
    indices = clip(where(indices < 0, indices + n, indices), 0, n)
    # New entries land at their index plus the number of new entries before them.
    at_new = indices.at[argsort(indices)].add(arange(n_insert, dtype=indices.dtype))
    kept = ones(n + n_insert, dtype=bool).at[at_new].set(False)
    at_kept = nonzero(kept, size=n)[0]
    lead = _leading(ax)
    out = out.at[lead + (at_new,)].set(vals)
    return out.at[lead + (at_kept,)].set(a)

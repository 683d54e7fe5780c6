"""Positions of nonzero elements: ``nonzero``, ``flatnonzero``, ``argwhere``,
``mask_indices`` and the one-argument ``where``.

Their result length is the number of nonzero elements, a value: under ``jit`` it
must be given as ``size=`` (extra entries read ``fill_value``, by default 0), as in
JAX.  The positions come from a scatter-add of ones at the running counts, as
JAX computes them.
"""

from __future__ import annotations

import operator
from typing import Any, overload

import numpy as np

from plait.frontend import lax
from plait.frontend.core.array_base import Array
from plait.frontend.core.tracing import has_value
from plait.frontend.numpy import arithmetic, ufuncs
from plait.frontend.numpy._core import as_array, check_arraylike, ndim, shape
from plait.frontend.numpy.counting import bincount
from plait.frontend.numpy.manipulation import atleast_1d, ravel, reshape, stack, transpose
from plait.frontend.numpy.reductions import cumsum
from plait.frontend.numpy.reductions import sum as sum_
from plait.ir import dtypes as dt
from plait.ir.errors import ConcretizationTypeError

__all__ = ["nonzero", "flatnonzero", "argwhere", "where", "mask_indices"]


def _static_size(count: Array, name: str) -> int:
    if not has_value(count):
        raise ConcretizationTypeError(
            f"The size argument of jnp.{name} must be statically specified to use "
            f"jnp.{name} within JAX transformations: the number of nonzero elements is the "
            "length of the result, unknown while tracing. Pass size= (and fill_value=).")
    return int(count)


def nonzero(a: Any, *, size: int | None = None,
            fill_value: Any = None) -> tuple[Array, ...]:
    """The indices of the nonzero elements of ``a``, one array per dimension.

    Raises:
      ValueError: ``a`` is 0-d, or ``fill_value`` is neither a scalar nor one per
        dimension.
      ConcretizationTypeError: ``a`` is traced and ``size`` is not given.
    """
    check_arraylike("nonzero", a)
    arr = as_array(a)
    if ndim(arr) == 0:
        raise ValueError("Calling nonzero on 0d arrays is not allowed. "
                         "Use jnp.atleast_1d(scalar).nonzero() instead.")
    mask = arr if arr.dtype == dt.bool_ else ufuncs.not_equal(arr, 0)
    count = sum_(mask)
    n = _static_size(count, "nonzero") if size is None else int(size)
    int_dtype = dt.canonicalize(np.dtype(int))
    if arr.size == 0 or n == 0:
        return tuple(lax.full((n,), 0, int_dtype) for _ in shape(arr))
    # Entry k of the result is the flat position of the (k+1)-th nonzero element: the
    # number of positions whose running count is at most k.
    flat = cumsum(bincount(cumsum(ravel(mask)), length=n))
    strides = (np.cumprod(shape(arr)[::-1])[::-1] // shape(arr)).astype(int_dtype)
    out = tuple(arithmetic.remainder(arithmetic.floor_divide(flat, int(st)), int(d))
                for st, d in zip(strides, shape(arr)))
    if fill_value is not None:
        fills = fill_value if isinstance(fill_value, tuple) else (fill_value,) * ndim(arr)
        if len(fills) != ndim(arr) or any(np.shape(f) != () for f in fills):
            raise ValueError(f"fill_value must be a scalar or a tuple of length {ndim(arr)}; "
                             f"got {fill_value}")
        pad = ufuncs.greater_equal(lax.iota(int_dtype, n), count)
        out = tuple(ufuncs.where(pad, f, o) for f, o in zip(fills, out))
    return out


def flatnonzero(a: Any, *, size: int | None = None, fill_value: Any = None) -> Array:
    """The indices of the nonzero elements of the flattened ``a``."""
    check_arraylike("flatnonzero", a)
    return nonzero(ravel(as_array(a)), size=size, fill_value=fill_value)[0]


def argwhere(a: Any, *, size: int | None = None, fill_value: Any = None) -> Array:
    """The indices of the nonzero elements of ``a``, one row per element."""
    check_arraylike("argwhere", a)
    arr = as_array(a)
    rows = transpose(stack(nonzero(atleast_1d(arr), size=size, fill_value=fill_value)))
    if ndim(arr) == 0:
        return reshape(rows[:0], (shape(rows)[0], 0))
    return reshape(rows, (shape(rows)[0], ndim(arr)))


@overload
def where(condition: Any, x: None = None, y: None = None, /, *, size: int | None = None,
          fill_value: Any = None) -> tuple[Array, ...]: ...


@overload
def where(condition: Any, x: Any, y: Any, /, *, size: None = None,
          fill_value: None = None) -> Array: ...


def where(condition: Any, x: Any = None, y: Any = None, /, *, size: int | None = None,
          fill_value: Any = None) -> Array | tuple[Array, ...]:
    """``x`` where ``condition`` else ``y``, elementwise; with only ``condition``,
    ``nonzero(condition, size=size, fill_value=fill_value)``."""
    if x is None and y is None:
        check_arraylike("where", condition)
        return nonzero(condition, size=size, fill_value=fill_value)
    if size is not None or fill_value is not None:
        raise ValueError("size and fill_value arguments cannot be used in three-term where "
                         "function.")
    return ufuncs.where(condition, x, y)


def mask_indices(n: int, mask_func: Any, k: int = 0, *,
                 size: int | None = None) -> tuple[Array, Array]:
    """The indices where ``mask_func(ones((n, n)), k)`` (``triu``, ``tril`` ...) is
    nonzero."""
    ones = lax.full((operator.index(n), operator.index(n)), 1, dt.canonicalize(np.dtype(float)))
    i, j = nonzero(mask_func(ones, k), size=size)
    return i, j

"""Searching sorted arrays and testing membership: ``searchsorted``, ``digitize``, ``isin``.

Results equal ``jax.numpy``'s, in NumPy's total order (NaNs last, ``-0.0`` equal to
``0.0``). Every ``method`` is computed the way JAX's ``'compare_all'`` is: each query
is compared with every element. That costs ``O(len(a) * len(v))``, where JAX's
default binary search (a gather per step) costs ``O(len(v) * log(len(a)))``;
plait has no gather yet.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from plait.frontend.core.array_base import Array
from plait.frontend.core.promotion import result_type
from plait.frontend.numpy import reductions, ufuncs
from plait.frontend.numpy._core import ndim, shape
from plait.frontend.numpy.creation import asarray
from plait.frontend.numpy.manipulation import expand_dims, ravel
from plait.ir import dtypes as dt

__all__ = ["searchsorted", "digitize", "isin"]

_METHODS = ("scan", "scan_unrolled", "sort", "compare_all")


def _before(x: Array, y: Array, strict: bool) -> Array:
    """``x < y`` (``x <= y`` unless ``strict``) in NumPy's sort order: NaNs last."""
    if dt.is_complex(x.dtype):
        xr, xi, yr, yi = ufuncs.real(x), ufuncs.imag(x), ufuncs.real(y), ufuncs.imag(y)
        tie = ufuncs.logical_and(ufuncs.equal(xr, yr),
                                 ufuncs.less(xi, yi) if strict else ufuncs.less_equal(xi, yi))
        return ufuncs.logical_or(ufuncs.less(xr, yr), tie)
    if not dt.is_inexact(x.dtype):
        return ufuncs.less(x, y) if strict else ufuncs.less_equal(x, y)
    if strict:  # a number is before NaN; NaN before nothing
        return ufuncs.logical_or(ufuncs.less(x, y),
                                 ufuncs.logical_and(ufuncs.isnan(y),
                                                    ufuncs.logical_not(ufuncs.isnan(x))))
    return ufuncs.logical_or(ufuncs.less_equal(x, y), ufuncs.isnan(y))


def searchsorted(a: Any, v: Any, side: str = "left", sorter: Any = None, *,
                 method: str = "scan") -> Array:
    """Where to insert ``v`` into the sorted 1-d ``a`` to keep it sorted.

    ``side='left'`` gives the first such position, ``'right'`` the last.

    Raises:
      ValueError: ``a`` is not 1-d, or ``side`` or ``method`` is unknown.
      NotImplementedError: a ``sorter`` (it needs a gather, which plait lacks yet).
    """
    if side not in ("left", "right"):
        raise ValueError(f"searchsorted: expected side 'left' or 'right', but got {side!r}")
    if method not in _METHODS:
        raise ValueError(f"searchsorted: expected method in {_METHODS}, but got {method!r}")
    if sorter is not None:
        raise NotImplementedError("searchsorted: sorter= needs a gather, which plait does not "
                                  "support yet; sort a first")
    a, v = asarray(a), asarray(v)
    if ndim(a) != 1:
        raise ValueError(f"searchsorted: expected a 1-d sorted array, but got shape "
                         f"{tuple(shape(a))}")
    common = result_type(a, v)
    a, v = a.astype(common), v.astype(common)
    # One row per query: how many elements of a come before it.
    before = _before(a, expand_dims(v, -1), strict=(side == "left"))
    index_dtype = dt.canonicalize(np.dtype(int)) if shape(a)[0] > 2**31 - 1 else dt.int32
    return reductions.sum(before, axis=-1, dtype=index_dtype)


def digitize(x: Any, bins: Any, right: bool = False, *, method: str | None = None) -> Array:
    """The index of the bin of each ``x``; ``bins`` increasing or decreasing (1-d).

    Raises:
      ValueError: ``bins`` is not 1-d.
    """
    x, bins = asarray(x), asarray(bins)
    if ndim(bins) != 1:
        raise ValueError(f"digitize: expected 1-d bins, but got shape {tuple(shape(bins))}")
    n = shape(bins)[0]
    side = "left" if right else "right"
    how = "scan" if method is None else method
    if n == 0:
        return ufuncs.multiply(x, 0).astype(dt.int32)
    increasing = searchsorted(bins, x, side=side, method=how)
    # Decreasing bins: count from the end in the reversed (increasing) bins.
    decreasing = ufuncs.subtract(n, searchsorted(bins[::-1], x, side=side, method=how))
    return ufuncs.where(ufuncs.greater_equal(bins[-1], bins[0]), increasing, decreasing)


def isin(element: Any, test_elements: Any, assume_unique: bool = False, invert: bool = False,
         *, method: str = "auto") -> Array:
    """Whether each of ``element`` is in ``test_elements`` (``invert`` negates it)."""
    if method not in ("auto", "compare_all", "binary_search", "sort"):
        raise ValueError(f"isin: expected method 'auto', 'compare_all', 'binary_search' or "
                         f"'sort', but got {method!r}")
    element, tests = asarray(element), ravel(asarray(test_elements))
    found = reductions.any(ufuncs.equal(expand_dims(element, -1), tests), axis=-1)
    return ufuncs.logical_not(found) if invert else found

"""Searching sorted arrays and testing membership: ``searchsorted``, ``digitize``, ``isin``.

Results equal ``jax.numpy``'s, in NumPy's total order (NaNs last, ``-0.0`` equal to
``0.0``), with JAX's methods: ``'scan'`` (the default) and ``'scan_unrolled'`` are a
binary search, one gather per halving (in a ``fori_loop``, or unrolled);
``'sort'`` ranks queries and elements in one sort; ``'compare_all'`` compares each
query with every element.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from plait.frontend import lax
from plait.frontend.api.control_flow import fori_loop
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

    ``sorter``: indices that sort ``a`` (as ``argsort`` gives), when it is not sorted.

    Raises:
      ValueError: ``a`` is not 1-d, or ``side`` or ``method`` is unknown.
    """
    if side not in ("left", "right"):
        raise ValueError(f"searchsorted: expected side 'left' or 'right', but got {side!r}")
    if method not in _METHODS:
        raise ValueError(f"searchsorted: expected method in {_METHODS}, but got {method!r}")
    a, v = asarray(a), asarray(v)
    if ndim(a) != 1:
        raise ValueError(f"searchsorted: expected a 1-d sorted array, but got shape "
                         f"{tuple(shape(a))}")
    common = result_type(a, v)
    a, v = a.astype(common), v.astype(common)
    if sorter is not None:
        a = a[asarray(sorter)]
    n = shape(a)[0]
    index_dtype = dt.canonicalize(np.dtype(int)) if n > 2**31 - 1 else dt.int32
    if n == 0:
        return lax.full(shape(v), 0, index_dtype)
    if method in ("scan", "scan_unrolled"):
        return _binary_search(a, v, side, method == "scan_unrolled").astype(index_dtype)
    if method == "sort":
        return _by_sorting(a, v, side).astype(index_dtype)
    # One row per query: how many elements of a come before it.
    before = _before(a, expand_dims(v, -1), strict=(side == "left"))
    return reductions.sum(before, axis=-1, dtype=index_dtype)


def _binary_search(a: Array, v: Array, side: str, unrolled: bool) -> Array:
    # The insertion point stays in [low, high]; each step halves it with one gather.
    n = shape(a)[0]
    levels = int(np.ceil(np.log2(n + 1)))

    def step(_: Any, bounds: tuple[Array, Array]) -> tuple[Array, Array]:
        low, high = bounds
        mid = low + (high - low) // 2
        go_left = _before(v, a[mid], strict=(side == "right"))
        return ufuncs.where(go_left, low, mid), ufuncs.where(go_left, mid, high)
    bounds = (lax.full(shape(v), 0, dt.uint32), lax.full(shape(v), n, dt.uint32))
    if unrolled:
        for i in range(levels):
            bounds = step(i, bounds)
    else:
        bounds = fori_loop(0, levels, step, bounds)
    return bounds[1]


def _by_sorting(a: Array, v: Array, side: str) -> Array:
    # A query's insertion point is its rank among queries and elements together, less
    # its rank among the queries.
    def rank(x: Array) -> Array:
        idx = lax.iota(dt.int32, shape(x)[0])
        return lax.full(shape(idx), 0, dt.int32).at[lax.sort((x, idx), num_keys=1)[1]].set(idx)
    q = ravel(v)
    nq = shape(q)[0]
    if side == "left":
        both = rank(lax.concatenate([q, a], 0))[:nq]
    else:
        both = rank(lax.concatenate([a, q], 0))[shape(a)[0]:]
    return lax.reshape(both - rank(q), shape(v))


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
    if method in ("auto", "compare_all") or tests.size == 0:  # JAX's 'auto' compares all
        found = reductions.any(ufuncs.equal(expand_dims(element, -1), tests), axis=-1)
    else:  # 'binary_search', and 'sort' (the same answers): look up in the sorted tests
        common = result_type(element, tests)
        element, tests = element.astype(common), lax.sort(tests.astype(common))
        found = ufuncs.equal(element, tests[searchsorted(tests, element)])
    return ufuncs.logical_not(found) if invert else found

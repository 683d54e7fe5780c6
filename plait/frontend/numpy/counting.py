"""Counting into bins: ``bincount``, ``histogram_bin_edges``, ``histogram``,
``histogram2d``, ``histogramdd``.

Results equal ``jax.numpy``'s; as in JAX, values add into their bins with a
scatter-add (``zeros.at[index].add(weights)``), dropping indices past the end.
"""

from __future__ import annotations

import builtins
import math
import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

from plait.frontend import lax
from plait.frontend.api.explicit_sharding import reshard
from plait.frontend.core.array_base import Array
from plait.frontend.core.promotion import result_type
from plait.frontend.numpy import reductions, ufuncs
from plait.frontend.numpy._core import ndim, shape
from plait.frontend.numpy.creation import asarray, linspace, ones_like
from plait.frontend.numpy.index_tricks import ix_, ravel_multi_index
from plait.frontend.numpy.manipulation import ravel, reshape, stack
from plait.frontend.numpy.searching import searchsorted
from plait.ir import dtypes as dt

__all__ = ["bincount", "histogram_bin_edges", "histogram", "histogramdd", "histogram2d"]


def _sum_into_bins(bin_index: Array, weights: Array, n_bins: int) -> Array:
    """``out[k] = sum(weights[bin_index == k])`` for ``k < n_bins``; other indices drop."""
    return lax.full((n_bins,), 0, weights.dtype).at[bin_index].add(weights, mode="drop")


def bincount(x: Any, weights: Any = None, minlength: int = 0, *,
             length: int | None = None, out_sharding: Any = None) -> Array:
    """How often each non-negative int occurs in the 1-d ``x`` (summing ``weights``).

    As in JAX, negative values count in bin 0 and values past ``length`` are
    dropped; without ``length`` the length is ``max(x) + 1``, which needs concrete
    values (pass ``length=`` under ``jit``).

    Raises:
      TypeError: ``x`` is not of an integer (or bool) dtype.
      ValueError: ``x`` is not 1-d, or ``minlength`` is negative.
    """
    values = asarray(x)
    if not (dt.is_integer(values.dtype) or dt.is_bool(values.dtype)):
        raise TypeError(f"bincount: expected integer values, but got {values.dtype}")
    if ndim(values) != 1:
        raise ValueError(f"bincount: expected a 1-d array, but got shape "
                         f"{tuple(shape(values))}")
    minlength = operator.index(minlength)
    if minlength < 0:
        raise ValueError(f"bincount: expected a non-negative minlength, but got {minlength}")
    if length is None:
        # int() of a traced maximum raises JAX's concretization error, naming the cause.
        top = int(reductions.max(ufuncs.clip(values, 0, None))) + 1 if shape(values)[0] else 0
        length = builtins.max(minlength, top)
    n_bins = operator.index(length)
    if weights is None:
        w = ones_like(values, dtype=dt.canonicalize(np.dtype(int)))
    else:
        w = asarray(weights)
        if shape(w) != shape(values):
            raise ValueError(f"bincount: expected weights of shape {tuple(shape(values))}, "
                             f"but got {tuple(shape(w))}")
    index = ufuncs.clip(values.astype(dt.int32), 0, None)  # negative values count in bin 0
    counts = _sum_into_bins(index, w, n_bins)
    return counts if out_sharding is None else reshard(counts, out_sharding)


def histogram_bin_edges(a: Any, bins: Any = 10, range: Any = None,
                        weights: Any = None) -> Array:
    """The edges of ``bins`` equal bins over ``range`` (the data's min and max by
    default), or ``bins`` itself when it is an array of edges."""
    if ndim(bins) == 1:
        return asarray(bins)
    a = ravel(asarray(a))
    dtype = result_type(a, 1.0)
    if not dt.is_inexact(dtype):
        dtype = dt.canonicalize(np.dtype(float))
    n = operator.index(bins)
    if n < 1:
        raise ValueError(f"histogram: expected a positive number of bins, but got {n}")
    if range is None:
        lo, hi = reductions.min(a).astype(dtype), reductions.max(a).astype(dtype)
    else:
        lo, hi = asarray(range[0], dtype), asarray(range[1], dtype)
    # Equal bounds: a unit-wide range around them, as NumPy and JAX.
    same = ufuncs.equal(lo, hi)
    lo = ufuncs.where(same, ufuncs.subtract(lo, 0.5), lo)
    hi = ufuncs.where(same, ufuncs.add(hi, 0.5), hi)
    return linspace(lo, hi, n + 1, dtype=dtype)


def histogram(a: Any, bins: Any = 10, range: Any = None, weights: Any = None,
              density: bool | None = None) -> tuple[Array, Array]:
    """The counts of ``a`` in each bin, and the bin edges (see
    :func:`histogram_bin_edges`); the last bin includes its right edge."""
    data = ravel(asarray(a))
    edges = histogram_bin_edges(data, bins, range)
    n_edges = shape(edges)[0]
    index = searchsorted(edges, data, side="right")
    index = ufuncs.where(ufuncs.equal(data, edges[-1]), n_edges - 1, index)
    w = ones_like(data, dtype=edges.dtype) if weights is None else ravel(asarray(weights))
    # Bin 0 holds what lies below the first edge; above the last edge is past the end.
    counts = _sum_into_bins(index, w, n_edges)[1:]
    if density:
        widths = ufuncs.subtract(edges[1:], edges[:-1])
        counts = ufuncs.divide(ufuncs.divide(counts, widths), reductions.sum(counts))
    return counts, edges


def histogramdd(sample: Any, bins: Any = 10, range: Sequence[Any] | None = None,
                weights: Any = None, density: bool | None = None) -> tuple[Array, list[Array]]:
    """The counts of the ``(N, D)`` points ``sample`` in a grid of bins (``bins`` per
    dimension, or one number or edge array for all), and each dimension's edges."""
    data = asarray(sample)
    data = data.astype(_inexact(data.dtype))
    if weights is not None:
        weights = asarray(weights)
        if shape(weights) != shape(data)[:1]:
            raise ValueError("should have one weight for each sample.")
    n, d = shape(data)
    if range is not None and (len(range) != d or any(
            r is not None and np.shape(r)[0] != 2 for r in range)):
        raise ValueError(f"For sample.shape={(n, d)}, range must be a sequence of {d} pairs "
                         f"or Nones; got range={range}")
    try:
        per_dim = list(bins)
    except TypeError:  # one bin count for every dimension
        per_dim = [bins] * d
    else:
        if len(per_dim) != d:
            raise ValueError("should be a bin for each dimension.")
    indices, edges = [], []
    for i in builtins.range(d):
        column = data[:, i]
        e = histogram_bin_edges(column, per_dim[i], None if range is None else range[i])
        index = searchsorted(e, column, side="right")
        indices.append(ufuncs.where(ufuncs.equal(column, e[-1]), index - 1, index))
        edges.append(e)
    n_bins = tuple(shape(e)[0] + 1 for e in edges)
    flat = ravel_multi_index(tuple(indices), n_bins, mode="clip")
    hist = reshape(bincount(flat, weights, length=math.prod(n_bins)), n_bins)
    hist = hist[(slice(1, -1),) * d]
    if density:
        hist = hist.astype(data.dtype)
        hist = ufuncs.divide(hist, reductions.sum(hist))
        for width in ix_(*(ufuncs.subtract(e[1:], e[:-1]) for e in edges)):
            hist = ufuncs.divide(hist, width)
    return hist, edges


def histogram2d(x: Any, y: Any, bins: Any = 10, range: Sequence[Any] | None = None,
                weights: Any = None, density: bool | None = None
                ) -> tuple[Array, Array, Array]:
    """:func:`histogramdd` of the points ``(x[i], y[i])``; returns the counts and the
    x and y edges."""
    try:
        n = len(bins)
    except TypeError:
        n = 1
    if n not in (1, 2):  # one array of edges for both
        bins = [asarray(bins), asarray(bins)]
    points = stack([asarray(x), asarray(y)], axis=1)
    hist, edges = histogramdd(points, bins, range, weights, density)
    return hist, edges[0], edges[1]


def _inexact(d: np.dtype[Any]) -> np.dtype[Any]:
    return d if dt.is_inexact(d) else dt.canonicalize(np.dtype(float))

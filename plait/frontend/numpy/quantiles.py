"""Quantiles: ``quantile``, ``percentile``, ``median`` and their NaN-ignoring forms
``nanquantile``, ``nanpercentile``, ``nanmedian``.

As in JAX, the reduced axes are moved last and flattened, the values sorted, and the
two order statistics around position ``q * (n - 1)`` gathered and combined by
``method`` (``'linear'``, ``'lower'``, ``'higher'``, ``'midpoint'``, ``'nearest'``).
``'inverted_cdf'``, the one method that takes ``weights``, picks the first value whose
cumulative weight reaches ``q`` of the total.  A NaN makes its whole reduction NaN,
except in the ``nan`` forms, which ignore NaNs (NaN only where all are).
"""

from __future__ import annotations

import builtins
import math
from typing import Any

import numpy as np

from plait.frontend import lax
from plait.frontend.api.jit import jit
from plait.frontend.core.array_base import Array
from plait.frontend.numpy._core import (
    as_array,
    canonical_axis,
    check_arraylike,
    promote_dtypes_inexact,
    shape,
)
from plait.frontend.numpy.reductions import sum
from plait.frontend.numpy.ufuncs import isnan, true_divide, where
from plait.ir import dtypes as dt

__all__ = ["quantile", "nanquantile", "percentile", "nanpercentile", "median", "nanmedian"]

_METHODS = ("linear", "lower", "higher", "midpoint", "nearest", "inverted_cdf")

Axis = int | tuple[int, ...] | None


def quantile(a: Any, q: Any, axis: Axis = None, out: None = None,
             overwrite_input: bool = False, method: str = "linear", keepdims: bool = False,
             *, weights: Any = None) -> Array:
    """The ``q``-th quantiles (``q`` in ``[0, 1]``, a scalar or 1-d) of ``a`` along
    ``axis`` (all axes when ``None``); a 1-d ``q`` adds a leading dimension.

    Raises:
      ValueError: ``out`` or ``overwrite_input``, an unknown ``method``, complex ``a``
        or ``weights``, ``weights`` of a wrong shape, repeated axes, or ``q`` of rank > 1.
      NotImplementedError: ``weights`` with a method other than ``'inverted_cdf'``.
      TypeError: ``q`` not of a floating dtype (``'inverted_cdf'``: not of ``a``'s
        dtype), or an empty reduction.
    """
    return _quantile("quantile", a, q, axis, out, overwrite_input, method, keepdims, weights,
                     ignore_nan=False)


def nanquantile(a: Any, q: Any, axis: Axis = None, out: None = None,
                overwrite_input: bool = False, method: str = "linear", keepdims: bool = False,
                *, weights: Any = None) -> Array:
    """:func:`quantile` of the elements that are not NaN (NaN where all are)."""
    return _quantile("nanquantile", a, q, axis, out, overwrite_input, method, keepdims,
                     weights, ignore_nan=True)


def percentile(a: Any, q: Any, axis: Axis = None, out: None = None,
               overwrite_input: bool = False, method: str = "linear", keepdims: bool = False,
               *, weights: Any = None, out_sharding: None = None) -> Array:
    """:func:`quantile` with ``q`` in percent (``[0, 100]``).

    Raises:
      NotImplementedError: an ``out_sharding``.
    """
    if out_sharding is not None:
        raise NotImplementedError("The 'out_sharding' argument to percentile is not supported.")
    return _quantile("percentile", a, q, axis, out, overwrite_input, method, keepdims, weights,
                     ignore_nan=False, percent=True)


def nanpercentile(a: Any, q: Any, axis: Axis = None, out: None = None,
                  overwrite_input: bool = False, method: str = "linear",
                  keepdims: bool = False, *, weights: Any = None) -> Array:
    """:func:`percentile` of the elements that are not NaN (NaN where all are)."""
    return _quantile("nanpercentile", a, q, axis, out, overwrite_input, method, keepdims,
                     weights, ignore_nan=True, percent=True)


def median(a: Any, axis: Axis = None, out: None = None, overwrite_input: bool = False,
           keepdims: bool = False) -> Array:
    """The median of ``a`` along ``axis`` (all axes when ``None``): the midpoint of
    the two middle values of an even count."""
    return _quantile("median", a, 0.5, axis, out, overwrite_input, "midpoint", keepdims, None,
                     ignore_nan=False)


def nanmedian(a: Any, axis: Axis = None, out: None = None, overwrite_input: bool = False,
              keepdims: bool = False) -> Array:
    """:func:`median` of the elements that are not NaN (NaN where all are)."""
    return _quantile("nanmedian", a, 0.5, axis, out, overwrite_input, "midpoint", keepdims,
                     None, ignore_nan=True)


def _quantile(name: str, a: Any, q: Any, axis: Axis, out: None, overwrite_input: bool,
              method: str, keepdims: bool, weights: Any, *, ignore_nan: bool,
              percent: bool = False) -> Array:
    """Check the arguments as JAX does, then compute in one compiled program (``q`` in
    percent when ``percent``): JAX compiles these functions whole, and XLA's rewrites
    of the program (``q / 100 * (n - 1)`` as ``q * ((n - 1) / 100)``) can move a
    position across an integer, so only the same program gives the same results."""
    check_arraylike(name, a, q, *(() if weights is None else (weights,)))
    qa = as_array(promote_dtypes_inexact(name, q)[0] if percent else q)
    if out is not None or overwrite_input:
        got = "an out array" if out is not None else "overwrite_input=True"
        raise ValueError(f"{name}: expected out=None and overwrite_input=False (neither is "
                         f"supported), but got {got}")
    if method not in _METHODS:
        raise ValueError(f"{name}: expected method in {_METHODS}, but got {method!r}")
    x = as_array(a)
    w: Array | None = None
    if weights is not None:
        w = as_array(weights)
        if dt.is_complex(w.dtype):
            raise ValueError(f"{name}: expected real weights, but got dtype {w.dtype}")
        if method != "inverted_cdf":
            raise NotImplementedError(f"{name}: only method 'inverted_cdf' takes weights, but "
                                      f"got method {method!r}")
        x, w = (as_array(v) for v in promote_dtypes_inexact(name, x, w))
        _check_weights(name, w.shape, x.shape, axis)
    else:
        x = as_array(promote_dtypes_inexact(name, x)[0])
    if dt.is_complex(x.dtype):
        raise ValueError(f"{name}: expected real input (quantiles of complex numbers are "
                         f"poorly defined), but got dtype {x.dtype}")
    order, nb, _ = _layout(axis, x.shape)
    if qa.ndim > 1:
        raise ValueError(f"{name}: expected q of rank 0 or 1, but got shape {qa.shape}")
    if not dt.is_float(qa.dtype):
        raise TypeError(f"{name}: expected q of a floating dtype, but got {qa.dtype}")
    if 0 in (x.shape[i] for i in order[nb:]):
        # JAX's gather of an order statistic fails at trace time (an IndexError when the
        # nan form indexes a 1-d array by a scalar position).
        error = IndexError if ignore_nan and nb == 0 and not keepdims and qa.ndim == 0 \
            else TypeError
        raise error(f"{name}: expected elements to reduce over axis {axis}, but got "
                    f"none in shape {shape(a)}")
    if method == "inverted_cdf" and qa.dtype != x.dtype:
        # JAX multiplies q by the total weight without promotion.
        raise TypeError(f"{name}: method 'inverted_cdf' expects q of the dtype of a "
                        f"({x.dtype}), but got {qa.dtype}")
    compute = _percentile_program if percent else _quantile_program
    return compute(x, qa, w, axis=axis, method=method, keepdims=keepdims,
                   ignore_nan=ignore_nan)


def _quantile_core(x: Array, q: Array, w: Array | None, *, axis: Axis, method: str,
                   keepdims: bool, ignore_nan: bool) -> Array:
    """The quantiles of checked arguments: ``x`` of an inexact dtype, ``w`` of its
    dtype and of its shape or of the reduced axes'."""
    order, nb, kept_shape = _layout(axis, x.shape)
    batch = tuple(x.shape[i] for i in order[:nb])
    n = math.prod(x.shape[i] for i in order[nb:])
    rows = lax.reshape(lax.transpose(x, order), batch + (n,))
    row_weights = None
    if w is not None:
        w = _broadcast_weights(w, x.shape, axis)
        row_weights = lax.reshape(lax.transpose(w, order), batch + (n,))
    result = _order_statistics(rows, row_weights, q, method, ignore_nan)
    if keepdims:
        result = lax.reshape(result, q.shape + kept_shape)
    return lax.convert_element_type(result, x.dtype)


def _percentile_core(x: Array, q: Array, w: Array | None, *, axis: Axis, method: str,
                     keepdims: bool, ignore_nan: bool) -> Array:
    return _quantile_program(x, true_divide(q, 100), w, axis=axis, method=method,
                             keepdims=keepdims, ignore_nan=ignore_nan)


_STATIC = ("axis", "method", "keepdims", "ignore_nan")
_quantile_program = jit(_quantile_core, static_argnames=_STATIC)
_percentile_program = jit(_percentile_core, static_argnames=_STATIC)


def _axes(axis: int | tuple[int, ...], nd: int) -> tuple[int, ...]:
    """``axis`` as a tuple of non-negative axes, in the given order.

    Raises:
      ValueError: an axis out of range, or repeated.
    """
    axes = tuple(canonical_axis(i, nd) for i in (axis if isinstance(axis, tuple) else (axis,)))
    if len(set(axes)) != len(axes):
        raise ValueError(f"expected distinct axes, but got repeated axis in {axis}")
    return axes


def _layout(axis: Axis, shape_: tuple[int, ...]) -> tuple[list[int], int, tuple[int, ...]]:
    """The order of the axes that puts the reduced ones last; how many are kept; and the
    shape ``keepdims`` gives (without ``q``'s dimension)."""
    nd = len(shape_)
    if axis is None:
        # (A 0-d array keeps one dimension, as in JAX, which flattens it first.)
        return list(range(nd)), 0, (1,) * builtins.max(nd, 1)
    axes = _axes(axis, nd)
    kept_shape = tuple(1 if i in axes else d for i, d in enumerate(shape_)) or (1,)
    kept = [i for i in range(nd) if i not in axes]
    if not isinstance(axis, tuple):
        return kept + list(axes), len(kept), kept_shape
    # JAX orders the reduced axes as swapping each kept axis into the next leading place
    # leaves them; that order decides which of equal values (0.0 and -0.0) comes first
    # after the (stable) sort, and the order weights accumulate in.
    order = list(range(nd))
    for i, k in enumerate(kept):
        order[i], order[k] = order[k], order[i]
    return order, len(kept), kept_shape


def _check_weights(name: str, w_shape: tuple[int, ...], shape_: tuple[int, ...],
                   axis: Axis) -> None:
    """Weights have the shape of ``a``, or that of the reduced axes (in the order
    ``axis`` names them).

    Raises:
      ValueError: they have neither.
    """
    if w_shape == shape_:
        return
    if axis is None:
        raise ValueError(f"{name}: expected weights of the shape of a {shape_} when axis is "
                         f"None, but got {w_shape}")
    expected = tuple(shape_[i] for i in _axes(axis, len(shape_)))
    if w_shape != expected:
        raise ValueError(f"{name}: expected weights of shape {shape_} or of the reduced axes "
                         f"{expected}, but got {w_shape}")


def _broadcast_weights(w: Array, shape_: tuple[int, ...], axis: Axis) -> Array:
    """Checked weights broadcast to ``shape_``."""
    if w.shape == shape_ or axis is None:
        return w
    axes = _axes(axis, len(shape_))
    by_axis = sorted(range(len(axes)), key=lambda k: axes[k])
    return lax.broadcast_in_dim(lax.transpose(w, by_axis), shape_, sorted(axes))


def _lead(v: Array, shape_: tuple[int, ...]) -> Array:
    """``v`` (of ``q``'s shape) broadcast to ``shape_``, its dimensions leading."""
    return lax.broadcast_in_dim(v, shape_, tuple(range(v.ndim)))


def _trail(v: Array, shape_: tuple[int, ...]) -> Array:
    """``v`` (of the rows' shape) broadcast to ``shape_``, its dimensions trailing."""
    return lax.broadcast_in_dim(v, shape_, tuple(range(len(shape_) - v.ndim, len(shape_))))


def _pick(x: Array, index: Array) -> Array:
    """``x[..., index]`` per row: ``x`` of shape ``B + (n,)``, ``index`` of ``Q + B``."""
    lead = index.ndim - (x.ndim - 1)
    rows = [lax.broadcasted_iota(index.dtype, index.shape, lead + d) for d in range(x.ndim - 1)]
    return x[(*rows, index)]


def _order_statistics(x: Array, w: Array | None, q: Array, method: str,
                      ignore_nan: bool) -> Array:
    """The quantiles ``q`` (shape ``Q``) of the rows of ``x`` (shape ``B + (n,)``), of
    shape ``Q + B``."""
    batch, n = x.shape[:-1], x.shape[-1]
    out_shape = q.shape + batch
    last = x.ndim - 1
    nans = isnan(x)
    if ignore_nan:
        # One NaN sign, so that every NaN sorts last.
        x = where(nans, np.nan, x)
    else:
        row_has_nan = lax.broadcast_in_dim(lax.reduce_or(nans, (last,)), x.shape,
                                           tuple(range(last)))
        x = where(row_has_nan, np.nan, x)
    if w is None:
        x = lax.sort(x, last)
    else:
        x, w = lax.sort((x, w), last, num_keys=1)
    index_dtype = dt.canonicalize(dt.int64)
    if method == "inverted_cdf":
        return _inverted_cdf(x, w, q, ignore_nan, index_dtype)
    if ignore_nan:
        counts = sum(lax.bitwise_not(isnan(x)), axis=last, dtype=q.dtype)
        top = lax.sub(_trail(counts, out_shape), 1)
        pos = lax.mul(_lead(q, out_shape), top)
        low, high = lax.floor(pos), lax.ceil(pos)
        low_index = lax.max(lax.full((), 0, q.dtype), lax.min(low, top))
        high_index = lax.max(lax.full((), 0, q.dtype), lax.min(high, top))
    else:
        top = lax.sub(lax.full((), n, q.dtype), 1)
        pos = lax.mul(q, top)
        low, high = lax.floor(pos), lax.ceil(pos)
        low_index = lax.clamp(lax.full((), 0, q.dtype), low, top)
        high_index = lax.clamp(lax.full((), 0, q.dtype), high, top)
    high_weight = _lead(lax.sub(pos, low), out_shape)
    low_value = _pick(x, _lead(lax.convert_element_type(low_index, index_dtype), out_shape))
    high_value = _pick(x, _lead(lax.convert_element_type(high_index, index_dtype), out_shape))
    if method == "lower":
        return low_value
    if method == "higher":
        return high_value
    if method == "nearest":
        return lax.select(lax.le(high_weight, 0.5), low_value, high_value)
    if method == "midpoint":
        return lax.mul(lax.add(low_value, high_value), 0.5)
    low_weight = lax.sub(1, high_weight)
    # (Computed in q's dtype; Inf * 0 makes the weight-0 neighbour of an Inf NaN, as in JAX.)
    return lax.add(lax.mul(lax.convert_element_type(low_value, q.dtype), low_weight),
                   lax.mul(lax.convert_element_type(high_value, q.dtype), high_weight))


def _inverted_cdf(x: Array, w: Array | None, q: Array, ignore_nan: bool,
                  index_dtype: np.dtype[Any]) -> Array:
    """The first of the sorted rows ``x`` whose cumulative weight reaches ``q`` of
    the row's total; NaN for a row with a negative or NaN weight, or with a NaN (with
    only NaNs when ``ignore_nan``)."""
    batch, n = x.shape[:-1], x.shape[-1]
    out_shape = q.shape + batch
    last = x.ndim - 1
    weights = lax.full(x.shape, 1, x.dtype) if w is None else w
    bad = lax.bitwise_or(lax.lt(weights, 0), isnan(weights))
    nans = isnan(x)
    cumulative = lax.cumsum(where(lax.bitwise_or(bad, nans), 0, weights), last)
    total = lax.index_in_dim(cumulative, n - 1, last, keepdims=False)
    target = lax.mul(_lead(q, out_shape), _trail(total, out_shape))
    full = out_shape + (n,)
    below = lax.lt(lax.broadcast_in_dim(cumulative, full, tuple(range(q.ndim, len(full)))),
                   lax.broadcast_in_dim(target, full, tuple(range(len(out_shape)))))
    index = lax.reduce_sum(lax.convert_element_type(below, index_dtype), (len(out_shape),))
    if ignore_nan:
        count = sum(lax.bitwise_not(nans), axis=last, dtype=q.dtype)
    else:
        count = lax.full(batch, n, q.dtype)
    top = _trail(lax.convert_element_type(lax.sub(count, 1), index_dtype), out_shape)
    index = lax.max(lax.full((), 0, index_dtype), lax.min(index, top))
    force_nan = lax.reduce_or(bad, (last,))
    if ignore_nan:
        force_nan = lax.bitwise_or(force_nan, lax.eq(count, 0))
    else:
        force_nan = lax.bitwise_or(force_nan, lax.reduce_or(nans, (last,)))
    return where(_trail(force_nan, out_shape), np.nan, _pick(x, index))

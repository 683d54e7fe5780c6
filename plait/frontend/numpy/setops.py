"""Unique values and set operations, as ``jax.numpy`` computes them: ``unique``, the
array API's ``unique_values``, ``unique_counts``, ``unique_inverse``, ``unique_all``,
and ``union1d``, ``intersect1d``, ``setdiff1d``, ``setxor1d``.

Each sorts, marks the first of every run of equal values and keeps the marked ones.
How many are kept depends on the values, so without ``size=`` the inputs must be
concrete (as in JAX); with a static ``size=`` the result is cut or padded to that
length (with ``fill_value``, or JAX's default) and works under ``jit``.  The kept
positions are compacted by a scatter to their running count.
"""

from __future__ import annotations

import math
import operator
from typing import Any, NamedTuple

import numpy as np

from plait.frontend import lax
from plait.frontend.core.array_base import Array
from plait.frontend.core.tracing import has_value
from plait.frontend.numpy._core import as_array, canonical_axis, check_arraylike, promote_dtypes
from plait.frontend.numpy.manipulation import (
    broadcast_to,
    concatenate,
    moveaxis,
    ravel,
    reshape,
    sort,
)
from plait.frontend.numpy.reductions import any as any_
from plait.frontend.numpy.reductions import cumsum
from plait.frontend.numpy.reductions import max as max_
from plait.frontend.numpy.reductions import min as min_
from plait.frontend.numpy.reductions import sum as sum_
from plait.frontend.numpy.searching import isin
from plait.frontend.numpy.ufuncs import isnan, logical_and, logical_not, where
from plait.ir import dtypes as dt
from plait.ir.errors import ConcretizationTypeError, NonConcreteBooleanIndexError

__all__ = ["unique", "unique_values", "unique_counts", "unique_inverse", "unique_all",
           "union1d", "intersect1d", "setdiff1d", "setxor1d"]


# JAX's result types (same names and fields).
class _UniqueAllResult(NamedTuple):
    """What :func:`unique_all` returns."""

    values: Array
    indices: Array
    inverse_indices: Array
    counts: Array


class _UniqueCountsResult(NamedTuple):
    """What :func:`unique_counts` returns."""

    values: Array
    counts: Array


class _UniqueInverseResult(NamedTuple):
    """What :func:`unique_inverse` returns."""

    values: Array
    inverse_indices: Array


def _size_hint(name: str) -> str:
    return (f"The error arose in jnp.{name}(): the length of its result depends on the values "
            f"of its inputs. To use jnp.{name}() under jit and other transformations, pass a "
            "static size= argument (and optionally fill_value=), which fixes the output size.")


def _require_concrete(name: str, *arrays: Array) -> None:
    """Refuse traced inputs when no ``size=`` fixes the length of the result."""
    for x in arrays:
        if not has_value(x):
            raise ConcretizationTypeError(
                "Abstract tracer value encountered where concrete value is expected: traced "
                f"array with shape {x.aval.str_short(short_dtypes=False)}. " + _size_hint(name))


def _compress(name: str, x: Array, mask: Array) -> Array:
    """``x[mask]``; a traced mask fails as in JAX (NonConcreteBooleanIndexError)."""
    if not has_value(mask):
        raise NonConcreteBooleanIndexError(
            "Array boolean indices must be concrete; got "
            f"{mask.aval.str_short(short_dtypes=False)}. " + _size_hint(name))
    return x[mask]


def _index_dtype() -> np.dtype[Any]:
    return dt.canonicalize(np.dtype(int))


def _first_true(mask: Array, size: int, fill: int) -> Array:
    """The positions of the first ``size`` true entries of the 1-d ``mask``, then ``fill``
    (``nonzero(mask, size=size, fill_value=fill)[0]``)."""
    idx = _index_dtype()
    if mask.shape[0] == 0:  # JAX's nonzero ignores fill_value here
        return lax.full((size,), 0, idx)
    # Each true entry goes to its running count; false entries, and true ones past the
    # first ``size``, land out of bounds and are dropped.
    slot = where(mask, cumsum(mask) - 1, size)
    return lax.full((size,), fill, idx).at[slot].set(lax.iota(idx, mask.shape[0]), mode="drop")


def _sorted_mask(ar: Array, axis: int, equal_nan: bool) -> tuple[Array, Array, Array]:
    """The slices of ``ar`` along ``axis`` sorted (moved to the front), whether each
    differs from the one before, and the sorting permutation."""
    aux = moveaxis(ar, axis, 0)
    if dt.is_complex(aux.dtype):
        # NaN in either part is one NaN, as for NumPy's unique (sorting would split them).
        aux = where(isnan(aux), lax.full((), complex(np.nan, 0), aux.dtype), aux)
    n, *rest = aux.shape
    m = math.prod(rest)
    idx = _index_dtype()
    if m == 0:  # empty slices: JAX keeps one
        n, perm = 1, lax.full((1,), 0, idx)
    else:
        cols = reshape(aux, (n, m))
        # Lexicographic and stable: the first element of a slice is the primary key.
        perm = lax.sort((*(cols[:, j] for j in range(m)), lax.iota(idx, n)), num_keys=m)[-1]
    aux = aux[perm]
    if aux.size == 0:
        return aux, lax.full((n,), False, dt.bool_), perm
    differ = aux[1:] != aux[:-1]
    if equal_nan and dt.is_inexact(aux.dtype):
        differ = logical_and(differ, logical_not(logical_and(isnan(aux[1:]), isnan(aux[:-1]))))
    differ = any_(differ, axis=tuple(range(1, aux.ndim)))
    return aux, concatenate([lax.full((1,), True, dt.bool_), differ]), perm


def _unique(ar: Array, axis: int, return_index: bool = False, return_inverse: bool = False,
            return_counts: bool = False, equal_nan: bool = True, size: int | None = None,
            fill_value: Any = None, return_true_size: bool = False) -> list[Array]:
    """``unique`` along the canonical ``axis``; ``size=None`` needs a concrete ``ar``.
    With ``return_true_size`` the number of unique slices comes last."""
    if ar.shape[axis] == 0 and size and fill_value is None:
        raise ValueError("jnp.unique: for zero-sized input with nonzero size argument, "
                         "fill_value must be specified")
    aux, mask, perm = _sorted_mask(ar, axis, equal_nan)
    n_unique = sum_(mask)
    if size is None:  # a concrete input may still give traced values inside jit
        _require_concrete("unique", mask)
        length, fill_value = int(n_unique), None  # exactly the unique slices: no padding
    else:
        length = size
    idx = _index_dtype()
    ind = _first_true(mask, length, 0)  # padding repeats the smallest slice
    result = aux[ind] if aux.size else aux
    if fill_value is not None:
        fill = as_array(fill_value).astype(result.dtype)
        if result.shape[0]:
            valid = reshape(lax.iota(idx, length) < n_unique,
                            (length,) + (1,) * (result.ndim - 1))
            result = where(valid, result, fill)
        else:
            result = broadcast_to(fill, (length, *result.shape[1:]))
    outs = [moveaxis(result, 0, axis)]
    if return_index:
        outs.append(perm[ind] if aux.size else perm)
    if return_inverse:
        inverse = lax.full((ar.shape[axis],), 0, idx)
        outs.append(inverse.at[perm].set(cumsum(mask) - 1) if aux.size else inverse)
    if return_counts:
        if aux.size:
            # Where each run starts, then the end: the counts are the differences.
            bounds = _first_true(mask, length + 1, mask.shape[0])
            outs.append(bounds[1:] - bounds[:-1])
        else:
            outs.append(lax.full((1 if ar.shape[axis] else 0,), ar.shape[axis], idx))
    if return_true_size:
        outs.append(n_unique)
    return outs


def _unique_of(name: str, ar: Any, return_index: bool, return_inverse: bool,
               return_counts: bool, axis: int | None, equal_nan: bool, size: int | None,
               fill_value: Any) -> list[Array]:
    check_arraylike(name, ar)
    arr = as_array(ar)
    if size is None:
        _require_concrete(name, arr)
    else:
        size = operator.index(size)
    shape = arr.shape
    if axis is None:
        arr, ax = ravel(arr), 0
    else:
        ax = canonical_axis(axis, arr.ndim)
    outs = _unique(arr, ax, return_index, return_inverse, return_counts, equal_nan, size,
                   fill_value)
    if return_inverse and axis is None:
        k = 2 if return_index else 1
        outs[k] = reshape(outs[k], shape)
    return outs


def unique(ar: Any, return_index: bool = False, return_inverse: bool = False,
           return_counts: bool = False, axis: int | None = None, *, equal_nan: bool = True,
           size: int | None = None, fill_value: Any = None,
           sorted: bool = True) -> Array | tuple[Array, ...]:
    """The sorted unique values of ``ar`` (flattened, or its slices along ``axis``), with
    the first index, the inverse indices and the counts of each on request.

    Without ``size`` the input must be concrete; with it the result has ``size``
    entries, padded with ``fill_value`` (by default the smallest unique value).

    Raises:
      ConcretizationTypeError: ``ar`` is traced and ``size`` is not given.
      ValueError: ``ar`` is empty along the axis, ``size`` nonzero, no ``fill_value``.
    """
    del sorted  # the values come out sorted anyway (JAX ignores it too)
    outs = _unique_of("unique", ar, return_index, return_inverse, return_counts, axis,
                      equal_nan, size, fill_value)
    return outs[0] if len(outs) == 1 else tuple(outs)


def unique_values(x: Any, /, *, size: int | None = None, fill_value: Any = None) -> Array:
    """The sorted unique values of ``x`` (NaNs not merged)."""
    return _unique_of("unique_values", x, False, False, False, None, False, size,
                      fill_value)[0]


def unique_counts(x: Any, /, *, size: int | None = None,
                  fill_value: Any = None) -> _UniqueCountsResult:
    """The unique values of ``x`` and how often each occurs."""
    values, counts = _unique_of("unique_counts", x, False, False, True, None, False, size,
                                fill_value)
    return _UniqueCountsResult(values=values, counts=counts)


def unique_inverse(x: Any, /, *, size: int | None = None,
                   fill_value: Any = None) -> _UniqueInverseResult:
    """The unique values of ``x`` and, for each element, the index of its value."""
    values, inverse = _unique_of("unique_inverse", x, False, True, False, None, False, size,
                                 fill_value)
    return _UniqueInverseResult(values=values, inverse_indices=inverse)


def unique_all(x: Any, /, *, size: int | None = None,
               fill_value: Any = None) -> _UniqueAllResult:
    """The unique values of ``x``, the index of each one's first occurrence, the inverse
    indices and the counts."""
    values, indices, inverse, counts = _unique_of("unique_all", x, True, True, True, None,
                                                  False, size, fill_value)
    return _UniqueAllResult(values=values, indices=indices, inverse_indices=inverse,
                            counts=counts)


def union1d(ar1: Any, ar2: Any, *, size: int | None = None, fill_value: Any = None) -> Array:
    """The sorted unique values found in either array (both flattened)."""
    check_arraylike("union1d", ar1, ar2)
    a, b = as_array(ar1), as_array(ar2)
    if size is None:
        _require_concrete("union1d", a, b)
    return _unique_of("union1d", concatenate([a, b], axis=None), False, False, False, None,
                      True, size, fill_value)[0]


def _pad(vals: Array, count: Array | int, fill_value: Any) -> Array:
    """``vals`` with the entries from ``count`` on replaced by ``fill_value``; by default
    by the smallest of the others (0 when there is none), as JAX pads."""
    valid = lax.iota(_index_dtype(), vals.shape[0]) < count
    if fill_value is not None:
        return where(valid, vals, fill_value)
    # The padding entries read 0: first lift them to the maximum, then take the minimum.
    vals = where(valid, vals, max_(vals))
    return where(valid, vals, min_(vals))


def setdiff1d(ar1: Any, ar2: Any, assume_unique: bool = False, *, size: int | None = None,
              fill_value: Any = None) -> Array:
    """The sorted unique values of ``ar1`` that are not in ``ar2``; with ``size``, padded
    with ``fill_value`` (default 0).

    Raises:
      ConcretizationTypeError: an input is traced and ``size`` is not given.
    """
    check_arraylike("setdiff1d", ar1, ar2)
    a, b = ravel(as_array(ar1)), ravel(as_array(ar2))
    if size is None:
        _require_concrete("setdiff1d", a)
    else:
        size = operator.index(size)
    fill = as_array(0 if fill_value is None else fill_value).astype(a.dtype)
    if a.size == 0:
        return broadcast_to(fill, (size or 0,))
    if size is None:
        _require_concrete("setdiff1d", b)
    if not assume_unique:
        # With size=, JAX pads the unique values to the input's length (none for size=0).
        a = _unique(a, 0, size=None if size is None else (a.size if size else 0))[0]
    keep = isin(a, b, invert=True)
    if size is None:
        return _compress("setdiff1d", a, keep)
    if not assume_unique:
        # unique() padded ``a`` with copies of its first value: those are not results.
        # (As in JAX, this fails for size=0, where ``a`` is empty.)
        n_unique = a.size + 1 - sum_(a == a[0])
        keep = logical_and(keep, lax.iota(_index_dtype(), a.size) < n_unique)
    picked = a[_first_true(keep, size, 0)]
    return where(lax.iota(_index_dtype(), size) < sum_(keep), picked, fill)


def _concat_unique(a: Array, b: Array) -> tuple[Array, Array]:
    """The unique values of ``a`` then those of ``b`` in an array of length
    ``a.size + b.size`` (the rest is padding), and how many there are."""
    ua, na = _unique(a, 0, size=a.size, return_true_size=True)
    ub, nb = _unique(b, 0, size=b.size, return_true_size=True)
    arr = lax.dynamic_update_slice(lax.full((a.size + b.size,), 0, a.dtype), ua, (0,))
    return lax.dynamic_update_slice(arr, ub, (na,)), na + nb


def _setxor1d_size(a: Array, b: Array, assume_unique: bool, size: int,
                   fill_value: Any) -> Array:
    if a.size + b.size == 0:
        return _pad(lax.full((size,), 0, a.dtype), 0, fill_value)
    if assume_unique:
        aux = sort(concatenate([a, b]))
        start = lax.full((1,), True, dt.bool_)
        # flag[i]: aux[i] differs from the value before it (the end counts as different).
        flag = concatenate([start, aux[1:] != aux[:-1], start])
    else:
        arr, num_unique = _concat_unique(a, b)
        valid = lax.iota(_index_dtype(), arr.size) < num_unique
        _, aux = lax.sort((logical_not(valid), arr), num_keys=2)  # the padding goes last
        edges = concatenate([lax.full((1,), True, dt.bool_), aux[1:] != aux[:-1],
                             lax.full((1,), False, dt.bool_)]).at[num_unique].set(True)
        flag = logical_and(lax.iota(_index_dtype(), arr.size + 1) <= num_unique, edges)
    keep = logical_and(flag[1:], flag[:-1])  # unlike both neighbours
    vals = aux.at[_first_true(keep, size, aux.size)].get(mode="fill", fill_value=0)
    return _pad(vals, sum_(keep), fill_value)


def setxor1d(ar1: Any, ar2: Any, assume_unique: bool = False, *, size: int | None = None,
             fill_value: Any = None) -> Array:
    """The sorted values found in exactly one of the arrays; with ``size``, padded with
    ``fill_value`` (by default the smallest result).

    Raises:
      ConcretizationTypeError: an input is traced and ``size`` is not given.
    """
    check_arraylike("setxor1d", ar1, ar2)
    a, b = promote_dtypes("setxor1d", ravel(as_array(ar1)), ravel(as_array(ar2)))
    if size is not None:
        return _setxor1d_size(a, b, assume_unique, operator.index(size), fill_value)
    if not assume_unique:
        _require_concrete("setxor1d", a, b)
        a, b = _unique(a, 0)[0], _unique(b, 0)[0]
    aux = concatenate([a, b])
    if aux.size == 0:
        return aux
    aux = sort(aux)
    edge = lax.full((1,), True, dt.bool_)
    flag = concatenate([edge, aux[1:] != aux[:-1], edge])
    return _compress("setxor1d", aux, logical_and(flag[1:], flag[:-1]))


def _intersect1d_size(a: Array, b: Array, assume_unique: bool, return_indices: bool,
                      size: int, fill_value: Any) -> Array | tuple[Array, Array, Array]:
    idx = _index_dtype()
    n = a.size + b.size
    # aux: the values of both (each array's unique ones, unless assume_unique), sorted
    # with any padding last; order: where each came from in ``arr``; valid: not padding.
    num1: Array | int
    if assume_unique:
        num1, arr = a.size, concatenate([a, b])
        aux, order = lax.sort((arr, lax.iota(idx, n)), num_keys=1)
        valid = lax.full((n,), True, dt.bool_)
    else:
        ua, ind1, num1 = _unique(a, 0, return_index=True, size=a.size, fill_value=0,
                                 return_true_size=True)
        ub, ind2, num2 = _unique(b, 0, return_index=True, size=b.size, fill_value=0,
                                 return_true_size=True)
        arr = lax.dynamic_update_slice(lax.full((n,), 0, a.dtype), ua, (0,))
        arr = lax.dynamic_update_slice(arr, ub, (num1,))
        valid = lax.iota(idx, n) < num1 + num2
        _, aux, order = lax.sort((logical_not(valid), arr, lax.iota(idx, n)), num_keys=2)
    # A value of both is one of ``a`` directly followed by the same one of ``b``.
    same = logical_and(aux[1:] == aux[:-1], valid[1:])
    count = sum_(same)
    if aux.size:
        at = _first_true(same, size, aux.size)
        vals = aux.at[at].get(mode="fill", fill_value=0)
    else:
        at, vals = lax.full((0,), 0, idx), lax.full((size,), 0, aux.dtype)
    vals = _pad(vals, count, fill_value)
    if not return_indices:
        return vals
    found = lax.iota(idx, at.shape[0]) < count
    i1 = where(found, order.at[at].get(mode="fill", fill_value=a.size), a.size)
    i2 = where(found, order.at[at + 1].get(mode="fill", fill_value=b.size) - num1, b.size)
    if not assume_unique:  # positions among the unique values -> positions in the input
        i1 = ind1.at[i1].get(mode="fill", fill_value=ind1.size)
        i2 = ind2.at[i2].get(mode="fill", fill_value=ind2.size)
    return vals, i1, i2


def intersect1d(ar1: Any, ar2: Any, assume_unique: bool = False,
                return_indices: bool = False, *, size: int | None = None,
                fill_value: Any = None) -> Array | tuple[Array, Array, Array]:
    """The sorted unique values found in both arrays and, with ``return_indices``, the
    index of each one's first occurrence in each; with ``size``, values padded with
    ``fill_value`` (by default the smallest result), indices with the input's length.

    Raises:
      ConcretizationTypeError: an input is traced and ``size`` is not given.
    """
    check_arraylike("intersect1d", ar1, ar2)
    a, b = (ravel(x) for x in promote_dtypes("intersect1d", as_array(ar1), as_array(ar2)))
    if size is not None:
        return _intersect1d_size(a, b, assume_unique, return_indices, operator.index(size),
                                 fill_value)
    if not assume_unique:
        _require_concrete("intersect1d", a, b)
        a, ind1 = _unique(a, 0, return_index=True)
        b, ind2 = _unique(b, 0, return_index=True)
    # JAX numbers the positions with int32 here (its index type for any length that fits).
    aux, order = lax.sort_key_val(concatenate([a, b]), lax.iota(np.int32, a.size + b.size))
    same = aux[1:] == aux[:-1]
    values = _compress("intersect1d", aux[:-1], same)
    if not return_indices:
        return values
    i1, i2 = order[:-1][same], order[1:][same] - a.size
    if not assume_unique:
        i1, i2 = ind1[i1], ind2[i2]
    return values, i1, i2

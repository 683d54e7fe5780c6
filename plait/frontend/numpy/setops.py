"""Unique values and set operations: ``unique`` (and the array API's
``unique_values``, ``unique_counts``, ``unique_inverse``, ``unique_all``),
``union1d``, ``intersect1d``, ``setdiff1d``, ``setxor1d``, as ``jax.numpy``
computes them: sort, mark where a value differs from the one before, and keep
the marked ones.  The number kept depends on the values: it needs concrete
input, or a static ``size=`` (padding with ``fill_value``), as in JAX.
"""

from __future__ import annotations

import math
import operator
from typing import Any, NamedTuple

import numpy as np

from plait.frontend import lax
from plait.frontend.core.array_base import Array
from plait.frontend.core.tracing import is_concretizable
from plait.frontend.numpy._core import as_array, canonical_axis, check_arraylike, promote_dtypes
from plait.frontend.numpy.manipulation import concatenate, moveaxis, ravel, reshape, sort
from plait.frontend.numpy.nonzero import nonzero
from plait.frontend.numpy.partitioning import lexsort
from plait.frontend.numpy.reductions import any as any_
from plait.frontend.numpy.reductions import cumsum, sum
from plait.frontend.numpy.reductions import min as min_
from plait.frontend.numpy.searching import isin
from plait.frontend.numpy.ufuncs import isnan, logical_and, logical_not, not_equal, where
from plait.ir import dtypes as dt
from plait.ir.errors import ConcretizationTypeError

__all__ = ["unique", "unique_values", "unique_counts", "unique_inverse", "unique_all",
           "union1d", "intersect1d", "setdiff1d", "setxor1d", "UniqueAllResult",
           "UniqueCountsResult", "UniqueInverseResult"]

_SIZE_HINT = ("the size of the result depends on the values, which are unknown while "
              "tracing: pass a static size= (and fill_value=) to use it under jit")


class UniqueAllResult(NamedTuple):
    """What :func:`unique_all` returns."""

    values: Array
    indices: Array
    inverse_indices: Array
    counts: Array


class UniqueCountsResult(NamedTuple):
    """What :func:`unique_counts` returns."""

    values: Array
    counts: Array


class UniqueInverseResult(NamedTuple):
    """What :func:`unique_inverse` returns."""

    values: Array
    inverse_indices: Array


def _concrete(x: Any, name: str) -> None:
    if not is_concretizable(x):
        raise ConcretizationTypeError(f"{name}: {_SIZE_HINT}")


def _int_dtype() -> np.dtype[Any]:
    return dt.canonicalize(np.dtype(int))


def _sorted_mask(ar: Array, axis: int, equal_nan: bool) -> tuple[Array, Array, Array]:
    """The rows along ``axis`` sorted, whether each differs from the one before, and the
    sorting permutation."""
    aux = moveaxis(ar, axis, 0)
    if dt.is_complex(aux.dtype):  # any NaN part: one NaN, as NumPy's unique sees it
        aux = where(isnan(aux), lax.full((), complex(np.nan, 0), aux.dtype), aux)
    n, *rest = aux.shape
    if math.prod(rest) == 0:
        n, perm = 1, lax.full((1,), 0, _int_dtype())
    else:
        rows = reshape(aux, (n, math.prod(rest)))
        perm = lexsort([rows[:, j] for j in range(math.prod(rest))][::-1])
    aux = aux[perm]
    if not aux.size:
        return aux, lax.full((n,), False, dt.bool_), perm
    differ = not_equal(aux[1:], aux[:-1])
    if dt.is_inexact(aux.dtype) and equal_nan:
        differ = logical_and(differ, logical_not(logical_and(isnan(aux[1:]), isnan(aux[:-1]))))
    if aux.ndim > 1:
        differ = any_(differ, axis=tuple(range(1, aux.ndim)))
    mask = concatenate([lax.full((1,), True, dt.bool_), differ])
    return aux, mask, perm


def _unique(ar: Array, axis: int, return_index: bool, return_inverse: bool,
            return_counts: bool, equal_nan: bool, size: int | None,
            fill_value: Any) -> tuple[Array, ...]:
    if ar.shape[axis] == 0 and size and fill_value is None:
        raise ValueError("jnp.unique: for zero-sized input with nonzero size argument, "
                         "fill_value must be specified")
    aux, mask, perm = _sorted_mask(ar, axis, equal_nan)
    ind = nonzero(mask, size=size)[0]
    result = aux[ind] if aux.size else aux
    if size is not None and fill_value is not None:
        fill = as_array(np.asarray(fill_value)).astype(result.dtype)
        if result.shape[0]:
            valid = lax.iota(_int_dtype(), size) < sum(mask)
            valid = reshape(valid, (size,) + (1,) * (result.ndim - 1))
            result = where(valid, result, fill)
        else:
            result = lax.full((size, *result.shape[1:]), 0, result.dtype) + fill
    outs: list[Array] = [moveaxis(result, 0, axis)]
    if return_index:
        outs.append(perm[ind] if aux.size else perm)
    if return_inverse:
        if aux.size:
            rank = cumsum(mask) - 1
            outs.append(lax.full(mask.shape, 0, _int_dtype()).at[perm].set(rank))
        else:
            outs.append(lax.full((ar.shape[axis],), 0, _int_dtype()))
    if return_counts:
        if aux.size:
            if size is None:
                starts = concatenate([nonzero(mask)[0],
                                      lax.full((1,), mask.size, _int_dtype())])
            else:
                starts = nonzero(mask, size=size + 1)[0]
                starts = starts.at[1:].set(where(starts[1:] != 0, starts[1:], mask.size))
            outs.append(starts[1:] - starts[:-1])
        elif ar.shape[axis]:
            outs.append(lax.full((1,), ar.shape[axis], _int_dtype()))
        else:
            outs.append(lax.full((0,), 0, _int_dtype()))
    return tuple(outs)


def unique(ar: Any, return_index: bool = False, return_inverse: bool = False,
           return_counts: bool = False, axis: int | None = None, *, equal_nan: bool = True,
           size: int | None = None, fill_value: Any = None,
           sorted: bool = True) -> Array | tuple[Array, ...]:
    """The sorted unique values of ``ar`` (of its rows along ``axis``), and optionally
    the index of each one's first occurrence, the inverse map and the counts."""
    check_arraylike("unique", ar)
    arr = as_array(ar)
    if size is None:
        _concrete(arr, "jnp.unique")
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
        outs = (*outs[:k], reshape(outs[k], shape), *outs[k + 1:])
    return outs[0] if len(outs) == 1 else outs


def unique_values(x: Any, /, *, size: int | None = None, fill_value: Any = None) -> Array:
    """The sorted unique values of ``x`` (NaNs kept apart, as the array API says)."""
    out = unique(x, equal_nan=False, size=size, fill_value=fill_value)
    assert isinstance(out, Array)
    return out


def unique_counts(x: Any, /, *, size: int | None = None,
                  fill_value: Any = None) -> UniqueCountsResult:
    """The unique values of ``x`` and how often each occurs."""
    values, counts = unique(x, return_counts=True, equal_nan=False, size=size,
                            fill_value=fill_value)
    return UniqueCountsResult(values, counts)


def unique_inverse(x: Any, /, *, size: int | None = None,
                   fill_value: Any = None) -> UniqueInverseResult:
    """The unique values of ``x`` and, for each element, the index of its value."""
    values, inverse = unique(x, return_inverse=True, equal_nan=False, size=size,
                             fill_value=fill_value)
    return UniqueInverseResult(values, inverse)


def unique_all(x: Any, /, *, size: int | None = None,
               fill_value: Any = None) -> UniqueAllResult:
    """The unique values of ``x``, first indices, inverse indices and counts."""
    values, indices, inverse, counts = unique(
        x, return_index=True, return_inverse=True, return_counts=True, equal_nan=False,
        size=size, fill_value=fill_value)
    return UniqueAllResult(values, indices, inverse, counts)


def union1d(ar1: Any, ar2: Any, *, size: int | None = None, fill_value: Any = None) -> Array:
    """The sorted values in either array."""
    check_arraylike("union1d", ar1, ar2)
    a, b = (as_array(v) for v in promote_dtypes("union1d", ar1, ar2))
    out = unique(concatenate([ravel(a), ravel(b)]), size=size, fill_value=fill_value)
    assert isinstance(out, Array)
    return out


def setdiff1d(ar1: Any, ar2: Any, assume_unique: bool = False, *, size: int | None = None,
              fill_value: Any = None) -> Array:
    """The sorted unique values of ``ar1`` that are not in ``ar2``."""
    check_arraylike("setdiff1d", ar1, ar2)
    a, b = ravel(as_array(ar1)), ravel(as_array(ar2))
    if size is None:
        _concrete(a, "jnp.setdiff1d")
    fill = as_array(np.asarray(0 if fill_value is None else fill_value)).astype(a.dtype)
    if a.size == 0:
        return lax.full((size or 0,), 0, a.dtype) + fill
    if not assume_unique:
        u = unique(a, size=size and a.size)
        assert isinstance(u, Array)
        a = u
    keep = isin(a, b, invert=True)
    if size is None:
        return a[keep]
    if size == 0:
        return lax.full((0,), 0, a.dtype)
    if not assume_unique:  # unique's padding repeats the first value: not a result
        n_unique = a.size + 1 - sum(a == a[0])
        keep = where(lax.iota(_int_dtype(), a.size) < n_unique, keep, False)
    picked = a[nonzero(keep, size=size)[0]]
    return where(lax.iota(_int_dtype(), size) < sum(keep), picked, fill)


def _pad_to(vals: Array, count: Array, size: int, fill_value: Any, default: Array) -> Array:
    fill = default if fill_value is None else as_array(np.asarray(fill_value)).astype(vals.dtype)
    return where(lax.iota(_int_dtype(), size) < count, vals, fill)


def intersect1d(ar1: Any, ar2: Any, assume_unique: bool = False,
                return_indices: bool = False, *, size: int | None = None,
                fill_value: Any = None) -> Array | tuple[Array, Array, Array]:
    """The sorted values in both arrays (and, with ``return_indices``, where each first
    occurs in each array)."""
    check_arraylike("intersect1d", ar1, ar2)
    a, b = (ravel(as_array(v)) for v in promote_dtypes("intersect1d", ar1, ar2))
    if size is None:
        _concrete(a, "jnp.intersect1d")
        _concrete(b, "jnp.intersect1d")
    if return_indices:
        if size is not None:
            raise NotImplementedError("intersect1d: return_indices=True with size= is not "
                                      "supported yet")
        ua, ia = (a, lax.iota(_int_dtype(), a.size)) if assume_unique else \
            unique(a, return_index=True)
        ub, ib = (b, lax.iota(_int_dtype(), b.size)) if assume_unique else \
            unique(b, return_index=True)
        both = concatenate([ua, ub])
        order = lexsort([both])
        aux = both[order]
        same = aux[1:] == aux[:-1]
        first = order[:-1][same]
        return aux[:-1][same], ia[first], ib[order[1:][same] - ua.size]
    ua = a
    if not assume_unique:
        u = unique(a, size=None if size is None else a.size)
        assert isinstance(u, Array)
        ua = u
    keep = isin(ua, b)
    if size is None:
        return ua[keep]
    if not assume_unique:
        n_unique = ua.size + 1 - sum(ua == ua[0]) if ua.size else 0
        keep = where(lax.iota(_int_dtype(), ua.size) < n_unique, keep, False)
    picked = ua[nonzero(keep, size=size)[0]] if ua.size else lax.full((size,), 0, ua.dtype)
    # JAX pads with the smallest result (0 when there is none).
    smallest = where(sum(keep) > 0, picked[0], lax.full((), 0, picked.dtype)) if size else picked
    return _pad_to(picked, sum(keep), size, fill_value, smallest)


def setxor1d(ar1: Any, ar2: Any, assume_unique: bool = False, *, size: int | None = None,
             fill_value: Any = None) -> Array:
    """The sorted values in exactly one of the arrays."""
    check_arraylike("setxor1d", ar1, ar2)
    a, b = (ravel(as_array(v)) for v in promote_dtypes("setxor1d", ar1, ar2))
    if size is None:
        _concrete(a, "jnp.setxor1d")
        _concrete(b, "jnp.setxor1d")
        if not assume_unique:
            a, b = unique(a), unique(b)  # type: ignore[assignment]  # one array each
        aux = sort(concatenate([a, b]))
        if aux.size == 0:
            return aux
        edge = lax.full((1,), True, dt.bool_)
        flag = concatenate([edge, aux[1:] != aux[:-1], edge])
        return aux[logical_and(flag[1:], flag[:-1])]
    # The sorted unique values of both, with a static length (padding masked out).
    aux, first, _ = _sorted_mask(concatenate([a, b]), 0, True)
    n = aux.shape[0]
    both = aux[nonzero(first, size=n)[0]] if aux.size else aux
    valid = lax.iota(_int_dtype(), n) < sum(first)
    only = logical_and(valid, logical_not(logical_and(isin(both, a), isin(both, b))))
    picked = both[nonzero(only, size=size)[0]] if both.size else lax.full((size,), 0, both.dtype)
    return _pad_to(picked, sum(only), size, fill_value, min_(picked) if size else picked)

"""Orderings beyond ``sort``: ``lexsort``, ``partition``, ``argpartition``,
``sort_complex``, as ``jax.numpy`` computes them (``partition`` from ``top_k``)."""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

from plait.frontend import lax
from plait.frontend.core.array_base import Array
from plait.frontend.numpy._core import as_array, canonical_axis, check_arraylike, ndim, shape
from plait.frontend.numpy.manipulation import swapaxes
from plait.ir import dtypes as dt

__all__ = ["lexsort", "partition", "argpartition", "sort_complex"]


def lexsort(keys: Array | np.ndarray | Sequence[Any], axis: int = -1) -> Array:
    """The indices that sort by the last key, then the one before, and so on."""
    key_tuple = tuple(keys)
    if not key_tuple:
        raise TypeError("need sequence of keys with len > 0 in lexsort")
    check_arraylike("lexsort", *key_tuple)
    arrays = [as_array(k) for k in key_tuple]
    if len({shape(k) for k in arrays}) > 1:
        raise ValueError("all keys need to be the same shape")
    int_dtype = dt.canonicalize(np.dtype(int))
    if ndim(arrays[0]) == 0:
        return lax.full((), 0, int_dtype)
    ax = canonical_axis(operator.index(axis), ndim(arrays[0]))
    iota = lax.broadcasted_iota(int_dtype, shape(arrays[0]), ax)
    return lax.sort((*arrays[::-1], iota), dimension=ax, num_keys=len(arrays))[-1]


def _prepare(name: str, a: Any, kth: int, axis: int) -> tuple[Array, int, int]:
    check_arraylike(name, a)
    arr = as_array(a)
    if dt.is_complex(arr.dtype):
        raise NotImplementedError(f"jnp.{name} for complex dtype is not implemented.")
    ax = canonical_axis(operator.index(axis), ndim(arr))
    k = canonical_axis(operator.index(kth), shape(arr)[ax], "kth")
    return swapaxes(arr, ax, -1), ax, k


def _negated_bottom(arr: Array) -> Array:
    # top_k of the negation finds the smallest; unsigned 0 would wrap, so shift by 1.
    if dt.is_unsigned(arr.dtype):
        return lax.neg(lax.add(arr, lax.full((), 1, arr.dtype)))
    return lax.neg(arr)


def partition(a: Any, kth: int, axis: int = -1) -> Array:
    """``a`` rearranged along ``axis`` so entry ``kth`` is what sorting would put there,
    the smaller ones before it and the larger after (each group in some order)."""
    arr, ax, k = _prepare("partition", a, kth, axis)
    bottom = lax.neg(lax.top_k(_negated_bottom(arr), k + 1)[0])
    if dt.is_unsigned(arr.dtype):
        bottom = lax.sub(bottom, lax.full((), 1, arr.dtype))
    top = lax.top_k(arr, shape(arr)[-1] - k - 1)[0]
    return swapaxes(lax.concatenate([bottom, top], ndim(arr) - 1), -1, ax)


def argpartition(a: Any, kth: int, axis: int = -1) -> Array:
    """The indices that :func:`partition` ``a`` along ``axis``."""
    arr, ax, k = _prepare("argpartition", a, kth, axis)
    bottom = lax.top_k(_negated_bottom(arr), k + 1)[1]
    # The others by a proxy that marks the chosen ones, so duplicates are not taken twice.
    n = shape(arr)[-1]
    chosen = lax.full(shape(arr), 1.0, dt.canonicalize(np.dtype(float)))
    grids: list[Any] = [lax.broadcasted_iota(dt.int32, shape(bottom), d)
                        for d in range(ndim(arr) - 1)]
    proxy = chosen.at[(*grids, bottom)].set(0.0)
    top = lax.top_k(proxy, n - k - 1)[1]
    return swapaxes(lax.concatenate([bottom, top], ndim(arr) - 1), -1, ax)


def sort_complex(a: Any) -> Array:
    """``a`` sorted along its last axis by real part, then imaginary part, as complex."""
    check_arraylike("sort_complex", a)
    arr = lax.sort(as_array(a))
    wide = arr.dtype in (dt.float64, dt.complex128) or (
        not dt.is_inexact(arr.dtype) and dt.canonicalize(dt.float64) == dt.float64)
    return lax.convert_element_type(arr, dt.complex128 if wide else dt.complex64)

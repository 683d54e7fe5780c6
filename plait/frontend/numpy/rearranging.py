"""Rearranging elements: ``roll``, ``rollaxis``, ``flipud``, ``fliplr``, ``rot90``."""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

from plait.frontend import lax
from plait.frontend.core.array_base import Array
from plait.frontend.numpy._core import as_array, canonical_axis, check_arraylike
from plait.frontend.numpy.arithmetic import remainder
from plait.frontend.numpy.manipulation import (
    _index_tuple,
    broadcast_to,
    flip,
    moveaxis,
    ravel,
    reshape,
    transpose,
)
from plait.ir import dtypes as dt

__all__ = ["roll", "rollaxis", "flipud", "fliplr", "rot90"]


def _input(name: str, a: Any) -> Array:
    check_arraylike(name, a)
    return as_array(a)


def roll(a: Any, shift: Any, axis: int | Sequence[int] | None = None) -> Array:
    """Elements shifted by ``shift`` along ``axis`` (of the flattened array when
    ``None``), those leaving one end coming back at the other.

    A static shift is two slices and a concatenation; a traced one is a
    ``dynamic_slice`` of the array joined to itself.
    """
    arr = _input("roll", a)
    if axis is None:
        return reshape(roll(ravel(arr), shift, 0), arr.shape)
    axes = tuple(canonical_axis(x, arr.ndim) for x in _index_tuple(axis))
    try:
        shifts = _index_tuple(shift)
    except TypeError:
        return _roll_dynamic(arr, as_array(shift), axes)
    for ax, s in zip(*np.broadcast_arrays(np.asarray(axes), np.asarray(shifts))):
        n = arr.shape[ax]
        i = int(-s) % n if n else 0
        if i:
            arr = lax.concatenate([lax.slice_in_dim(arr, i, n, axis=int(ax)),
                                   lax.slice_in_dim(arr, 0, i, axis=int(ax))], int(ax))
    return arr


def _roll_dynamic(arr: Array, shift: Array, axes: tuple[int, ...]) -> Array:
    try:
        b_shape = np.broadcast_shapes(shift.shape, (len(axes),))
    except ValueError:
        b_shape = ()
    if len(b_shape) != 1:
        raise ValueError("'shift' and 'axis' arguments to roll must be scalars or 1D arrays")
    shifts = broadcast_to(shift, b_shape)
    for k, ax in enumerate(np.broadcast_to(np.asarray(axes), b_shape).tolist()):
        n = arr.shape[ax]
        x = remainder(lax.convert_element_type(shifts[k], dt.int32), np.int32(max(n, 1)))
        doubled = lax.concatenate([arr, arr], ax)
        arr = lax.dynamic_slice_in_dim(doubled, lax.sub(n, x), n, axis=ax)
    return arr


def rollaxis(a: Any, axis: int, start: int = 0) -> Array:
    """Axis ``axis`` moved to lie before position ``start``.

    Raises:
      ValueError: ``start`` is out of ``[-ndim, ndim]``.
    """
    arr = _input("rollaxis", a)
    start = operator.index(start)
    nd = arr.ndim
    ax = canonical_axis(axis, nd)
    if not -nd <= start <= nd:
        raise ValueError(f"start={start} must satisfy {-nd}<=start<={nd}")
    if start < 0:
        start += nd
    if start > ax:
        start -= 1
    return moveaxis(arr, ax, start)


def flipud(m: Any) -> Array:
    """Reverse the order along the first axis."""
    return flip(_input("flipud", m), 0)


def fliplr(m: Any) -> Array:
    """Reverse the order along the second axis."""
    return flip(_input("fliplr", m), 1)


def rot90(m: Any, k: int = 1, axes: tuple[int, int] = (0, 1)) -> Array:
    """Rotate by ``k`` quarter turns in the plane of ``axes`` (from the first axis
    toward the second).

    Raises:
      ValueError: fewer than two dimensions, or the two axes are one.
    """
    arr = _input("rot90", m)
    if arr.ndim < 2:
        raise ValueError("rot90 requires its first argument to have ndim at least two, but "
                         f"got first argument of shape {arr.shape}, which has ndim {arr.ndim}")
    ax1, ax2 = (canonical_axis(x, arr.ndim) for x in axes)
    if ax1 == ax2:
        raise ValueError("Axes must be different")
    k = operator.index(k) % 4
    if k == 0:
        return arr
    if k == 2:
        return flip(flip(arr, ax1), ax2)
    perm = list(range(arr.ndim))
    perm[ax1], perm[ax2] = perm[ax2], perm[ax1]
    if k == 1:
        return transpose(flip(arr, ax2), perm)
    return flip(transpose(arr, perm), ax2)

"""Bit packing: ``packbits`` (the truth of each element, eight to a ``uint8``) and its
inverse ``unpackbits``, in big- or little-endian bit order."""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from plait.frontend import lax
from plait.frontend.core.array_base import Array
from plait.frontend.numpy._core import as_array, canonical_axis, check_arraylike
from plait.ir import dtypes as dt

__all__ = ["packbits", "unpackbits"]


def _check_bitorder(bitorder: str) -> None:
    if bitorder not in ("little", "big"):
        raise ValueError("'order' must be either 'little' or 'big'")


def _bit_values(bitorder: str) -> np.ndarray:
    """The value of each of a byte's eight bits, in ``bitorder``."""
    bits = np.left_shift(np.uint8(1), np.arange(8, dtype=np.uint8))
    return bits[::-1].copy() if bitorder == "big" else bits


def _to_last(arr: Array, axis: int | None) -> tuple[Array, int]:
    """``arr`` flattened (``axis`` None) or with ``axis`` swapped with the last one,
    and that axis."""
    if axis is None:
        return lax.reshape(arr, (arr.size,)), 0
    try:
        ax = operator.index(axis)
    except TypeError:
        raise IndexError("only integers, slices (`:`), ellipsis (`...`), numpy.newaxis "
                         "(`None`) and integer or boolean arrays are valid indices") from None
    ax = canonical_axis(ax, arr.ndim)
    return _swap_last(arr, ax), ax


def _swap_last(arr: Array, ax: int) -> Array:
    if ax == arr.ndim - 1:
        return arr
    perm = list(range(arr.ndim))
    perm[ax], perm[-1] = perm[-1], perm[ax]
    return lax.transpose(arr, tuple(perm))


def packbits(a: Any, axis: int | None = None, bitorder: str = "big") -> Array:
    """Pack the truth values of an integer or boolean array into ``uint8`` bytes along
    ``axis`` (of the flattened array when ``None``), zero-padding to a multiple of 8.

    Raises:
      TypeError: an input that is not integer or boolean (or not an array).
      ValueError: a ``bitorder`` other than ``'big'`` or ``'little'``.
    """
    check_arraylike("packbits", a)
    arr = as_array(a)
    if not (dt.is_integer(arr.dtype) or arr.dtype == dt.bool_):
        raise TypeError("Expected an input array of integer or boolean data type")
    _check_bitorder(bitorder)
    bits = lax.ne(arr, lax.full((), 0, arr.dtype))
    bits = lax.convert_element_type(bits, dt.uint8)
    bits, ax = _to_last(bits, axis)
    n = bits.shape[-1]
    extra = -n % 8
    if extra:
        bits = lax.pad(bits, np.uint8(0), [(0, 0, 0)] * (bits.ndim - 1) + [(0, extra, 0)])
    groups = bits.shape[:-1] + ((n + extra) // 8, 8)
    bits = lax.reshape(bits, groups)
    order = np.arange(8, dtype=np.uint8)
    shifts = lax.broadcast_in_dim(order[::-1].copy() if bitorder == "big" else order,
                                  groups, (len(groups) - 1,))
    packed = lax.reduce_sum(lax.shift_left(bits, shifts), (len(groups) - 1,))
    return _swap_last(packed, ax)


def unpackbits(a: Any, axis: int | None = None, count: int | None = None,
               bitorder: str = "big") -> Array:
    """Unpack each ``uint8`` element into its eight bits (as ``uint8`` zeros and ones)
    along ``axis`` (of the flattened array when ``None``); ``count`` keeps that many
    bits (a negative one drops bits from the end; one past the end pads with zeros).

    Raises:
      TypeError: an input that is not ``uint8`` (or not an array).
      ValueError: a ``bitorder`` other than ``'big'`` or ``'little'``.
    """
    check_arraylike("unpackbits", a)
    arr = as_array(a)
    if arr.dtype != dt.uint8:
        raise TypeError("Expected an input array of unsigned byte data type")
    _check_bitorder(bitorder)
    arr, ax = _to_last(arr, axis)
    wide = arr.shape + (8,)
    values = lax.broadcast_in_dim(_bit_values(bitorder), wide, (arr.ndim,))
    expanded = lax.broadcast_in_dim(arr, wide, tuple(range(arr.ndim)))
    bits = lax.ne(lax.bitwise_and(expanded, values), lax.full((), 0, dt.uint8))
    out = lax.reshape(lax.convert_element_type(bits, dt.uint8),
                      arr.shape[:-1] + (arr.shape[-1] * 8,))
    if count is not None:
        c = operator.index(count)
        length = out.shape[-1]
        keep = c if c > length else len(range(length)[:c])
        out = lax.pad(out, np.uint8(0), [(0, 0, 0)] * (out.ndim - 1) + [(0, keep - length, 0)])
    return _swap_last(out, ax)

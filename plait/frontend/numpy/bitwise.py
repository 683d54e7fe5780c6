"""Bit shifts and counts: ``left_shift``, ``right_shift`` (arithmetic for signed,
logical for unsigned integers, as NumPy), their ``bitwise_`` aliases, and
``bitwise_count``."""

from __future__ import annotations

from typing import Any

from plait.frontend import lax
from plait.frontend.core.array_base import Array
from plait.frontend.numpy._core import as_array, check_arraylike, promote
from plait.ir import dtypes as dt

__all__ = ["left_shift", "right_shift", "bitwise_left_shift", "bitwise_right_shift",
           "bitwise_count"]


def _integers(name: str, x: Any, y: Any) -> list[Array]:
    check_arraylike(name, x, y)
    args = [as_array(a) for a in promote(name, x, y)]
    if not dt.is_integer(args[0].dtype):
        raise TypeError(f"{name} only accepts integer dtypes, but got {args[0].dtype}")
    return args


def left_shift(x: Any, y: Any, /) -> Array:
    """``x`` shifted left by ``y`` bits (0 once ``y`` reaches the bit width)."""
    return lax.shift_left(*_integers("left_shift", x, y))


def right_shift(x1: Any, x2: Any, /) -> Array:
    """``x1`` shifted right by ``x2`` bits, keeping the sign of signed integers."""
    x, y = _integers("right_shift", x1, x2)
    shift = lax.shift_right_arithmetic if dt.is_signed(x.dtype) else lax.shift_right_logical
    return shift(x, y)


bitwise_left_shift = left_shift
bitwise_right_shift = right_shift


def bitwise_count(x: Any, /) -> Array:
    """The number of set bits of each element's absolute value (uint8, as NumPy)."""
    check_arraylike("bitwise_count", x)
    v = as_array(x)
    if not (dt.is_integer(v.dtype) or dt.is_bool(v.dtype)):
        raise TypeError(f"bitwise_count only accepts integer dtypes, but got {v.dtype}")
    if dt.is_bool(v.dtype):
        return v.astype(dt.uint8)
    if dt.is_signed(v.dtype):
        v = lax.abs(v)
    return lax.population_count(v).astype(dt.uint8)

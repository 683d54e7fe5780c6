"""Helpers shared by the ``lax.linalg`` functions."""

from __future__ import annotations

from typing import Any

import numpy as np

from plait.frontend.core.array_base import Array
from plait.frontend.lax.ops import add, conj, convert_element_type, div, transpose
from plait.ir import dtypes as dt
from plait.ir.avals import ShapedArray

__all__ = ["symmetrize"]


def _swap_last(x: Any, ndim: int) -> Array:
    return transpose(x, (*range(ndim - 2), ndim - 1, ndim - 2))


def _inexact(dtype: np.dtype[Any]) -> np.dtype[Any]:
    """The dtype true division gives (JAX's ``to_inexact_dtype``): 64-bit integers to
    float64 (float32 unless x64 is on), other integers and bool to float32."""
    if dt.is_inexact(dtype):
        return dtype
    return dt.canonicalize(np.dtype(np.float64)) if dtype.itemsize == 8 else dt.float32


def symmetrize(x: Any, aval: ShapedArray) -> Array:
    """``(x + x^H) / 2`` (true division: integers become floating)."""
    xh = _swap_last(x, aval.ndim)
    if dt.is_complex(aval.dtype):
        xh = conj(xh)
    s = add(x, xh)
    return div(convert_element_type(s, _inexact(aval.dtype)), 2)

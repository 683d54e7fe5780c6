"""Helpers shared by the ``lax.linalg`` functions."""

from __future__ import annotations

from typing import Any

import numpy as np

from plait.frontend.core.array_base import Array
from plait.frontend.lax.ops import (
    add,
    broadcast,
    broadcasted_iota,
    conj,
    convert_element_type,
    div,
    full_like,
    ge,
    select_n,
    transpose,
)
from plait.ir import dtypes as dt
from plait.ir.avals import ShapedArray

__all__ = ["symmetrize", "swap_last", "tril"]


def swap_last(x: Any, ndim: int) -> Array:
    """``x`` (of rank ``ndim``) with its last two dimensions swapped."""
    return transpose(x, (*range(ndim - 2), ndim - 1, ndim - 2))


def tril(x: Array, k: int = 0) -> Array:
    """``x`` with zeros above the ``k``-th diagonal of its trailing matrices (as JAX's
    ``_tril``: the mask in the default integer type, the offset added)."""
    *batch, n, m = x.shape
    idx = dt.canonicalize(np.dtype(np.int64))
    mask = ge(add(broadcasted_iota(idx, (n, m), 0), np.asarray(k, idx)),
              broadcasted_iota(idx, (n, m), 1))
    if batch:
        mask = broadcast(mask, batch)
    return select_n(mask, full_like(x, 0), x)


def _inexact(dtype: np.dtype[Any]) -> np.dtype[Any]:
    """The dtype true division gives (JAX's ``to_inexact_dtype``): 64-bit integers to
    float64 (float32 unless x64 is on), other integers and bool to float32."""
    if dt.is_inexact(dtype):
        return dtype
    return dt.canonicalize(np.dtype(np.float64)) if dtype.itemsize == 8 else dt.float32


def symmetrize(x: Any, aval: ShapedArray) -> Array:
    """``(x + x^H) / 2`` (true division: integers become floating)."""
    xh = swap_last(x, aval.ndim)
    if dt.is_complex(aval.dtype):
        xh = conj(xh)
    s = add(x, xh)
    return div(convert_element_type(s, _inexact(aval.dtype)), 2)

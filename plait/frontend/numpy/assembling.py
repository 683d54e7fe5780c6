"""Assembling arrays: ``resize`` (repeating the elements to fill a new shape) and
``block`` (an array from nested lists of blocks)."""

from __future__ import annotations

import math
import operator
from typing import Any

from plait.frontend import lax
from plait.frontend.core.array_base import Array
from plait.frontend.numpy._core import as_array, check_arraylike
from plait.frontend.numpy.creation import asarray, zeros_like
from plait.frontend.numpy.manipulation import concatenate, tile

__all__ = ["resize", "block"]


def _shape_tuple(new_shape: Any) -> tuple[int, ...]:
    try:
        return (operator.index(new_shape),)
    except TypeError:
        return tuple(operator.index(d) for d in new_shape)


def resize(a: Any, new_shape: Any) -> Array:
    """``a`` flattened and repeated (or cut short) to fill ``new_shape`` (zeros when
    either is empty).

    Raises:
      ValueError: a negative dimension.
      TypeError: a dimension that is not an int, or ``a`` not an array.
    """
    check_arraylike("resize", a)
    dims = _shape_tuple(new_shape)
    if any(d < 0 for d in dims):
        raise ValueError("all elements of `new_shape` must be non-negative")
    arr = as_array(a)
    flat = lax.reshape(arr, (arr.size,)) if arr.ndim != 1 else arr
    size = math.prod(dims)
    if flat.size == 0 or size == 0:
        return zeros_like(flat, shape=dims)
    repeats = -(-size // flat.size)
    if repeats > 1:
        flat = tile(flat, repeats)
    if flat.size != size:
        flat = lax.slice(flat, (0,), (size,))
    return lax.reshape(flat, dims)


def _block(xs: Any) -> tuple[Array, int]:
    """The assembled array of a (nested list) block, and the list depth."""
    if isinstance(xs, tuple):
        raise ValueError(f"jax.numpy.block does not allow tuples, got {xs}")
    if not isinstance(xs, list):
        return asarray(xs), 1
    if not xs:
        raise ValueError("jax.numpy.block does not allow empty list arguments")
    parts = [_block(x) for x in xs]
    depth = parts[0][1]
    if any(d != depth for _, d in parts[1:]):
        raise ValueError("Mismatched list depths in jax.numpy.block")
    rank = max(depth, max(p.ndim for p, _ in parts))
    arrays = [p if p.ndim == rank else lax.reshape(p, (1,) * (rank - p.ndim) + p.shape)
              for p, _ in parts]
    return concatenate(arrays, axis=-depth), depth + 1


def block(arrays: Any) -> Array:
    """An array assembled from nested lists of blocks: the innermost lists are joined
    along the last axis, the next along the one before, and so on (blocks get leading
    unit dimensions as needed).

    Raises:
      ValueError: a tuple, an empty list, or lists nested to different depths.
    """
    return _block(arrays)[0]

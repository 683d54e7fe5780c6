"""Reductions within segments of an array (``plait.ops``, as ``jax.ops``): rows of ``data``
sharing a segment id are summed (multiplied, maxed, minned) into one row of the result.

Each is a scatter into an array filled with the reduction's identity, so rows whose id is
outside ``[0, num_segments)`` are dropped (``mode`` may say otherwise) and empty segments
hold the identity, as in JAX.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from plait.frontend.core.array_base import Array
from plait.frontend.core.tracing import has_value
from plait.frontend.numpy._core import as_array, check_arraylike
from plait.frontend.numpy.arithmetic import floor_divide
from plait.frontend.numpy.at import IndexUpdateRef, Mode
from plait.frontend.numpy.creation import arange, full
from plait.frontend.numpy.reductions import max as max_
from plait.frontend.numpy.reductions import min as min_
from plait.frontend.numpy.reductions import prod as prod_
from plait.frontend.numpy.reductions import sum as sum_
from plait.ir import dtypes as dt
from plait.ir.errors import ConcretizationTypeError
from plait.ir.primitives.indexing import GatherScatterMode

__all__ = ["segment_sum", "segment_prod", "segment_max", "segment_min"]

_Reducer = Callable[..., Array]


def _num_segments(name: str, ids: Array, num_segments: Any) -> int:
    if num_segments is None:
        if not has_value(ids):
            raise ConcretizationTypeError(
                "Abstract tracer value encountered where concrete value is expected: "
                f"{name}() needs num_segments to size its result, and segment_ids "
                f"({ids.aval.str_short(short_dtypes=False)}) is traced: pass a static "
                "num_segments (a Python int) under jit and other transformations.")
        return int(np.max(np.asarray(ids))) + 1 if ids.size else 0
    if not isinstance(num_segments, int | np.integer):
        if has_value(num_segments) and np.ndim(num_segments) == 0:
            num_segments = int(np.asarray(num_segments))
        else:
            raise ConcretizationTypeError(
                f"{name}(): expected num_segments a concrete int, but got {num_segments!r}: "
                "under jit, pass it as a static argument")
    if num_segments < 0:
        raise ValueError("num_segments must be non-negative.")
    return int(num_segments)


def _segment(name: str, method: str, identity: Callable[[np.dtype[Any]], Any],
             reducer: _Reducer, data: Any, segment_ids: Any, num_segments: Any,
             indices_are_sorted: bool, unique_indices: bool, bucket_size: int | None,
             mode: Mode) -> Array:
    check_arraylike(name, data, segment_ids)
    data, ids = as_array(data), as_array(segment_ids)
    n = _num_segments(name, ids, num_segments)
    dtype = data.dtype
    mode = GatherScatterMode.FILL_OR_DROP if mode is None else mode
    options = dict(indices_are_sorted=indices_are_sorted, unique_indices=unique_indices,
                   mode=mode, wrap_negative_indices=False)
    if bucket_size is None:
        out = full((n, *data.shape[1:]), identity(dtype), dtype)
        return getattr(IndexUpdateRef(out, ids), method)(data, **options)  # type: ignore[no-any-return]  # (the method is one of IndexUpdateRef's, named by the caller)
    # Each bucket of ``bucket_size`` rows reduces into its own row of segments first (for
    # the accuracy of long sums); the buckets are then reduced together.
    buckets = -(-ids.shape[0] // bucket_size)
    out = full((buckets, n, *data.shape[1:]), identity(dtype), dtype)
    bucket_of_row = floor_divide(arange(ids.shape[0]), bucket_size)
    out = getattr(IndexUpdateRef(out, (bucket_of_row, ids[None, :])), method)(data, **options)
    return reducer(out, axis=0).astype(dtype)


def _zero(d: np.dtype[Any]) -> Any:
    return False if d == np.bool_ else 0


def _one(d: np.dtype[Any]) -> Any:
    return True if d == np.bool_ else 1


def segment_sum(data: Any, segment_ids: Any, num_segments: int | None = None,
                indices_are_sorted: bool = False, unique_indices: bool = False,
                bucket_size: int | None = None, mode: Mode = None,
                out_sharding: None = None) -> Array:
    """Per segment, the sum of the rows of ``data`` (along its leading axis) whose
    ``segment_ids`` entry names it; shape ``(num_segments,) + data.shape[1:]``.

    ``num_segments`` defaults to ``max(segment_ids) + 1`` (so it must be given under
    ``jit``); ids outside ``[0, num_segments)`` are dropped unless ``mode`` says otherwise.
    ``bucket_size`` sums buckets of that many rows separately first.
    """
    return _segment("segment_sum", "add", _zero, sum_, data, segment_ids, num_segments,
                    indices_are_sorted, unique_indices, bucket_size, mode)


def segment_prod(data: Any, segment_ids: Any, num_segments: int | None = None,
                 indices_are_sorted: bool = False, unique_indices: bool = False,
                 bucket_size: int | None = None, mode: Mode = None,
                 out_sharding: None = None) -> Array:
    """Per segment, the product of its rows of ``data`` (1 for an empty segment); the
    arguments are :func:`segment_sum`'s."""
    return _segment("segment_prod", "multiply", _one, prod_, data, segment_ids, num_segments,
                    indices_are_sorted, unique_indices, bucket_size, mode)


def segment_max(data: Any, segment_ids: Any, num_segments: int | None = None,
                indices_are_sorted: bool = False, unique_indices: bool = False,
                bucket_size: int | None = None, mode: Mode = None,
                out_sharding: None = None) -> Array:
    """Per segment, the maximum of its rows of ``data`` (the dtype's lowest value, ``-inf``
    for floats, for an empty segment); the arguments are :func:`segment_sum`'s."""
    return _segment("segment_max", "max", dt.max_identity, max_, data, segment_ids,
                    num_segments, indices_are_sorted, unique_indices, bucket_size, mode)


def segment_min(data: Any, segment_ids: Any, num_segments: int | None = None,
                indices_are_sorted: bool = False, unique_indices: bool = False,
                bucket_size: int | None = None, mode: Mode = None,
                out_sharding: None = None) -> Array:
    """Per segment, the minimum of its rows of ``data`` (the dtype's highest value, ``inf``
    for floats, for an empty segment); the arguments are :func:`segment_sum`'s."""
    return _segment("segment_min", "min", dt.min_identity, min_, data, segment_ids,
                    num_segments, indices_are_sorted, unique_indices, bucket_size, mode)

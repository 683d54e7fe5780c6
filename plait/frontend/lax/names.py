"""Type names and small helpers of ``jax.lax``: the dimension-number and precision types
users annotate with (``DotDimensionNumbers``, ``PrecisionLike``, ...),
``RaggedDotDimensionNumbers``, ``dtype``, ``broadcast_like`` and ``shape_as_value``."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any, TypeAlias

import numpy as np

from plait.frontend.core.array_base import Array
from plait.frontend.core.promotion import python_scalar_dtype
from plait.frontend.lax.ops import (
    broadcast_in_dim,
    concatenate,
    convert_element_type,
    expand_dims,
    full,
)
from plait.ir import dtypes as dt
from plait.ir.config import values as _config
from plait.ir.dims import dimension_value, is_constant_shape
from plait.ir.primitives import DotAlgorithm, DotAlgorithmPreset, Precision
from plait.ir.primitives.convolution import ConvDimensionNumbers

__all__ = ["DotDimensionNumbers", "ConvGeneralDilatedDimensionNumbers", "PrecisionLike",
           "RaggedDotDimensionNumbers", "dtype", "broadcast_like", "shape_as_value"]

# ``((lhs_contracting, rhs_contracting), (lhs_batch, rhs_batch))`` of ``dot_general``.
DotDimensionNumbers: TypeAlias = tuple[tuple[Sequence[int], Sequence[int]],
                                       tuple[Sequence[int], Sequence[int]]]
# What ``conv_general_dilated`` takes as ``dimension_numbers``.
ConvGeneralDilatedDimensionNumbers: TypeAlias = (
    tuple[str, str, str] | ConvDimensionNumbers | None)
# What contractions take as ``precision``.
PrecisionLike: TypeAlias = (None | str | Precision | tuple[str, str]
                             | tuple[Precision, Precision] | DotAlgorithm | DotAlgorithmPreset)

_INT32_MAX = int(np.iinfo(np.int32).max)


@dataclasses.dataclass(frozen=True)
class RaggedDotDimensionNumbers:
    """The ragged, group and dot dimensions of a ragged dot product (as
    ``jax.lax.RaggedDotDimensionNumbers``); the sequences are kept as tuples."""

    dot_dimension_numbers: DotDimensionNumbers
    lhs_ragged_dimensions: Sequence[int]
    rhs_group_dimensions: Sequence[int]

    def __init__(self, dot_dimension_numbers: Any, lhs_ragged_dimensions: Sequence[int],
                 rhs_group_dimensions: Sequence[int]) -> None:
        # (frozen: set through object's __setattr__, normalized to hashable tuples)
        object.__setattr__(self, "dot_dimension_numbers",
                           tuple(tuple(map(tuple, t)) for t in dot_dimension_numbers))
        object.__setattr__(self, "lhs_ragged_dimensions", tuple(lhs_ragged_dimensions))
        object.__setattr__(self, "rhs_group_dimensions", tuple(rhs_group_dimensions))


def _checked(d: np.dtype[Any], x: Any) -> np.dtype[Any]:
    if d.kind in "OUSVMm":
        raise TypeError(f"Value '{x}' with dtype {d} is not a valid JAX array type. Only "
                        "arrays of numeric types are supported by JAX.")
    return dt.canonicalize(d) if not dt.is_key(d) else d


def dtype(x: Any) -> np.dtype[Any]:
    """The dtype of a value or type, as ``jax.lax.dtype``: an array's own dtype;
    Python scalars and types, NumPy values, types and dtype names canonicalized.

    Raises:
      ValueError: ``x`` is ``None``.
      TypeError: ``x`` has no dtype, or not a numeric one.
    """
    if x is None:
        raise ValueError(f"Invalid argument to dtype: {x}.")
    if isinstance(x, Array):
        return x.dtype
    if x is bool or x is int or x is float or x is complex:
        return python_scalar_dtype(x())
    if type(x) in (bool, int, float, complex):
        return python_scalar_dtype(x)
    if isinstance(x, type) and issubclass(x, np.generic):
        return _checked(np.dtype(x), x)
    if isinstance(x, str | np.dtype):
        return _checked(np.dtype(x), x)
    d = getattr(x, "dtype", None)
    if not isinstance(d, np.dtype):
        try:
            d = np.result_type(x)
        except TypeError as err:
            raise TypeError(f"Cannot determine dtype of {x}") from err
    return _checked(d, x)


def broadcast_like(arr: Any, like_arr: Any) -> Array:
    """``arr`` broadcast (NumPy's rules: new leading dimensions, size-1 dimensions
    stretched) to the shape of ``like_arr``.

    Raises:
      ValueError: the shapes are incompatible (JAX's message).
    """
    shape, have = tuple(np.shape(like_arr)), tuple(np.shape(arr))
    lead = len(shape) - len(have)
    if lead < 0 or not all(a in (1, b) for a, b in zip(have, shape[max(lead, 0):])):
        d = dtype(arr).name
        raise ValueError(f"Incompatible types for broadcasting: input type={d}"
                         f"[{','.join(map(str, have))}] and requested type={d}"
                         f"[{','.join(map(str, shape))}]")
    return broadcast_in_dim(arr, shape, tuple(range(lead, len(shape))))


def shape_as_value(shape: Sequence[Any]) -> Any:
    """A shape as a 1-D integer array; symbolic dimensions become traced values
    (int32 unless a size needs int64)."""
    if len(shape) == 0:
        return full((0,), np.array(0, dtype=np.int32))
    if is_constant_shape(shape):
        big = any(d > _INT32_MAX for d in shape)
        return np.asarray(shape, dtype=np.int64 if big else np.int32)
    kind = np.int64 if _config.enable_x64 else np.int32
    return concatenate([expand_dims(convert_element_type(
        d if isinstance(d, int) else dimension_value(d), kind), (0,)) for d in shape],
        dimension=0)

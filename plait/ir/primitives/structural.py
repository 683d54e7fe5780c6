"""Primitives that move data without arithmetic: broadcasting, reshaping, slicing, padding."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from plait.ir import dtypes
from plait.ir.avals import AbstractValue, ShapedArray, shaped
from plait.ir.config import values as config_values
from plait.ir.dims import DimExpr, parse_dims
from plait.ir.params import (
    Derived,
    ParamDef,
    decode_dims,
    decode_dtype,
    decode_int,
    decode_ints,
    decode_nested_ints,
    decode_none,
    decode_optional_ints,
)
from plait.ir.primitive import Primitive
from plait.ir.primitives._typing import (
    ANY,
    INT,
    check_axes,
    check_dtype,
    check_permutation,
    check_same_dtypes,
    fail,
)


def _out_shape(_: Sequence[AbstractValue], outs: Sequence[AbstractValue]) -> tuple[int, ...]:
    return shaped(outs[0]).shape


def _check_shape(shape: Any, what: str = "shape") -> None:
    if not isinstance(shape, tuple) or any(
            type(d) is not DimExpr and (type(d) is not int or d < 0) for d in shape):
        fail(f"expected a {what} of non-negative ints, but got {shape!r}")


def _broadcast_in_dim_rule(x: ShapedArray, *, shape: tuple[int, ...],
                           broadcast_dimensions: tuple[int, ...],
                           sharding: None) -> tuple[ShapedArray, ...]:
    _check_shape(shape)
    bd = broadcast_dimensions
    if len(bd) != x.ndim:
        fail(f"expected {x.ndim} broadcast_dimensions for operand {x.str_short()}, but got {bd}")
    if any(not 0 <= d < len(shape) for d in bd) or any(a >= b for a, b in zip(bd, bd[1:])):
        fail(f"expected strictly increasing broadcast_dimensions in [0, {len(shape)}), "
             f"but got {bd}")
    for i, d in enumerate(bd):
        if x.shape[i] != 1 and x.shape[i] != shape[d]:
            fail(f"expected operand dimension {i} of {x.str_short()} to be 1 or {shape[d]} "
                 f"(dimension {d} of shape {shape}), but got {x.shape[i]}")
    return (ShapedArray(shape, x.dtype, x.weak_type),)


broadcast_in_dim_p = Primitive("broadcast_in_dim", _broadcast_in_dim_rule, (
    ParamDef("shape", Derived(_out_shape), show="never", decode=decode_dims),
    ParamDef("broadcast_dimensions", (), show="nondefault", decode=decode_ints),
    ParamDef("sharding", None, show="never", decode=decode_none),
))


def _reshape_rule(x: ShapedArray, *, new_sizes: tuple[int, ...],
                  dimensions: tuple[int, ...] | None, sharding: None) -> tuple[ShapedArray, ...]:
    _check_shape(new_sizes, "new_sizes")
    if dimensions is not None:
        check_permutation(dimensions, x.ndim, "dimensions permutation")
    if math.prod(new_sizes) != x.size:
        fail(f"expected new_sizes with {x.size} elements for {x.str_short()}, but got {new_sizes}")
    return (ShapedArray(new_sizes, x.dtype, x.weak_type),)


reshape_p = Primitive("reshape", _reshape_rule, (
    ParamDef("new_sizes", decode=decode_dims),
    ParamDef("dimensions", None, decode=decode_optional_ints),
    ParamDef("sharding", None, decode=decode_none),
))


def _transpose_rule(x: ShapedArray, *, permutation: tuple[int, ...]) -> tuple[ShapedArray, ...]:
    check_permutation(permutation, x.ndim)
    return (ShapedArray(tuple(x.shape[p] for p in permutation), x.dtype, x.weak_type),)


transpose_p = Primitive("transpose", _transpose_rule,
                        (ParamDef("permutation", decode=decode_ints),))


def _squeeze_rule(x: ShapedArray, *, dimensions: tuple[int, ...]) -> tuple[ShapedArray, ...]:
    check_axes(dimensions, x.ndim, "dimensions")
    for d in dimensions:
        if x.shape[d] != 1:
            fail(f"expected squeezed dimensions of size 1, but got dimension {d} of "
                 f"{x.str_short()}")
    shape = tuple(s for i, s in enumerate(x.shape) if i not in dimensions)
    return (ShapedArray(shape, x.dtype, x.weak_type),)


squeeze_p = Primitive("squeeze", _squeeze_rule, (ParamDef("dimensions", decode=decode_ints),))


def _concatenate_rule(*xs: ShapedArray, dimension: int) -> tuple[ShapedArray, ...]:
    if not xs:
        fail("expected at least one operand, but got none")
    check_same_dtypes(xs)
    x0 = xs[0]
    check_axes((dimension,), x0.ndim, "dimension")
    for x in xs[1:]:
        if x.ndim != x0.ndim or any(a != b for i, (a, b) in enumerate(zip(x.shape, x0.shape))
                                    if i != dimension):
            fail(f"expected operands equal in all dimensions but {dimension}, but got "
                 + ", ".join(x.str_short() for x in xs))
    shape = list(x0.shape)
    shape[dimension] = sum(x.shape[dimension] for x in xs)
    return (ShapedArray(tuple(shape), x0.dtype, all(x.weak_type for x in xs)),)


concatenate_p = Primitive("concatenate", _concatenate_rule,
                          (ParamDef("dimension", decode=decode_int),))


def _pad_rule(x: ShapedArray, value: ShapedArray, *,
              padding_config: tuple[tuple[int, int, int], ...]) -> tuple[ShapedArray, ...]:
    check_same_dtypes([x, value])
    if value.shape != ():
        fail(f"expected a scalar padding value, but got {value.str_short()}")
    if len(padding_config) != x.ndim or any(len(c) != 3 for c in padding_config):
        fail(f"expected {x.ndim} (low, high, interior) triples, but got {padding_config}")
    shape = []
    for d, (lo, hi, interior) in zip(x.shape, padding_config):
        if interior < 0:
            fail(f"expected non-negative interior padding, but got {padding_config}")
        n = lo + hi + d + max(d - 1, 0) * interior
        if n < 0:
            fail(f"expected padding that leaves a non-negative size, but got {padding_config} "
                 f"for {x.str_short()}")
        shape.append(n)
    return (ShapedArray(tuple(shape), x.dtype, x.weak_type and value.weak_type),)


pad_p = Primitive("pad", _pad_rule, (ParamDef("padding_config", decode=decode_nested_ints),))


def _slice_rule(x: ShapedArray, *, start_indices: tuple[int, ...], limit_indices: tuple[int, ...],
                strides: tuple[int, ...] | None) -> tuple[ShapedArray, ...]:
    n = x.ndim
    st = strides if strides is not None else (1,) * n
    if len(start_indices) != n or len(limit_indices) != n or len(st) != n:
        fail(f"expected start_indices, limit_indices and strides of length {n}, but got "
             f"{start_indices}, {limit_indices}, {strides}")
    shape = []
    for d, lo, hi, s in zip(x.shape, start_indices, limit_indices, st):
        if not 0 <= lo <= hi <= d or s < 1:
            fail(f"expected 0 <= start <= limit <= size and stride >= 1, but got start "
                 f"{start_indices}, limit {limit_indices}, strides {strides} for {x.str_short()}")
        shape.append(0 if hi == lo else (hi - lo - 1) // s + 1)
    return (ShapedArray(tuple(shape), x.dtype, x.weak_type),)


slice_p = Primitive("slice", _slice_rule, (
    ParamDef("start_indices", decode=decode_ints),
    ParamDef("limit_indices", decode=decode_ints),
    ParamDef("strides", None, decode=decode_optional_ints),
))


def _check_indices(x: ShapedArray, indices: Sequence[ShapedArray]) -> None:
    if len(indices) != x.ndim:
        fail(f"expected {x.ndim} start indices for {x.str_short()}, but got {len(indices)}")
    for i in indices:
        if i.shape != () or i.dtype not in INT:
            fail(f"expected scalar integer start indices, but got {i.str_short()}")


def _dynamic_slice_rule(x: ShapedArray, *indices: ShapedArray,
                        slice_sizes: tuple[int, ...]) -> tuple[ShapedArray, ...]:
    _check_indices(x, indices)
    if len(slice_sizes) != x.ndim or any(not 0 <= s <= d for s, d in zip(slice_sizes, x.shape)):
        fail(f"expected slice_sizes within {x.shape}, but got {slice_sizes}")
    return (ShapedArray(slice_sizes, x.dtype, x.weak_type),)


dynamic_slice_p = Primitive("dynamic_slice", _dynamic_slice_rule, (
    ParamDef("slice_sizes", decode=decode_ints),))


def _dynamic_update_slice_rule(x: ShapedArray, update: ShapedArray,
                               *indices: ShapedArray) -> tuple[ShapedArray, ...]:
    check_same_dtypes([x, update])
    if update.ndim != x.ndim or any(u > d for u, d in zip(update.shape, x.shape)):
        fail(f"expected an update no larger than {x.str_short()}, but got {update.str_short()}")
    _check_indices(x, indices)
    weak = x.weak_type and update.weak_type and all(i.weak_type for i in indices)  # as JAX
    return (x.update(weak_type=weak),)


dynamic_update_slice_p = Primitive("dynamic_update_slice", _dynamic_update_slice_rule)


def _rev_rule(x: ShapedArray, *, dimensions: tuple[int, ...]) -> tuple[ShapedArray, ...]:
    check_axes(dimensions, x.ndim, "dimensions")
    return (x,)


rev_p = Primitive("rev", _rev_rule, (ParamDef("dimensions", decode=decode_ints),))


def _iota_rule(*, dtype: np.dtype[Any], shape: tuple[int, ...], dimension: int,
               sharding: None) -> tuple[ShapedArray, ...]:
    _check_shape(shape)
    check_axes((dimension,), len(shape), "dimension")
    check_dtype(ShapedArray((), dtype), ANY - {np.dtype(np.bool_)}, "dtype")
    return (ShapedArray(shape, dtype),)


iota_p = Primitive("iota", _iota_rule, (
    ParamDef("dtype", decode=decode_dtype),
    ParamDef("shape", decode=decode_dims),
    ParamDef("dimension", decode=decode_int),
    ParamDef("sharding", None, decode=decode_none),
))


def _empty_rule(*, dtype: np.dtype[Any], shape: tuple[int, ...],
                out_sharding: None) -> tuple[ShapedArray, ...]:
    _check_shape(shape)
    return (ShapedArray(shape, dtype),)


empty_p = Primitive("empty", _empty_rule, (
    ParamDef("dtype", decode=decode_dtype),
    ParamDef("out_sharding", None, decode=decode_none),
    ParamDef("shape", decode=decode_dims),
))
"""An array whose contents are unspecified (zeros, as JAX lowers it): a buffer to fill."""


def _dim_as_value_rule(*, dim: Any) -> tuple[ShapedArray, ...]:
    if not isinstance(dim, DimExpr | int) or isinstance(dim, bool):
        fail(f"expected a dimension, but got {dim!r}")
    # JAX's dimension values are int64 with 64-bit types enabled, int32 otherwise.
    return (ShapedArray((), dtypes.int64 if config_values.enable_x64 else dtypes.int32),)


def _decode_dim(value: Any) -> Any:
    if isinstance(value, DimExpr | int) and not isinstance(value, bool):
        return value
    if isinstance(value, str):
        (d,) = parse_dims(value)
        return d
    raise ValueError(f"expected a dimension such as 2*b, but got {value!r}")


dim_as_value_p = Primitive("dim_as_value", _dim_as_value_rule, (
    ParamDef("dim", decode=_decode_dim),
))
"""The value of a (symbolic) dimension, computed from the arguments' sizes when the
program runs: ``x.shape[0]`` used as a number in a shape-polymorphic function."""

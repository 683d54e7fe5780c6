"""``conv_general_dilated``: XLA's convolution, with JAX 0.10.2's parameters.

``dimension_numbers`` says where the batch, feature and spatial dimensions of
each operand and of the result are (:class:`ConvDimensionNumbers`, permutations
into ``(N, C, spatial...)``, ``(O, I, spatial...)`` and ``(N, C, spatial...)``);
``padding`` is explicit ``(low, high)`` pairs; ``feature_group_count`` and
``batch_group_count`` split the input features or batch into groups.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from plait.ir.avals import ShapedArray
from plait.ir.params import (
    ParamDef,
    ParsedCall,
    decode_int,
    decode_ints,
    decode_nested_ints,
    decode_none,
    decode_optional_dtype,
)
from plait.ir.primitive import Primitive
from plait.ir.primitives._typing import ANY, check_dtype, check_permutation, check_same_dtypes, fail
from plait.ir.primitives.linalg import decode_precision

__all__ = ["ConvDimensionNumbers", "conv_general_dilated_p", "conv_output_shape"]


class ConvDimensionNumbers(NamedTuple):
    """Permutations that bring each array to XLA's canonical layout."""

    lhs_spec: tuple[int, ...]
    """The input's batch dimension, feature dimension, then spatial dimensions."""
    rhs_spec: tuple[int, ...]
    """The kernel's output feature, input feature, then spatial dimensions."""
    out_spec: tuple[int, ...]
    """The result's batch dimension, feature dimension, then spatial dimensions."""


def _decode_dnums(value: Any) -> ConvDimensionNumbers:
    if isinstance(value, ConvDimensionNumbers):
        return value
    if not isinstance(value, ParsedCall) or value.name != "ConvDimensionNumbers":
        raise ValueError(f"expected ConvDimensionNumbers(...), but got {value!r}")
    fields = dict(value.kwargs)
    if set(fields) != set(ConvDimensionNumbers._fields):
        raise ValueError(f"expected fields {ConvDimensionNumbers._fields}, but got "
                         f"{sorted(fields)}")
    return ConvDimensionNumbers(**{k: decode_ints(v) for k, v in fields.items()})


def _dilate(size: int, d: int) -> int:
    return 0 if size == 0 else (size - 1) * d + 1


def conv_output_shape(lhs: tuple[int, ...], rhs: tuple[int, ...],
                      dn: ConvDimensionNumbers, window_strides: tuple[int, ...],
                      padding: tuple[tuple[int, int], ...], lhs_dilation: tuple[int, ...],
                      rhs_dilation: tuple[int, ...], batch_group_count: int) -> tuple[int, ...]:
    """The result's shape, in the result's own layout."""
    n = lhs[dn.lhs_spec[0]]
    o = rhs[dn.rhs_spec[0]]
    space = []
    for i, (s, k) in enumerate(zip(dn.lhs_spec[2:], dn.rhs_spec[2:])):
        padded = _dilate(lhs[s], lhs_dilation[i]) + padding[i][0] + padding[i][1]
        window = _dilate(rhs[k], rhs_dilation[i])
        if padded < 0:
            fail(f"expected padding no more negative than the input, but got padding "
                 f"{padding} for spatial sizes {[lhs[d] for d in dn.lhs_spec[2:]]}")
        space.append(0 if padded < window else (padded - window) // window_strides[i] + 1)
    canonical = (n // batch_group_count, o, *space)
    out = [0] * len(canonical)
    for pos, d in enumerate(dn.out_spec):
        out[d] = canonical[pos]
    return tuple(out)


def _conv_rule(lhs: ShapedArray, rhs: ShapedArray, *, window_strides: tuple[int, ...],
               padding: tuple[tuple[int, int], ...], lhs_dilation: tuple[int, ...],
               rhs_dilation: tuple[int, ...], dimension_numbers: ConvDimensionNumbers,
               feature_group_count: int, batch_group_count: int, precision: Any,
               preferred_element_type: np.dtype[Any] | None,
               out_sharding: None) -> tuple[ShapedArray, ...]:
    dn = dimension_numbers
    if not isinstance(dn, ConvDimensionNumbers):
        fail(f"expected ConvDimensionNumbers, but got {dn!r}")
    check_dtype(lhs, ANY, "lhs")
    check_same_dtypes([lhs, rhs])
    if lhs.ndim != rhs.ndim or lhs.ndim < 2:
        fail(f"expected lhs and rhs of one rank (at least 2), but got {lhs.str_short()} and "
             f"{rhs.str_short()}")
    for spec, what in ((dn.lhs_spec, "lhs_spec"), (dn.rhs_spec, "rhs_spec"),
                       (dn.out_spec, "out_spec")):
        check_permutation(spec, lhs.ndim, what)
    nsp = lhs.ndim - 2
    for name, v in (("window_strides", window_strides), ("lhs_dilation", lhs_dilation),
                    ("rhs_dilation", rhs_dilation)):
        if len(v) != nsp or any(type(x) is not int or x < 1 for x in v):
            fail(f"expected {nsp} positive {name}, but got {v}")
    if len(padding) != nsp or any(len(p) != 2 for p in padding):
        fail(f"expected {nsp} (low, high) padding pairs, but got {padding}")
    g, b = feature_group_count, batch_group_count
    if g < 1 or b < 1 or (g > 1 and b > 1):
        fail(f"expected positive group counts, at most one above 1, but got "
             f"feature_group_count={g} and batch_group_count={b}")
    c, i = lhs.shape[dn.lhs_spec[1]], rhs.shape[dn.rhs_spec[1]]
    o, n = rhs.shape[dn.rhs_spec[0]], lhs.shape[dn.lhs_spec[0]]
    if c != i * g:
        fail(f"expected lhs features ({c}) = rhs input features ({i}) * "
             f"feature_group_count ({g}), but they differ")
    if o % g or o % b or n % b:
        fail(f"expected rhs output features ({o}) divisible by the group counts and lhs "
             f"batch ({n}) by batch_group_count ({b}), but they are not")
    shape = conv_output_shape(lhs.shape, rhs.shape, dn, window_strides, padding,
                              lhs_dilation, rhs_dilation, b)
    dtype = preferred_element_type if preferred_element_type is not None else lhs.dtype
    return (ShapedArray(shape, dtype, lhs.weak_type and rhs.weak_type),)


def _decode_padding(value: Any) -> tuple[tuple[int, int], ...]:
    pads = decode_nested_ints(value)
    return tuple((int(lo), int(hi)) for lo, hi in pads)


conv_general_dilated_p = Primitive("conv_general_dilated", _conv_rule, (
    ParamDef("window_strides", decode=decode_ints),
    ParamDef("padding", decode=_decode_padding),
    ParamDef("lhs_dilation", decode=decode_ints),
    ParamDef("rhs_dilation", decode=decode_ints),
    ParamDef("dimension_numbers", decode=_decode_dnums, encode=repr),
    ParamDef("feature_group_count", 1, decode=decode_int),
    ParamDef("batch_group_count", 1, decode=decode_int),
    ParamDef("precision", None, decode=decode_precision),
    ParamDef("preferred_element_type", None, decode=decode_optional_dtype),
    ParamDef("out_sharding", None, decode=decode_none),
))

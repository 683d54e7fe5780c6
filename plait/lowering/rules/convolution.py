"""Lowering of ``conv_general_dilated`` to ``stablehlo.convolution``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from plait.ir import primitives as P
from plait.ir.primitives.convolution import ConvDimensionNumbers
from plait.lowering.emitter import Value, i64_array, tensor_type
from plait.lowering.lower import LoweringContext
from plait.lowering.rules._util import precision_config, register


def _layout(spec: Sequence[int], batch: str, feature: str) -> str:
    # Each position names its dimension: batch/feature letters or the spatial index.
    names = [""] * len(spec)
    names[spec[0]], names[spec[1]] = batch, feature
    for i, d in enumerate(spec[2:]):
        names[d] = str(i)
    return "[" + ", ".join(names) + "]"


@register(P.conv_general_dilated_p)
def _conv(ctx: LoweringContext, lhs: Value, rhs: Value, *, window_strides: tuple[int, ...],
          padding: tuple[tuple[int, int], ...], lhs_dilation: tuple[int, ...],
          rhs_dilation: tuple[int, ...], dimension_numbers: ConvDimensionNumbers,
          feature_group_count: int, batch_group_count: int, precision: Any,
          preferred_element_type: Any, out_sharding: None) -> Sequence[Value]:
    dn = dimension_numbers
    conv = (f"#stablehlo.conv<{_layout(dn.lhs_spec, 'b', 'f')}x"
            f"{_layout(dn.rhs_spec, 'o', 'i')}->{_layout(dn.out_spec, 'b', 'f')}>")
    pads = f"dense<{[list(p) for p in padding]}> : tensor<{len(padding)}x2xi64>" if padding \
        else "dense<> : tensor<0x2xi64>"
    attrs = (f"batch_group_count = {batch_group_count} : i64, dimension_numbers = {conv}, "
             f"feature_group_count = {feature_group_count} : i64, "
             f"lhs_dilation = {i64_array(lhs_dilation)}, padding = {pads}, "
             f"precision_config = {precision_config(precision)}, "
             f"rhs_dilation = {i64_array(rhs_dilation)}, "
             f"window_reversal = array<i1{': ' if padding else ''}"
             f"{', '.join(['false'] * len(padding))}>, "
             f"window_strides = {i64_array(window_strides)}")
    return [ctx.fn.op1("stablehlo.convolution", [lhs, rhs], tensor_type(ctx.avals_out[0]),
                       attrs)]

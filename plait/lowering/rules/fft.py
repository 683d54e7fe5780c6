"""Lowering of ``fft`` to ``stablehlo.fft``."""

from __future__ import annotations

from collections.abc import Sequence

from plait.ir import primitives as P
from plait.ir.primitives.fft import FftType
from plait.lowering.emitter import Value, i64_array, tensor_type
from plait.lowering.lower import LoweringContext
from plait.lowering.rules._util import register


@register(P.fft_p)
def _fft(ctx: LoweringContext, x: Value, *, fft_type: FftType,
         fft_lengths: tuple[int, ...]) -> Sequence[Value]:
    return [ctx.fn.op1("stablehlo.fft", [x], tensor_type(ctx.avals_out[0]),
                       f"fft_type = #stablehlo<fft_type {fft_type.name}>, "
                       f"fft_length = {i64_array(fft_lengths)}")]

"""Lowering of ``bitcast_convert_type`` (``stablehlo.bitcast_convert``),
``reduce_precision``, ``mulhi`` (``chlo.mulhi``), ``optimization_barrier``,
``rng_bit_generator`` (a ``u32[4]`` key is reshaped and bitcast to the ``u64[2]``
state XLA takes, and back) and ``rng_uniform`` (``stablehlo.rng``), as JAX 0.10.2
lowers them."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from plait.ir import dtypes as dt
from plait.ir import primitives as P
from plait.ir.avals import ShapedArray, shaped
from plait.ir.primitives.rng import RandomAlgorithm
from plait.lowering.emitter import Value, tensor_type
from plait.lowering.lower import LoweringContext, lowering_rules
from plait.lowering.rules._util import nary, register

lowering_rules[P.mulhi_p] = nary("chlo.mulhi")


@register(P.bitcast_convert_type_p)
def _bitcast(ctx: LoweringContext, x: Value, *, new_dtype: Any) -> Sequence[Value]:
    return [ctx.fn.op1("stablehlo.bitcast_convert", [x], tensor_type(ctx.avals_out[0]))]


@register(P.reduce_precision_p)
def _reduce_precision(ctx: LoweringContext, x: Value, *, exponent_bits: int,
                      mantissa_bits: int) -> Sequence[Value]:
    return [ctx.fn.op1("stablehlo.reduce_precision", [x], tensor_type(ctx.avals_out[0]),
                       f"exponent_bits = {exponent_bits} : i32, "
                       f"mantissa_bits = {mantissa_bits} : i32")]


@register(P.optimization_barrier_p)
def _barrier(ctx: LoweringContext, *xs: Value) -> Sequence[Value]:
    if not xs:
        return []
    return ctx.fn.op("stablehlo.optimization_barrier", list(xs),
                     [tensor_type(a) for a in ctx.avals_out])


_ALGORITHMS = {RandomAlgorithm.RNG_DEFAULT: "DEFAULT", RandomAlgorithm.RNG_THREE_FRY: "THREE_FRY",
               RandomAlgorithm.RNG_PHILOX: "PHILOX"}


@register(P.rng_bit_generator_p)
def _rng_bit_generator(ctx: LoweringContext, key: Value, *, shape: tuple[int, ...],
                       dtype: np.dtype[Any], algorithm: RandomAlgorithm,
                       out_sharding: None) -> Sequence[Value]:
    fn = ctx.fn
    key_aval = shaped(ctx.avals_in[0])
    split = key_aval.dtype == dt.uint32
    pairs = tensor_type(((2, 2), dt.uint32))
    state_type = tensor_type(((2,), dt.uint64))
    if split:  # u32[4] -> u32[2, 2] -> u64[2]
        key = fn.op1("stablehlo.bitcast_convert", [fn.op1("stablehlo.reshape", [key], pairs)],
                     state_type)
    new_state, bits = fn.op("stablehlo.rng_bit_generator", [key],
                            [state_type, tensor_type(ctx.avals_out[1])],
                            f"rng_algorithm = #stablehlo<rng_algorithm "
                            f"{_ALGORITHMS[RandomAlgorithm(algorithm)]}>")
    if split:
        new_state = fn.op1("stablehlo.reshape",
                           [fn.op1("stablehlo.bitcast_convert", [new_state], pairs)],
                           tensor_type(key_aval))
    return [new_state, bits]


@register(P.rng_uniform_p)
def _rng_uniform(ctx: LoweringContext, a: Value, b: Value, *,
                 shape: tuple[int, ...]) -> Sequence[Value]:
    dims = ctx.fn.constant(np.array(shape, np.int64), ShapedArray((len(shape),), dt.int64))
    return [ctx.fn.op1("stablehlo.rng", [a, b, dims], tensor_type(ctx.avals_out[0]),
                       "rng_distribution = #stablehlo<rng_distribution UNIFORM>")]

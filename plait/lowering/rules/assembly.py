"""Lowering of ``split`` (slices), ``stack`` (a broadcast of each operand, then a
concatenate), ``unstack`` (slices, then reshapes) and ``tile`` (a reshape, a broadcast
and a reshape), the StableHLO JAX 0.10.2 emits for them."""

from __future__ import annotations

from collections.abc import Sequence

from plait.ir import primitives as P
from plait.ir.avals import shaped
from plait.lowering.emitter import FuncEmitter, Value, i64_array, tensor_type
from plait.lowering.lower import LoweringContext
from plait.lowering.rules._util import register


def _slice(fn: FuncEmitter, x: Value, shape: Sequence[int], axis: int, start: int,
           size: int, out_type: str) -> Value:
    lo = [0] * len(shape)
    hi = list(shape)
    lo[axis], hi[axis] = start, start + size
    return fn.op1("stablehlo.slice", [x], out_type,
                  f"start_indices = {i64_array(lo)}, limit_indices = {i64_array(hi)}, "
                  f"strides = {i64_array([1] * len(shape))}")


@register(P.split_p)
def _split(ctx: LoweringContext, x: Value, *, sizes: tuple[int, ...],
           axis: int) -> Sequence[Value]:
    shape = shaped(ctx.avals_in[0]).shape
    outs, start = [], 0
    for size, aval in zip(sizes, ctx.avals_out):
        outs.append(_slice(ctx.fn, x, shape, axis, start, size, tensor_type(aval)))
        start += size
    return outs


@register(P.stack_p)
def _stack(ctx: LoweringContext, *xs: Value, axis: int) -> Sequence[Value]:
    a = shaped(ctx.avals_in[0])
    one = (a.shape[:axis] + (1,) + a.shape[axis:], a.dtype)
    dims = i64_array([d for d in range(a.ndim + 1) if d != axis])
    parts = [ctx.fn.op1("stablehlo.broadcast_in_dim", [x], tensor_type(one),
                        f"broadcast_dimensions = {dims}") for x in xs]
    return [ctx.fn.op1("stablehlo.concatenate", parts, tensor_type(ctx.avals_out[0]),
                       f"dimension = {axis} : i64")]


@register(P.unstack_p)
def _unstack(ctx: LoweringContext, x: Value, *, axis: int) -> Sequence[Value]:
    a = shaped(ctx.avals_in[0])
    one = tensor_type((a.shape[:axis] + (1,) + a.shape[axis + 1:], a.dtype))
    return [ctx.fn.op1("stablehlo.reshape",
                       [_slice(ctx.fn, x, a.shape, axis, i, 1, one)], tensor_type(out))
            for i, out in enumerate(ctx.avals_out)]


@register(P.tile_p)
def _tile(ctx: LoweringContext, x: Value, *, reps: tuple[int, ...]) -> Sequence[Value]:
    a = shaped(ctx.avals_in[0])
    ones = tuple(d for s in a.shape for d in (1, s))
    full = tuple(d for r, s in zip(reps, a.shape) for d in (r, s))
    fn = ctx.fn
    lifted = fn.op1("stablehlo.reshape", [x], tensor_type((ones, a.dtype)))
    spread = fn.op1("stablehlo.broadcast_in_dim", [lifted], tensor_type((full, a.dtype)),
                    f"broadcast_dimensions = {i64_array(range(len(full)))}")
    return [fn.op1("stablehlo.reshape", [spread], tensor_type(ctx.avals_out[0]))]

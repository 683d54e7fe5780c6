"""Helpers shared by lowering rules."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from plait.ir import dtypes as dt
from plait.ir.avals import AbstractValue, ShapedArray
from plait.ir.primitive import Primitive
from plait.lowering.emitter import FuncEmitter, Value, i64_array, tensor_type
from plait.lowering.lower import LoweringContext, lowering_rules

__all__ = ["broadcast_to", "compare", "compare_type", "nary", "scalar_type", "register",
           "reduce_region", "aval"]


def aval(x: AbstractValue) -> ShapedArray:
    """``x`` as a ShapedArray (every lowered value has one)."""
    assert isinstance(x, ShapedArray)
    return x


def register(prim: Primitive) -> Callable[[Callable[..., Sequence[Value]]], Callable[..., Sequence[Value]]]:
    """Decorator: make ``fn`` the lowering rule of ``prim``."""
    def deco(fn: Callable[..., Sequence[Value]]) -> Callable[..., Sequence[Value]]:
        lowering_rules[prim] = fn
        return fn
    return deco


def broadcast_to(fn: FuncEmitter, x: Value, x_aval: ShapedArray, shape: tuple[int, ...]) -> Value:
    """``x`` broadcast to ``shape`` (rank-0, or equal rank with size-1 dims), as the
    elementwise primitives allow; no-op when the shape already matches."""
    if x_aval.shape == shape:
        return x
    if x_aval.ndim == 0:
        dims: Sequence[int] = ()
    else:
        dims = range(len(shape))
        if any(d != s for d, s in zip(x_aval.shape, shape) if d != 1):
            raise AssertionError("operand does not broadcast")
        if any(d == 1 and s != 1 for d, s in zip(x_aval.shape, shape)):
            kept = [i for i, (d, s) in enumerate(zip(x_aval.shape, shape)) if d == s]
            x = fn.op1("stablehlo.reshape", [x],
                       tensor_type((tuple(x_aval.shape[i] for i in kept), x_aval.dtype)))
            dims = kept
    return fn.op1("stablehlo.broadcast_in_dim", [x], tensor_type((shape, x_aval.dtype)),
                  f"broadcast_dimensions = {i64_array(dims)}")


def scalar_type(dtype: np.dtype[Any]) -> str:
    """``tensor<f32>`` for a dtype."""
    return tensor_type(((), dtype))


def nary(name: str) -> Callable[..., Sequence[Value]]:
    """The rule of an elementwise op lowering to one StableHLO/CHLO op ``name``."""
    def rule(ctx: LoweringContext, *xs: Value, **_: Any) -> Sequence[Value]:
        out = aval(ctx.avals_out[0])
        args = [broadcast_to(ctx.fn, x, aval(a), out.shape) for x, a in zip(xs, ctx.avals_in)]
        return [ctx.fn.op1(name, args, tensor_type(out))]
    return rule


def compare_type(dtype: np.dtype[Any]) -> str:
    """StableHLO's comparison type for a dtype."""
    if dt.is_inexact(dtype):
        return "FLOAT"
    if dt.is_signed(dtype):
        return "SIGNED"
    return "UNSIGNED"


def compare(fn: FuncEmitter, direction: str, x: Value, y: Value, dtype: np.dtype[Any],
            shape: tuple[int, ...], ctype: str | None = None) -> Value:
    """``stablehlo.compare`` of two values of one (already broadcast) shape."""
    ct = ctype or compare_type(dtype)
    return fn.op1("stablehlo.compare", [x, y], tensor_type((shape, dt.bool_)),
                  f"comparison_direction = #stablehlo<comparison_direction {direction}>, "
                  f"compare_type = #stablehlo<comparison_type {ct}>")


def reduce_region(fn: FuncEmitter, op: str, dtype: np.dtype[Any]) -> str:
    """A two-argument region applying binary ``op`` (for reduce and reduce_window)."""
    st = scalar_type(dtype)
    region = fn.region([st, st])
    a, b = region.args
    r = fn.op1(op, [a, b], st)
    fn.close(region)
    return region.text([r])

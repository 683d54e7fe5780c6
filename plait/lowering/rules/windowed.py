"""Lowering of the windowed reductions to ``stablehlo.reduce_window`` and
``stablehlo.select_and_scatter``, as JAX 0.10.2 lowers them on CPU, and of
``cumlogsumexp`` to a reduce_window over the whole axis (like the other
cumulative reductions)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from plait.ir import primitives as P
from plait.ir.avals import ShapedArray, shaped
from plait.ir.jaxpr import ClosedJaxpr, Jaxpr
from plait.ir.primitive import Primitive
from plait.ir.primitives.reductions import logaddexp_jaxpr
from plait.lowering.emitter import FuncEmitter, Value, i64_array, tensor_type
from plait.lowering.lower import LoweringContext, lower_body, lowering_rules
from plait.lowering.rules._util import (
    compare,
    highest,
    lowest,
    outlined,
    reduce_region,
    register,
    scalar_type,
)

Pairs = tuple[tuple[int, int], ...]


def _pads(padding: Pairs) -> str:
    return f"dense<{[list(p) for p in padding]}> : tensor<{len(padding)}x2xi64>" if padding \
        else "dense<> : tensor<0x2xi64>"


def _reduce_window(fn: FuncEmitter, operands: Sequence[Value], inits: Sequence[Value],
                   out_avals: Sequence[ShapedArray], region: str, *,
                   window_dimensions: Sequence[int], window_strides: Sequence[int],
                   padding: Pairs, base_dilation: Sequence[int] | None = None,
                   window_dilation: Sequence[int] | None = None) -> list[Value]:
    ones = (1,) * len(window_dimensions)
    attrs = (f"base_dilations = {i64_array(base_dilation or ones)}, padding = {_pads(padding)}, "
             f"window_dilations = {i64_array(window_dilation or ones)}, "
             f"window_dimensions = {i64_array(window_dimensions)}, "
             f"window_strides = {i64_array(window_strides)}")
    return fn.op("stablehlo.reduce_window", [*operands, *inits],
                 [tensor_type(a) for a in out_avals], attrs, [region])


def _init(fn: FuncEmitter, value: Any, dtype: np.dtype[Any], broadcast: bool) -> Value:
    v = fn.constant(value, ShapedArray((), dtype))
    if broadcast:  # a no-op, kept so that the module text reads as JAX's
        v = fn.op1("stablehlo.broadcast_in_dim", [v], v.type,
                   f"broadcast_dimensions = {i64_array(())}")
    return v


_MONOIDS: dict[Primitive, tuple[str, Any]] = {
    P.reduce_window_sum_p: ("stablehlo.add", lambda d: 0),
    P.reduce_window_max_p: ("stablehlo.maximum", lowest),
    P.reduce_window_min_p: ("stablehlo.minimum", highest),
}


def _monoid(op: str, identity: Any) -> Any:
    def rule(ctx: LoweringContext, x: Value, **params: Any) -> Sequence[Value]:
        dtype = shaped(ctx.avals_in[0]).dtype
        init = _init(ctx.fn, identity(dtype), dtype, True)
        region = reduce_region(ctx.fn, op, dtype)
        return _reduce_window(ctx.fn, [x], [init], [shaped(ctx.avals_out[0])], region,
                              **params)
    return rule


for _prim, (_op, _identity) in _MONOIDS.items():
    lowering_rules[_prim] = _monoid(_op, _identity)


def _jaxpr_region(ctx: LoweringContext, jaxpr: Jaxpr, dtypes: Sequence[np.dtype[Any]]) -> str:
    fn = ctx.fn
    region = fn.region([scalar_type(d) for d in dtypes] * 2)
    outs = lower_body(ctx.module, fn, jaxpr, [], region.args)
    fn.close(region)
    return region.text(outs)


@register(P.reduce_window_p)
def _generic(ctx: LoweringContext, *args: Value, jaxpr: Jaxpr, consts: tuple[()],
             **params: Any) -> Sequence[Value]:
    n = len(args) // 2
    dtypes = [shaped(a).dtype for a in ctx.avals_in[:n]]
    region = _jaxpr_region(ctx, jaxpr, dtypes)
    return _reduce_window(ctx.fn, args[:n], args[n:], [shaped(a) for a in ctx.avals_out],
                          region, **params)


def _direction(select_prim: Primitive) -> str:
    return "GE" if select_prim is P.ge_p else "LE"


def _select_identity(select_prim: Primitive, dtype: np.dtype[Any]) -> Any:
    return lowest(dtype) if select_prim is P.ge_p else highest(dtype)


@register(P.select_and_gather_add_p)
def _select_and_gather_add(ctx: LoweringContext, tangents: Value, operand: Value, *,
                           select_prim: Primitive, **params: Any) -> Sequence[Value]:
    # A reduce_window over (operand, tangent) pairs that keeps the pair whose operand
    # ``select_prim`` prefers.
    fn = ctx.fn
    xa = shaped(ctx.avals_in[1])
    st = scalar_type(xa.dtype)
    region = fn.region([st] * 4)
    kx, vx, ky, vy = region.args
    which = compare(fn, _direction(select_prim), kx, ky, xa.dtype, ())
    k = fn.op1("stablehlo.select", [which, kx, ky], st)
    v = fn.op1("stablehlo.select", [which, vx, vy], st)
    fn.close(region)
    inits = [fn.constant(_select_identity(select_prim, xa.dtype), ShapedArray((), xa.dtype)),
             fn.constant(0, ShapedArray((), xa.dtype))]
    out = shaped(ctx.avals_out[0])
    return _reduce_window(fn, [operand, tangents], inits, [out, out], region.text([k, v]),
                          **params)[1:]


@register(P.select_and_scatter_add_p)
def _select_and_scatter_add(ctx: LoweringContext, source: Value, operand: Value, *,
                            select_prim: Primitive, window_dimensions: tuple[int, ...],
                            window_strides: tuple[int, ...], padding: Pairs) -> Sequence[Value]:
    # As JAX does: pad the operand with the selection's identity, select and scatter
    # without padding, and slice the padding off the result.
    fn = ctx.fn
    sa, xa = (shaped(a) for a in ctx.avals_in)
    out = shaped(ctx.avals_out[0])
    lo, hi = [p[0] for p in padding], [p[1] for p in padding]
    padded_shape = tuple(n + a + b for n, a, b in zip(xa.shape, lo, hi))
    pad_value = fn.constant(_select_identity(select_prim, xa.dtype), ShapedArray((), xa.dtype))
    zeros = i64_array([0] * xa.ndim)
    padded = fn.op1("stablehlo.pad", [operand, pad_value],
                    tensor_type((padded_shape, xa.dtype)),
                    f"edge_padding_high = {i64_array(hi)}, edge_padding_low = {i64_array(lo)}, "
                    f"interior_padding = {zeros}")
    st = scalar_type(xa.dtype)
    select = fn.region([st, st])
    a, b = select.args
    chosen = compare(fn, _direction(select_prim), a, b, xa.dtype, ())
    fn.close(select)
    scatter = reduce_region(fn, "stablehlo.add", sa.dtype)
    init = fn.constant(0, ShapedArray((), sa.dtype))
    attrs = (f"padding = {_pads(((0, 0),) * xa.ndim)}, "
             f"window_dimensions = {i64_array(window_dimensions)}, "
             f"window_strides = {i64_array(window_strides)}")
    result = fn.op1("stablehlo.select_and_scatter", [padded, source, init],
                    tensor_type((padded_shape, sa.dtype)), attrs,
                    [select.text([chosen]), scatter])
    return [fn.op1("stablehlo.slice", [result], tensor_type(out),
                   f"start_indices = {i64_array(lo)}, "
                   f"limit_indices = {i64_array([a + n for a, n in zip(lo, xa.shape)])}, "
                   f"strides = {i64_array([1] * xa.ndim)}")]


def _cumlogsumexp(ctx: LoweringContext, x: Value, *, axis: int,
                  reverse: bool) -> Sequence[Value]:
    # A window over the whole axis, padded so that output i sees inputs 0..i.
    xa = shaped(ctx.avals_in[0])
    n = xa.shape[axis]
    if n == 0:
        return [x]
    window = tuple(n if i == axis else 1 for i in range(xa.ndim))
    pads = [(0, 0)] * xa.ndim
    pads[axis] = (0, n - 1) if reverse else (n - 1, 0)
    init = _init(ctx.fn, -np.inf, xa.dtype, False)
    region = _jaxpr_region(ctx, logaddexp_jaxpr(xa.dtype), [xa.dtype])
    return _reduce_window(ctx.fn, [x], [init], [xa], region, window_dimensions=window,
                          window_strides=(1,) * xa.ndim, padding=tuple(pads))


lowering_rules[P.cumlogsumexp_p] = outlined("cumlogsumexp", _cumlogsumexp)


@register(P.reduce_p)
def _reduce(ctx: LoweringContext, *args: Value, jaxpr: ClosedJaxpr,
            dimensions: tuple[int, ...]) -> Sequence[Value]:
    n = len(args) // 2
    dtypes = [shaped(a).dtype for a in ctx.avals_in[:n]]
    region = _jaxpr_region(ctx, jaxpr.jaxpr, dtypes)
    return ctx.fn.op("stablehlo.reduce", list(args), [tensor_type(a) for a in ctx.avals_out],
                     f"dimensions = {i64_array(dimensions)}", [region])

"""Lowering of control flow (``stablehlo.case``, ``stablehlo.while``), custom-derivative
calls and remat (their bodies inline)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from plait.ir import dtypes as dt
from plait.ir import primitives as P
from plait.ir.avals import ShapedArray, shaped
from plait.ir.effects import Effect
from plait.ir.jaxpr import ClosedJaxpr
from plait.ir.primitives.control_flow import Platforms, platform_branch
from plait.ir.primitives.custom import nonlinear_bwd_error
from plait.lowering.emitter import TOKEN_TYPE, Value, i64_array, tensor_type
from plait.lowering.lower import LoweringContext, lower_body
from plait.lowering.rules._util import compare, register, scalar_type

_I32 = np.dtype(np.int32)


def _one_platform(ctx: LoweringContext) -> str:
    """The platform being lowered for: the CPU, or the one platform of an export."""
    platforms = ctx.module.platforms
    if len(platforms) != 1:
        raise NotImplementedError(
            f"platform-dependent code (lax.platform_dependent) cannot be exported for several "
            f"platforms {platforms} yet; export for each platform separately")
    return platforms[0]


@register(P.platform_index_p)
def _platform_index(ctx: LoweringContext, *, platforms: Platforms) -> Sequence[Value]:
    # Lowered for one platform: the index is a constant.
    return [ctx.fn.constant(platform_branch(platforms, _one_platform(ctx)),
                            ShapedArray((), _I32))]


def _ordered(*jaxprs: ClosedJaxpr) -> list[Effect]:
    """The ordered effects of the jaxprs: their tokens travel through the control flow."""
    return sorted({e for j in jaxprs for e in j.effects if e.ordered}, key=lambda e: e.name)


@register(P.cond_p)
def _cond(ctx: LoweringContext, index: Value, *ops: Value, branches: tuple[ClosedJaxpr, ...],
          branches_platforms: Platforms | None) -> Sequence[Value]:
    fn = ctx.fn
    if branches_platforms is not None:
        # Only the branch for the lowering platform is compiled: the others may hold
        # operations this platform cannot run.
        b = branches[platform_branch(branches_platforms, _one_platform(ctx))]
        return lower_body(ctx.module, fn, b.jaxpr, [], list(ops))
    # Each branch continues the ordered effects' chains and returns their tokens.
    effects = _ordered(*branches)
    tokens = [fn.token(e) for e in effects]
    regions = []
    for b in branches:
        region = fn.region([])
        for e, t in zip(effects, tokens):
            fn.set_token(e, t)
        outs = lower_body(ctx.module, fn, b.jaxpr, [], list(ops))
        ends = [fn.token(e) for e in effects]
        fn.close(region)
        regions.append(region.text([*outs, *ends]))
    results = fn.op("stablehlo.case", [index],
                    [*(tensor_type(a) for a in ctx.avals_out), *[TOKEN_TYPE] * len(effects)],
                    regions=regions)
    n = len(ctx.avals_out)
    for e, t in zip(effects, results[n:]):
        fn.set_token(e, t)
    return results[:n]


@register(P.while_p)
def _while(ctx: LoweringContext, *args: Value, cond_jaxpr: ClosedJaxpr, body_jaxpr: ClosedJaxpr,
           cond_nconsts: int, body_nconsts: int) -> Sequence[Value]:
    # Consts travel in the loop state, so the regions need nothing from outside.
    # The ordered effects' tokens travel in the loop state too (after the values).
    fn = ctx.fn
    effects = _ordered(cond_jaxpr, body_jaxpr)
    n = len(args)
    state = [*args, *(fn.token(e) for e in effects)]
    types = [a.type for a in state]
    nc = cond_nconsts + body_nconsts
    cond_r = fn.region(types)
    s = cond_r.args
    pred, = lower_body(ctx.module, fn, cond_jaxpr.jaxpr, [], s[:cond_nconsts] + s[nc:n])
    fn.close(cond_r)
    body_r = fn.region(types)
    s = body_r.args
    for e, t in zip(effects, s[n:]):
        fn.set_token(e, t)
    new = lower_body(ctx.module, fn, body_jaxpr.jaxpr, [], s[cond_nconsts:nc] + s[nc:n])
    ends = [fn.token(e) for e in effects]
    fn.close(body_r)
    outs = fn.op("stablehlo.while", state, types,
                 regions=[cond_r.text([pred]), body_r.text(s[:nc] + new + ends)])
    for e, t in zip(effects, outs[n:]):
        fn.set_token(e, t)
    return outs[nc:n]


def _index(fn: Any, i: Value, length: int, reverse: bool) -> Value:
    if not reverse:
        return i
    last = fn.constant(length - 1, ShapedArray((), _I32))
    out: Value = fn.op1("stablehlo.subtract", [last, i], scalar_type(_I32))
    return out


@register(P.scan_p)
def _scan(ctx: LoweringContext, *args: Value, jaxpr: ClosedJaxpr, length: int, reverse: bool,
          num_consts: int, num_carry: int, unroll: Any) -> Sequence[Value]:
    # A while loop over a counter: slice the inputs, run the body, write the outputs.
    fn = ctx.fn
    y_avals = [shaped(a) for a in ctx.avals_out[num_carry:]]
    zero = fn.constant(0, ShapedArray((), _I32))
    ys_init = []
    for a in y_avals:
        z = fn.constant(0 if a.dtype != dt.bool_ else False, ShapedArray((), a.dtype))
        ys_init.append(fn.op1("stablehlo.broadcast_in_dim", [z], tensor_type(a),
                              f"broadcast_dimensions = {i64_array(())}"))
    if length == 0:
        # No iteration: the carries pass through and the outputs are empty (a loop
        # would still have to type its body's slices of the empty inputs, which
        # StableHLO refuses).
        return list(args[num_consts:num_consts + num_carry]) + ys_init
    effects = _ordered(jaxpr)
    state = [zero, *args, *ys_init, *(fn.token(e) for e in effects)]
    n_state = len(state) - len(effects)
    types = [v.type for v in state]
    cond_r = fn.region(types)
    bound = fn.constant(length, ShapedArray((), _I32))
    pred = compare(fn, "LT", cond_r.args[0], bound, _I32, ())
    fn.close(cond_r)
    body_r = fn.region(types)
    st = body_r.args
    i = st[0]
    consts = st[1:1 + num_consts]
    carry = st[1 + num_consts:1 + num_consts + num_carry]
    xs = st[1 + num_consts + num_carry:1 + len(args)]
    ys = st[1 + len(args):n_state]
    for e, t in zip(effects, st[n_state:]):
        fn.set_token(e, t)
    idx = _index(fn, i, length, reverse)
    zero_i = fn.constant(0, ShapedArray((), _I32))
    x_t = []
    for x, xa in zip(xs, ctx.avals_in[num_consts + num_carry:]):
        xa = shaped(xa)
        sizes = (1,) + xa.shape[1:]
        sl = fn.op1("stablehlo.dynamic_slice", [x, idx] + [zero_i] * (xa.ndim - 1),
                    tensor_type((sizes, xa.dtype)), f"slice_sizes = {i64_array(sizes)}")
        x_t.append(fn.op1("stablehlo.reshape", [sl], tensor_type((xa.shape[1:], xa.dtype))))
    outs = lower_body(ctx.module, fn, jaxpr.jaxpr, [], [*consts, *carry, *x_t])
    new_ys = []
    for acc, y, a in zip(ys, outs[num_carry:], y_avals):
        y1 = fn.op1("stablehlo.reshape", [y], tensor_type(((1,) + a.shape[1:], a.dtype)))
        new_ys.append(fn.op1("stablehlo.dynamic_update_slice",
                             [acc, y1, idx] + [zero_i] * (a.ndim - 1), tensor_type(a)))
    one = fn.constant(1, ShapedArray((), _I32))
    i1 = fn.op1("stablehlo.add", [i, one], scalar_type(_I32))
    ends = [fn.token(e) for e in effects]
    fn.close(body_r)
    body_text = body_r.text([i1, *consts, *outs[:num_carry], *xs, *new_ys, *ends])
    results = fn.op("stablehlo.while", state, types, regions=[cond_r.text([pred]), body_text])
    for e, t in zip(effects, results[n_state:]):
        fn.set_token(e, t)
    return results[1 + num_consts:1 + num_consts + num_carry] + results[1 + len(args):n_state]


def _inline(key: str) -> Any:
    def rule(ctx: LoweringContext, *args: Value, **params: Any) -> Sequence[Value]:
        return lower_body(ctx.module, ctx.fn, params[key].jaxpr, [], list(args))
    return rule


for _p in (P.custom_jvp_call_p, P.custom_vjp_call_p):
    register(_p)(_inline("call_jaxpr"))
register(P.remat_p)(_inline("jaxpr"))
register(P.custom_vmap_call_p)(_inline("call"))


@register(P.custom_linear_solve_p)
def _linear_solve(ctx: LoweringContext, *args: Value, const_lengths: P.LinearSolveTuple[int],
                  jaxprs: P.LinearSolveTuple[ClosedJaxpr | None]) -> Sequence[Value]:
    # The value is solve's, as JAX lowers it: the other jaxprs only serve derivatives.
    start = const_lengths.matvec + const_lengths.vecmat
    consts = list(args[start:start + const_lengths.solve])
    assert jaxprs.solve is not None
    return lower_body(ctx.module, ctx.fn, jaxprs.solve.jaxpr, [],
                      consts + list(args[sum(const_lengths):]))


@register(P.custom_lin_p)
def _custom_lin(ctx: LoweringContext, *args: Value, name: str, num_res: int,
                bwd_jaxpr: ClosedJaxpr, fwd_lin_jaxpr: ClosedJaxpr | None) -> Sequence[Value]:
    if fwd_lin_jaxpr is None:
        raise nonlinear_bwd_error(name)
    return lower_body(ctx.module, ctx.fn, fwd_lin_jaxpr.jaxpr, [], list(args))

"""Lowering of the elementwise primitives."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from plait.ir import dtypes as dt
from plait.ir import primitives as P
from plait.ir.avals import ShapedArray, shaped
from plait.ir.primitives import AccuracyMode, RoundingMethod, Tolerance
from plait.lowering.emitter import Value, tensor_type
from plait.lowering.lower import LoweringContext, lowering_rules
from plait.lowering.rules._util import broadcast_to, compare, nary, register

_SIMPLE = {
    P.neg_p: "stablehlo.negate", P.floor_p: "stablehlo.floor",
    P.ceil_p: "stablehlo.ceil", P.is_finite_p: "stablehlo.is_finite",
    P.exp_p: "stablehlo.exponential", P.log_p: "stablehlo.log",
    P.log1p_p: "stablehlo.log_plus_one", P.expm1_p: "stablehlo.exponential_minus_one",
    P.tanh_p: "stablehlo.tanh", P.sin_p: "stablehlo.sine",
    P.cos_p: "stablehlo.cosine", P.tan_p: "stablehlo.tan", P.asin_p: "chlo.asin",
    P.acos_p: "chlo.acos", P.atan_p: "chlo.atan", P.sinh_p: "chlo.sinh", P.cosh_p: "chlo.cosh",
    P.asinh_p: "chlo.asinh", P.acosh_p: "chlo.acosh", P.atanh_p: "chlo.atanh",
    P.sqrt_p: "stablehlo.sqrt", P.rsqrt_p: "stablehlo.rsqrt", P.cbrt_p: "stablehlo.cbrt",
    P.abs_p: "stablehlo.abs", P.not_p: "stablehlo.not", P.real_p: "stablehlo.real",
    P.imag_p: "stablehlo.imag",
    P.add_p: "stablehlo.add", P.add_any_p: "stablehlo.add", P.sub_p: "stablehlo.subtract",
    P.mul_p: "stablehlo.multiply",
    P.div_p: "stablehlo.divide", P.rem_p: "stablehlo.remainder", P.max_p: "stablehlo.maximum",
    P.min_p: "stablehlo.minimum", P.atan2_p: "stablehlo.atan2",
    P.nextafter_p: "chlo.next_after", P.and_p: "stablehlo.and", P.or_p: "stablehlo.or",
    P.xor_p: "stablehlo.xor", P.complex_p: "stablehlo.complex",
    P.erf_p: "chlo.erf", P.erfc_p: "chlo.erfc", P.erf_inv_p: "chlo.erf_inv",
    P.lgamma_p: "chlo.lgamma", P.digamma_p: "chlo.digamma", P.polygamma_p: "chlo.polygamma",
    P.zeta_p: "chlo.zeta", P.bessel_i1e_p: "chlo.bessel_i1e",
    P.shift_left_p: "stablehlo.shift_left",
    P.shift_right_arithmetic_p: "stablehlo.shift_right_arithmetic",
    P.shift_right_logical_p: "stablehlo.shift_right_logical",
    P.population_count_p: "stablehlo.popcnt", P.clz_p: "stablehlo.count_leading_zeros",
}
for _prim, _name in _SIMPLE.items():
    lowering_rules[_prim] = nary(_name)


def _accuracy_attr(accuracy: Tolerance | AccuracyMode | None) -> str:
    """The ``result_accuracy`` property JAX gives an op for ``accuracy`` ("" for none)."""
    if accuracy is None or accuracy == AccuracyMode.DEFAULT:
        return ""  # (StableHLO's default mode prints no attribute)
    if not isinstance(accuracy, AccuracyMode | Tolerance):
        raise NotImplementedError(f"Accuracy {accuracy} not supported")
    if isinstance(accuracy, AccuracyMode):
        fields = ""
    else:
        parts = [f"atol = {accuracy.atol:.6e}" if accuracy.atol else "",
                 f"rtol = {accuracy.rtol:.6e}" if accuracy.rtol else "",
                 f"ulps = {accuracy.ulps}" if accuracy.ulps else ""]
        fields = "".join(p + ", " for p in parts if p)
    mode = accuracy.name if isinstance(accuracy, AccuracyMode) else "TOLERANCE"
    return (f"result_accuracy = #stablehlo.result_accuracy<{fields}"
            f"mode = #stablehlo.result_accuracy_mode<{mode}>>")


def _accurate(name: str) -> Any:
    """The rule of a unary op with an ``accuracy`` (a ``result_accuracy`` property)."""
    def rule(ctx: LoweringContext, x: Value, accuracy: Tolerance | AccuracyMode | None
             ) -> Sequence[Value]:
        return [ctx.fn.op1(name, [x], tensor_type(ctx.avals_out[0]), _accuracy_attr(accuracy))]
    return rule


for _prim in (P.exp_p, P.log_p, P.log1p_p, P.expm1_p, P.tanh_p, P.sin_p, P.cos_p, P.tan_p,
              P.sqrt_p, P.rsqrt_p, P.cbrt_p):
    lowering_rules[_prim] = _accurate(_SIMPLE[_prim])


@register(P.copy_p)
def _copy(ctx: LoweringContext, x: Value) -> Sequence[Value]:
    return [x]


@register(P.name_p)
def _checkpoint_name(ctx: LoweringContext, x: Value, name: str) -> Sequence[Value]:
    return [x]  # a label for checkpoint's policies only


@register(P.conj_p)
def _conj(ctx: LoweringContext, x: Value, input_dtype: Any) -> Sequence[Value]:
    out = shaped(ctx.avals_out[0])
    part = tensor_type((out.shape, np.dtype(np.finfo(out.dtype).dtype)))
    re = ctx.fn.op1("stablehlo.real", [x], part)
    im = ctx.fn.op1("stablehlo.imag", [x], part)
    neg = ctx.fn.op1("stablehlo.negate", [im], part)
    return [ctx.fn.op1("stablehlo.complex", [re, neg], tensor_type(out))]


def _full(ctx: LoweringContext, value: Any, out: ShapedArray) -> Value:
    """A constant of ``out``'s type holding ``value`` everywhere (a broadcast scalar)."""
    scalar = ShapedArray((), out.dtype)
    return broadcast_to(ctx.fn, ctx.fn.constant(value, scalar), scalar, out.shape)


@register(P.sign_p)
def _sign(ctx: LoweringContext, x: Value) -> Sequence[Value]:
    out = shaped(ctx.avals_out[0])
    if not dt.is_unsigned(out.dtype):
        return [ctx.fn.op1("stablehlo.sign", [x], tensor_type(out))]
    # StableHLO's sign takes no unsigned integers: 0 where x == 0, else 1 (as JAX lowers it).
    zero = _full(ctx, 0, out)
    is_zero = compare(ctx.fn, "EQ", x, zero, out.dtype, out.shape)
    return [ctx.fn.op1("stablehlo.select", [is_zero, zero, _full(ctx, 1, out)], tensor_type(out))]


@register(P.logistic_p)
def _logistic(ctx: LoweringContext, x: Value, accuracy: Tolerance | AccuracyMode | None
              ) -> Sequence[Value]:
    # 1 / (1 + exp(-x)), as JAX lowers it (it avoids stablehlo.logistic for its numerics;
    # JAX drops the accuracy here too).
    out = shaped(ctx.avals_out[0])
    ty = tensor_type(out)
    e = ctx.fn.op1("stablehlo.exponential", [ctx.fn.op1("stablehlo.negate", [x], ty)], ty)
    denom = ctx.fn.op1("stablehlo.add", [_full(ctx, 1, out), e], ty)
    return [ctx.fn.op1("stablehlo.divide", [_full(ctx, 1, out), denom], ty)]


@register(P.exp2_p)
def _exp2(ctx: LoweringContext, x: Value, accuracy: Tolerance | AccuracyMode | None
          ) -> Sequence[Value]:
    out = shaped(ctx.avals_out[0])
    ln2 = _full(ctx, math.log(2.0), out)
    scaled = ctx.fn.op1("stablehlo.multiply", [ln2, x], tensor_type(out))
    return [ctx.fn.op1("stablehlo.exponential", [scaled], tensor_type(out),
                       _accuracy_attr(accuracy))]


@register(P.round_p)
def _round(ctx: LoweringContext, x: Value, rounding_method: RoundingMethod) -> Sequence[Value]:
    op = ("stablehlo.round_nearest_even" if rounding_method == RoundingMethod.TO_NEAREST_EVEN
          else "stablehlo.round_nearest_afz")
    return [ctx.fn.op1(op, [x], tensor_type(ctx.avals_out[0]))]


@register(P.pow_p)
def _pow(ctx: LoweringContext, x: Value, y: Value) -> Sequence[Value]:
    out = shaped(ctx.avals_out[0])
    xa, ya = shaped(ctx.avals_in[0]), shaped(ctx.avals_in[1])
    if ya.dtype != out.dtype:  # an integer exponent is converted to the base's dtype
        y = ctx.fn.op1("stablehlo.convert", [y], tensor_type((ya.shape, out.dtype)))
        ya = ya.update(dtype=out.dtype)
    args = [broadcast_to(ctx.fn, x, xa, out.shape), broadcast_to(ctx.fn, y, ya, out.shape)]
    return [ctx.fn.op1("stablehlo.power", args, tensor_type(out))]


@register(P.integer_pow_p)
def _integer_pow(ctx: LoweringContext, x: Value, y: int) -> Sequence[Value]:
    out = shaped(ctx.avals_out[0])
    ty = tensor_type(out)
    if y == 0:
        return [_full(ctx, 1, out)]
    # Binary exponentiation: square the base, multiply in the set bits.
    acc: Value | None = None
    base, n = x, abs(y)
    while n:
        if n & 1:
            acc = base if acc is None else ctx.fn.op1("stablehlo.multiply", [base, acc], ty)
        n >>= 1
        if n:
            base = ctx.fn.op1("stablehlo.multiply", [base, base], ty)
    assert acc is not None
    if y < 0:
        acc = ctx.fn.op1("stablehlo.divide", [_full(ctx, 1, out), acc], ty)
    return [acc]


def _comparison(direction: str) -> Any:
    def rule(ctx: LoweringContext, x: Value, y: Value) -> Sequence[Value]:
        out = shaped(ctx.avals_out[0])
        xa, ya = shaped(ctx.avals_in[0]), shaped(ctx.avals_in[1])
        args = [broadcast_to(ctx.fn, x, xa, out.shape), broadcast_to(ctx.fn, y, ya, out.shape)]
        return [compare(ctx.fn, direction, args[0], args[1], xa.dtype, out.shape)]
    return rule


for _prim, _dir in [(P.eq_p, "EQ"), (P.ne_p, "NE"), (P.lt_p, "LT"), (P.le_p, "LE"),
                    (P.gt_p, "GT"), (P.ge_p, "GE")]:
    lowering_rules[_prim] = _comparison(_dir)


@register(P.select_n_p)
def _select_n(ctx: LoweringContext, which: Value, *cases: Value) -> Sequence[Value]:
    out = shaped(ctx.avals_out[0])
    wa = shaped(ctx.avals_in[0])
    fn = ctx.fn
    if wa.dtype == dt.bool_:
        if len(cases) == 1:
            return [cases[0]]
        return [fn.op1("stablehlo.select", [which, cases[1], cases[0]], tensor_type(out))]

    def tree(lo: int, hi: int) -> Value:
        # Cases lo..hi-1: select between halves on ``which < mid``.
        if hi - lo == 1:
            return cases[lo]
        mid = (lo + hi) // 2
        bound = fn.constant(mid, ShapedArray((), wa.dtype))
        bound = broadcast_to(fn, bound, ShapedArray((), wa.dtype), wa.shape)
        pred = compare(fn, "LT", which, bound, wa.dtype, wa.shape)
        return fn.op1("stablehlo.select", [pred, tree(lo, mid), tree(mid, hi)], tensor_type(out))

    return [tree(0, len(cases))]


@register(P.clamp_p)
def _clamp(ctx: LoweringContext, lo: Value, x: Value, hi: Value) -> Sequence[Value]:
    return [ctx.fn.op1("stablehlo.clamp", [lo, x, hi], tensor_type(ctx.avals_out[0]))]


@register(P.convert_element_type_p)
def _convert(ctx: LoweringContext, x: Value, new_dtype: np.dtype[Any], weak_type: bool,
             sharding: None) -> Sequence[Value]:
    xa = shaped(ctx.avals_in[0])
    out = shaped(ctx.avals_out[0])
    fn = ctx.fn
    if xa.dtype == out.dtype:  # a change of weak type only
        return [x]
    if dt.is_complex(xa.dtype) and not dt.is_complex(new_dtype):
        part = xa.update(dtype=np.dtype(np.finfo(xa.dtype).dtype))
        x = fn.op1("stablehlo.real", [x], tensor_type(part))
        xa = part
    if new_dtype == dt.bool_ and xa.dtype != dt.bool_:
        zero = broadcast_to(fn, fn.constant(0, ShapedArray((), xa.dtype)),
                            ShapedArray((), xa.dtype), xa.shape)
        return [compare(fn, "NE", x, zero, xa.dtype, xa.shape)]
    return [fn.op1("stablehlo.convert", [x], tensor_type(out))]


@register(P.stop_gradient_p)
def _stop_gradient(ctx: LoweringContext, x: Value) -> list[Value]:
    return [x]  # only differentiation sees it


@register(P.square_p)
def _square(ctx: LoweringContext, x: Value) -> Sequence[Value]:
    # CHLO's square takes floats and complex numbers; integers multiply (as JAX lowers).
    a = shaped(ctx.avals_in[0])
    if dt.is_inexact(a.dtype):
        return [ctx.fn.op1("chlo.square", [x], tensor_type(a))]
    return [ctx.fn.op1("stablehlo.multiply", [x, x], tensor_type(a))]

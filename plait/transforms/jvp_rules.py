"""JVP rules of the elementwise primitives (one line each where a family helper fits)."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any, cast

import ml_dtypes

from plait.ir import dtypes as dt
from plait.ir import primitives as P
from plait.ir.atoms import Atom, Var
from plait.ir.avals import shaped
from plait.ir.errors import RuleNotImplementedError
from plait.transforms.emit import Emitter, Zero
from plait.transforms.jvp import (
    Tangent,
    defjvp,
    defjvp2,
    defjvp_zero,
    deflinear,
    jvp_rules,
    tangent_aval,
)


def _c(e: Emitter, x: Atom, v: float) -> Atom:
    return e.scalar_like(x, v)


def _sq(e: Emitter, x: Atom) -> Var:
    return e.bind1(P.integer_pow_p, x, y=2)


for _p in (P.sign_p, P.floor_p, P.ceil_p, P.round_p, P.is_finite_p, P.eq_p, P.ne_p, P.lt_p,
           P.le_p, P.gt_p, P.ge_p, P.and_p, P.or_p, P.xor_p, P.not_p, P.nextafter_p,
           P.argmax_p, P.argmin_p, P.reduce_and_p, P.reduce_or_p, P.reduce_xor_p, P.iota_p,
           P.empty_p, P.platform_index_p, P.dim_as_value_p,
           P.shift_left_p, P.shift_right_arithmetic_p, P.shift_right_logical_p,
           P.population_count_p, P.clz_p, P.stop_gradient_p, P.create_token_p, P.after_all_p):
    defjvp_zero(_p)

for _p in (P.neg_p, P.add_any_p, P.real_p, P.imag_p, P.conj_p, P.complex_p, P.copy_p):
    deflinear(_p)

defjvp2(P.exp_p, lambda e, t, ans, x, **_: e.mul(t, ans))
defjvp2(P.exp2_p, lambda e, t, ans, x, **_: e.mul(t, e.mul(ans, _c(e, x, math.log(2.0)))))
defjvp(P.log_p, lambda e, t, x, **_: e.div(t, x))
defjvp(P.log1p_p, lambda e, t, x, **_: e.div(t, e.add(x, _c(e, x, 1))))
defjvp2(P.expm1_p, lambda e, t, ans, x, **_: e.mul(t, e.add(ans, _c(e, x, 1))))
# Several rules below keep JAX's order of operations, so that derivatives round as JAX's
# do (bit-for-bit; a long optimization otherwise drifts apart from JAX's).
defjvp2(P.tanh_p, lambda e, t, ans, x, **_: e.mul(e.add(t, e.mul(t, ans)),
                                                  e.sub(_c(e, x, 1), ans)))
defjvp2(P.logistic_p, lambda e, t, ans, x, **_: e.mul(t, e.mul(ans, e.sub(_c(e, x, 1), ans))))
defjvp(P.sin_p, lambda e, t, x, **_: e.mul(t, e.unary(P.cos_p, x, accuracy=None)))
defjvp(P.cos_p, lambda e, t, x, **_: e.neg(e.mul(t, e.unary(P.sin_p, x, accuracy=None))))
defjvp2(P.tan_p, lambda e, t, ans, x, **_: e.mul(t, e.add(_c(e, x, 1), _sq(e, ans))))
defjvp(P.asin_p, lambda e, t, x: e.mul(t, e.unary(P.rsqrt_p, e.sub(_c(e, x, 1), _sq(e, x)),
                                                  accuracy=None)))
defjvp(P.acos_p, lambda e, t, x: e.neg(e.mul(t, e.unary(
    P.rsqrt_p, e.sub(_c(e, x, 1), _sq(e, x)), accuracy=None))))
defjvp(P.atan_p, lambda e, t, x: e.div(t, e.add(_c(e, x, 1), _sq(e, x))))
defjvp(P.sinh_p, lambda e, t, x: e.mul(t, e.unary(P.cosh_p, x)))
defjvp(P.cosh_p, lambda e, t, x: e.mul(t, e.unary(P.sinh_p, x)))
defjvp(P.asinh_p, lambda e, t, x: e.mul(t, e.unary(P.rsqrt_p, e.add(_sq(e, x), _c(e, x, 1)),
                                                   accuracy=None)))
defjvp(P.acosh_p, lambda e, t, x: e.mul(t, e.unary(
    P.rsqrt_p, e.mul(e.sub(x, _c(e, x, 1)), e.add(x, _c(e, x, 1))), accuracy=None)))
defjvp(P.atanh_p, lambda e, t, x: e.mul(e.bind1(P.integer_pow_p, e.add(_c(e, x, 1), x), y=-1),
                                         e.div(t, e.sub(_c(e, x, 1), x))))
# (The same operations in the same order as JAX's rules: the same jaxprs, the same bits.)
defjvp2(P.sqrt_p, lambda e, t, ans, x, **_: e.mul(t, e.div(_c(e, x, 0.5), ans)))
defjvp2(P.rsqrt_p, lambda e, t, ans, x, **_: e.mul(t, e.mul(_c(e, x, -0.5), e.div(ans, x))))
defjvp2(P.cbrt_p, lambda e, t, ans, x, **_: e.mul(t, e.mul(
    _c(e, x, 1 / 3), e.bind1(P.integer_pow_p, ans, y=-2))))


def _abs_jvp(e: Emitter, t: Atom, ans: Atom, x: Atom) -> Atom:
    if dt.is_complex(shaped(x.aval).dtype):
        # d|x| = Re(conj(x) t) / |x|, zero where x == 0.
        safe = e.select_n(e.bind1(P.eq_p, ans, _c(e, ans, 0)), ans, e.full(shaped(ans.aval), 1))
        re = e.unary(P.real_p, e.mul(e.conj(x), t))
        return e.div(re, safe)
    # JAX's choice at 0 (and -0): the derivative of x there is +1, not sign(0) = 0.
    nonneg = e.bind1(P.ge_p, x, _c(e, x, 0))
    return e.select_n(nonneg, e.neg(t), t)


defjvp2(P.abs_p, _abs_jvp)
defjvp(P.square_p, lambda e, t, x: e.mul(t, e.mul(_c(e, x, 2), x)))
defjvp(P.integer_pow_p, lambda e, t, x, y: (
    e.mul(t, e.mul(_c(e, x, y), x if y == 2 else e.bind1(P.integer_pow_p, x, y=y - 1)))
    if y not in (0, 1) else (t if y == 1 else e.zeros(shaped(t.aval)))))


def _sub_jvp(e: Emitter, primals: Sequence[Atom], tangents: Sequence[Tangent],
             **params: Any) -> tuple[list[Var], list[Tangent]]:
    out = e.bind(P.sub_p, *primals)
    tx, ty = tangents
    shape = shaped(out[0].aval).shape
    if isinstance(ty, Zero):
        return out, [e.broadcast_to(cast(Atom, tx), shape)]  # jvp_eqns: not both zero
    if isinstance(tx, Zero):
        return out, [e.broadcast_to(e.neg(ty), shape)]
    return out, [e.sub(tx, ty)]


def _add_jvp(e: Emitter, primals: Sequence[Atom], tangents: Sequence[Tangent],
             **params: Any) -> tuple[list[Var], list[Tangent]]:
    out = e.bind(P.add_p, *primals)
    tx, ty = tangents
    shape = shaped(out[0].aval).shape
    if isinstance(ty, Zero):
        return out, [e.broadcast_to(cast(Atom, tx), shape)]  # jvp_eqns: not both zero
    if isinstance(tx, Zero):
        return out, [e.broadcast_to(ty, shape)]
    return out, [e.add(tx, ty)]


jvp_rules[P.add_p] = _add_jvp
jvp_rules[P.sub_p] = _sub_jvp
# ``out_dtype`` (a widening multiply) applies to the tangent products too.
defjvp(P.mul_p, lambda e, t, x, y, **p: e.bind1(P.mul_p, t, y, **p),
       lambda e, t, x, y, **p: e.bind1(P.mul_p, x, t, **p))
defjvp(P.div_p, lambda e, t, x, y: e.div(t, y),
       lambda e, t, x, y: e.mul(e.mul(e.neg(t), x), e.bind1(P.integer_pow_p, y, y=-2)))


def _trunc_div(e: Emitter, x: Atom, y: Atom) -> Atom:
    q = e.div(x, y)
    return e.mul(e.unary(P.sign_p, q), e.unary(P.floor_p, e.unary(P.abs_p, q)))


defjvp(P.rem_p, lambda e, t, x, y: t, lambda e, t, x, y: e.neg(e.mul(t, _trunc_div(e, x, y))))


def _balanced(e: Emitter, x: Atom, ans: Atom, y: Atom) -> Atom:
    # 1 where x alone attains the extremum, 1/2 on ties, 0 elsewhere (as JAX, so that
    # the gradient of max(x, x) is 1).  Selects need full-shape cases.
    a = shaped(ans.aval)
    xa = e.bind1(P.eq_p, x, ans)
    ya = e.bind1(P.eq_p, y, ans)
    half = e.select_n(ya, e.full(a, 1), e.full(a, 0.5))
    return e.select_n(xa, e.full(a, 0), half)


defjvp2(P.max_p, lambda e, t, ans, x, y: e.mul(t, _balanced(e, x, ans, y)),
        lambda e, t, ans, x, y: e.mul(t, _balanced(e, y, ans, x)))
defjvp2(P.min_p, lambda e, t, ans, x, y: e.mul(t, _balanced(e, x, ans, y)),
        lambda e, t, ans, x, y: e.mul(t, _balanced(e, y, ans, x)))


def _atan2_denominator(e: Emitter, x: Atom, y: Atom) -> Atom:
    return e.add(_sq(e, x), _sq(e, y))


defjvp(P.atan2_p, lambda e, t, x, y: e.mul(t, e.div(y, _atan2_denominator(e, x, y))),
       lambda e, t, x, y: e.mul(t, e.div(e.neg(x), _atan2_denominator(e, x, y))))


def _pow_jvp_base(e: Emitter, t: Atom, ans: Atom, x: Atom, y: Atom) -> Atom:
    ya = shaped(y.aval)
    if dt.is_integer(ya.dtype):
        yf = e.convert(y, shaped(x.aval).dtype)
        deriv = e.mul(yf, e.bind1(P.pow_p, x, e.sub(y, e.scalar_like(y, 1))))
        return e.mul(t, e.select_n(e.bind1(P.eq_p, y, e.scalar_like(y, 0)), deriv,
                                   e.broadcast_to(_c(e, x, 0), shaped(deriv.aval).shape)))
    return e.mul(t, e.mul(y, e.bind1(P.pow_p, x, e.sub(y, _c(e, y, 1)))))


def _pow_jvp_exponent(e: Emitter, t: Atom, ans: Atom, x: Atom, y: Atom) -> Atom:
    # log(x) replaced by 0 where x == 0, as JAX does (0 ** y has no exponent slope there).
    zero = e.bind1(P.eq_p, x, _c(e, x, 0))
    safe_x = e.select_n(zero, x, e.broadcast_to(_c(e, x, 1), shaped(x.aval).shape))
    return e.mul(t, e.mul(e.unary(P.log_p, safe_x, accuracy=None), ans))


defjvp2(P.pow_p, _pow_jvp_base, _pow_jvp_exponent)


def _select_n_jvp(e: Emitter, primals: Sequence[Atom], tangents: Sequence[Tangent],
                  **params: Any) -> tuple[list[Var], list[Tangent]]:
    out = e.bind(P.select_n_p, *primals)
    cases = tangents[1:]
    if all(isinstance(t, Zero) for t in cases):
        return out, [Zero(tangent_aval(out[0].aval))]
    return out, [e.select_n(primals[0], *[e.instantiate(t) for t in cases])]


jvp_rules[P.select_n_p] = _select_n_jvp


def _clamp_jvp(e: Emitter, primals: Sequence[Atom], tangents: Sequence[Tangent],
               **params: Any) -> tuple[list[Var], list[Tangent]]:
    lo, x, hi = primals
    out = e.bind(P.clamp_p, lo, x, hi)
    shape = shaped(x.aval).shape
    terms = []
    t_lo, t_x, t_hi = tangents
    if not isinstance(t_x, Zero):
        inside = e.bind1(P.and_p, e.bind1(P.gt_p, x, lo), e.bind1(P.lt_p, x, hi))
        terms.append(e.select_n(inside, e.zeros(shaped(t_x.aval)), t_x))
    for t, bound, cmp in ((t_lo, lo, P.lt_p), (t_hi, hi, P.gt_p)):
        if not isinstance(t, Zero):
            pick = e.bind1(cmp, x, bound)
            tb = e.broadcast_to(t, shape)
            terms.append(e.select_n(pick, e.zeros(shaped(tb.aval)), tb))
    total: Atom = terms[0]
    for term in terms[1:]:
        total = e.add_any(total, term)
    return out, [total]


jvp_rules[P.clamp_p] = _clamp_jvp


def _convert_jvp(e: Emitter, primals: Sequence[Atom], tangents: Sequence[Tangent],
                 **params: Any) -> tuple[list[Var], list[Tangent]]:
    out = e.bind(P.convert_element_type_p, *primals, **params)
    t, = tangents
    new = params["new_dtype"]
    if isinstance(t, Zero) or not dt.is_inexact(new):
        return out, [Zero(tangent_aval(out[0].aval))]
    if dt.is_complex(shaped(t.aval).dtype) and not dt.is_complex(new):
        t = e.unary(P.real_p, t)
    return out, [e.convert(t, new, params["weak_type"])]


jvp_rules[P.convert_element_type_p] = _convert_jvp


# -- special functions ---------------------------------------------------------------

def _gauss(e: Emitter, x: Atom, scale: float) -> Var:
    # scale * exp(-x^2): the derivative of erf (scale 2/sqrt(pi)) and erfc.
    return e.mul(_c(e, x, scale), e.unary(P.exp_p, e.neg(_sq(e, x)), accuracy=None))


def _no_gradient(name: str, operand: str) -> Any:
    def partial(e: Emitter, t: Atom, *_: Atom, **__: Any) -> Atom:
        raise ValueError(f"{name} gradient with respect to {operand} is not supported")
    return partial


defjvp(P.erf_p, lambda e, t, x, **_: e.mul(t, _gauss(e, x, 2 / math.sqrt(math.pi))))
defjvp(P.erfc_p, lambda e, t, x, **_: e.mul(t, _gauss(e, x, -2 / math.sqrt(math.pi))))
defjvp2(P.erf_inv_p, lambda e, t, ans, x, **_: e.mul(
    t, e.mul(_c(e, x, math.sqrt(math.pi) / 2), e.unary(P.exp_p, _sq(e, ans), accuracy=None))))
defjvp2(P.bessel_i0e_p, lambda e, t, y, x: e.mul(t, e.sub(
    e.unary(P.bessel_i1e_p, x), e.mul(e.unary(P.sign_p, x), y))))


# ml_dtypes.finfo (np.finfo extended to bfloat16) is not annotated.
_finfo: Callable[[Any], Any] = ml_dtypes.finfo


def _bessel_i1e_jvp(e: Emitter, t: Atom, y: Atom, x: Atom) -> Atom:
    # d/dx i1e = i0e(x) - i1e(x) (sign(x) + 1/x), its limit 1/2 where |x| <= eps (JAX's rule).
    eps = e.scalar_like(x, float(_finfo(shaped(x.aval).dtype).eps))
    not_tiny = e.bind1(P.gt_p, e.unary(P.abs_p, x), eps)
    safe = e.select_n(not_tiny, e.broadcast_to(eps, shaped(x.aval).shape), x)
    slope = e.sub(e.unary(P.bessel_i0e_p, safe), e.mul(y, e.add(
        e.unary(P.sign_p, safe), e.bind1(P.integer_pow_p, safe, y=-1))))
    half = e.broadcast_to(e.scalar_like(x, 0.5), shaped(x.aval).shape)
    return e.mul(t, e.select_n(not_tiny, half, slope))


defjvp2(P.bessel_i1e_p, _bessel_i1e_jvp)
defjvp(P.lgamma_p, lambda e, t, x, **_: e.mul(t, e.unary(P.digamma_p, x)))
defjvp(P.digamma_p, lambda e, t, x, **_: e.mul(t, e.bind1(P.polygamma_p, _c(e, x, 1), x)))
defjvp(P.polygamma_p, _no_gradient("polygamma", "m"),
       lambda e, t, m, x, **_: e.mul(t, e.bind1(P.polygamma_p, e.add(m, _c(e, m, 1)), x)))
# d/dq zeta(s, q) = -s zeta(s + 1, q); JAX defines no derivative of zeta at all.
def _gamma_density(e: Emitter, a: Atom, x: Atom) -> Var:
    # d/dx P(a, x) = exp(-x + (a - 1) log x - lgamma(a)), as JAX computes it.
    return e.unary(P.exp_p, e.sub(e.add(e.neg(x), e.mul(e.sub(a, _c(e, a, 1)),
                                                        e.unary(P.log_p, x))),
                                  e.unary(P.lgamma_p, a)))


defjvp(P.igamma_p, lambda e, t, a, x: e.mul(t, e.bind1(P.igamma_grad_a_p, a, x)),
       lambda e, t, a, x: e.mul(t, _gamma_density(e, a, x)))
defjvp(P.igammac_p, lambda e, t, a, x: e.neg(e.mul(t, e.bind1(P.igamma_grad_a_p, a, x))),
       lambda e, t, a, x: e.neg(e.mul(t, _gamma_density(e, a, x))))


def _betainc_dx(e: Emitter, t: Atom, a: Atom, b: Atom, x: Atom) -> Var:
    lbeta = e.sub(e.add(e.unary(P.lgamma_p, a), e.unary(P.lgamma_p, b)),
                  e.unary(P.lgamma_p, e.add(a, b)))
    log_density = e.sub(e.add(e.mul(e.sub(b, _c(e, b, 1)), e.unary(P.log1p_p, e.neg(x))),
                              e.mul(e.sub(a, _c(e, a, 1)), e.unary(P.log_p, x))), lbeta)
    return e.mul(e.unary(P.exp_p, log_density), t)


def _betainc_no_gradient(e: Emitter, t: Atom, *_: Atom) -> Atom:
    raise ValueError("Betainc gradient with respect to a and b not supported.")


defjvp(P.regularized_incomplete_beta_p, _betainc_no_gradient, _betainc_no_gradient,
       _betainc_dx)


def _not_differentiable(name: str) -> Any:
    # JAX defines no derivative of this derivative; the same uniform error as a
    # missing rule, but only where a tangent flows.
    def partial(e: Emitter, t: Atom, *_: Atom) -> Atom:
        raise RuleNotImplementedError("JVP", name)
    return partial


defjvp(P.igamma_grad_a_p, _not_differentiable("igamma_grad_a"),
       _not_differentiable("igamma_grad_a"))
defjvp(P.zeta_p, _no_gradient("zeta", "s"), lambda e, t, s, q, **_: e.mul(
    t, e.neg(e.mul(s, e.bind1(P.zeta_p, e.add(s, _c(e, s, 1)), q)))))

"""Reference rules of the special functions, computed in float64 (XLA's edge cases:
poles give inf or NaN as CHLO defines them)."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from plait.ir import primitives as P
from plait.ir.reference.elementwise import _def


def _vectorized(fn: Callable[[float], float]) -> Callable[..., np.ndarray]:
    def rule(x: np.ndarray, **_: Any) -> np.ndarray:
        flat = np.asarray(x, np.float64).ravel()
        out = np.array([fn(float(v)) for v in flat], np.float64)
        return out.reshape(np.shape(x)).astype(x.dtype)
    return rule


def _whole(x: float) -> bool:
    return math.isfinite(x) and x == math.floor(x)


def _lgamma(x: float) -> float:
    if not math.isfinite(x):
        return x if x != x else math.inf
    if x <= 0 and _whole(x):
        return math.inf
    return math.lgamma(x)


def _erf_inv(y: float) -> float:
    if y != y or abs(y) > 1:
        return math.nan
    if abs(y) == 1:
        return math.copysign(math.inf, y)
    # Newton's method on erf from a logarithmic first guess; erf' = 2/sqrt(pi) e^{-x^2}.
    w = -math.log((1 - y) * (1 + y))
    x = math.copysign(math.sqrt(max(w - math.log(max(w, 1e-300)) / 2, 0.0)), y) if w > 1 \
        else y * math.sqrt(math.pi) / 2
    for _ in range(100):
        step = (math.erf(x) - y) / (2 / math.sqrt(math.pi) * math.exp(-x * x))
        x -= step
        if abs(step) <= 1e-17 * max(1.0, abs(x)):
            break
    return x


def _digamma(x: float) -> float:
    if x != x or x == -math.inf:
        return math.nan
    if x == math.inf:
        return math.inf
    if x <= 0 and _whole(x):
        return math.nan
    if x < 0:  # reflection: psi(1 - x) - psi(x) = pi / tan(pi x)
        return _digamma(1 - x) - math.pi / math.tan(math.pi * x)
    acc = 0.0
    while x < 8:
        acc -= 1 / x
        x += 1
    inv2 = 1 / (x * x)
    series = inv2 * (1 / 12 - inv2 * (1 / 120 - inv2 * (1 / 252 - inv2 * (1 / 240 - inv2 / 132))))
    return acc + math.log(x) - 0.5 / x - series


# Bernoulli numbers B_2j / (2j)!, for the Euler-Maclaurin tail of the Hurwitz zeta.
_B2J_OVER_FACT = [1 / 12, -1 / 720, 1 / 30240, -1 / 1209600, 1 / 47900160,
                  -691 / 1307674368000, 1 / 74724249600]


def _zeta(s: float, q: float) -> float:
    if s != s or q != q:
        return math.nan
    if s == 1:
        return math.inf
    if s < 1:
        return math.nan
    if q <= 0:
        if _whole(q):
            return math.inf
        if not _whole(s):  # (q + k) ** -s is not real
            return math.nan
        shift = math.ceil(-q)  # zeta(s, q) = sum_{k < shift} (q + k) ** -s + zeta(s, q + shift)
        head: float = sum((q + k) ** -s for k in range(shift))
        return head + _zeta(s, q + shift)
    n = 12
    total: float = sum((q + k) ** -s for k in range(n))
    a = q + n
    total += a ** (1 - s) / (s - 1) + a ** -s / 2
    term = s * a ** (-s - 1)  # s (s+1) ... (s+2j-2) a^(-s-2j+1), for j = 1, 2, ...
    for j, b in enumerate(_B2J_OVER_FACT, start=1):
        total += b * term
        term *= (s + 2 * j - 1) * (s + 2 * j) / (a * a)
    return total


def _polygamma(m: float, x: float) -> float:
    if not _whole(m) or m < 0:
        return math.nan
    if m == 0:
        return _digamma(x)
    sign = -1.0 if int(m) % 2 == 0 else 1.0
    return sign * math.gamma(m + 1) * _zeta(m + 1.0, x)


def _binary(fn: Callable[[float, float], float]) -> Callable[..., np.ndarray]:
    def rule(a: np.ndarray, b: np.ndarray, **_: Any) -> np.ndarray:
        a64, b64 = np.broadcast_arrays(np.asarray(a, np.float64), np.asarray(b, np.float64))
        out = np.array([fn(float(u), float(v)) for u, v in zip(a64.ravel(), b64.ravel())],
                       np.float64).reshape(a64.shape)
        return out.astype(np.result_type(a, b))
    return rule


_def(P.erf_p, _vectorized(math.erf))
_def(P.erfc_p, _vectorized(math.erfc))
_def(P.erf_inv_p, _vectorized(_erf_inv))
_def(P.lgamma_p, _vectorized(_lgamma))
_def(P.digamma_p, _vectorized(_digamma))
_def(P.polygamma_p, _binary(_polygamma))
_def(P.zeta_p, _binary(_zeta))


def _bessel_ie(order: int) -> Callable[[float], float]:
    # exp(-|x|) I_n(x) = (1/pi) * integral over [0, pi] of exp(|x| (cos t - 1)) cos(n t) dt
    # (times sign(x) for odd n): a smooth periodic integrand, for which the trapezoidal
    # rule converges geometrically; its peak at t = 0 has width ~ 1/sqrt(|x|).
    def fn(x: float) -> float:
        if x != x:
            return x
        if math.isinf(x):
            return math.copysign(0.0, x) if order else 0.0
        a = abs(x)
        if a < 0.5:  # the power series, without the cancellation of the integral
            term = 1.0 if order == 0 else a / 2
            total, k = term, 0
            while term > 1e-18 * total:
                k += 1
                term *= a * a / 4 / (k * (k + order))
                total += term
            return math.copysign(total * math.exp(-a), x) if order else total * math.exp(-a)
        if a > 500:  # the asymptotic series: sum of (-1)^k a_k(n) / x^k, over sqrt(2 pi x)
            mu, term, total = 4 * order * order, 1.0, 1.0
            for k in range(1, 12):
                term *= -(mu - (2 * k - 1) ** 2) / (k * 8 * a)
                total += term
            value = total / math.sqrt(2 * math.pi * a)
            return math.copysign(value, x) if order else value
        n = int(64 + 40 * math.sqrt(a))
        t = np.linspace(0.0, math.pi, n + 1)
        f = np.exp(a * (np.cos(t) - 1)) * np.cos(order * t)
        value = float((f.sum() - (f[0] + f[-1]) / 2) / n)
        return math.copysign(value, x) if order else value
    return fn


_def(P.bessel_i0e_p, _vectorized(_bessel_ie(0)))
_def(P.bessel_i1e_p, _vectorized(_bessel_ie(1)))


def _lower_gamma_series(a: float, x: float) -> float:
    # P(a, x) = x^a e^-x / Gamma(a + 1) * sum_n x^n / ((a + 1) ... (a + n))
    term = total = 1.0
    k = a
    while abs(term) > 1e-17 * abs(total):
        k += 1
        term *= x / k
        total += term
    return total * math.exp(a * math.log(x) - x - math.lgamma(a + 1))


def _upper_gamma_fraction(a: float, x: float) -> float:
    # Q(a, x) = x^a e^-x / Gamma(a) / (x + 1 - a - 1 (1 - a) / (x + 3 - a - ...)), Lentz
    tiny = 1e-300
    b = x + 1 - a
    c, d = 1 / tiny, 1 / b
    h = d
    for i in range(1, 10000):
        an = -i * (i - a)
        b += 2
        d = an * d + b
        d = tiny if abs(d) < tiny else d
        c = b + an / c
        c = tiny if abs(c) < tiny else c
        d = 1 / d
        h *= d * c
        if abs(d * c - 1) < 1e-16:
            break
    return h * math.exp(a * math.log(x) - x - math.lgamma(a))


def _regularized_gamma(upper: bool) -> Callable[[float, float], float]:
    def fn(a: float, x: float) -> float:
        if a != a or x != x or x < 0 or a < 0 or (a == 0 and x == 0):
            return math.nan
        if x == 0:
            return 1.0 if upper else 0.0
        if math.isinf(x) or a == 0:
            return 0.0 if upper else 1.0
        if x < a + 1:
            p = _lower_gamma_series(a, x)
            return 1 - p if upper else p
        q = _upper_gamma_fraction(a, x)
        return q if upper else 1 - q
    return fn


def _igamma_grad_a(a: float, x: float) -> float:
    # d/da P(a, x) by central differences, Richardson-extrapolated twice (O(h^6)).
    if a != a or x != x or x < 0 or a <= 0:
        return math.nan
    if x == 0:
        return 0.0
    p = _regularized_gamma(False)
    h = min(1e-2 * a, a / 4)

    def central(step: float) -> float:
        return (p(a + step, x) - p(a - step, x)) / (2 * step)

    def once(step: float) -> float:  # one Richardson step: O(step^4)
        return (4 * central(step / 2) - central(step)) / 3
    return (16 * once(h / 2) - once(h)) / 15


def _beta_fraction(a: float, b: float, x: float) -> float:
    # 1 / (1 + d1 / (1 + d2 / (1 + ...))) with DLMF 8.17.22's d_n: Lentz's method on the
    # denominator.
    tiny = 1e-300
    c, d, h = 1.0, 0.0, 1.0
    for n in range(1, 10000):
        m = n // 2
        if n % 2:
            num = -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))
        else:
            num = m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m))
        d = 1 + num * d
        d = tiny if abs(d) < tiny else d
        c = 1 + num / c
        c = tiny if abs(c) < tiny else c
        d = 1 / d
        h *= c * d
        if abs(c * d - 1) < 1e-16:
            break
    return 1 / h


def _betainc(a: float, b: float, x: float) -> float:
    if a != a or b != b or x != x or a < 0 or b < 0 or x < 0 or x > 1:
        return math.nan
    a_zero, b_zero = a == 0 or b == math.inf, b == 0 or a == math.inf
    if a_zero and b_zero:
        return math.nan
    if (b_zero and x != 1) or (a_zero and x == 0):
        return 0.0
    if a_zero or b_zero or x in (0.0, 1.0):
        return 1.0 if (a_zero or x == 1) else 0.0
    if x > (a + 1) / (a + b + 2):
        return 1 - _betainc(b, a, 1 - x)
    log_front = (a * math.log(x) + b * math.log1p(-x) + math.lgamma(a + b) - math.lgamma(a)
                 - math.lgamma(b))
    return math.exp(log_front) / a * _beta_fraction(a, b, x)


def _ternary(fn: Callable[[float, float, float], float]) -> Callable[..., np.ndarray]:
    def rule(a: np.ndarray, b: np.ndarray, x: np.ndarray, **_: Any) -> np.ndarray:
        aa, bb, xx = np.broadcast_arrays(*(np.asarray(v, np.float64) for v in (a, b, x)))
        out = np.array([fn(float(p), float(q), float(r))
                        for p, q, r in zip(aa.ravel(), bb.ravel(), xx.ravel())], np.float64)
        return out.reshape(aa.shape).astype(np.result_type(a, b, x))
    return rule


_def(P.igamma_p, _binary(_regularized_gamma(False)))
_def(P.igammac_p, _binary(_regularized_gamma(True)))
_def(P.igamma_grad_a_p, _binary(_igamma_grad_a))
_def(P.regularized_incomplete_beta_p, _ternary(_betainc))

"""The Pochhammer symbol ``poch`` and the hypergeometric functions ``hyp1f1`` and
``hyp2f1``, as JAX 0.10.2 computes them (Pearson, Olver and Porter 2014: Taylor series,
the asymptotic series of 1F1 for ``|x| >= 100``, and for 2F1 near ``x = 1`` the
transformations of AMS55 15.3.10-12), element by element, with JAX's custom derivatives
(series in the parameters, contiguous functions in ``x``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import ml_dtypes
import numpy as np

from plait.frontend import lax
from plait.frontend import numpy as pnp
from plait.frontend.api.control_flow import cond, while_loop
from plait.frontend.api.custom_derivatives import custom_jvp
from plait.frontend.api.jit import jit
from plait.frontend.core.array_base import Array
from plait.frontend.numpy._core import check_arraylike
from plait.frontend.scipy._util import promote as _promote
from plait.frontend.scipy.special import digamma, gamma
from plait.ir import dtypes as dt

__all__ = ["poch", "hyp1f1", "hyp2f1"]

_MAX_TERMS = 250  # every series stops after this many terms


# ml_dtypes.finfo (np.finfo extended to bfloat16) is not annotated.
_finfo: Callable[[np.dtype[Any]], Any] = ml_dtypes.finfo


def _eps(x: Array) -> float:
    return float(_finfo(x.dtype).eps)


def _full(x: Array, value: float) -> Array:
    """``value`` as a scalar Array of ``x``'s dtype."""
    return lax.full((), value, x.dtype)


# -- poch --------------------------------------------------------------------------------

@custom_jvp
def _poch(z: Array, m: Array) -> Array:
    return pnp.where(m == 0., pnp.array(1, dtype=z.dtype), gamma(z + m) / gamma(z))


_poch.defjvps(
    # d/dz (z)_m = (psi(z + m) - psi(z)) (z)_m,  d/dm (z)_m = psi(z + m) (z)_m
    lambda z_dot, ans, z, m: (digamma(z + m) - digamma(z)) * _poch(z, m) * z_dot,
    lambda m_dot, ans, z, m: digamma(z + m) * _poch(z, m) * m_dot)


def poch(z: Any, m: Any) -> Array:
    """The Pochhammer symbol (rising factorial) ``(z)_m = Gamma(z + m) / Gamma(z)``,
    ``1`` where ``m == 0``; differentiable in both arguments (through digamma).

    Raises:
      ValueError: complex arguments (as JAX).
    """
    z_arr, m_arr = _promote("poch", z, m)
    if dt.is_complex(z_arr.dtype):
        raise ValueError("jnp.poch does not support complex-valued inputs.")
    return _poch(z_arr, m_arr)


# -- 1F1 ---------------------------------------------------------------------------------

def _sum_series(x: Array, first: Array, start: Array, step: Any, weight: Any = None
                ) -> Array:
    """``start + sum_k weight(k) term_k`` with ``term_1 = first`` and
    ``term_{k+1} = term_k * step(k)``, stopped when a term is below ``eps`` relative to
    the sum, or after 250 terms.  Without ``weight``, each term is added as it is."""
    eps = _eps(x)

    def body(s: tuple[Array, Array, Array]) -> tuple[Array, Array, Array]:
        total, k, term = s
        total = total + (term if weight is None else term * weight(k))
        return total, k + 1, term * step(k)

    def cond(s: tuple[Array, Array, Array]) -> Array:
        total, k, term = s
        return (k < _MAX_TERMS) & (lax.abs(term) / lax.abs(total) > eps)

    out: Array = while_loop(cond, body, (start, _full(x, 1.0), first))[0]
    return out


def _hyp1f1_series(a: Array, b: Array, x: Array) -> Array:
    # sum_k (a)_k / (b)_k x^k / k!
    return _sum_series(x, a / b * x, _full(x, 1.0),
                       lambda k: (a + k) / (b + k) * x / (k + 1))


def _hyp1f1_asymptotic(a: Array, b: Array, x: Array) -> Array:
    # Gamma(b) / Gamma(a) e^x x^(a-b) sum_k (b-a)_k (1-a)_k / k! x^-k
    s = _sum_series(x, (b - a) * (1 - a) / x, _full(x, 1.0),
                    lambda k: (b - a + k) * (1 - a + k) / (k + 1) / x)
    return gamma(b) / gamma(a) * lax.exp(x) * x ** (a - b) * s


def _hyp1f1_element(a: Array, b: Array, x: Array) -> Array:
    value = cond(lax.abs(x) < 100, _hyp1f1_series, _hyp1f1_asymptotic, a, b, x)
    index = ((a == 0) * 1 + ((a == b) & (a != 0)) * 2 + ((b == 0) & (a != 0)) * 3)
    return lax.select_n(index, value, _full(x, 1.0), lax.exp(x), _full(x, np.inf))


def _hyp1f1_da_element(a: Array, b: Array, x: Array) -> Array:
    # d/da: the series with each term weighted by psi(a + k) - psi(a)
    return _sum_series(x, a / b * x, _full(x, 0.0),
                       lambda k: (a + k) / (b + k) * x / (k + 1),
                       lambda k: digamma(a + k) - digamma(a))


def _hyp1f1_db_element(a: Array, b: Array, x: Array) -> Array:
    # d/db: the series with each term weighted by psi(b) - psi(b + k)
    return _sum_series(x, a / b * x, _full(x, 0.0),
                       lambda k: (a + k) / (b + k) * x / (k + 1),
                       lambda k: digamma(b) - digamma(b + k))


_hyp1f1 = custom_jvp(jit(pnp.vectorize(_hyp1f1_element)))
_hyp1f1_da = jit(pnp.vectorize(_hyp1f1_da_element))
_hyp1f1_db = jit(pnp.vectorize(_hyp1f1_db_element))

_hyp1f1.defjvps(
    lambda a_dot, ans, a, b, x: _hyp1f1_da(a, b, x) * a_dot,
    lambda b_dot, ans, a, b, x: _hyp1f1_db(a, b, x) * b_dot,
    # d/dx 1F1(a; b; x) = a / b 1F1(a + 1; b + 1; x)
    lambda x_dot, ans, a, b, x: a / b * _hyp1f1(a + 1, b + 1, x) * x_dot)


def hyp1f1(a: Any, b: Any, x: Any) -> Array:
    """The confluent hypergeometric function ``1F1(a; b; x) = sum_k (a)_k / (b)_k x^k /
    k!`` of real arguments (broadcast together): its Taylor series for ``|x| < 100``,
    else its asymptotic series.  ``1F1(0; 0; x)`` is 1 (SciPy: NaN).  Large values lose
    accuracy in float32 (as JAX's).  Differentiable in all three arguments.

    Raises:
      ValueError: complex arguments.
    """
    check_arraylike("hyp1f1", a, b, x)
    a_arr, b_arr, x_arr = _promote("hyp1f1", a, b, x)
    if dt.is_complex(x_arr.dtype):
        raise ValueError("hyp1f1 does not support complex-valued inputs.")
    out: Array = _hyp1f1(a_arr, b_arr, x_arr)
    return out


# -- 2F1 ---------------------------------------------------------------------------------

def _hyp2f1_series(a: Array, b: Array, c: Array, x: Array) -> Array:
    eps = _eps(x)

    def body(s: tuple[Array, Array, Array]) -> tuple[Array, Array, Array]:
        total, k, term = s
        total = total + term
        term = term * ((a + k - 1) * (b + k - 1) / (c + k - 1) / k * x)
        return total, k + 1, term

    def cond(s: tuple[Array, Array, Array]) -> Array:
        total, k, term = s
        return (k < _MAX_TERMS) & (lax.abs(term) > eps * lax.abs(total))

    out: Array = while_loop(cond, body, (_full(x, 0.0), _full(x, 1.0), _full(x, 1.0)))[0]
    return out


def _hyp2f1_terminating(a: Array, b: Array, c: Array, x: Array, used: Array) -> Array:
    """The series when ``a`` or ``b`` is a non-positive integer: a polynomial of degree
    ``|a|`` (after ``a`` and ``b`` are swapped so that ``a`` is the one that ends it).
    The loop runs only where ``used`` (elsewhere its value is discarded, and a large
    ``|a|`` would take as many steps)."""
    eps = _eps(x) * 50
    c_stops_first = (c % 1 == 0) & (c <= 0) & (c > b)
    swap = (b < a) & (lax.abs(b - pnp.round(b)) < eps) & ~c_stops_first
    a, b = pnp.where(swap, b, a), pnp.where(swap, a, b)
    a = lax.abs(a)

    def body(s: tuple[Array, Array, Array]) -> tuple[Array, Array, Array]:
        i, total, term = s
        term = term * (-(a - i + 1) / (c + i - 1) * (b + i - 1) / i * x)
        return i + 1, total + term, term

    one = _full(x, 1.0)
    out: Array = while_loop(lambda s: (s[0] < a + 1) & used, body,
                            (lax.full((), 1, a.dtype), one, one))[1]
    return out


def _hyp2f1_digamma_transform(a: Array, b: Array, c: Array, x: Array, used: Array
                              ) -> Array:
    """2F1 near ``x = 1`` when ``c - a - b`` is (close to) an integer: AMS55 15.3.10-12,
    whose ``log(1 - x)`` and digamma terms replace the poles of the usual transform.
    Its finite sum (``|c - a - b|`` terms) runs only where ``used``."""
    eps = _eps(x)
    d = c - a - b
    s = 1 - x
    rd = pnp.round(d)
    zero = pnp.zeros_like(d)
    nonneg = rd >= 0
    e = pnp.where(nonneg, d, -d)
    d1 = pnp.where(nonneg, d, zero)
    d2 = pnp.where(nonneg, zero, d)
    ard = pnp.where(nonneg, rd, -rd).astype(dt.int32)
    log_s = lax.log(s)
    y = digamma(1.0) + digamma(1.0 + e) - digamma(a + d1) - digamma(b + d1) - log_s
    y = y / gamma(e + 1.0)
    p = (a + d1) * (b + d1) * s / gamma(e + 2.0)

    def body(st: tuple[Array, Array, Array, Array]) -> tuple[Array, Array, Array, Array]:
        p, _, t, y = st
        r = (digamma(1.0 + t) + digamma(1.0 + t + e) - digamma(a + t + d1)
             - digamma(b + t + d1) - log_s)
        q = p * r
        y = y + q
        p = p * (s * (a + t + d1) / (t + 1.0))
        p = p * ((b + t + d1) / (t + 1.0 + e))
        return p, q, t + 1.0, y

    def cond(st: tuple[Array, Array, Array, Array]) -> Array:
        _, q, t, y = st
        return (t < _MAX_TERMS) & (lax.abs(q) >= eps * lax.abs(y))

    _, _, _, y = while_loop(cond, body, (p, y, _full(x, 1.0), y))

    def finite_sum(y: Array) -> Array:
        def term(st: tuple[Array, Array, Array, Array]) -> tuple[Array, Array, Array, Array]:
            i, p, t, y1 = st
            r = 1.0 - e + t
            p = p * (s * (a + t + d2) * (b + t + d2) / r)
            t = t + 1.0
            p = p / t
            return i + 1, p, t, y1 + p

        one = _full(x, 1.0)
        _, _, _, y1 = while_loop(lambda st: (st[0] < ard) & used, term,
                                 (lax.full((), 1, dt.int32), one, _full(x, 0.0), one))
        g_c = gamma(c)
        y1 = y1 * (gamma(e) * g_c / (gamma(a + d1) * gamma(b + d1)))
        y = y * (g_c / (gamma(a + d2) * gamma(b + d2)))
        y = pnp.where((ard & 1) != 0, -y, y)
        q = s ** rd
        out: Array = pnp.where(rd > 0, y * q + y1, y + y1 * q)
        return out

    return pnp.where(rd == 0, y * gamma(c) / (gamma(a) * gamma(b)), finite_sum(y))


def _hyp2f1_terminating_or_series(a: Array, b: Array, c: Array, x: Array) -> Array:
    eps = _eps(x) * 50
    d = c - a - b
    int_a = (a <= 0) & (lax.abs(a - pnp.round(a)) < eps)
    int_b = (b <= 0) & (lax.abs(b - pnp.round(b)) < eps)
    terminates = int_a | int_b
    d_not_int = lax.abs(d - pnp.round(d)) >= eps
    index = pnp.where((x > 0.9) & ~terminates, pnp.where(d_not_int, 0, 1),
                      pnp.where(terminates, 2, 0))
    return lax.select_n(index, _hyp2f1_series(a, b, c, x),
                        _hyp2f1_digamma_transform(a, b, c, x, index == 1),
                        _hyp2f1_terminating(a, b, c, x, index == 2))


def _hyp2f1_element(a: Array, b: Array, c: Array, x: Array) -> Array:
    eps = _eps(x) * 50
    d = c - a - b
    s = 1 - x
    ca, cb = c - a, c - b
    d_not_int = lax.abs(d - pnp.round(d)) >= eps
    # The first case that holds, in order (JAX's, and so its edge values):
    cases = [
        (x == 0) | (((a == 0) | (b == 0)) & (c != 0)),   # 1
        (c == 0) | ((c < 0) & (c % 1 == 0)),              # inf
        (d <= -1) & ~(d_not_int & (s < 0)),               # Euler's transformation
        (d <= 0) & (x == 1),                              # inf
        (x < 1) & (b == c),                               # (1 - x)^-a
        (x < 1) & (a == c),                               # (1 - x)^-b
        x > 1,                                            # inf
        x == 1,                                           # Gauss's theorem
    ]
    choice = [0, 1, 2, 1, 3, 4, 1, 5]
    index = lax.full((), 6, dt.int32)
    for case, k in reversed(list(zip(cases, choice))):
        index = pnp.where(case, k, index)
    return lax.select_n(
        index, _full(x, 1.0), _full(x, np.inf),
        s ** d * _hyp2f1_terminating_or_series(ca, cb, c, x),
        s ** (-a), s ** (-b),
        gamma(c) * gamma(d) / (gamma(ca) * gamma(cb)),
        _hyp2f1_terminating_or_series(a, b, c, x))


def _hyp2f1_dparam_element(which: int, a: Array, b: Array, c: Array, x: Array) -> Array:
    """The derivative of the series in ``a`` (``which == 0``), ``b`` (1) or ``c`` (2):
    each term weighted by the matching digamma difference."""
    def weight(k: Array) -> Array:
        if which == 0:
            return digamma(a + k) - digamma(a)
        if which == 1:
            return digamma(b + k) - digamma(b)
        return digamma(c) - digamma(c + k)
    return _sum_series(x, a * b / c * x, _full(x, 0.0),
                       lambda k: (a + k) * (b + k) / (c + k) / (k + 1) * x, weight)


_hyp2f1 = custom_jvp(jit(pnp.vectorize(_hyp2f1_element)))
_hyp2f1_dparam = jit(pnp.vectorize(_hyp2f1_dparam_element, excluded=frozenset({0})),
                     static_argnums=0)

_hyp2f1.defjvps(
    lambda a_dot, ans, a, b, c, x: _hyp2f1_dparam(0, a, b, c, x) * a_dot,
    lambda b_dot, ans, a, b, c, x: _hyp2f1_dparam(1, a, b, c, x) * b_dot,
    lambda c_dot, ans, a, b, c, x: _hyp2f1_dparam(2, a, b, c, x) * c_dot,
    # d/dx 2F1(a, b; c; x) = a b / c 2F1(a + 1, b + 1; c + 1; x)
    lambda x_dot, ans, a, b, c, x: a * b / c * _hyp2f1(a + 1, b + 1, c + 1, x) * x_dot)


def hyp2f1(a: Any, b: Any, c: Any, x: Any) -> Array:
    """The Gauss hypergeometric function ``2F1(a, b; c; x) = sum_k (a)_k (b)_k / (c)_k
    x^k / k!`` of real arguments (broadcast together), for ``x <= 1`` (``inf`` above):
    the Taylor series, a terminating polynomial, Euler's transformation or, near
    ``x = 1``, the digamma expansion, as JAX.  Large values lose accuracy in float32 (as
    JAX's).  Differentiable in all four arguments."""
    check_arraylike("hyp2f1", a, b, c, x)
    a_arr, b_arr, c_arr, x_arr = _promote("hyp2f1", a, b, c, x)
    out: Array = _hyp2f1(a_arr, b_arr, c_arr, x_arr)
    return out

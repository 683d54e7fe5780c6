"""``plait.scipy.special``: special functions, as JAX 0.10.2's ``jax.scipy.special``.

Each function promotes its arguments as JAX's ``promote_args_inexact`` does (integers and
bools become the default float, Python scalars stay weakly typed) and computes with
JAX's algorithms and constants, so values, dtypes and derivatives agree with JAX's.
Functions JAX gives a custom derivative (``xlogy``, ``xlog1py``, ``logit``, ``log_ndtr``,
``zeta``, and ``entr``'s ``x log x``) have the same rule here, through
:func:`plait.custom_jvp`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Literal, overload

import ml_dtypes
import numpy as np

from plait.frontend import lax
from plait.frontend import numpy as pnp
from plait.frontend.api.autodiff import jvp
from plait.frontend.api.custom_derivatives import custom_jvp
from plait.frontend.core.array_base import Array
from plait.frontend.numpy._core import canonical_axes, check_arraylike, dtype_of
from plait.frontend.scipy._util import const as _lax_const
from plait.frontend.scipy._util import promote as _promote
from plait.frontend.scipy.special_normal import (
    erf,
    erfc,
    erfinv,
    log_ndtr,
    ndtr,
    ndtri,
)
from plait.ir import dtypes as dt

__all__ = [
    "gammaln", "gammasgn", "gamma", "loggamma", "betaln", "beta", "betainc", "factorial",
    "comb", "digamma", "polygamma", "zeta", "gammainc", "gammaincc", "erf", "erfc", "erfinv",
    "expit", "logit", "logsumexp", "xlogy", "xlog1py", "entr", "rel_entr", "kl_div",
    "multigammaln", "boxcox", "boxcox1p", "ndtr", "ndtri", "log_ndtr", "i0", "i0e", "i1",
    "i1e", "softmax", "log_softmax",
]

# ml_dtypes.finfo (np.finfo extended to bfloat16) is not annotated.
_finfo: Callable[[np.dtype[Any]], Any] = ml_dtypes.finfo


def _no_complex(name: str, x: Array) -> None:
    if dt.is_complex(x.dtype):
        raise ValueError(f"{name} does not support complex-valued inputs.")


# -- gamma and beta ---------------------------------------------------------------------

def gammaln(x: Any) -> Array:
    """``log|Gamma(x)|``."""
    x, = _promote("gammaln", x)
    return lax.lgamma(x)


def gammasgn(x: Any) -> Array:
    """The sign of ``Gamma(x)``: ``-1`` or ``1`` (``-1`` at ``-0.0``), NaN at the poles
    (non-positive integers) and at NaN.

    Raises:
      ValueError: a complex ``x``.
    """
    x, = _promote("gammasgn", x)
    _no_complex("gammasgn", x)
    typ = x.dtype.type
    floor_x = lax.floor(x)
    negative = x < 0
    nan_where = (negative & (x == floor_x)) | pnp.isnan(x)
    minus_where = (negative & (floor_x % 2 != 0)) | ((x == 0) & pnp.signbit(x))
    return pnp.select([nan_where, minus_where], [typ(np.nan), typ(-1.0)], typ(1.0))


def gamma(x: Any) -> Array:
    """The gamma function of a real ``x``: ``gammasgn(x) * exp(gammaln(x))``.

    Raises:
      NotImplementedError: a complex ``x`` (JAX supports it; plait does not yet).
    """
    x, = _promote("gamma", x)
    if dt.is_complex(x.dtype):
        raise NotImplementedError("gamma of complex-valued inputs is not implemented in plait")
    return gammasgn(x) * lax.exp(lax.lgamma(x))


def loggamma(x: Any) -> Array:
    """The principal branch of ``log(Gamma(x))``: real for ``x > 0``, NaN elsewhere.

    Raises:
      NotImplementedError: a complex ``x`` (JAX supports it; plait does not yet).
    """
    x, = _promote("loggamma", x)
    if dt.is_complex(x.dtype):
        raise NotImplementedError(
            "loggamma of complex-valued inputs is not implemented in plait")
    return pnp.where(x > 0, lax.lgamma(x), np.nan)


def _algdiv(a: Array, b: Array) -> Array:
    """``log(Gamma(b) / Gamma(a + b))`` for ``b >= 8`` (TOMS 708's ``algdiv``, as JAX's
    ``betaln``)."""
    c0, c1, c2 = 0.0833333333333333, -0.00277777777760991, 0.00079365066682539
    c3, c4, c5 = -0.00059520293135187, 0.000837308034031215, -0.00165322962780713
    h = a / b
    c = h / (1 + h)
    x = h / (1 + h)
    d = b + (a - 0.5)
    x2 = x * x
    s3 = 1.0 + (x + x2)
    s5 = 1.0 + (x + x2 * s3)
    s7 = 1.0 + (x + x2 * s5)
    s9 = 1.0 + (x + x2 * s7)
    s11 = 1.0 + (x + x2 * s9)
    t = (1.0 / b) ** 2
    w = ((((c5 * s11 * t + c4 * s9) * t + c3 * s7) * t + c2 * s5) * t + c1 * s3) * t + c0
    w = w * (c / b)
    u = d * lax.log1p(a / b)
    v = a * (lax.log(b) - 1.0)
    return pnp.where(u <= v, w - v - u, w - u - v)


def betaln(a: Any, b: Any) -> Array:
    """``log|B(a, b)|``, the log of the absolute value of the beta function."""
    a, b = _promote("betaln", a, b)
    a, b = pnp.minimum(a, b), pnp.maximum(a, b)
    small_b = lax.lgamma(a) + (lax.lgamma(b) - lax.lgamma(a + b))
    # For a large b, log Gamma(b) - log Gamma(a + b) cancels badly; algdiv does not.
    large_b = lax.lgamma(a) + _algdiv(a, b)
    return pnp.where(b < 8, small_b, large_b)


def beta(a: Any, b: Any) -> Array:
    """The beta function ``B(a, b) = Gamma(a) Gamma(b) / Gamma(a + b)``.

    Raises:
      ValueError: complex arguments.
    """
    a, b = _promote("beta", a, b)
    _no_complex("beta", a)
    sign = gammasgn(a) * gammasgn(b) * gammasgn(a + b)
    return sign * lax.exp(betaln(a, b))


def betainc(a: Any, b: Any, x: Any) -> Array:
    """The regularized incomplete beta function ``I_x(a, b)``.

    Raises:
      ValueError: complex arguments.
    """
    a, b, x = _promote("betainc", a, b, x)
    _no_complex("betainc", x)
    return lax.betainc(a, b, x)


def factorial(n: Any, exact: bool = False) -> Array:
    """``n!`` as a float, ``Gamma(n + 1)``; zero for negative ``n``.

    Raises:
      NotImplementedError: ``exact=True`` (as JAX).
    """
    if exact:
        raise NotImplementedError("factorial with exact=True")
    n, = _promote("factorial", n)
    return pnp.where(n < 0, 0, lax.exp(lax.lgamma(n + 1)))


def comb(N: Any, k: Any, *, repetition: bool = False) -> Array:
    """The binomial coefficient ``N choose k`` as a float (zero outside ``0 <= k <= N``);
    with ``repetition``, the number of combinations with repetition."""
    N, k = _promote("comb", N, k)
    if repetition:
        return pnp.where((k == 0) & (N >= 0), 1.0, comb(N + k - 1, k))
    ok = (k <= N) & (N >= 0) & (k >= 0)
    safe_n = pnp.where(ok, N, 0.0)
    safe_k = pnp.where(ok, k, 0.0)
    out = lax.exp(gammaln(safe_n + 1) - gammaln(safe_k + 1) - gammaln(safe_n + 1 - safe_k))
    return pnp.where(ok, out, 0.0)


def digamma(x: Any) -> Array:
    """The digamma function, the derivative of ``gammaln``."""
    x, = _promote("digamma", x)
    return lax.digamma(x)


def polygamma(n: Any, x: Any) -> Array:
    """The ``n``-th derivative of the digamma function.

    Raises:
      ValueError: ``n`` is not of an integer dtype, or ``x`` is complex.
    """
    n_type = dtype_of(n)
    if not dt.is_integer(n_type):
        raise ValueError(
            f"Argument `n` to polygamma must be of integer type. Got dtype {n_type}.")
    n_arr, x_arr = _promote("polygamma", n, x)
    _no_complex("polygamma", x_arr)
    return lax.polygamma(n_arr, x_arr)


# Coefficients of the Euler-Maclaurin tail of the Hurwitz zeta series: (2k)! / B_2k.
_BERNOULLI_COEFS = np.array([
    12, -720, 30240, -1209600, 47900160, -1307674368000 / 691, 74724249600,
    -10670622842880000 / 3617, 5109094217170944000 / 43867,
    -802857662698291200000 / 174611, 14101100039391805440000 / 77683,
    -1693824136731743669452800000 / 236364091, 186134520519971831808000000 / 657931,
    -37893265687455865519472640000000 / 3392780147,
    759790291646040068357842010112000000 / 1723168255201,
    -134196726836183700385281186201600000000 / 7709321041217])


def _zeta_series(s: Array, a: Array) -> Array:
    """The Hurwitz zeta function by its Euler-Maclaurin expansion, written in
    differentiable operations: JAX's derivative of ``zeta`` is this function's."""
    typ = a.dtype.type
    n = typ(8) if a.dtype == dt.float32 else typ(16)
    s_, a_ = pnp.expand_dims(s, -1), pnp.expand_dims(a, -1)
    k = np.expand_dims(np.arange(n, dtype=a.dtype), tuple(range(a.ndim)))
    head = pnp.sum((a_ + k) ** -s_, -1)
    integral = lax.div((a + n) ** (typ(1) - s), s - typ(1))
    t0 = (a + n) ** -s
    m = np.expand_dims(np.arange(2 * n, dtype=a.dtype), tuple(range(s.ndim)))
    t1 = pnp.cumprod((s_ + m) / (a_ + n), -1)[..., ::2]
    t1 = pnp.clip(t1, max=_finfo(a.dtype).max)
    coefs = np.expand_dims(_BERNOULLI_COEFS[:t1.shape[-1]].astype(a.dtype),
                           tuple(range(a.ndim)))
    tail = t0 * ((t1 / coefs).sum(-1) + typ(0.5))
    return pnp.add(head + integral, tail)


def _zeta_jvp(primals: tuple[Array, Array], tangents: tuple[Array, Array]
              ) -> tuple[Array, Array]:
    return jvp(_zeta_series, primals, tangents)


@custom_jvp
def _zeta(x: Array, q: Array) -> Array:
    return lax.zeta(x, q)


_zeta.defjvp(_zeta_jvp)


def zeta(x: Any, q: Any = None) -> Array:
    """The Hurwitz zeta function ``sum_k (k + q) ** -x``; differentiable in both
    arguments through its series expansion (as JAX).

    Raises:
      NotImplementedError: ``q`` omitted (the Riemann zeta function, as JAX).
    """
    if q is None:
        raise NotImplementedError(
            "Riemann zeta function not implemented; pass q != None to compute the Hurwitz "
            "Zeta function.")
    x, q = _promote("zeta", x, q)
    return _zeta(x, q)


def gammainc(a: Any, x: Any) -> Array:
    """The regularized lower incomplete gamma function ``P(a, x)``."""
    a, x = _promote("gammainc", a, x)
    return lax.igamma(a, x)


def gammaincc(a: Any, x: Any) -> Array:
    """The regularized upper incomplete gamma function ``Q(a, x) = 1 - P(a, x)``."""
    a, x = _promote("gammaincc", a, x)
    return lax.igammac(a, x)


# -- logistic, log-sum-exp, entropies ----------------------------------------------------

def expit(x: Any) -> Array:
    """The logistic sigmoid ``1 / (1 + exp(-x))``."""
    x, = _promote("expit", x)
    return lax.logistic(x)


@custom_jvp
def _logit(x: Array) -> Array:
    return lax.log(lax.div(x, lax.sub(_lax_const(x, 1), x)))


_logit.defjvps(lambda g, ans, x: lax.div(g, lax.mul(x, lax.sub(_lax_const(x, 1), x))))


def logit(x: Any) -> Array:
    """The inverse of :func:`expit`, ``log(x / (1 - x))``; its derivative is
    ``1 / (x (1 - x))`` (as JAX)."""
    x, = _promote("logit", x)
    return _logit(x)


@custom_jvp
def _xlogy(x: Array, y: Array) -> Array:
    keep = (x != 0.0) | pnp.isnan(y)
    return pnp.where(keep, x * lax.log(y), pnp.zeros_like(x))


def _xlogy_jvp(primals: tuple[Array, Array], tangents: tuple[Array, Array]
               ) -> tuple[Array, Array]:
    (x, y), (x_dot, y_dot) = primals, tangents
    out = _xlogy(x, y)
    return out, (x_dot * lax.log(y) + y_dot * x / y).astype(out.dtype)


_xlogy.defjvp(_xlogy_jvp)


def xlogy(x: Any, y: Any) -> Array:
    """``x * log(y)``, zero where ``x == 0`` (unless ``y`` is NaN).  The derivative is
    JAX's custom rule ``(log(y), x / y)``."""
    x, y = _promote("xlogy", x, y)
    return _xlogy(x, y)


@custom_jvp
def _xlog1py(x: Array, y: Array) -> Array:
    keep = (x != 0.0) | pnp.isnan(y)
    return pnp.where(keep, x * lax.log1p(y), pnp.zeros_like(x))


def _xlog1py_jvp(primals: tuple[Array, Array], tangents: tuple[Array, Array]
                 ) -> tuple[Array, Array]:
    (x, y), (x_dot, y_dot) = primals, tangents
    out = _xlog1py(x, y)
    return out, (x_dot * lax.log1p(y) + y_dot * x / (1 + y)).astype(out.dtype)


_xlog1py.defjvp(_xlog1py_jvp)


def xlog1py(x: Any, y: Any) -> Array:
    """``x * log1p(y)``, zero where ``x == 0`` (unless ``y`` is NaN).  The derivative is
    JAX's custom rule ``(log1p(y), x / (1 + y))``."""
    x, y = _promote("xlog1py", x, y)
    return _xlog1py(x, y)


@custom_jvp
def _xlogx(x: Array) -> Array:
    return _xlogy(x, x)


def _xlogx_jvp(primals: tuple[Array], tangents: tuple[Array]) -> tuple[Array, Array]:
    (x,), (x_dot,) = primals, tangents
    return _xlogx(x), x_dot * (lax.log(x) + 1)


_xlogx.defjvp(_xlogx_jvp)


def entr(x: Any) -> Array:
    """The elementwise entropy ``-x log x`` (zero at 0, ``-inf`` for ``x < 0``).

    Raises:
      ValueError: a complex ``x``.
    """
    x, = _promote("entr", x)
    _no_complex("entr", x)
    return lax.select(x < _lax_const(x, 0), lax.full_like(x, -np.inf), lax.neg(_xlogx(x)))


def rel_entr(p: Any, q: Any) -> Array:
    """The elementwise relative entropy ``p log(p / q)``: zero where ``p == 0 <= q``,
    ``inf`` where it is undefined.

    Raises:
      ValueError: complex arguments.
    """
    p, q = _promote("rel_entr", p, q)
    _no_complex("rel_entr", p)
    zero = _lax_const(p, 0.0)
    both_positive = (p > zero) & (q > zero)
    p_zero = (p == zero) & (q >= zero)
    safe_p = pnp.where(both_positive, p, 1)
    safe_q = pnp.where(both_positive, q, 1)
    value = _xlogx(safe_p) - _xlogy(safe_p, safe_q)
    return pnp.where(both_positive, value, pnp.where(p_zero, zero, np.inf))


def kl_div(p: Any, q: Any) -> Array:
    """The elementwise Kullback-Leibler divergence ``rel_entr(p, q) - p + q``.

    Raises:
      ValueError: complex arguments.
    """
    p, q = _promote("kl_div", p, q)
    _no_complex("kl_div", p)
    return lax.add(lax.sub(rel_entr(p, q), p), q)


def multigammaln(a: Any, d: Any) -> Array:
    """The log of the multivariate gamma function of dimension ``d`` (a concrete int).

    Raises:
      ConcretizationTypeError: ``d`` is traced.
    """
    d = int(d)
    a, d_arr = _promote("multigammaln", a, d)
    constant = _lax_const(a, 0.25) * d_arr * (d_arr - _lax_const(a, 1)) * lax.log(
        _lax_const(a, np.pi))
    b = pnp.arange(d, dtype=d_arr.dtype) / _lax_const(a, 2)
    terms = gammaln(pnp.expand_dims(a, -1) - pnp.expand_dims(b, tuple(range(a.ndim))))
    return pnp.sum(terms, axis=-1) + constant


def boxcox(x: Any, lmbda: Any) -> Array:
    """The Box-Cox transformation ``(x ** lmbda - 1) / lmbda`` (``log(x)`` at ``lmbda == 0``)."""
    x, lmbda = _promote("boxcox", x, lmbda)
    return _boxcox_of_log(lax.log(x), lmbda)


def boxcox1p(x: Any, lmbda: Any) -> Array:
    """The Box-Cox transformation of ``1 + x``."""
    x, lmbda = _promote("boxcox1p", x, lmbda)
    return _boxcox_of_log(lax.log1p(x), lmbda)


def _boxcox_of_log(log_x: Array, lmbda: Array) -> Array:
    zero = lmbda == 0
    safe = pnp.where(zero, pnp.ones_like(lmbda), lmbda)
    return pnp.where(zero, log_x, pnp.expm1(safe * log_x) / safe)


@overload
def logsumexp(a: Any, axis: int | Sequence[int] | None = None, b: Any = None,
              keepdims: bool = False, return_sign: Literal[False] = False,
              where: Any = None) -> Array: ...


@overload
def logsumexp(a: Any, axis: int | Sequence[int] | None = None, b: Any = None,
              keepdims: bool = False, *, return_sign: Literal[True],
              where: Any = None) -> tuple[Array, Array]: ...


@overload
def logsumexp(a: Any, axis: int | Sequence[int] | None = None, b: Any = None,
              keepdims: bool = False, return_sign: bool = False,
              where: Any = None) -> Array | tuple[Array, Array]: ...


def logsumexp(a: Any, axis: int | Sequence[int] | None = None, b: Any = None,
              keepdims: bool = False, return_sign: bool = False,
              where: Any = None) -> Array | tuple[Array, Array]:
    """``log(sum(b * exp(a)))`` over ``axis``, computed stably; with ``return_sign`` also
    the sign of the sum (the log is then of its absolute value), otherwise a negative
    sum gives NaN.  ``where`` masks elements out of the sum."""
    if where is not None:
        a = pnp.where(where, a, 0)
    if b is not None:
        a_arr, b_arr = _promote("logsumexp", a, b)
        a_arr = pnp.where(b_arr != 0, a_arr, -np.inf)
    else:
        a_arr, = _promote("logsumexp", a)
        b_arr = a_arr
    dims = canonical_axes(axis, a_arr.ndim)
    top = pnp.max(pnp.real(a_arr), axis=dims, keepdims=keepdims, where=where, initial=-np.inf)
    # The shift only steadies the computation: no derivative flows through it.
    amax: Array = lax.stop_gradient(lax.select(pnp.isfinite(top), top, lax.full_like(top, 0)))
    amax_dims = amax if keepdims else lax.expand_dims(amax, dims)
    exp_a = lax.exp(a_arr - amax_dims.astype(a_arr.dtype))
    if b is not None:
        exp_a = exp_a * b_arr
    sumexp = exp_a.sum(axis=dims, keepdims=keepdims, where=where)
    sign = lax.sign(sumexp)
    if return_sign or not dt.is_complex(a_arr.dtype):
        sumexp = pnp.abs(sumexp)
    out = lax.log(sumexp) + amax.astype(sumexp.dtype)
    if return_sign:
        return out, sign
    if b is not None and not dt.is_complex(out.dtype):
        out = pnp.where(sign < 0, np.array(np.nan, out.dtype), out)
    return out


def softmax(x: Any, /, *, axis: int | tuple[int, ...] | None = None) -> Array:
    """``exp(x) / sum(exp(x))`` over ``axis`` (all axes by default, as SciPy); computed
    as ``jax.nn.softmax`` with its default settings (the maximum is subtracted first,
    without a derivative)."""
    check_arraylike("softmax", x)
    x_max = pnp.max(x, axis, initial=-np.inf, keepdims=True)
    unnormalized = pnp.exp(pnp.subtract(x, lax.stop_gradient(x_max)))
    return unnormalized / pnp.sum(unnormalized, axis, keepdims=True)


def log_softmax(x: Any, /, *, axis: int | tuple[int, ...] | None = None) -> Array:
    """``x - logsumexp(x)`` over ``axis`` (all axes by default), as ``jax.nn.log_softmax``."""
    check_arraylike("log_softmax", x)
    x_max = pnp.max(x, axis, initial=-np.inf, keepdims=True)
    shifted = pnp.subtract(x, lax.stop_gradient(x_max))
    return shifted - pnp.log(pnp.sum(pnp.exp(shifted), axis, keepdims=True))


# -- modified Bessel functions ---------------------------------------------------------

def i0e(x: Any) -> Array:
    """The exponentially scaled modified Bessel function of order 0, ``exp(-|x|) I0(x)``."""
    x, = _promote("i0e", x)
    return lax.bessel_i0e(x)


def i0(x: Any) -> Array:
    """The modified Bessel function of order 0."""
    x, = _promote("i0", x)
    return lax.exp(lax.abs(x)) * lax.bessel_i0e(x)


def i1e(x: Any) -> Array:
    """The exponentially scaled modified Bessel function of order 1, ``exp(-|x|) I1(x)``."""
    x, = _promote("i1e", x)
    return lax.bessel_i1e(x)


def i1(x: Any) -> Array:
    """The modified Bessel function of order 1."""
    x, = _promote("i1", x)
    return lax.exp(lax.abs(x)) * lax.bessel_i1e(x)


"""Special functions of the normal distribution and the error function: ``erf``,
``erfc``, ``erfinv``, ``ndtr``, ``ndtri`` and ``log_ndtr`` (JAX's algorithms)."""


from __future__ import annotations

from typing import Any

import numpy as np

from plait.frontend import lax
from plait.frontend import numpy as pnp
from plait.frontend.api.custom_derivatives import custom_jvp
from plait.frontend.core.array_base import Array
from plait.frontend.numpy._core import check_arraylike
from plait.frontend.scipy._util import const as _lax_const
from plait.frontend.scipy._util import horner as _horner
from plait.frontend.scipy._util import promote as _promote
from plait.ir import dtypes as dt

__all__ = ["erf", "erfc", "erfinv", "ndtr", "ndtri", "log_ndtr"]


# -- error functions and the normal distribution ----------------------------------------

def erf(x: Any) -> Array:
    """The error function."""
    x, = _promote("erf", x)
    return lax.erf(x)


def erfc(x: Any) -> Array:
    """The complementary error function ``1 - erf(x)``."""
    x, = _promote("erfc", x)
    return lax.erfc(x)


def erfinv(x: Any) -> Array:
    """The inverse of ``erf`` on ``[-1, 1]``."""
    x, = _promote("erfinv", x)
    return lax.erf_inv(x)


def _check_float(x: Array, message: str) -> None:
    if x.dtype not in (dt.float32, dt.float64):
        raise TypeError(message.format(x.dtype))


def ndtr(x: Any) -> Array:
    """The standard normal CDF, ``(1 + erf(x / sqrt(2))) / 2``.

    Raises:
      TypeError: ``x`` is not float32 or float64 (integers are not promoted, as JAX).
    """
    x = pnp.asarray(x)
    _check_float(x, "x.dtype={} is not supported, see docstring for supported types.")
    return _ndtr(x)


def _ndtr(x: Array) -> Array:
    typ = x.dtype.type
    half_sqrt_2 = typ(0.5) * np.sqrt(2., dtype=x.dtype)
    w = x * half_sqrt_2
    z = lax.abs(w)
    # erf near zero, erfc in the tails: each where it keeps its relative accuracy.
    y = lax.select(z < half_sqrt_2, typ(1.0) + lax.erf(w),
                   lax.select(w > typ(0.0), typ(2.0) - lax.erfc(z), lax.erfc(z)))
    return pnp.multiply(y, typ(0.5))


# Cephes' rational approximations of ndtri: the central region, then the tails for
# z = sqrt(-2 log p) below and above 8.
_NDTRI_P0 = [-5.99633501014107895267E1, 9.80010754185999661536E1, -5.66762857469070293439E1,
             1.39312609387279679503E1, -1.23916583867381258016E0]
_NDTRI_Q0 = [1.0, 1.95448858338141759834E0, 4.67627912898881538453E0, 8.63602421390890590575E1,
             -2.25462687854119370527E2, 2.00260212380060660359E2, -8.20372256168333339912E1,
             1.59056225126211695515E1, -1.18331621121330003142E0]
_NDTRI_P1 = [4.05544892305962419923E0, 3.15251094599893866154E1, 5.71628192246421288162E1,
             4.40805073893200834700E1, 1.46849561928858024014E1, 2.18663306850790267539E0,
             -1.40256079171354495875E-1, -3.50424626827848203418E-2,
             -8.57456785154685413611E-4]
_NDTRI_Q1 = [1.0, 1.57799883256466749731E1, 4.53907635128879210584E1, 4.13172038254672030440E1,
             1.50425385692907503408E1, 2.50464946208309415979E0, -1.42182922854787788574E-1,
             -3.80806407691578277194E-2, -9.33259480895457427372E-4]
_NDTRI_P2 = [3.23774891776946035970E0, 6.91522889068984211695E0, 3.93881025292474443415E0,
             1.33303460815807542389E0, 2.01485389549179081538E-1, 1.23716634817820021358E-2,
             3.01581553508235416007E-4, 2.65806974686737550832E-6, 6.23974539184983293730E-9]
_NDTRI_Q2 = [1.0, 6.02427039364742014255E0, 3.67983563856160859403E0, 1.37702099489081330271E0,
             2.16236993594496635890E-1, 1.34204006088543189037E-2, 3.28014464682127739104E-4,
             2.89247864745380683936E-6, 6.79019408009981274425E-9]


def ndtri(p: Any) -> Array:
    """The inverse of :func:`ndtr`: ``x`` with ``ndtr(x) == p`` (``-inf`` at 0, ``inf``
    at 1, NaN outside ``[0, 1]``).

    Raises:
      TypeError: ``p`` is not float32 or float64.
    """
    check_arraylike("ndtri", p)
    p = pnp.asarray(p)
    _check_float(p, "x.dtype={} is not supported, see docstring for supported types.")
    return _ndtri(p)


def _ndtri(p: Array) -> Array:
    typ = p.dtype.type
    # p near 1 is handled as 1 - p, where the approximation is accurate.
    mcp = pnp.where(p > typ(-np.expm1(-2.)), typ(1.) - p, p)
    mcp = pnp.where(mcp == typ(0.), pnp.full(p.shape, typ(0.5)), mcp)
    w = mcp - typ(0.5)
    ww = lax.square(w)
    x_big = w + w * ww * (_horner(_NDTRI_P0, ww) / _horner(_NDTRI_Q0, ww))
    x_big = x_big * -typ(np.sqrt(2. * np.pi))
    z = lax.sqrt(typ(-2.) * lax.log(mcp))
    first = z - lax.log(z) / z
    inv_z = 1 / z
    x_tiny = first - _horner(_NDTRI_P2, inv_z) / _horner(_NDTRI_Q2, inv_z) / z
    x_small = first - _horner(_NDTRI_P1, inv_z) / _horner(_NDTRI_Q1, inv_z) / z
    x = pnp.where(mcp > typ(np.exp(-2.)), x_big, pnp.where(z >= typ(8.0), x_tiny, x_small))
    x = pnp.where(p > typ(1. - np.exp(-2.)), x, -x)
    inf = pnp.full(p.shape, typ(np.inf))
    return pnp.where(p == typ(0.0), -inf, pnp.where(p == typ(1.0), inf, x))


_LOG_NDTR_SEGMENTS = {dt.float32: (-10.0, 5.0), dt.float64: (-20.0, 8.0)}
_LOG_SQRT_2PI = float(np.log(np.sqrt(2 * np.pi)))


def log_ndtr(x: Any, series_order: int = 3) -> Array:
    """``log(ndtr(x))``, accurate far into both tails: an asymptotic series of
    ``series_order`` terms below ``-10`` (``-20`` in float64), ``-ndtr(-x)`` above ``5``
    (``8``).  Its derivative is ``exp(norm.logpdf(x) - log_ndtr(x))`` (as JAX).

    Raises:
      TypeError: ``series_order`` is not an int, or ``x`` is not float32 or float64.
      ValueError: ``series_order`` is negative or above 30.
    """
    if not isinstance(series_order, int):
        raise TypeError("series_order must be a Python integer.")
    if series_order < 0:
        raise ValueError("series_order must be non-negative.")
    if series_order > 30:
        raise ValueError("series_order must be <= 30.")
    x = pnp.asarray(x)
    _check_float(x, "x.dtype={} is not supported.")
    return _log_ndtr(x, series_order)


def _log_ndtr_impl(x: Array, series_order: int) -> Array:
    lower, upper = (np.asarray(v, x.dtype) for v in _LOG_NDTR_SEGMENTS[x.dtype])
    above = x > upper
    res = _ndtr(pnp.where(above, -x, lax.max(x, lower)))
    # log(1 - u) ~ -u for the small u = ndtr(-x).
    return pnp.where(above, -res,
                     pnp.where(x > lower, lax.log(res),
                               _log_ndtr_lower(lax.min(x, lower), series_order)))


_log_ndtr = custom_jvp(_log_ndtr_impl, nondiff_argnums=(1,))


def _log_ndtr_jvp(series_order: int, primals: tuple[Array], tangents: tuple[Array]
                  ) -> tuple[Array, Array]:
    (x,), (t,) = primals, tangents
    ans = _log_ndtr(x, series_order)
    return ans, t * lax.exp(_norm_logpdf(x) - ans)


_log_ndtr.defjvp(_log_ndtr_jvp)


def _norm_logpdf(x: Array) -> Array:
    return _lax_const(x, -0.5) * lax.square(x) - _lax_const(x, _LOG_SQRT_2PI)


def _log_ndtr_lower(x: Array, series_order: int) -> Array:
    """``log(ndtr(x))`` for ``x`` far below zero, by the asymptotic series."""
    typ = x.dtype.type
    x_2 = lax.square(x)
    log_scale = x_2 * -typ(0.5) - lax.log(-x) - typ(0.5 * np.log(2. * np.pi))
    return pnp.add(log_scale, lax.log(_log_ndtr_series(x, series_order)))


def _log_ndtr_series(x: Array, series_order: int) -> Any:
    typ = x.dtype.type
    if series_order <= 0:
        return np.array(1, x.dtype)
    x_2 = lax.square(x)
    even, odd = pnp.zeros_like(x), pnp.zeros_like(x)
    x_2n = x_2
    for n in range(1, series_order + 1):
        # (2n - 1)!! / x^(2n), with alternating signs.
        y = np.array(np.prod(np.arange(2 * n - 1, 1, -2)), x.dtype) / x_2n
        if n % 2:
            odd = odd + y
        else:
            even = even + y
        x_2n = x_2n * x_2
    return typ(1.0) + even - odd

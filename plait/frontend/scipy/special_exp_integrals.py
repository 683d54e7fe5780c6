"""Exponential integrals ``expi``, ``exp1`` and ``expn``, as JAX 0.10.2 computes them:
Cephes' rational approximations of ``Ei`` on ``(0, 2], (2, 4], ..., (64, inf)``, and for
``E_n`` its power series (``x <= 1``), its continued fraction (``x > 1``) or its
asymptotic expansion in ``n`` (``n >= 5000``), each evaluated element by element (a
``vectorize``d ``switch``, as JAX), with JAX's custom derivatives."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import ml_dtypes
import numpy as np

from plait.frontend import lax
from plait.frontend import numpy as pnp
from plait.frontend.api.control_flow import while_loop
from plait.frontend.api.custom_derivatives import custom_jvp
from plait.frontend.api.eager_programs import compiled_when_eager
from plait.frontend.api.jit import jit
from plait.frontend.core.array_base import Array
from plait.frontend.numpy._core import check_arraylike
from plait.frontend.scipy._util import const as _c
from plait.frontend.scipy._util import horner as _horner
from plait.frontend.scipy._util import promote as _promote
from plait.ir import dtypes as dt

__all__ = ["expi", "exp1", "expn"]

_EULER = float(np.euler_gamma)

# Cephes ei.c: Ei(x) on (0, 2] is gamma + log x + x A(x) / B(x) ...
_EI_SMALL = (
    (-5.350447357812542947283e0, 2.185049168816613393830e2, -4.176572384826693777058e3,
     5.541176756393557601232e4, -3.313381331178144034309e5, 1.592627163384945414220e6),
    (1.0, -5.250547959112862969197e1, 1.259616186786790571525e3, -1.756549581973534652631e4,
     1.493062117002725991967e5, -7.294949239640527645655e5, 1.592627163384945429726e6))

# ... and above 2, exp(x) / x (1 + w A(w) / B(w)) with w = 1 / x, one (A, B) per interval
# (2, 4], (4, 8], (8, 16], (16, 32], (32, 64], (64, inf).
_EI_LARGE = (
    ((1.981808503259689673238e-2, -1.271645625984917501326e0, -2.088160335681228318920e0,
      2.755544509187936721172e0, -4.409507048701600257171e-1, 4.665623805935891391017e-2,
      -1.545042679673485262580e-3, 7.059980605299617478514e-5),
     (1.0, 1.476498670914921440652e0, 5.629177174822436244827e-1, 1.699017897879307263248e-1,
      2.291647179034212017463e-2, 4.450150439728752875043e-3, 1.727439612206521482874e-4,
      3.953167195549672482304e-5)),
    ((-1.373215375871208729803e0, -7.084559133740838761406e-1, 1.580806855547941010501e0,
      -2.601500427425622944234e-1, 2.994674694113713763365e-2, -1.038086040188744005513e-3,
      4.371064420753005429514e-5, 2.141783679522602903795e-6),
     (1.0, 8.585231423622028380768e-1, 4.483285822873995129957e-1, 7.687932158124475434091e-2,
      2.449868241021887685904e-2, 8.832165941927796567926e-4, 4.590952299511353531215e-4,
      -4.729848351866523044863e-6, 2.665195537390710170105e-6)),
    ((-2.106934601691916512584e0, 1.732733869664688041885e0, -2.423619178935841904839e-1,
      2.322724180937565842585e-2, 2.372880440493179832059e-4, -8.343219561192552752335e-5,
      1.363408795605250394881e-5, -3.655412321999253963714e-7, 1.464941733975961318456e-8,
      6.176407863710360207074e-10),
     (1.0, -2.298062239901678075778e-1, 1.105077041474037862347e-1,
      -1.566542966630792353556e-2, 2.761106850817352773874e-3, -2.089148012284048449115e-4,
      1.708528938807675304186e-5, -4.459311796356686423199e-7, 1.394634930353847498145e-8,
      6.150865933977338354138e-10)),
    ((-2.458119367674020323359e-1, -1.483382253322077687183e-1, 7.248291795735551591813e-2,
      -1.348315687380940523823e-2, 1.342775069788636972294e-3, -7.942465637159712264564e-5,
      2.644179518984235952241e-6, -4.239473659313765177195e-8),
     (1.0, -1.044225908443871106315e-1, -2.676453128101402655055e-1,
      9.695000254621984627876e-2, -1.601745692712991078208e-2, 1.496414899205908021882e-3,
      -8.462452563778485013756e-5, 2.728938403476726394024e-6, -4.239462431819542051337e-8)),
    ((1.212561118105456670844e-1, -5.823133179043894485122e-1, 2.348887314557016779211e-1,
      -3.040034318113248237280e-2, 1.510082146865190661777e-3, -2.523137095499571377122e-5),
     (1.0, -1.002252150365854016662e0, 2.928709694872224144953e-1,
      -3.337004338674007801307e-2, 1.560544881127388842819e-3, -2.523137093603234562648e-5)),
    ((-7.657847078286127362028e-1, 6.886192415566705051750e-1, -2.132598113545206124553e-1,
      3.346107552384193813594e-2, -3.076541477344756050249e-3, 1.747119316454907477380e-4,
      -6.103711682274170530369e-6, 1.218032765428652199087e-7, -1.086076102793290233007e-9),
     (1.0, -1.888802868662308731041e0, 1.066691687211408896850e0, -2.751915982306380647738e-1,
      3.930852688233823569726e-2, -3.414684558602365085394e-3, 1.866844370703555398195e-4,
      -6.345146083130515357861e-6, 1.239754287483206878024e-7, -1.086076102793126632978e-9)),
)


def _ei_small(x: Array) -> Array:
    num, den = _EI_SMALL
    return x * (_horner(num, x) / _horner(den, x)) + _EULER + lax.log(x)


def _ei_large(num: tuple[float, ...], den: tuple[float, ...]) -> Any:
    def ei(x: Array) -> Array:
        w = _c(x, 1.0) / x
        f = w * (_horner(num, w) / _horner(den, w)) + _c(x, 1.0)
        return lax.exp(x) * w * f
    return ei


def _expi_nonnegative(x: Array) -> Array:
    # (0, 2], then (2^i, 2^(i+1)] for i = 1..5; everything else (x > 64, and also 0 and
    # NaN, as JAX) takes the last approximation.
    conds = [(_c(x, 0) < x) & (x <= _c(x, 2))] + [
        (_c(x, 2 ** i) < x) & (x <= _c(x, 2 ** (i + 1))) for i in range(1, 6)]
    funcs = [_ei_small] + [_ei_large(num, den) for num, den in _EI_LARGE]
    return pnp.piecewise(x, conds, funcs)


def _expi_negative(x: Array) -> Array:
    return lax.neg(_expn(1, lax.neg(x)))


def _expi_value(x: Array) -> Array:
    return pnp.piecewise(x, [x < 0], [_expi_negative, _expi_nonnegative])


_expi = custom_jvp(jit(_expi_value))
_expi.defjvp(lambda primals, tangents: (
    _expi(primals[0]), lax.exp(primals[0]) / primals[0] * tangents[0]))


def expi(x: Any) -> Array:
    """The exponential integral ``Ei(x)``, the principal value of
    ``integral_{-inf}^x exp(t) / t dt``; ``-E1(-x)`` for negative ``x``.  Its derivative
    is ``exp(x) / x``.

    Raises:
      ValueError: a complex ``x``.
    """
    x_arr, = _promote("expi", x)
    if dt.is_complex(x_arr.dtype):
        raise ValueError("expi does not support complex-valued inputs.")
    return _expi(x_arr)


# -- E_n ---------------------------------------------------------------------------------

# ml_dtypes.finfo (np.finfo extended to bfloat16) is not annotated.
_finfo: Callable[[np.dtype[Any]], Any] = ml_dtypes.finfo


def _eps(x: Array) -> float:
    return float(_finfo(x.dtype).eps)


def _expn_series(x: Array, n: Array) -> Array:
    """``E_n(x)`` for ``0 < x <= 1``: the power series of Cephes' ``expn``."""
    one, zero = _c(x, 1.0), _c(x, 0.0)
    # psi(n) = -gamma + sum_{i < n} 1 / i, written for log x too: -gamma - log x + ...
    def harmonic(state: tuple[Array, Array]) -> tuple[Array, Array]:
        i, psi = state
        return i + _c(n, 1), psi + one / i
    psi: Array
    # (Every branch runs on every element under vmap, the unselected ones discarded:
    # the loops here stop at once outside their own branch, which JAX's do not, so an
    # order n >= 5000 or an x far from this branch's range costs nothing.)
    _, psi = while_loop(lambda s: (s[0] < n) & (n < _c(n, 5000)), harmonic,
                        (lax.full_like(n, 1.0), -_EULER - lax.log(x)))
    n_safe = pnp.where(n == _c(n, 1), _c(x, 2.0), n)
    z = lax.neg(x)
    eps = _eps(x)

    def body(s: tuple[Array, ...]) -> tuple[Array, ...]:
        xk, yk, pk, ans, _ = s
        xk = xk + one
        yk = yk * (z / xk)
        pk = pk + one
        ans = ans + pnp.where(pk != zero, yk / pk, zero)
        t = pnp.where(ans != zero, lax.abs(yk / ans), one)
        return xk, yk, pk, ans, t

    init = (lax.full_like(x, 0.0), lax.full_like(x, 1.0), one - n,
            pnp.where(n == _c(n, 1), zero, one / (one - n_safe)), lax.full_like(x, np.inf))
    s = while_loop(lambda s: (x > zero) & (x <= one) & (s[4] > eps), body, init)
    ans: Array = s[3]
    return z ** (n - _c(n, 1)) * psi / lax.exp(lax.lgamma(n)) - ans


_BIG = 1.44115188075855872e17


def _expn_fraction(x: Array, n: Array) -> Array:
    """``E_n(x)`` for ``x > 1``: Cephes' continued fraction, rescaled when it grows."""
    one, zero = _c(x, 1.0), _c(x, 0.0)
    big = _c(x, _BIG)
    eps = _eps(x)

    def body(s: tuple[Array, ...]) -> tuple[Array, ...]:
        k, pkm2, qkm2, pkm1, qkm1, ans, _, r = s
        k = k + _c(k, 1)
        odd = k % _c(k, 2) == _c(k, 1)
        yk = pnp.where(odd, one, x)
        xk = pnp.where(odd, n + (k - _c(k, 1)) / _c(k, 2), k / _c(k, 2))
        pk = pkm1 * yk + pkm2 * xk
        qk = qkm1 * yk + qkm2 * xk
        nonzero = qk != zero
        r = pnp.where(nonzero, pk / qk, r)
        t = pnp.where(nonzero, lax.abs((ans - r) / r), one)
        ans = pnp.where(nonzero, r, ans)
        pkm2, pkm1, qkm2, qkm1 = pkm1, pk, qkm1, qk
        rescale = lax.abs(pk) > big
        pkm2, pkm1, qkm2, qkm1 = (pnp.where(rescale, v / big, v)
                                  for v in (pkm2, pkm1, qkm2, qkm1))
        return k, pkm2, qkm2, pkm1, qkm1, ans, t, r

    init = (lax.full_like(n, 1.0), lax.full_like(x, 1.0), x, lax.full_like(x, 1.0), x + n,
            one / (x + n), lax.full_like(x, np.inf), lax.full_like(x, 0.0))
    # (Only where the fraction is used, x > 1: near 0 it would need ~1/x steps.)
    s = while_loop(lambda s: (x > one) & (s[6] > eps), body, init)
    ans: Array = s[5]
    return ans * lax.exp(lax.neg(x))


def _expn_large_n(x: Array, n: Array) -> Array:
    """``E_n(x)`` for ``n >= 5000``: three terms of its expansion in ``1 / (x + n)``."""
    xk = x + n
    yk = _c(x, 1.0) / (xk * xk)
    ans = yk * n * (_c(x, 6) * x * x - _c(x, 8) * n * x + n * n)
    ans = yk * (ans + n * (n - _c(x, 2) * x))
    ans = yk * (ans + n)
    return (ans + _c(x, 1.0)) * lax.exp(lax.neg(x)) / xk


def _expn_element(n: Any, x: Any) -> Array:
    n_arr, x_arr = _promote("expn", n, x)
    if dt.is_complex(x_arr.dtype):
        raise ValueError("expn does not support complex-valued inputs.")
    zero, one = _c(x_arr, 0), _c(x_arr, 1)
    conds = [
        (n_arr < _c(n_arr, 0)) | (x_arr < zero),
        (x_arr == zero) & (n_arr < _c(n_arr, 2)),
        (x_arr == zero) & (n_arr >= _c(n_arr, 2)),
        (n_arr == _c(n_arr, 0)) & (x_arr >= zero),
        n_arr >= _c(n_arr, 5000),
        x_arr > one,
    ]
    n_safe = pnp.where(n_arr == _c(n_arr, 1), n_arr + n_arr, n_arr)  # no 1 / (1 - 1)
    funcs: list[Any] = [np.nan, np.inf, one / n_safe, lax.exp(lax.neg(x_arr)) / x_arr,
                        _expn_large_n, _expn_fraction, _expn_series]
    return pnp.piecewise(x_arr, conds, funcs, n=n_arr)


# (Compiled as one program, as JAX: its values then do not depend on constant folding.)
_expn_vectorized = pnp.vectorize(jit(_expn_element))


def _expn_value(n: Any, x: Any) -> Array:
    out: Array = _expn_vectorized(n, x)
    return out


_expn = custom_jvp(_expn_value, nondiff_argnums=(0,))


def _expn_jvp(n: Any, primals: tuple[Any], tangents: tuple[Any]) -> tuple[Array, Array]:
    (x,), (x_dot,) = primals, tangents
    # d/dx E_n(x) = -E_{n-1}(x)
    return _expn(n, x), lax.mul(lax.neg(x_dot), _expn(lax.sub(n, _c(n, 1)), x))


_expn.defjvp(_expn_jvp)


@compiled_when_eager(())
def expn(n: Any, x: Any) -> Array:
    """The generalized exponential integral ``E_n(x) = integral_1^inf exp(-x t) / t**n dt``
    (``n`` and ``x`` broadcast together; NaN for negative ``n`` or ``x``).  Differentiable
    in ``x``: ``d/dx E_n(x) = -E_{n-1}(x)``; ``n`` takes no derivative (as JAX).

    Raises:
      ValueError: complex arguments.
    """
    check_arraylike("expn", n, x)
    return _expn(n, x)


@compiled_when_eager(())
def exp1(x: Any) -> Array:
    """The exponential integral ``E_1(x) = integral_x^inf exp(-t) / t dt``,
    ``expn(1, x)``.

    Raises:
      ValueError: a complex ``x``.
    """
    x_arr, = _promote("exp1", x)
    if dt.is_complex(x_arr.dtype):
        raise ValueError("exp1 does not support complex-valued inputs.")
    return _expn(1, x_arr)

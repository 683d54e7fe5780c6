"""The Faddeeva function and its relatives: ``wofz``, ``erfcx`` and ``dawsn``, as JAX
0.10.2 computes them (Weideman's rational approximation of ``w(z)``, the asymptotic
series of ``erfcx`` where ``exp(x**2)`` overflows, and Cody, Paciorek and Thacher's
rational approximations of Dawson's integral), each with JAX's custom derivative."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import ml_dtypes
import numpy as np

from plait.frontend import lax
from plait.frontend import numpy as pnp
from plait.frontend.api.custom_derivatives import custom_jvp
from plait.frontend.core.array_base import Array
from plait.frontend.numpy._core import as_array, check_arraylike, convert, promote_to_inexact
from plait.frontend.scipy._util import const as _c
from plait.frontend.scipy._util import horner as _horner
from plait.frontend.scipy._util import promote as _promote
from plait.ir import dtypes as dt

__all__ = ["wofz", "erfcx", "dawsn"]

# ml_dtypes.finfo (np.finfo extended to bfloat16) is not annotated.
_finfo: Callable[[np.dtype[Any]], Any] = ml_dtypes.finfo


def promote_complex(name: str, *args: Any) -> list[Array]:
    """The arguments as Arrays of their common complex dtype (JAX's
    ``promote_args_complex``): float64 and complex128 give complex128, anything else
    complex64; weak types are kept.

    Raises:
      TypeError: an argument is not an array or scalar.
    """
    check_arraylike(name, *args)
    inexact = [as_array(a) for a in promote_to_inexact(name, *args)]
    wide = inexact[0].dtype in (dt.float64, dt.complex128)
    target = np.dtype(np.complex128 if wide else np.complex64)
    return [as_array(convert(a, target, bool(a.aval.weak_type))) for a in inexact]


# -- wofz --------------------------------------------------------------------------------

# Weideman (1994), N = 32: for Im(z) >= 0, with Z = (L + iz) / (L - iz),
#   w(z) = 2 P(Z) / (L - iz)**2 + 1 / (sqrt(pi) (L - iz)),
# P the polynomial below (highest power first).
_WOFZ_L = 4.7568284600108841
_WOFZ_COEFFS = (
    -1.3034426067909105e-12, 3.7411838373738471e-12, 8.030427700497756e-12,
    -2.1543593557490879e-11, -5.5442449963237932e-11, 1.165824698850374e-10,
    4.1537441121999766e-10, -5.2310202114920615e-10, -3.2080151339721323e-09,
    8.1248864216535907e-10, 2.3797556530014025e-08, 2.2930438438915445e-08,
    -1.4813078929137642e-07, -4.1840763750512053e-07, 4.2558331397138446e-07,
    4.4015317312832251e-06, 6.8210319443575151e-06, -2.1409619201999998e-05,
    -0.00013075449254579421, -0.00024532980270038237, 0.00039259136070109705,
    0.0045195411053493093, 0.019006155784845501, 0.057304403529837282,
    0.14060716226893755, 0.29544451071508743, 0.54601397206393376, 0.9019254893648001,
    1.3455441692345449, 1.8256696296324815, 2.2635372999002676, 2.5722534081245696,
)


def _complex_const(re: Array, value: float) -> Array:
    """``value + 0j`` as a complex scalar matching the real array ``re``."""
    return lax.complex(_c(re, value), _c(re, 0.0))


def _wofz_upper_half(z: Array) -> Array:
    re = lax.real(z)
    iz = lax.complex(lax.neg(lax.imag(z)), re)
    big_l = _complex_const(re, _WOFZ_L)
    denom = big_l - iz
    ratio = (big_l + iz) / denom
    p = _horner(_WOFZ_COEFFS, ratio)
    return 2 * p / (denom * denom) + _complex_const(re, 1.0 / np.sqrt(np.pi)) / denom


@custom_jvp
def _wofz(z: Array) -> Array:
    upper = lax.ge(lax.imag(z), _c(lax.real(z), 0.0))
    w_up = _wofz_upper_half(lax.select(upper, z, lax.neg(z)))
    # Below the real axis: w(z) = 2 exp(-z^2) - w(-z).
    return lax.select(upper, w_up, 2 * lax.exp(lax.neg(z * z)) - w_up)


def _wofz_tangent(g: Array, ans: Array, z: Array) -> Array:
    re = lax.real(z)
    two_i_over_sqrt_pi = lax.complex(_c(re, 0.0), _c(re, 2.0 / np.sqrt(np.pi)))
    return g * (lax.neg(2 * z * ans) + two_i_over_sqrt_pi)


_wofz.defjvps(_wofz_tangent)


def wofz(z: Any) -> Array:
    """The Faddeeva function ``w(z) = exp(-z**2) erfc(-i z)``, complex-valued (real
    arguments are promoted to complex, as JAX).  Its derivative is
    ``-2 z w(z) + 2i / sqrt(pi)``."""
    z_arr, = promote_complex("wofz", z)
    return _wofz(z_arr)


# -- erfcx -------------------------------------------------------------------------------

# erfcx(x) ~ P(1 / x**2) / (sqrt(pi) x) for large x, P(t) = sum_k (-1)^k (2k-1)!! t^k / 2^k
# (coefficients highest power first, k = 8 .. 0).
_ERFCX_ASYMPTOTIC = (7918.06640625, -1055.7421875, 162.421875, -29.53125, 6.5625,
                     -1.875, .75, -.5, 1.)


def _erfcx_impl(x: Array, nterms: int) -> Array:
    # exp(x^2) overflows above sqrt(log(max)): the asymptotic series takes over there.
    threshold = float(np.sqrt(np.log(float(_finfo(x.dtype).max))))
    large = x > _c(x, threshold)
    safe_x = lax.select(large, lax.full_like(x, 1.0), x)
    direct = lax.exp(lax.square(safe_x)) * lax.erfc(safe_x)
    t = _c(x, 1.0) / lax.square(x)
    asymptotic = _horner(_ERFCX_ASYMPTOTIC[-nterms:], t) / (x * _c(x, np.sqrt(np.pi)))
    return lax.select(large, asymptotic, direct)


@custom_jvp
def _erfcx(x: Array) -> Array:
    if x.dtype == dt.float64:
        return _erfcx_impl(x, 9)  # the first omitted term is ~1e-21 at the threshold
    if x.dtype == dt.float32:
        return _erfcx_impl(x, 5)  # ~5e-9 at the threshold
    return _erfcx_impl(x.astype(dt.float32), 5).astype(x.dtype)


_erfcx.defjvps(lambda g, ans, x: g * (2 * x * ans - _c(x, 2.0 / np.sqrt(np.pi))))


def erfcx(x: Any) -> Array:
    """The scaled complementary error function ``exp(x**2) erfc(x)``, accurate where
    ``exp(x**2)`` overflows.  A complex ``x`` gives ``wofz(i x)``."""
    x_arr, = _promote("erfcx", x)
    if dt.is_complex(x_arr.dtype):
        return _wofz(lax.complex(lax.neg(lax.imag(x_arr)), lax.real(x_arr)))
    return _erfcx(x_arr)


# -- dawsn -------------------------------------------------------------------------------

# Cody, Paciorek and Thacher (1970).  On [0, 3.25): x AN(x^2) / AD(x^2); on [3.25, 6.25)
# and [6.25, inf): (1 + t N(t) / D(t)) / (2x) with t = 1 / x^2.
_DAWSN_AN = (
    1.13681498971755972054e-11, 8.49262267667473811108e-10, 1.94434204175553054283e-8,
    9.53151741254484363489e-7, 3.07828309874913200438e-6, 3.52513368520288738649e-4,
    -8.50149846724410912031e-4, 4.22618223005546594270e-2, -9.17480371773452345351e-2,
    9.99999999999999994612e-1)
_DAWSN_AD = (
    2.40372073066762605484e-11, 1.48864681368493396752e-9, 5.21265281010541664570e-8,
    1.27258478273186970203e-6, 2.32490249820789513991e-5, 3.25524741826057911661e-4,
    3.48805814657162590916e-3, 2.79448531198828973716e-2, 1.58874241960120565368e-1,
    5.74918629489320327824e-1, 1.00000000000000000539e0)
_DAWSN_BN = (
    5.08955156417900903354e-1, -2.44754418142697847934e-1, 9.41512335303534411857e-2,
    -2.18711255142039025206e-2, 3.66207612329569181322e-3, -4.23209114460388756528e-4,
    3.59641304793896631888e-5, -2.14640351719968974225e-6, 9.10010780076391431042e-8,
    -2.40274520828250956942e-9, 3.59233385440928410398e-11)
_DAWSN_BD = (
    1.00000000000000000000e0, -6.31839869873368190192e-1, 2.36706788228248691528e-1,
    -5.31806367003223277662e-2, 8.48041718586295374409e-3, -9.47996768486665330168e-4,
    7.81025592944552338085e-5, -4.55875153252442634831e-6, 1.89100358111421846170e-7,
    -4.91324691331920606875e-9, 7.18466403235734541950e-11)
_DAWSN_CN = (
    -5.90592860534773254987e-1, 6.29235242724368800674e-1, -1.72858975380388136411e-1,
    1.64837047825189632310e-2, -4.86827613020462700845e-4)
_DAWSN_CD = (
    1.00000000000000000000e0, -2.69820057197544900361e0, 1.73270799045947845857e0,
    -3.93708582281939493482e-1, 3.44278924041233391079e-2, -9.73655226040941223894e-4)


def _dawsn_impl(x: Array) -> Array:
    ax = lax.abs(x)
    t = _c(x, 1.0) / lax.square(ax)
    ones = lax.full_like(ax, 1.0)
    # Each region sees a harmless 1 outside itself, so no branch makes inf / inf.
    in_1 = ax < _c(x, 3.25)
    in_2 = (ax >= _c(x, 3.25)) & (ax < _c(x, 6.25))
    in_3 = ax >= _c(x, 6.25)
    a1 = lax.select(in_1, ax, ones)
    a1_2 = lax.square(a1)
    val_1 = a1 * _horner(_DAWSN_AN, a1_2) / _horner(_DAWSN_AD, a1_2)

    def tail(inside: Array, num: tuple[float, ...], den: tuple[float, ...]) -> Array:
        tt = lax.select(inside, t, ones)
        aa = lax.select(inside, ax, ones)
        return (_c(x, 0.5) / aa) * (_c(x, 1.0) + tt * _horner(num, tt) / _horner(den, tt))

    val_2 = tail(in_2, _DAWSN_BN, _DAWSN_BD)
    val_3 = tail(in_3, _DAWSN_CN, _DAWSN_CD)
    out = lax.select(in_1, val_1, lax.select(ax < _c(x, 6.25), val_2, val_3))
    return pnp.sign(x) * out  # dawsn is odd (and sign(0) * dawsn(0) is 0)


@custom_jvp
def _dawsn(x: Array) -> Array:
    if x.dtype in (dt.float32, dt.float64):
        return _dawsn_impl(x)
    return _dawsn_impl(x.astype(dt.float32)).astype(x.dtype)


_dawsn.defjvps(lambda g, ans, x: g * (_c(x, 1.0) - _c(x, 2.0) * x * ans))


def dawsn(x: Any) -> Array:
    """Dawson's integral ``exp(-x**2) * integral_0^x exp(t**2) dt``; its derivative is
    ``1 - 2 x dawsn(x)``.

    Raises:
      ValueError: a complex ``x`` (as JAX).
    """
    x_arr, = _promote("dawsn", x)
    if dt.is_complex(x_arr.dtype):
        raise ValueError("dawsn does not support complex-valued inputs.")
    return _dawsn(x_arr)

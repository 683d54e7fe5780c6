"""The sine and cosine integrals ``sici`` and the Fresnel integrals ``fresnel``, as JAX
0.10.2 computes them (Cephes' rational approximations: ``sici.c``, and ``fresnl`` in
double and ``fresnlf`` in single precision), with JAX's custom derivatives."""

from __future__ import annotations

from typing import Any

import numpy as np

from plait.frontend import lax
from plait.frontend import numpy as pnp
from plait.frontend.api.custom_derivatives import custom_jvp
from plait.frontend.api.jit import jit
from plait.frontend.core.array_base import Array
from plait.frontend.scipy._util import horner as _horner
from plait.frontend.scipy._util import promote as _promote
from plait.ir import dtypes as dt

__all__ = ["sici", "fresnel"]

_EULER = float(np.euler_gamma)
_HALF_PI = float(np.pi / 2)

# -- sici --------------------------------------------------------------------------------

# |x| <= 4: Si = x SN(x^2) / SD(x^2), Ci = gamma + log x + x^2 CN(x^2) / CD(x^2).
_SI_N = (-8.39167827910303881427E-11, 4.62591714427012837309E-8, -9.75759303843632795789E-6,
         9.76945438170435310816E-4, -4.13470316229406538752E-2, 1.00000000000000000302E0)
_SI_D = (2.03269266195951942049E-12, 1.27997891179943299903E-9, 4.41827842801218905784E-7,
         9.96412122043875552487E-5, 1.42085239326149893930E-2, 9.99999999999999996984E-1)
_CI_N = (2.02524002389102268789E-11, -1.35249504915790756375E-8, 3.59325051419993077021E-6,
         -4.74007206873407909465E-4, 2.89159652607555242092E-2, -1.00000000000000000080E0)
_CI_D = (4.07746040061880559506E-12, 3.06780997581887812692E-9, 1.23210355685883423679E-6,
         3.17442024775032769882E-4, 5.10028056236446052392E-2, 4.00000000000000000080E0)
# 4 < |x| <= 1e9: the auxiliary functions f and g, in z = 1 / x^2, on (4, 8) and [8, 1e9].
_F4_N = (4.23612862892216586994E0, 5.45937717161812843388E0, 1.62083287701538329132E0,
         1.67006611831323023771E-1, 6.81020132472518137426E-3, 1.08936580650328664411E-4,
         5.48900223421373614008E-7)
_F4_D = (1.0, 8.16496634205391016773E0, 7.30828822505564552187E0, 1.86792257950184183883E0,
         1.78792052963149907262E-1, 7.01710668322789753610E-3, 1.10034357153915731354E-4,
         5.48900252756255700982E-7)
_G4_N = (8.71001698973114191777E-2, 6.11379109952219284151E-1, 3.97180296392337498885E-1,
         7.48527737628469092119E-2, 5.38868681462177273157E-3, 1.61999794598934024525E-4,
         1.97963874140963632189E-6, 7.82579040744090311069E-9)
_G4_D = (1.0, 1.64402202413355338886E0, 6.66296701268987968381E-1, 9.88771761277688796203E-2,
         6.22396345441768420760E-3, 1.73221081474177119497E-4, 2.02659182086343991969E-6,
         7.82579218933534490868E-9)
_F8_N = (4.55880873470465315206E-1, 7.13715274100146711374E-1, 1.60300158222319456320E-1,
         1.16064229408124407915E-2, 3.49556442447859055605E-4, 4.86215430826454749482E-6,
         3.20092790091004902806E-8, 9.41779576128512936592E-11, 9.70507110881952024631E-14)
_F8_D = (1.0, 9.17463611873684053703E-1, 1.78685545332074536321E-1, 1.22253594771971293032E-2,
         3.58696481881851580297E-4, 4.92435064317881464393E-6, 3.21956939101046018377E-8,
         9.43720590350276732376E-11, 9.70507110881952025725E-14)
_G8_N = (6.97359953443276214934E-1, 3.30410979305632063225E-1, 3.84878767649974295920E-2,
         1.71718239052347903558E-3, 3.48941165502279436777E-5, 3.47131167084116673800E-7,
         1.70404452782044526189E-9, 3.85945925430276600453E-12, 3.14040098946363334640E-15)
_G8_D = (1.0, 1.68548898811011640017E0, 4.87852258695304967486E-1, 4.67913194259625806320E-2,
         1.90284426674399523638E-3, 3.68475504442561108162E-5, 3.57043223443740838771E-7,
         1.72693748966316146736E-9, 3.87830166023954706752E-12, 3.14040098946363335242E-15)


def _sici_small(x: Array) -> tuple[Array, Array]:
    t = x * x
    si = (x * _horner(_SI_N, t)) / _horner(_SI_D, t)
    ci = _EULER + lax.log(x) + t * _horner(_CI_N, t) / _horner(_CI_D, t)
    return pnp.where(x == 0, 0.0, si), pnp.where(x == 0, -np.inf, ci)


def _sici_medium(x: Array) -> tuple[Array, Array]:
    s, c = lax.sin(x), lax.cos(x)
    z = 1.0 / (x * x)
    below_8 = x < 8.0
    f = pnp.where(below_8, _horner(_F4_N, z) / (x * _horner(_F4_D, z)),
                  _horner(_F8_N, z) / (x * _horner(_F8_D, z)))
    g = pnp.where(below_8, z * _horner(_G4_N, z) / _horner(_G4_D, z),
                  z * _horner(_G8_N, z) / _horner(_G8_D, z))
    return _HALF_PI - f * c - g * s, f * s - g * c


def _sici_large(x: Array) -> tuple[Array, Array]:
    si = _HALF_PI - lax.cos(x) / x
    ci = lax.sin(x) / x
    at_inf = pnp.isposinf(x)
    return pnp.where(at_inf, _HALF_PI, si), pnp.where(at_inf, 0.0, ci)


def _sici_value(x: Array) -> tuple[Array, Array]:
    ax = lax.abs(x)
    si_1, ci_1 = _sici_small(ax)
    si_2, ci_2 = _sici_medium(ax)
    si_3, ci_3 = _sici_large(ax)
    small = ax <= 4
    medium = (ax > 4) & (ax <= 1e9)
    si = pnp.select([small, medium], [si_1, si_2], si_3)
    ci = pnp.select([small, medium], [ci_1, ci_2], ci_3)
    return pnp.sign(x) * si, pnp.where(pnp.isneginf(x), np.nan, ci)


_sici = custom_jvp(jit(_sici_value))


def _sici_jvp(primals: tuple[Array], tangents: tuple[Array]
              ) -> tuple[tuple[Array, Array], tuple[Array, Array]]:
    (x,), (t,) = primals, tangents
    # Si'(x) = sin(x) / x, Ci'(x) = cos(x) / x
    return _sici(x), (pnp.sinc(x / np.pi) * t, lax.cos(x) / x * t)


_sici.defjvp(jit(_sici_jvp))


def sici(x: Any) -> tuple[Array, Array]:
    """The sine and cosine integrals ``(Si(x), Ci(x))``: ``Si(x) = integral_0^x sin(t) /
    t dt`` and ``Ci(x) = gamma + log(x) + integral_0^x (cos(t) - 1) / t dt``.  For a
    negative ``x``, ``Si`` is odd and ``Ci`` is the value at ``|x|`` (as JAX).

    Raises:
      ValueError: a complex ``x``.
    """
    x_arr, = _promote("sici", x)
    if dt.is_complex(x_arr.dtype):
        raise ValueError(f"Argument `x` to sici must be real-valued. Got dtype {x_arr.dtype}.")
    out: tuple[Array, Array] = _sici(x_arr)
    return out


# -- fresnel -----------------------------------------------------------------------------

def _sin_cos_pi_half_square(x: Array) -> tuple[Array, Array]:
    """``sin(pi x^2 / 2)`` and ``cos(pi x^2 / 2)``, with the argument reduced modulo 2
    exactly first: with ``s = x mod 2``, ``x^2 / 2 = s (x - s / 2) (mod 2)``."""
    x = lax.abs(x)
    s = pnp.fmod(x, 2.0)
    r = pnp.fmod(s * (x - s / 2), 2.0)
    sin = pnp.where(r < 0.5, lax.sin(np.pi * r),
                    pnp.where(r > 1.5, lax.sin(np.pi * (r - 2.0)), -lax.sin(np.pi * (r - 1.0))))
    cos = pnp.where(r == 0.5, 0.0,
                    pnp.where(r < 1.0, -lax.sin(np.pi * (r - 0.5)), lax.sin(np.pi * (r - 1.5))))
    return sin, cos


# Cephes fresnlf (float32): S = x^3 SN(x^4), C = x CN(x^4) for x^2 < 2.5625; above it
# f = 1 - u FN(u), g = t GN(u) with t = 1 / (pi x^2), u = t^2.
_F32_SN = (1.647629463788700e-9, -1.522754752581096e-7, 8.424748808502400e-6,
           -3.120693124703272e-4, 7.244727626597022e-3, -9.228055941124598e-2,
           5.235987735681432e-1)
_F32_CN = (1.416802502367354e-8, -1.157231412229871e-6, 5.387223446683264e-5,
           -1.604381798862293e-3, 2.818489036795073e-2, -2.467398198317899e-1,
           9.999999760004487e-1)
_F32_FN = (-1.903009855649792e12, 1.355942388050252e11, -4.158143148511033e9,
           7.343848463587323e7, -8.732356681548485e5, 8.560515466275470e3,
           -1.032877601091159e2, 2.999401847870011e0)
_F32_GN = (-1.860843997624650e11, 1.278350673393208e10, -3.779387713202229e8,
           6.492611570598858e6, -7.787789623358162e4, 8.602931494734327e2,
           -1.493439396592284e1, 9.999841934744914e-1)
# Cephes fresnl (float64): the same, with rational functions.
_F64_SN = (-2.99181919401019853726e3, 7.08840045257738576863e5, -6.29741486205862506537e7,
           2.54890880573376359104e9, -4.42979518059697779103e10, 3.18016297876567817986e11)
_F64_SD = (1.00000000000000000000e0, 2.81376268889994315696e2, 4.55847810806532581675e4,
           5.17343888770096400730e6, 4.19320245898111231129e8, 2.24411795645340920940e10,
           6.07366389490084639049e11)
_F64_CN = (-4.98843114573573548651e-8, 9.50428062829859605134e-6, -6.45191435683965050962e-4,
           1.88843319396703850064e-2, -2.05525900955013891793e-1, 9.99999999999999998822e-1)
_F64_CD = (3.99982968972495980367e-12, 9.15439215774657478799e-10, 1.25001862479598821474e-7,
           1.22262789024179030997e-5, 8.68029542941784300606e-4, 4.12142090722199792936e-2,
           1.00000000000000000118e0)
_F64_FN = (4.21543555043677546506e-1, 1.43407919780758885261e-1, 1.15220955073585758835e-2,
           3.45017939782574027900e-4, 4.63613749287867322088e-6, 3.05568983790257605827e-8,
           1.02304514164907233465e-10, 1.72010743268161828879e-13, 1.34283276233062758925e-16,
           3.76329711269987889006e-20)
_F64_FD = (1.00000000000000000000e0, 7.51586398353378947175e-1, 1.16888925859191382142e-1,
           6.44051526508858611005e-3, 1.55934409164153020873e-4, 1.84627567348930545870e-6,
           1.12699224763999035261e-8, 3.60140029589371370404e-11, 5.88754533621578410010e-14,
           4.52001434074129701496e-17, 1.25443237090011264384e-20)
_F64_GN = (5.04442073643383265887e-1, 1.97102833525523411709e-1, 1.87648584092575249293e-2,
           6.84079380915393090172e-4, 1.15138826111884280931e-5, 9.82852443688422223854e-8,
           4.45344415861750144738e-10, 1.08268041139020870318e-12, 1.37555460633261799868e-15,
           8.36354435630677421531e-19, 1.86958710162783235106e-22)
_F64_GD = (1.00000000000000000000e0, 1.47495759925128324529e0, 3.37748989120019970451e-1,
           2.53603741420338795122e-2, 8.14679107184306179049e-4, 1.27545075667729118702e-5,
           1.04314589657571990585e-7, 4.60680728146520428211e-10, 1.10273215066240270757e-12,
           1.38796531259578871258e-15, 8.39158816283118707363e-19, 1.86958710162783236342e-22)


def _fresnel_value(xxa: Array) -> tuple[Array, Array]:
    single = xxa.dtype == dt.float32
    x = lax.abs(xxa)
    x2 = x * x
    t4 = x2 * x2
    if single:
        s_small = x * x2 * _horner(_F32_SN, t4)
        c_small = x * _horner(_F32_CN, t4)
    else:
        s_small = x * x2 * _horner(_F64_SN, t4) / _horner(_F64_SD, t4)
        c_small = x * _horner(_F64_CN, t4) / _horner(_F64_CD, t4)
    sin, cos = _sin_cos_pi_half_square(x)
    s_large: Any
    c_large: Any
    if single:
        s_large = c_large = 0.5
    else:
        c_large = 0.5 + 1 / (np.pi * x) * sin
        s_large = 0.5 - 1 / (np.pi * x) * cos
    pi_x2 = np.pi * x2
    u = 1.0 / (pi_x2 * pi_x2)
    t = 1.0 / pi_x2
    if single:
        f = 1.0 - u * _horner(_F32_FN, u)
        g = t * _horner(_F32_GN, u)
    else:
        f = 1.0 - u * _horner(_F64_FN, u) / _horner(_F64_FD, u)
        g = t * _horner(_F64_GN, u) / _horner(_F64_GD, u)
    pi_x = np.pi * x
    c_mid = 0.5 + (f * sin - g * cos) / pi_x
    s_mid = 0.5 - (f * cos + g * sin) / pi_x
    inf, small, large = pnp.isinf(xxa), x2 < 2.5625, x > 36974.0
    s = pnp.where(inf, 0.5, pnp.where(small, s_small, pnp.where(large, s_large, s_mid)))
    c = pnp.where(inf, 0.5, pnp.where(small, c_small, pnp.where(large, c_large, c_mid)))
    negative = xxa < 0.0
    return pnp.where(negative, -s, s), pnp.where(negative, -c, c)


def _fresnel_impl(x: Array) -> tuple[Array, Array]:
    if x.dtype in (dt.float32, dt.float64):
        return _fresnel_value(x)
    # Half precision: Cephes' single-precision series, then back.
    s, c = _fresnel_value(x.astype(dt.float32))
    return s.astype(x.dtype), c.astype(x.dtype)


_fresnel = custom_jvp(_fresnel_impl)


def _fresnel_jvp(primals: tuple[Array], tangents: tuple[Array]
                 ) -> tuple[tuple[Array, Array], tuple[Array, Array]]:
    (x,), (x_dot,) = primals, tangents
    # S'(x) = sin(pi x^2 / 2), C'(x) = cos(pi x^2 / 2)
    sin, cos = _sin_cos_pi_half_square(x)
    return _fresnel(x), (sin * x_dot, cos * x_dot)


_fresnel.defjvp(_fresnel_jvp)


def fresnel(x: Any) -> tuple[Array, Array]:
    """The Fresnel integrals ``(S(x), C(x))``: ``integral_0^x sin(pi t^2 / 2) dt`` and
    ``integral_0^x cos(pi t^2 / 2) dt`` (accurate on ``[-10, 10]``, as Cephes').
    float16 and bfloat16 are computed in float32.

    Raises:
      NotImplementedError: a complex ``x``, or a float dtype other than float16,
        bfloat16, float32 and float64 (as JAX).
    """
    x_arr, = _promote("fresnel", x)
    if dt.is_complex(x_arr.dtype):
        raise NotImplementedError("Support for complex-valued inputs is not implemented yet.")
    if x_arr.dtype not in (dt.float16, dt.bfloat16, dt.float32, dt.float64):
        raise NotImplementedError(f"Support for {x_arr.dtype} dtype is not implemented yet.")
    out: tuple[Array, Array] = _fresnel(x_arr)
    return out

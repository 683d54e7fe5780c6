"""Spence's function ``spence``, the Bernoulli numbers ``bernoulli`` and Owen's T
function ``owens_t``, as JAX 0.10.2 computes them (Cephes' rational approximation of
the dilogarithm, Chowla and Hartung's zeta-series for ``B_n``, and Patefield and Tandy's
13-point quadrature T5 for Owen's T, with JAX's custom derivative)."""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from plait.frontend import lax
from plait.frontend import numpy as pnp
from plait.frontend.api.custom_derivatives import custom_jvp
from plait.frontend.core.array_base import Array
from plait.frontend.numpy._core import check_arraylike
from plait.frontend.scipy._util import const as _c
from plait.frontend.scipy._util import horner as _horner
from plait.frontend.scipy._util import promote as _promote
from plait.ir import dtypes as dt

__all__ = ["spence", "bernoulli", "owens_t"]

_PI2_6 = float(np.pi ** 2 / 6)

# -- spence ------------------------------------------------------------------------------

# Cephes spence.c: spence(x) = -w A(w) / B(w) with w = x - 1 on [0.5, 1.5] (and the
# reflections below for the rest of the positive axis).
_SPENCE_A = (4.65128586073990045278E-5, 7.31589045238094711071E-3, 1.33847639578309018650E-1,
             8.79691311754530315341E-1, 2.71149851196553469920E0, 4.25697156008121755724E0,
             3.29771340985225106936E0, 1.00000000000000000126E0)
_SPENCE_B = (6.90990488912553276999E-4, 2.54043763932544379113E-2, 2.82974860602568089943E-1,
             1.41172597751831069617E0, 3.63800533345137075418E0, 5.03278880143316990390E0,
             3.54771340985225096217E0, 9.99999999999999998740E-1)


def _spence_positive(x: Array) -> Array:
    above_2 = x > 2.0
    x = pnp.piecewise(x, [above_2], [lambda v: 1.0 / v, lambda v: v])  # spence(1/x) ...
    above_1_5 = x > 1.5
    below_0_5 = x < 0.5
    inverted = above_2 | above_1_5
    w = pnp.piecewise(x, [above_1_5, below_0_5],
                      [lambda v: 1.0 / v - 1.0, lambda v: -v, lambda v: v - 1.0])
    y = -w * _horner(_SPENCE_A, w) / _horner(_SPENCE_B, w)
    # ... and the reflections x -> 1 - x below 0.5, x -> 1 / x above 1.5.
    y = pnp.where(below_0_5, _PI2_6 - lax.log(x) * lax.log(1.0 - x) - y, y)
    return pnp.where(inverted, -0.5 * lax.log(x) ** 2 - y, y)


def spence(x: Any) -> Array:
    """Spence's function (the real dilogarithm) ``integral_1^x log(t) / (1 - t) dt``,
    for ``x >= 0`` (NaN below, as JAX; SciPy extends it to the complex plane).

    Raises:
      TypeError: ``x`` is not float32 or float64 (integers are not promoted, as JAX).
    """
    check_arraylike("spence", x)
    x_arr = pnp.asarray(x)
    if x_arr.dtype not in (dt.float32, dt.float64):
        raise TypeError(
            f"x.dtype={x_arr.dtype} is not supported, see docstring for supported types.")
    return pnp.piecewise(x_arr, [x_arr < 0.0, x_arr == 1.0, x_arr == 0.0],
                         [np.nan, 0, _PI2_6, _spence_positive])


# -- bernoulli ---------------------------------------------------------------------------

def bernoulli(n: int) -> Array:
    """The Bernoulli numbers ``B_0 .. B_n`` (with ``B_1 = -1/2``) in the default float
    dtype; the even ones from ``B_4`` on by ``B_2k = (-1)^(k+1) 2 (2k)! / (2 pi)^(2k)
    zeta(2k)``, ``zeta`` summed to 49 terms (as JAX).

    Raises:
      TypeError: ``n`` is not an integer (or is traced: it fixes the output's shape).
      ValueError: a negative ``n``.
    """
    n = operator.index(n)
    if n < 0:
        raise ValueError("n must be a non-negative integer.")
    first = pnp.array([1, -1 / 2, 1 / 6])
    if n < 3:
        return first[:n + 1]
    out = pnp.zeros(n + 1).at[:3].set(first)
    m = pnp.arange(4, n + 1, 2, dtype=out.dtype)
    # 2 (2k)! / (2 pi)^(2k), with signs: a running product over k.
    scale = (1. / np.pi ** 2) * pnp.cumprod(-(m - 1) * m / 4 / np.pi ** 2)
    k = pnp.arange(2, 50, dtype=out.dtype)  # 2 ** -50 < 1e-15: zeta(m) - 1 converged
    zeta_minus_1 = pnp.sum(k[:, None] ** -m[None, :], axis=0)
    return out.at[4::2].set(scale * (1 + zeta_minus_1))


# -- owens_t -----------------------------------------------------------------------------

# Patefield and Tandy (2000), method T5: T(h, a) = a sum_i w_i exp(-h^2 (1 + a^2 t_i) / 2)
# / (1 + a^2 t_i), for |a| <= 1 (the 1 / (2 pi) and the Jacobian are in the weights).
_OWENS_T_POINTS = np.array([
    0.0035082039676451715, 0.031279042338030754, 0.085266826283219451, 0.16245071730812277,
    0.25851196049125435, 0.36807553840697534, 0.48501092905604697, 0.60277514152618577,
    0.71477884217753227, 0.81475510988760099, 0.89711029755948966, 0.95723808085944262,
    0.99178832974629704])
_OWENS_T_WEIGHTS = np.array([
    0.018831438115323503, 0.018567086243977649, 0.018042093461223386, 0.017263829606398753,
    0.016243219975989857, 0.014994592034116705, 0.013535474469662088, 0.011886351605820165,
    0.010070377242777432, 0.0081130545742299587, 0.0060419009528470239,
    0.0038862217010742058, 0.0016793031084546090])


def _owens_t_quadrature(h: Array, a: Array) -> Array:
    points = np.expand_dims(_OWENS_T_POINTS, tuple(range(a.ndim)))
    r = pnp.square(a)[..., None] * points
    integrand = pnp.exp(-0.5 * pnp.square(h)[..., None] * (1. + r)) / (1. + r)
    return a * (integrand @ _OWENS_T_WEIGHTS)


@custom_jvp
def _owens_t(h: Array, a: Array) -> Array:
    h_abs, a_abs = pnp.abs(h), pnp.abs(a)
    root_2 = _c(h_abs, np.sqrt(2))
    h_scaled = h_abs / root_2
    # For |a| > 1 the quadrature is of T(|a| h, 1 / |a|), by the reciprocal relation.
    a_mod = pnp.where(a_abs <= 1., a_abs, pnp.reciprocal(a_abs))
    h_mod = pnp.where(a_abs <= 1., h_abs, a_abs * h_abs)
    result = _owens_t_quadrature(h_mod, a_mod)
    # Exact values at h = 0 and at a = 1.
    result = pnp.where(h_mod == 0., pnp.arctan(a_mod) / (2 * np.pi), result)
    result = pnp.where(
        a_mod == 1., 0.125 * lax.erfc(-h_mod / root_2) * lax.erfc(h_mod / root_2), result)
    erfc_h = lax.erfc(h_scaled)
    erfc_ah = lax.erfc(a_abs * h_scaled)
    reciprocal = pnp.where(
        a_abs * h_abs <= 0.67,
        0.25 - 0.25 * lax.erf(h_scaled) * lax.erf(a_abs * h_scaled) - result,
        0.25 * (erfc_h + erfc_ah - erfc_h * erfc_ah) - result)
    result = pnp.where(a_abs > 1., reciprocal, result)
    result = lax.sign(a) * result
    return pnp.where(pnp.isnan(a) | pnp.isnan(h), pnp.full_like(result, np.nan), result)


def _owens_t_jvp(primals: tuple[Array, Array], tangents: tuple[Array, Array]
                 ) -> tuple[Array, Array]:
    (h, a), (h_dot, a_dot) = primals, tangents
    result = _owens_t(h, a)
    root_2 = _c(h, np.sqrt(2))
    # dT/dh = -exp(-h^2 / 2) erf(a h / sqrt 2) / (2 sqrt(2 pi))
    d_h = (-lax.exp(-0.5 * lax.square(h)) * lax.erf(a * h / root_2)
           / _c(h, 2. * np.sqrt(2. * np.pi)))  # (2 sqrt(2 pi) rounds as sqrt(2 pi))
    # dT/da = exp(-(1 + a^2) h^2 / 2) / (2 pi (1 + a^2))
    d_a = (lax.exp(-0.5 * (lax.square(a) + 1.) * lax.square(h))
           / (2. * np.pi * (lax.square(a) + 1.)))
    return result, (d_h * h_dot + d_a * a_dot).astype(result.dtype)


_owens_t.defjvp(_owens_t_jvp)


def owens_t(h: Any, a: Any) -> Array:
    """Owen's T function ``T(h, a) = 1 / (2 pi) integral_0^a exp(-h^2 (1 + x^2) / 2) /
    (1 + x^2) dx``, by a 13-point quadrature (with the reciprocal relation for
    ``|a| > 1``), as JAX.  Differentiable in both arguments (by the closed-form
    derivatives)."""
    h_arr, a_arr = _promote("owens_t", h, a)
    return _owens_t(h_arr, a_arr)

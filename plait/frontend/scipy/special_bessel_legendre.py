"""Bessel functions of the first kind of integer order, ``bessel_jn``, and the
spherical harmonics ``sph_harm_y``, as JAX 0.10.2 computes them: Miller's backward
recurrence normalized by ``J_0 + 2 (J_2 + J_4 + ...) = 1`` (Zhang and Jin), and the
normalized associated Legendre functions by their three-term recurrences."""

from __future__ import annotations

import operator
from collections.abc import Callable
from functools import partial
from typing import Any

import numpy as np

from plait.frontend import lax
from plait.frontend import numpy as pnp
from plait.frontend.api.control_flow import fori_loop, scan
from plait.frontend.api.jit import jit
from plait.frontend.api.vmap import vmap
from plait.frontend.core.array_base import Array
from plait.frontend.numpy._core import as_array, check_arraylike, promote_dtypes_inexact
from plait.ir import dtypes as dt
from plait.ir.errors import ConcretizationTypeError

__all__ = ["bessel_jn", "sph_harm_y"]  # (lpmn_values: plait.scipy.special serves it, deprecated)


# -- bessel_jn ---------------------------------------------------------------------------

def _bessel_jn_scalar(z: Array, *, v: int, n_iter: int) -> Array:
    """``J_0(z) .. J_v(z)`` of a scalar ``z``: the recurrence
    ``f_k = 2 (k + 1) f_{k+1} / z - f_{k+2}`` run down from ``k = n_iter``, then scaled so
    that ``f_0 + 2 (f_2 + f_4 + ...)`` is 1."""
    def step(carry: tuple[Array, Array, Array], k: Array
             ) -> tuple[tuple[Array, Array, Array], Array]:
        f0, f1, even_sum = carry
        f = 2.0 * (k + 1.0) * f1 / z - f0
        even_sum = pnp.where(pnp.mod(k, 2) == 0, even_sum + 2.0 * f, even_sum)
        return (f1, f, even_sum), f

    init = (lax.full_like(z, 0.0), lax.full_like(z, 1e-16), lax.full_like(z, 0.0))
    carry, values = scan(step, init, lax.iota(z.dtype, n_iter + 1), reverse=True)
    even_sum: Array = carry[2]
    head: Array = values[:v + 1]
    j0_unscaled: Array = values[0]
    return head / (even_sum - j0_unscaled)  # (even_sum counted f_0 twice)


@partial(jit, static_argnames=("v", "n_iter"))
def _bessel_jn(z: Array, *, v: int, n_iter: int) -> Array:
    fun: Callable[[Array], Array] = partial(_bessel_jn_scalar, v=v, n_iter=n_iter)
    for _ in range(z.ndim):
        fun = vmap(fun)
    return pnp.moveaxis(fun(z), -1, 0)


def bessel_jn(z: Any, *, v: int, n_iter: int = 50) -> Array:
    """The Bessel functions of the first kind ``J_0(z), ..., J_v(z)`` of a real ``z``,
    stacked along a new first axis (shape ``(v + 1, *z.shape)``), by Miller's backward
    recurrence from order ``n_iter`` (50 suits ``|z|`` up to about 20; see JAX's
    docstring for the rule).  Differentiable in ``z``.

    Raises:
      ValueError: a complex ``z``.
      TypeError: ``v`` or ``n_iter`` not an integer (they are static).
    """
    check_arraylike("bessel_jn", z)
    z_arr, = (as_array(a) for a in promote_dtypes_inexact("bessel_jn", pnp.asarray(z)))
    if dt.is_complex(z_arr.dtype):
        raise ValueError("complex input not supported.")
    v = operator.index(v)
    n_iter = int(n_iter)
    out: Array = _bessel_jn(z_arr, v=v, n_iter=n_iter)
    return out


# -- sph_harm_y --------------------------------------------------------------------------

def _recurrence_coefficients(l_max: int, dtype: np.dtype[Any],
                             normalized: bool) -> tuple[Array, Array]:
    """The coefficients of the recurrence ``P_l^m = d0(l, m) x P_{l-1}^m - d1(l, m)
    P_{l-2}^m`` (of the normalized functions, or of the plain ones), as ``(l_max + 1,)*3``
    masks whose slice ``i`` holds those used at step ``i`` (entries ``l = i + m``)."""
    size = l_max + 1
    m_mat, l_mat = pnp.meshgrid(pnp.arange(size, dtype=dtype), pnp.arange(size, dtype=dtype),
                                indexing="ij")
    if normalized:
        l2, m2 = l_mat * l_mat, m_mat * m_mat
        two_l = 2.0 * l_mat
        lm1_2 = (l_mat - 1.0) * (l_mat - 1.0)
        d0 = pnp.sqrt((4.0 * l2 - 1.0) / (l2 - m2))
        d1 = pnp.sqrt(((two_l + 1.0) * (lm1_2 - m2)) / ((two_l - 3.0) * (l2 - m2)))
    else:
        d0 = (2.0 * l_mat - 1.0) / (l_mat - m_mat)
        d1 = (l_mat + m_mat - 1.0) / (l_mat - m_mat)
    zeros = pnp.zeros((size, size), dtype=dtype)
    above_1 = pnp.triu_indices(size, 1)
    above_2 = pnp.triu_indices(size, 2)
    d0_mask = zeros.at[above_1].set(d0[above_1])
    d1_mask = zeros.at[above_2].set(d1[above_2])
    i, j, k = np.ogrid[:size, :size, :size]
    step = (i + j - k == 0).astype(dtype)
    return d0_mask[None] * step, d1_mask[None] * step


def _legendre(l_max: int, x: Array, normalized: bool = True) -> Array:
    """The associated Legendre functions ``P_l^m(x)`` (normalized as spherical harmonics
    use them, or not) for ``0 <= m, l <= l_max``, shape ``(m, l, len(x))`` (zero where
    ``m > l``)."""
    size, n_x = l_max + 1, x.shape[0]
    p = pnp.zeros((size, size, n_x), dtype=x.dtype)
    a_idx = pnp.arange(1, size, dtype=x.dtype)
    b_idx = pnp.arange(l_max, dtype=x.dtype)
    initial: Any
    if normalized:
        initial = 0.5 / pnp.sqrt(np.pi)  # P_0^0
        f_a = pnp.cumprod(-1 * pnp.sqrt(1.0 + 0.5 / a_idx))
        f_b = pnp.sqrt(2.0 * b_idx + 3.0)
    else:
        initial = 1.0
        f_a = pnp.cumprod(1.0 - 2.0 * a_idx)
        f_b = 2.0 * b_idx + 1.0
    p = p.at[(0, 0)].set(initial)
    # The diagonal P_l^l, then the first off-diagonal P_{l+1}^l.
    y = pnp.cumprod(pnp.broadcast_to(pnp.sqrt(1.0 - x * x), (l_max, n_x)), axis=0)
    diagonal = initial * (f_a[:, None] * y)
    rows, cols = np.diag_indices(size)
    p = p.at[(rows[1:], cols[1:])].set(diagonal)
    sub_rows, sub_cols = np.diag_indices(l_max)
    off_diagonal = (f_b[:, None] * x[None, :]) * p[(sub_rows, sub_cols)]
    p = p.at[(rows[:l_max], cols[:l_max] + 1)].set(off_diagonal)
    d0, d1 = _recurrence_coefficients(l_max, x.dtype, normalized)

    def step(i: Any, p_val: Array) -> Array:
        h = (d0[i][:, :, None] * (pnp.roll(p_val, shift=1, axis=1) * x)
             - d1[i][:, :, None] * pnp.roll(p_val, shift=2, axis=1))
        return p_val + h

    p = p.astype(pnp.result_type(p, x, d0))
    if l_max > 1:
        p = fori_loop(2, l_max + 1, step, p)
    return p


@partial(jit, static_argnums=(4,))
def _sph_harm(n: Array, m: Array, theta: Array, phi: Array, n_max: int) -> Array:
    legendre = _legendre(n_max, pnp.cos(theta))
    values = legendre.at[abs(m), n, pnp.arange(len(n))].get(mode="clip")
    angle = abs(m) * phi
    harmonics = lax.complex(values * pnp.cos(angle), values * pnp.sin(angle))
    # Y_n^-m = (-1)^m conj(Y_n^m).  (JAX multiplies by (-1.0) ** |m|: the same values.)
    conj = pnp.conjugate(harmonics)
    flipped = pnp.where(abs(m) % 2 == 1, -conj, conj)
    return pnp.where(m < 0, flipped, harmonics)


def sph_harm_y(n: Any, m: Any, theta: Any, phi: Any, diff_n: int | None = None,
               n_max: int | None = None) -> Array:
    """The spherical harmonics ``Y_n^m(theta, phi)`` (``theta`` the colatitude, ``phi``
    the longitude), complex, for 1-D ``n``, ``m``, ``theta`` and ``phi``; ``n_max``, the
    largest degree, must be concrete (it is ``max(n)`` when omitted; a smaller one clips
    the degrees to it, as JAX).

    Raises:
      NotImplementedError: ``diff_n`` given (as JAX).
      ConcretizationTypeError: ``n_max`` omitted with a traced ``n``.
    """
    if diff_n is not None:
        raise NotImplementedError(
            "The 'diff_n' argument to jax.scipy.special.sph_harm_y is not supported.")
    if pnp.isscalar(theta):
        theta = pnp.array([theta])
    top: Any = n_max
    if top is None:
        top = pnp.max(n) if isinstance(n, Array) else np.max(n)
    try:
        n_max = int(top)
    except ConcretizationTypeError as e:
        raise ConcretizationTypeError(
            "The `n_max` argument of `jnp.scipy.special.sph_harm` must be statically "
            "specified to use `sph_harm` within JAX transformations.") from e
    out: Array = _sph_harm(n, m, theta, phi, n_max)
    return out



def lpmn_values(m: int, n: int, z: Any, is_normalized: bool) -> Array:
    """The associated Legendre functions of the first kind ``P_l^k(z)`` for orders ``k``
    and degrees ``l`` up to ``n`` (``m`` must equal ``n``), shape ``(n + 1, n + 1,
    len(z))`` (orders, degrees, points); ``is_normalized`` applies the normalization of
    orthonormal spherical harmonics.

    Raises:
      TypeError: ``z`` is not float32 or float64.
      ValueError: ``z`` is not 1-d.
      NotImplementedError: ``m != n``.
    """
    check_arraylike("lpmn_values", z)
    z = as_array(z)
    if z.dtype not in (np.float32, np.float64):
        raise TypeError(f"z.dtype={z.dtype} is not supported, see docstring for supported "
                        "types.")
    if z.ndim != 1:
        raise ValueError("z must be a 1D array.")
    try:
        m, n = operator.index(m), operator.index(n)
    except TypeError as e:
        raise ConcretizationTypeError(
            "lpmn_values: the orders m and n must be static ints (they set the result's "
            "shape)") from e
    if m != n:
        raise NotImplementedError("Computations for m!=n are not yet supported.")
    return _legendre(n, z, bool(is_normalized))

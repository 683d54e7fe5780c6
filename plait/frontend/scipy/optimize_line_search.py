"""The line search of ``plait.scipy.optimize``'s quasi-Newton methods: an inexact search
along a descent direction for a step satisfying the strong Wolfe conditions
(Nocedal and Wright, *Numerical Optimization*, 1999, algorithms 3.5 and 3.6), with
JAX 0.10.2's constants, step choices and counters, so that the minimizers take the
same steps as ``jax.scipy.optimize.minimize``.

The bracketing phase tries ``a_1`` (from the previous decrease, at most 1; or 1) then
doubles the step; once a bracket is found the *zoom* phase shrinks it, trying the
minimizer of a cubic through three points, else of a quadratic through two, else the
midpoint.  Both phases are ``while_loop``\\ s whose branches are selections (every
candidate is computed, one kept), so the search stages under ``jit`` and batches under
``vmap``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

from plait.frontend import lax
from plait.frontend import numpy as pnp
from plait.frontend.api.autodiff import value_and_grad
from plait.frontend.api.control_flow import while_loop
from plait.frontend.core.array_base import Array
from plait.frontend.core.dtype_queries import finfo
from plait.frontend.core.promotion import dtype_and_weak, result_type_info
from plait.frontend.numpy._core import promote_dtypes_inexact
from plait.ir.primitives import Precision

__all__ = ["LineSearchResults", "line_search", "hdot", "promoted_like"]

# Sufficient decrease (Armijo) and curvature constants of the strong Wolfe conditions.
_C1 = 1e-4
_C2 = 0.9
# Zoom: the cubic (quadratic) step must stay this fraction of the bracket inside it.
_CUBIC_MARGIN = 0.2
_QUAD_MARGIN = 0.1
_ZOOM_MAX_ITERS = 30


def hdot(a: Any, b: Any) -> Array:
    """``dot`` at the highest precision (the minimizers' inner products)."""
    return pnp.dot(a, b, precision=Precision.HIGHEST)


Type = tuple[np.dtype[Any], bool]


def _type_of(*xs: Any) -> Type:
    """The (dtype, weak) ``xs`` promote to."""
    return result_type_info([dtype_and_weak(x) for x in xs])


def promoted_like(x: Any, typ: Type) -> Any:
    """A loop's initial value ``x`` as the loop carries it: as JAX's ``while_loop`` does,
    a weakly typed initial value takes the type its body returns (``typ``)."""
    d, weak = dtype_and_weak(x)
    if not weak or (d, weak) == typ:
        return x
    return lax.convert_element_type(x, typ[0], typ[1])


class LineSearchResults(NamedTuple):
    """The outcome of :func:`line_search`.

    ``failed`` (no step satisfied the strong Wolfe conditions), ``nit`` (bracketing
    iterations), ``nfev``/``ngev`` (objective and gradient evaluations), ``k``,
    ``a_k`` (the step), ``f_k``/``g_k`` (value and gradient there), ``status`` (0 found,
    1 the zoom failed, 3 too many iterations).
    """

    failed: Any
    nit: Any
    nfev: Any
    ngev: Any
    k: Any
    a_k: Any
    f_k: Any
    g_k: Any
    status: Any


class _Zoom(NamedTuple):
    done: Any
    failed: Any
    j: Any
    a_lo: Any
    phi_lo: Any
    dphi_lo: Any
    a_hi: Any
    phi_hi: Any
    dphi_hi: Any
    a_rec: Any  # the previous a_hi or a_lo: the third point of the cubic
    phi_rec: Any
    a_star: Any
    phi_star: Any
    dphi_star: Any
    g_star: Any
    nfev: Any
    ngev: Any


class _Search(NamedTuple):
    done: Any
    failed: Any
    i: Any
    a_prev: Any
    phi_prev: Any
    dphi_prev: Any
    nfev: Any
    ngev: Any
    a_star: Any
    phi_star: Any
    dphi_star: Any
    g_star: Any


def _cubic_step(a: Any, fa: Any, fpa: Any, b: Any, fb: Any, c: Any, fc: Any) -> Any:
    """The minimizer of the cubic through ``(a, fa)`` with slope ``fpa``, ``(b, fb)``
    and ``(c, fc)`` (NaN when it has none)."""
    dtype = _type_of(a, fa, fpa, b, fb, c, fc)[0]
    db = b - a
    dc = c - a
    denom = (db * dc) ** 2 * (db - dc)
    m = pnp.array([[dc ** 2, -db ** 2], [-dc ** 3, db ** 3]], dtype=dtype)
    r = pnp.array([fb - fa - fpa * db, fc - fa - fpa * dc], dtype=dtype)
    coef = hdot(m, r) / denom
    c3, c2 = coef[0], coef[1]
    disc = c2 * c2 - 3. * c3 * fpa
    return a + (-c2 + pnp.sqrt(disc)) / (3. * c3)


def _quadratic_step(a: Any, fa: Any, fpa: Any, b: Any, fb: Any) -> Any:
    """The minimizer of the quadratic through ``(a, fa)`` with slope ``fpa`` and
    ``(b, fb)``."""
    db = b - a
    curv = (fb - fa - fpa * db) / (db ** 2)
    return a - fpa / (2. * curv)


def _select(mask: Any, state: Any, **new: Any) -> Any:
    """``state`` with the named fields replaced by ``new``'s where ``mask`` holds."""
    return state._replace(**{k: pnp.where(mask, v, getattr(state, k)) for k, v in new.items()})


def _zoom(phi_dphi: Callable[[Any], tuple[Any, Any, Any]],
          too_high: Callable[[Any, Any], Any], flat_enough: Callable[[Any], Any],
          a_type: Type, a_lo: Any, phi_lo: Any, dphi_lo: Any, a_hi: Any, phi_hi: Any,
          dphi_hi: Any, g_0: Any, skip: Any) -> _Zoom:
    """Shrink the bracket ``[a_lo, a_hi]`` (``a_lo`` the end with the lower value) to a
    step satisfying the strong Wolfe conditions; does nothing where ``skip``."""
    init = _Zoom(
        done=False, failed=False, j=0,
        a_lo=promoted_like(a_lo, a_type), phi_lo=phi_lo, dphi_lo=dphi_lo,
        a_hi=promoted_like(a_hi, a_type), phi_hi=phi_hi, dphi_hi=dphi_hi,
        a_rec=promoted_like((a_lo + a_hi) / 2., a_type), phi_rec=(phi_lo + phi_hi) / 2.,
        a_star=promoted_like(1., a_type), phi_star=phi_lo, dphi_star=dphi_lo, g_star=g_0,
        nfev=0, ngev=0)

    def body(s: _Zoom) -> _Zoom:
        width = s.a_hi - s.a_lo
        left = pnp.minimum(s.a_hi, s.a_lo)
        right = pnp.maximum(s.a_hi, s.a_lo)
        cubic_margin = _CUBIC_MARGIN * width
        quad_margin = _QUAD_MARGIN * width
        # A bracket this narrow cannot be shrunk further: give up.
        tiny = 1e-5 if finfo(width.dtype).bits < 64 else 1e-10
        s = s._replace(failed=s.failed | (width <= tiny))

        a_cubic = _cubic_step(s.a_lo, s.phi_lo, s.dphi_lo, s.a_hi, s.phi_hi, s.a_rec, s.phi_rec)
        use_cubic = (s.j > 0) & (a_cubic > left + cubic_margin) & (a_cubic < right - cubic_margin)
        a_quad = _quadratic_step(s.a_lo, s.phi_lo, s.dphi_lo, s.a_hi, s.phi_hi)
        use_quad = ~use_cubic & (a_quad > left + quad_margin) & (a_quad < right - quad_margin)
        a_mid = (s.a_lo + s.a_hi) / 2.
        use_mid = ~use_cubic & ~use_quad
        a_j = pnp.where(use_cubic, a_cubic, s.a_rec)
        a_j = pnp.where(use_quad, a_quad, a_j)
        a_j = pnp.where(use_mid, a_mid, a_j)

        phi_j, dphi_j, g_j = phi_dphi(a_j)
        phi_j = phi_j.astype(s.phi_lo.dtype)
        dphi_j = dphi_j.astype(s.dphi_lo.dtype)
        g_j = g_j.astype(s.g_star.dtype)
        s = s._replace(nfev=s.nfev + 1, ngev=s.ngev + 1)

        # a_j becomes the new high end; or the answer; or the new low end (the old low
        # end becoming the high end if the slope at a_j points back across it).
        to_hi = too_high(a_j, phi_j) | (phi_j >= s.phi_lo)
        found = flat_enough(dphi_j) & ~to_hi
        flip = (dphi_j * (s.a_hi - s.a_lo) >= 0.) & ~to_hi & ~found
        to_lo = ~to_hi & ~found

        s = _select(to_hi, s, a_hi=a_j, phi_hi=phi_j, dphi_hi=dphi_j, a_rec=s.a_hi,
                    phi_rec=s.phi_hi)
        s = _select(found, s, a_star=a_j, phi_star=phi_j, dphi_star=dphi_j, g_star=g_j)
        s = s._replace(done=found | s.done)
        s = _select(flip, s, a_hi=s.a_lo, phi_hi=s.phi_lo, dphi_hi=s.dphi_lo, a_rec=s.a_hi,
                    phi_rec=s.phi_hi)
        s = _select(to_lo & ~flip, s, a_rec=s.a_lo, phi_rec=s.phi_lo)
        s = _select(to_lo, s, a_lo=a_j, phi_lo=phi_j, dphi_lo=dphi_j)
        s = s._replace(j=s.j + 1)
        return s._replace(failed=s.failed | (s.j >= _ZOOM_MAX_ITERS))

    out: _Zoom = while_loop(lambda s: ~s.done & ~skip & ~s.failed, body, init)
    return out


def line_search(f: Callable[[Any], Any], xk: Any, pk: Any, old_fval: Any, gfk: Any,
                old_old_fval: Any = None, maxiter: int = 20) -> LineSearchResults:
    """A step ``a`` along the descent direction ``pk`` from ``xk`` satisfying the strong
    Wolfe conditions for ``f``, given ``f(xk) = old_fval`` and its gradient ``gfk``;
    the first trial step is derived from the previous value ``old_old_fval`` when given
    (else 1).  At most ``maxiter`` bracketing iterations (each zoom at most 30)."""
    xk, pk = promote_dtypes_inexact("line_search", xk, pk)

    def phi_dphi(t: Any) -> tuple[Any, Any, Any]:
        t = pnp.array(t, dtype=pk.dtype)
        phi, g = value_and_grad(f)(xk + t * pk)
        return phi, pnp.real(hdot(g, pk)), g

    phi_0 = old_fval
    dphi_0 = pnp.real(hdot(gfk, pk))
    if old_old_fval is None:
        first: Any = 1
    else:
        guess = 2.02 * (phi_0 - old_old_fval) / dphi_0
        first = pnp.where(guess > 1, 1.0, guess)

    def too_high(a: Any, phi: Any) -> Any:  # sufficient decrease fails
        return phi > phi_0 + _C1 * a * dphi_0

    def flat_enough(dphi: Any) -> Any:  # the strong curvature condition holds
        return pnp.abs(dphi) <= -_C2 * dphi_0

    step_type = _type_of(first, 0., 2.)  # of the trial steps
    a_type = _type_of(first, 0., 2., phi_0, dphi_0)  # of the zooms' steps and the answer
    init = _Search(
        done=pnp.array(False, dtype=bool), failed=pnp.array(False, dtype=bool), i=1,
        a_prev=promoted_like(0., step_type), phi_prev=phi_0, dphi_prev=dphi_0, nfev=0, ngev=0,
        a_star=promoted_like(0., a_type), phi_star=phi_0, dphi_star=dphi_0, g_star=gfk)

    def body(s: _Search) -> _Search:
        a_i = pnp.where(s.i == 1, first, s.a_prev * 2.)
        phi_i, dphi_i, g_i = phi_dphi(a_i)
        s = s._replace(nfev=s.nfev + 1, ngev=s.ngev + 1)

        # [a_prev, a_i] brackets a step (low end first), or a_i is the answer, or
        # [a_i, a_prev] brackets one (the slope at a_i is already non-negative).
        bracket_up = too_high(a_i, phi_i) | ((phi_i >= s.phi_prev) & (s.i > 1))
        found = flat_enough(dphi_i) & ~bracket_up
        bracket_down = (dphi_i >= 0.) & ~bracket_up & ~found

        up = _zoom(phi_dphi, too_high, flat_enough, a_type, s.a_prev, s.phi_prev, s.dphi_prev,
                   a_i, phi_i, dphi_i, gfk, ~bracket_up)
        s = s._replace(nfev=s.nfev + up.nfev, ngev=s.ngev + up.ngev)
        down = _zoom(phi_dphi, too_high, flat_enough, a_type, a_i, phi_i, dphi_i, s.a_prev,
                     s.phi_prev, s.dphi_prev, gfk, ~bracket_down)
        s = s._replace(nfev=s.nfev + down.nfev, ngev=s.ngev + down.ngev)

        s = s._replace(done=bracket_up | s.done, failed=(bracket_up & up.failed) | s.failed)
        s = _select(bracket_up, s, a_star=up.a_star, phi_star=up.phi_star,
                    dphi_star=up.dphi_star, g_star=up.g_star)
        s = s._replace(done=found | s.done)
        s = _select(found, s, a_star=a_i, phi_star=phi_i, dphi_star=dphi_i, g_star=g_i)
        s = s._replace(done=bracket_down | s.done,
                       failed=(bracket_down & down.failed) | s.failed)
        s = _select(bracket_down, s, a_star=down.a_star, phi_star=down.phi_star,
                    dphi_star=down.dphi_star, g_star=down.g_star)
        return s._replace(i=s.i + 1, a_prev=a_i, phi_prev=phi_i, dphi_prev=dphi_i)

    s = while_loop(lambda s: ~s.done & (s.i <= maxiter) & ~s.failed, body, init)
    status = pnp.where(s.failed, pnp.array(1), pnp.where(s.i > maxiter, pnp.array(3),
                                                         pnp.array(0)))
    # Below 64 bits, a step too small would leave the minimizer stuck: floor it.
    a_k = pnp.asarray(s.a_star)
    a_k = pnp.where((finfo(a_k.dtype).bits != 64) & (pnp.abs(a_k) < 1e-8),
                    pnp.sign(a_k) * 1e-8, a_k)
    return LineSearchResults(failed=s.failed | ~s.done, nit=s.i - 1, nfev=s.nfev, ngev=s.ngev,
                             k=s.i, a_k=a_k, f_k=s.phi_star, g_k=s.g_star, status=status)

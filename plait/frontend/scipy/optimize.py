"""``plait.scipy.optimize``: ``minimize`` with JAX 0.10.2's quasi-Newton methods.

``method="BFGS"`` is Nocedal and Wright's algorithm 6.1: the search direction is
``-H g`` for the current inverse-Hessian estimate ``H`` (initially the identity), the
step comes from the strong-Wolfe line search of
:mod:`plait.frontend.scipy.optimize_line_search`, and ``H`` gets the BFGS update
(skipped when the curvature ``y.s`` is zero).  It stops when the gradient's norm
(``norm``, the max-norm by default) is below ``gtol``, when the line search fails, or
after ``maxiter`` iterations (default ``200 * x0.size``).

``method="l-bfgs-experimental-do-not-rely-on-this"`` keeps only the last ``maxcor``
steps and gradient changes and applies the inverse Hessian by the two-loop recursion
(algorithm 7.4); it also stops on a decrease below ``ftol`` and on evaluation budgets.

The gradients come from :func:`value_and_grad`; the iterations are ``while_loop``\\ s,
so ``minimize`` stages under ``jit`` and batches under ``vmap`` (it cannot be
reverse-differentiated).  Steps, counters and statuses are JAX's.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

import numpy as np

from plait.frontend import numpy as pnp
from plait.frontend.api.autodiff import value_and_grad
from plait.frontend.api.control_flow import fori_loop, while_loop
from plait.frontend.core.array_base import Array
from plait.frontend.numpy import linalg as np_linalg
from plait.frontend.numpy._core import dtype_of
from plait.frontend.scipy.optimize_line_search import hdot, line_search

__all__ = ["OptimizeResults", "minimize"]


class OptimizeResults(NamedTuple):
    """The outcome of :func:`minimize`.

    Attributes:
      x: the final point.
      success: whether it converged (and the line search did not fail).
      status: 0 converged; BFGS: 1 too many iterations, 3 the zoom failed, 5 too many
        line-search iterations, -1 other; L-BFGS: 1 too many iterations, 2 (3) too many
        function (gradient) evaluations, 4 too small a decrease, 5 the line search failed.
      fun: the objective's value at ``x``.
      jac: its gradient there.
      hess_inv: the final inverse-Hessian estimate (``None`` for L-BFGS).
      nfev: the number of objective evaluations.
      njev: the number of gradient evaluations.
      nit: the number of iterations.
    """

    x: Array
    success: bool | Array
    status: int | Array
    fun: Array
    jac: Array
    hess_inv: Array | None
    nfev: int | Array
    njev: int | Array
    nit: int | Array


class _BFGSState(NamedTuple):
    converged: Any
    failed: Any
    k: Any
    nfev: Any
    ngev: Any
    x_k: Any
    f_k: Any
    g_k: Any
    H_k: Any
    f_prev: Any
    ls_status: Any


def _bfgs(fun: Callable[[Any], Any], x0: Any, maxiter: int | None = None,
          norm: Any = np.inf, gtol: float = 1e-5, line_search_maxiter: int = 10
          ) -> tuple[_BFGSState, Any]:
    """The BFGS iteration from ``x0``; returns the final state and the status."""
    if maxiter is None:
        maxiter = int(np.size(x0)) * 200
    n = x0.shape[0]
    f_0, g_0 = value_and_grad(fun)(x0)
    init = _BFGSState(
        converged=np_linalg.norm(g_0, ord=norm) < gtol, failed=False, k=0, nfev=1, ngev=1,
        x_k=x0, f_k=f_0, g_k=g_0, H_k=pnp.eye(n, dtype=x0.dtype),
        f_prev=f_0 + np_linalg.norm(g_0) / 2, ls_status=0)

    def body(s: _BFGSState) -> _BFGSState:
        p_k = -hdot(s.H_k, s.g_k)
        ls = line_search(fun, s.x_k, p_k, old_fval=s.f_k, old_old_fval=s.f_prev, gfk=s.g_k,
                         maxiter=line_search_maxiter)
        step = ls.a_k * p_k
        y_k = ls.g_k - s.g_k
        rho = pnp.reciprocal(hdot(y_k, step))
        # H <- (I - rho s y^T) H (I - rho y s^T) + rho s s^T, unless rho is not finite.
        w = pnp.eye(n, dtype=rho.dtype) - rho * (step[:, None] * y_k[None, :])
        h_new = hdot(hdot(w, s.H_k), w.T) + rho * step[:, None] * step[None, :]
        h_new = pnp.where(pnp.isfinite(rho), h_new, s.H_k)
        return _BFGSState(
            converged=np_linalg.norm(ls.g_k, ord=norm) < gtol, failed=ls.failed, k=s.k + 1,
            nfev=s.nfev + ls.nfev, ngev=s.ngev + ls.ngev, x_k=s.x_k + step, f_k=ls.f_k,
            g_k=ls.g_k, H_k=h_new, f_prev=s.f_k, ls_status=ls.status)

    s = while_loop(lambda s: ~s.converged & ~s.failed & (s.k < maxiter), body, init)
    status = pnp.where(s.converged, 0,
                       pnp.where(s.k == maxiter, 1,
                                 pnp.where(s.failed, 2 + s.ls_status, -1)))
    return s, status


class _LBFGSState(NamedTuple):
    converged: Any
    failed: Any
    k: Any
    nfev: Any
    ngev: Any
    x_k: Any
    f_k: Any
    g_k: Any
    s_hist: Any
    y_hist: Any
    rho_hist: Any
    gamma: Any
    status: Any
    ls_status: Any


def _two_loop(s: _LBFGSState) -> Any:
    """The direction ``-H g`` for the inverse Hessian the history defines."""
    dtype = s.rho_hist.dtype
    m = s.rho_hist.shape[0]
    used = pnp.where(s.k < m, s.k, m)
    q = -pnp.conj(s.g_k)
    alphas = pnp.zeros_like(s.rho_hist)

    def newest_first(j: Any, carry: tuple[Any, Any]) -> tuple[Any, Any]:
        q, alphas = carry
        i = m - 1 - j
        a = s.rho_hist[i] * hdot(pnp.conj(s.s_hist[i]), q).real.astype(dtype)
        return q - a * pnp.conj(s.y_hist[i]), alphas.at[i].set(a)

    q, alphas = fori_loop(0, used, newest_first, (q, alphas))
    q = s.gamma * q

    def oldest_first(j: Any, q: Any) -> Any:
        i = m - used + j
        b = s.rho_hist[i] * hdot(s.y_hist[i], q).real.astype(dtype)
        return q + (alphas[i] - b) * s.s_hist[i]

    return fori_loop(0, used, oldest_first, q)


def _pushed(history: Any, new: Any) -> Any:
    """``history`` without its oldest row, ``new`` appended as the newest."""
    return pnp.roll(history, -1, axis=0).at[-1].set(new)


def _lbfgs(fun: Callable[[Any], Any], x0: Any, maxiter: float | None = None,
           norm: Any = np.inf, maxcor: int = 10, ftol: float = 2.220446049250313e-09,
           gtol: float = 1e-05, maxfun: float | None = None, maxgrad: float | None = None,
           maxls: int = 20) -> _LBFGSState:
    """The L-BFGS iteration from ``x0``; returns the final state."""
    n = len(x0)
    dtype = dtype_of(x0)
    if maxiter is None and maxfun is None and maxgrad is None:
        maxiter = n * 200
    max_iter = np.inf if maxiter is None else maxiter
    max_fun = np.inf if maxfun is None else maxfun
    max_grad = np.inf if maxgrad is None else maxgrad
    f_0, g_0 = value_and_grad(fun)(x0)
    init = _LBFGSState(
        converged=pnp.array(False, dtype=bool), failed=pnp.array(False, dtype=bool), k=0,
        nfev=1, ngev=1, x_k=x0, f_k=f_0, g_k=g_0,
        s_hist=pnp.zeros((maxcor, n), dtype=dtype), y_hist=pnp.zeros((maxcor, n), dtype=dtype),
        rho_hist=pnp.zeros((maxcor,), dtype=dtype),
        # The initial values as the loop carries them (JAX's weak-type promotion).
        gamma=pnp.array(1., dtype=g_0.dtype), status=pnp.array(0), ls_status=pnp.array(0))

    def body(s: _LBFGSState) -> _LBFGSState:
        p_k = _two_loop(s)
        ls = line_search(fun, s.x_k, p_k, old_fval=s.f_k, gfk=s.g_k, maxiter=maxls)
        step = pnp.asarray(ls.a_k).astype(p_k.dtype) * p_k
        y_k = ls.g_k - s.g_k
        ys = pnp.real(hdot(y_k, step))
        rho = pnp.reciprocal(ys).astype(y_k.dtype)
        gamma = ys / pnp.real(hdot(pnp.conj(y_k), y_k))
        # The last applicable reason wins.
        status = pnp.array(0)
        status = pnp.where(s.f_k - ls.f_k < ftol, 4, status)
        status = pnp.where(s.ngev >= max_grad, 3, status)
        status = pnp.where(s.nfev >= max_fun, 2, status)
        status = pnp.where(s.k >= max_iter, 1, status)
        status = pnp.where(ls.failed, 5, status)
        converged = np_linalg.norm(ls.g_k, ord=norm) < gtol
        return _LBFGSState(
            converged=converged, failed=(status > 0) & ~converged, k=s.k + 1,
            nfev=s.nfev + ls.nfev, ngev=s.ngev + ls.ngev,
            x_k=(s.x_k + step).astype(s.x_k.dtype), f_k=ls.f_k.astype(s.f_k.dtype),
            g_k=ls.g_k.astype(s.g_k.dtype), s_hist=_pushed(s.s_hist, step),
            y_hist=_pushed(s.y_hist, y_k), rho_hist=_pushed(s.rho_hist, rho),
            gamma=gamma.astype(s.g_k.dtype), status=pnp.where(converged, 0, status),
            ls_status=ls.status)

    out: _LBFGSState = while_loop(lambda s: ~s.converged & ~s.failed, body, init)
    return out


def minimize(fun: Callable[..., Any], x0: Any, args: tuple[Any, ...] = (), *, method: str,
             tol: float | None = None, options: Mapping[str, Any] | None = None
             ) -> OptimizeResults:
    """Minimize the scalar function ``fun(x, *args)`` of a 1-D array ``x``, from ``x0``.

    ``method`` is ``"BFGS"`` or ``"l-bfgs-experimental-do-not-rely-on-this"`` (any
    case).  ``options`` are the method's: for BFGS ``maxiter`` (default
    ``200 * x0.size``), ``norm`` (of the gradient, default ``inf``), ``gtol`` (1e-5),
    ``line_search_maxiter`` (10); for L-BFGS also ``maxcor``, ``ftol``, ``maxfun``,
    ``maxgrad`` and ``maxls``.  ``tol`` is accepted and ignored, as in JAX.  Gradients
    come from :func:`plait.grad`; works under ``jit`` and ``vmap``.

    Raises:
      TypeError: ``args`` is not a tuple; an option the method does not take.
      ValueError: an unknown ``method``.
    """
    del tol  # JAX's minimize takes it and does not use it
    opts = dict(options) if options is not None else {}
    if not isinstance(args, tuple):
        raise TypeError(f"args argument to plait.scipy.optimize.minimize must be a tuple, "
                        f"but got {type(args).__name__}: {args!r}")

    def objective(x: Any) -> Any:
        return fun(x, *args)

    kind = method.lower() if isinstance(method, str) else method
    if kind == "bfgs":
        _check_options(_bfgs, opts, method)
        b, status = _bfgs(objective, x0, **opts)
        return OptimizeResults(x=b.x_k, success=b.converged & ~pnp.asarray(b.failed),
                               status=status, fun=b.f_k, jac=b.g_k, hess_inv=b.H_k,
                               nfev=b.nfev, njev=b.ngev, nit=b.k)
    if kind == "l-bfgs-experimental-do-not-rely-on-this":
        _check_options(_lbfgs, opts, method)
        lb = _lbfgs(objective, x0, **opts)
        return OptimizeResults(x=lb.x_k, success=lb.converged & ~lb.failed, status=lb.status,
                               fun=lb.f_k, jac=lb.g_k, hess_inv=None, nfev=lb.nfev,
                               njev=lb.ngev, nit=lb.k)
    raise ValueError(f"Method {method} not recognized: expected 'BFGS' or "
                     f"'l-bfgs-experimental-do-not-rely-on-this'")


def _check_options(solver: Callable[..., Any], opts: dict[str, Any], method: str) -> None:
    known = solver.__code__.co_varnames[2:solver.__code__.co_argcount]
    unknown = sorted(set(opts) - set(known))
    if unknown:
        raise TypeError(f"minimize with method {method!r} takes the options "
                        f"{', '.join(known)}, but got {', '.join(map(repr, unknown))}")

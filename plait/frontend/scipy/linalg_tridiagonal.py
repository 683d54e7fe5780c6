"""``plait.scipy.linalg.eigh_tridiagonal``: the eigenvalues (and eigenvectors) of a real
symmetric (or complex Hermitian) tridiagonal matrix, computed as JAX 0.10.2's
``jax.scipy.linalg.eigh_tridiagonal`` computes them.

The eigenvalues come from parallel bisections, one per eigenvalue, on Sturm sequence
counts (the number of eigenvalues below a point), started from the Gershgorin interval
and run until the intervals are narrower than ``eps * |T|`` (or ``tol``), at most the
mantissa's bits plus one steps.  The eigenvectors come from inverse iteration (a
batched tridiagonal solve per eigenvalue, at most 5 steps), vectors of clusters of
close eigenvalues orthogonalized by a QR decomposition after each step.

Inverse iteration starts from random vectors, drawn as JAX draws them:
``random.normal(key)``, ``key(42)`` by default, so the eigenvectors (each determined
only up to its sign) are JAX's.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from plait.frontend import lax
from plait.frontend import numpy as pnp
from plait.frontend.api.control_flow import fori_loop, while_loop
from plait.frontend.api.jit import jit
from plait.frontend.core.array_base import Array
from plait.frontend.lax import linalg as lax_linalg
from plait.frontend.numpy import linalg as np_linalg
from plait.frontend.random.keys import key as random_key
from plait.frontend.random.samplers import normal
from plait.ir import dtypes as dt

__all__ = ["eigh_tridiagonal"]

_SUPPORTED = (np.dtype(np.float32), np.dtype(np.float64), np.dtype(np.complex64),
              np.dtype(np.complex128))
_BLOCK = 16  # Sturm recurrence steps per while_loop iteration


def _sturm(alpha: Array, beta_sq: Array, pivmin: Array, perturbation: Array,
           x: Array) -> Array:
    """The number of eigenvalues below each point of ``x`` (the sign changes of the Sturm
    sequence, with pivots kept away from zero)."""
    n = alpha.shape[0]
    q = alpha[0] - x
    count = pnp.where(q < 0, pnp.ones(x.shape, np.int32), pnp.zeros(x.shape, np.int32))
    q = pnp.where(alpha[0] == x, perturbation, q)

    def step(i: Any, q: Array, count: Array) -> tuple[Array, Array]:
        q = alpha[i] - beta_sq[i - 1] / q - x
        below = q <= pivmin
        return pnp.where(below, pnp.minimum(q, -pivmin), q), pnp.where(below, count + 1, count)

    def steps(unroll: int) -> Any:
        def run(args: tuple[Any, Array, Array]) -> tuple[Any, Array, Array]:
            start, q, count = args
            for j in range(unroll):
                q, count = step(start + j, q, count)
            return start + unroll, q, count
        return run

    peel = (n - 1) % _BLOCK
    state = steps(peel)((1, q, count))
    _, _, count = while_loop(lambda s: pnp.less(s[0], n), steps(_BLOCK), state)
    out: Array = count
    return out


def _start_vectors(key: Any, k: int, n: int, dtype: np.dtype[Any]) -> Array:
    x = normal(key, (k, n), dtype=np.finfo(dtype).dtype).astype(dtype)
    out: Array = x / np_linalg.norm(x, axis=-1, keepdims=True).astype(dtype)
    return out


def _eigenvectors(alpha: Array, beta: Array, eigvals: Array, key: Any) -> Array:
    """Inverse iteration for all eigenvectors at once (rows of the result)."""
    n, k = alpha.shape[0], eigvals.shape[0]
    dl = pnp.pad(pnp.conj(beta), (1, 0))
    du = pnp.pad(beta, (0, 1))
    # Runs of eigenvalues closer than sqrt(eps) |T| have their vectors orthogonalized.
    gap = eigvals[1:] - eigvals[:-1]
    t_norm = pnp.maximum(pnp.abs(eigvals[0]), pnp.abs(eigvals[-1]))
    close = gap < pnp.sqrt(np.finfo(eigvals.dtype).eps) * t_norm
    left_close = pnp.pad(close, (1, 0), constant_values=False)
    right_close = pnp.pad(close, (0, 1), constant_values=False)
    starts_mask = pnp.logical_and(pnp.logical_not(left_close), right_close)
    ends_mask = pnp.logical_and(left_close, pnp.logical_not(right_close))
    max_clusters = k // 2 + 1
    starts = pnp.nonzero(starts_mask, size=max_clusters)[0]
    ends = pnp.nonzero(ends_mask, size=max_clusters)[0] + 1
    num_clusters = pnp.sum(starts_mask)
    arange_k = pnp.arange(k)
    solve_dtype = pnp.result_type(alpha.dtype, beta.dtype)

    def orthogonalize(ev: Array) -> Array:
        def cluster(i: Any, ev: Array) -> Array:
            start, end = starts[i], ends[i]
            mask = (arange_k < end - start).astype(ev.dtype)
            block = lax.dynamic_slice(pnp.pad(ev, ((0, k), (0, 0))), (start, 0), (k, n))
            q, _ = np_linalg.qr((block * mask[:, None]).T)
            update = lax.dynamic_update_slice(pnp.zeros((2 * k, n), dtype=ev.dtype),
                                              q.T * mask[:, None], (start, 0))[:k, :]
            inside = (arange_k >= start) & (arange_k < end)
            return pnp.where(inside[:, None], update, ev)
        out: Array = fori_loop(0, num_clusters, cluster, ev)
        return out

    shifted = (alpha[None, :] - eigvals[:, None]).astype(solve_dtype)
    dls = pnp.broadcast_to(dl[None, :], (k, n)).astype(solve_dtype)
    dus = pnp.broadcast_to(du[None, :], (k, n)).astype(solve_dtype)

    def step(state: tuple[Any, Array, Array, Array]) -> tuple[Any, Array, Array, Array]:
        i, v, norm_v, _ = state
        new = lax_linalg.tridiagonal_solve(dls, shifted, dus, v[:, :, None].astype(solve_dtype),
                                           perturb_singular=True)[..., 0]
        norm_new = np_linalg.norm(new, axis=-1, keepdims=True)
        new = new / norm_new.astype(new.dtype)
        return i + 1, orthogonalize(new), norm_new[..., 0], norm_v

    def going(state: tuple[Any, Array, Array, Array]) -> Any:
        i, _, norm_v, norm_old = state
        return pnp.logical_and(i < 5, pnp.any(norm_v >= 1.1 * norm_old))

    v0 = _start_vectors(key, k, n, solve_dtype)
    _, v, _, _ = while_loop(going, step, (0, v0, pnp.ones(k, dtype=eigvals.dtype),
                                          pnp.zeros(k, dtype=eigvals.dtype)))
    out: Array = v
    return out


def _eigh_tridiagonal(alpha: Array, beta: Array, eigvals_only: bool, select: str,
                      select_range: tuple[float, float] | None,
                      tol: Any, key: Any) -> Array | tuple[Array, Array]:
    n = alpha.shape[0]
    if n <= 1:
        return pnp.real(alpha) if eigvals_only else (pnp.real(alpha),
                                                     pnp.eye(n, dtype=alpha.dtype))
    if dt.is_complex(alpha.dtype):
        alpha = pnp.real(alpha)
        beta_sq = pnp.real(beta * pnp.conj(beta))
        beta_abs = pnp.sqrt(beta_sq)
    else:
        beta_abs = pnp.abs(beta)
        beta_sq = pnp.square(beta)
    # Gershgorin bounds of the spectrum.
    row_sums = pnp.concatenate([beta_abs[:1], beta_abs[:-1] + beta_abs[1:], beta_abs[-1:]],
                               axis=0)
    est_max = pnp.amax(alpha + row_sums)
    est_min = pnp.amin(alpha - row_sums)
    t_norm = pnp.maximum(pnp.abs(est_min), pnp.abs(est_max))
    finfo = np.finfo(alpha.dtype)
    one = np.ones([], dtype=alpha.dtype)
    safemin = np.maximum(one / finfo.max, (one + finfo.eps) * finfo.tiny)
    pivmin = safemin * pnp.maximum(1, pnp.amax(beta_sq))
    perturbation = pnp.square(finfo.eps * beta_abs[0])
    abs_tol = finfo.eps * t_norm
    if tol is not None:
        abs_tol = pnp.maximum(tol, abs_tol)
    max_it = finfo.nmant + 1
    if select == "a":
        targets = pnp.arange(n, dtype=np.int32)
    elif select == "i":
        if select_range is None:
            raise ValueError("for select='i', select_range must be specified.")
        if select_range[0] > select_range[1]:
            raise ValueError("Got empty index range in select_range.")
        targets = pnp.arange(select_range[0], select_range[1] + 1, dtype=np.int32)
    elif select == "v":
        raise NotImplementedError("eigh_tridiagonal(..., select='v') is not implemented")
    else:
        raise ValueError("'select must have a value in {'a', 'i', 'v'}.")
    fudge = 2.1
    slack = pnp.array(n, alpha.dtype) * fudge * finfo.eps * t_norm
    shape = targets.shape
    lower = pnp.broadcast_to(est_min - slack - 2 * fudge * pivmin, shape)
    upper = pnp.broadcast_to(est_max + slack + fudge * pivmin, shape)
    mid = 0.5 * (upper + lower)
    pivmin = pnp.broadcast_to(pivmin, shape)
    perturbation = pnp.broadcast_to(perturbation, shape)

    def going(args: tuple[Any, Array, Array, Array]) -> Any:
        i, lo, _, hi = args
        return pnp.logical_and(pnp.less(i, max_it), pnp.less(abs_tol, pnp.amax(hi - lo)))

    def bisect(args: tuple[Any, Array, Array, Array]) -> tuple[Any, Array, Array, Array]:
        i, lo, mid, hi = args
        counts = _sturm(alpha, beta_sq, pivmin, perturbation, mid)
        lo = pnp.where(counts <= targets, mid, lo)
        hi = pnp.where(counts > targets, mid, hi)
        return i + 1, lo, 0.5 * (lo + hi), hi

    _, _, found, _ = while_loop(going, bisect, (0, lower, mid, upper))
    eigvals: Array = found
    if eigvals_only:
        return eigvals
    return eigvals, _eigenvectors(alpha, beta, eigvals, key).T


_eigh_tridiagonal_jit = jit(_eigh_tridiagonal, static_argnums=(2, 3, 4))


def eigh_tridiagonal(d: Any, e: Any, *, eigvals_only: bool = False, select: str = "a",
                     select_range: tuple[float, float] | None = None,
                     tol: float | None = None,
                     key: Any = None) -> Array | tuple[Array, Array]:
    """The eigenvalues (ascending) of the symmetric tridiagonal matrix with diagonal ``d``
    (``(N,)``) and off-diagonal ``e`` (``(N - 1,)``) -- all of them (``select='a'``) or
    those of indices ``select_range[0] <= i <= select_range[1]`` (``select='i'``) -- and,
    unless ``eigvals_only``, their eigenvectors as columns ``(w, v)``.  ``tol`` is the
    bisection's absolute tolerance (at least ``eps * |T|``); ``key`` (``key(42)`` if
    ``None``) draws inverse iteration's starting vectors.

    Raises:
      TypeError: ``d`` and ``e`` have different dtypes, or a dtype other than float32,
        float64, complex64 or complex128.
      ValueError: ``select`` is unknown, or ``select='i'`` without a (non-empty)
        ``select_range``.
      NotImplementedError: ``select='v'`` (as in JAX).
    """
    alpha, beta = pnp.asarray(d), pnp.asarray(e)
    if alpha.dtype != beta.dtype:
        raise TypeError("diagonal and off-diagonal values must have same dtype, "
                        f"got {alpha.dtype} and {beta.dtype}")
    if alpha.dtype not in _SUPPORTED or beta.dtype not in _SUPPORTED:
        raise TypeError("Only float32 and float64 inputs are supported as inputs to "
                        f"jax.scipy.linalg.eigh_tridiagonal, got {alpha.dtype} and "
                        f"{beta.dtype}")
    rng = None if select_range is None else (select_range[0], select_range[1])
    if not eigvals_only and key is None:
        key = random_key(42)
    return _eigh_tridiagonal_jit(alpha, beta, bool(eigvals_only), select, rng, tol, key)

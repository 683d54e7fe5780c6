"""``plait.scipy.linalg.polar``, the polar decomposition, computed as JAX 0.10.2's
``jax.scipy.linalg.polar`` computes it.

``method='qdwh'`` (the default) is the QR-based dynamically weighted Halley iteration
(Nakatsukasa, Bai and Gygi 2010): the matrix is scaled by an estimate of its 2-norm,
the iteration's weights are computed ahead of time in Python from the lower bound
``eps`` on the scaled smallest singular value (the first, while the weight ``c`` exceeds
100, through a QR decomposition, the rest through a Cholesky factorization, then plain
Halley steps in a ``while_loop`` until the iterate stops moving, at most 10 in all), and
a Newton-Schulz step refines the result.  ``method='svd'`` forms the factors from an
SVD.  Both stage under ``jit`` and batch under ``vmap``; the SVD method differentiates,
the QDWH one only in forward mode (its ``while_loop``), as in JAX.
"""

from __future__ import annotations

import operator
from functools import partial
from typing import Any

import numpy as np

from plait.frontend import lax
from plait.frontend import numpy as pnp
from plait.frontend.api.control_flow import fori_loop, while_loop
from plait.frontend.api.jit import jit
from plait.frontend.core.array_base import Array
from plait.frontend.lax import linalg as lax_linalg
from plait.frontend.numpy import linalg as np_linalg

__all__ = ["polar", "qdwh"]

_Params = tuple[Any, Any, Any]
_CHOLESKY_CUTOFF = 100
_MAX_ITERATIONS = 10


def _h(x: Array) -> Array:
    return pnp.conj(x.T)


def _qr_step(u: Array, params: _Params) -> Array:
    """One weighted Halley step through the QR decomposition of ``[sqrt(c) u; I]``."""
    a_minus_e_by_sqrt_c, sqrt_c, e = params
    rows, cols = u.shape
    y = pnp.concatenate([sqrt_c * u, pnp.eye(cols, dtype=u.dtype)])
    q, _ = lax_linalg.qr(y, full_matrices=False)
    q1 = q[:rows, :cols]
    q2 = _h(q[rows:rows + cols, :])
    out: Array = e * u + a_minus_e_by_sqrt_c * (q1 @ q2)
    return out


def _cholesky_step(u: Array, params: _Params) -> Array:
    """One weighted Halley step through the Cholesky factor of ``c u^H u + I``."""
    a_minus_e, c, e = params
    cols = u.shape[1]
    x = c * (_h(u) @ u) + pnp.eye(cols, dtype=u.dtype)
    y = lax_linalg.cholesky(x, symmetrize_input=False)
    z = lax_linalg.triangular_solve(y, u.T, left_side=True, lower=True,
                                    conjugate_a=True).conj()
    z = _h(lax_linalg.triangular_solve(y, z, left_side=True, lower=True, transpose_a=True,
                                       conjugate_a=True))
    out: Array = e * u + a_minus_e * z
    return out


def _weights(eps: float, max_iterations: int) -> tuple[list[_Params], list[_Params]]:
    """The (QR, Cholesky) steps' parameters, from the lower bound ``l = eps`` on the
    scaled matrix's smallest singular value, updated as the iteration would raise it."""
    tol_l = 10.0 * eps / 2.0
    bound = eps
    qr_params: list[_Params] = []
    chol_params: list[_Params] = []
    k = 0
    while bound + tol_l < 1 and k < max_iterations:
        k += 1
        l2 = bound * bound
        dd = (4 * (1 / l2 - 1) / l2) ** (1 / 3)
        sqd = (1.0 + dd) ** (1 / 2)
        a = sqd + (2 - dd + 2 * (2 - l2) / (l2 * sqd)) ** (1 / 2)
        b = (a - 1) ** 2 / 4
        c = a + b - 1
        bound = bound * (a + b * l2) / (1 + c * l2)
        e = b / c
        if c > _CHOLESKY_CUTOFF:
            qr_params.append(((a - e) / c ** (1 / 2), c ** (1 / 2), e))
        else:
            chol_params.append((a - e, c, e))
    return qr_params, chol_params


def _qdwh(x: Array, eps: float | None,
          max_iterations: int = _MAX_ITERATIONS) -> tuple[Array, Array, Array, Array]:
    """The polar factors ``(u, h)``, ``x = u h``, of a matrix with at least as many rows
    as columns, the number of iterations taken and whether they converged."""
    if eps is None:
        eps = float(np.finfo(x.dtype).eps)
    one_norm = np_linalg.norm(x, ord=1)
    inf_norm = np_linalg.norm(x, ord=np.inf)
    alpha_inverse = lax.rsqrt(one_norm) * lax.rsqrt(inf_norm)
    alpha_inverse = pnp.where(one_norm == 0, 1, alpha_inverse)
    u = x * alpha_inverse.astype(x.dtype)
    tol_norm = pnp.cbrt(10.0 * eps / 2.0)
    qr_params, chol_params = _weights(eps, max_iterations)

    def run(u: Array, params: list[_Params], step: Any,
            test: bool) -> tuple[Array, Any]:
        if not params:
            return u, True
        table = pnp.array(params).astype(x.dtype)

        def body(k: Any, state: tuple[Array, Any]) -> tuple[Array, Any]:
            prev, _ = state
            a, b, c = lax.dynamic_index_in_dim(table, k, keepdims=False)
            new = step(prev, (a, b, c))
            moving = np_linalg.norm(new - prev) > tol_norm if test else True
            return new, moving

        out: tuple[Array, Any] = fori_loop(0, len(params), body, (u, True))
        return out

    u, _ = run(u, qr_params, _qr_step, False)
    u, moving = run(u, chol_params, _cholesky_step, True)

    def halley(state: tuple[Any, Array, Any]) -> tuple[Any, Array, Any]:
        k, prev, _ = state
        new = _cholesky_step(prev, (3 - 1 / 3, 3, 1 / 3))
        return k + 1, new, np_linalg.norm(new - prev) > tol_norm

    def going(state: tuple[Any, Array, Any]) -> Any:
        k, _, moving = state
        return pnp.logical_and(moving, k < max_iterations)

    iterations, u, moving = while_loop(going, halley,
                                       (len(qr_params) + len(chol_params), u, moving))
    u = 1.5 * u - 0.5 * u @ (_h(u) @ u)
    h = _h(u) @ x
    return u, (h + _h(h)) / 2, iterations, pnp.logical_not(moving)


_qdwh_jit = jit(_qdwh, static_argnums=(1, 2))


def qdwh(x: Any, *, is_hermitian: bool = False, max_iterations: int | None = None,
         eps: float | None = None, dynamic_shape: tuple[int, int] | None = None
         ) -> tuple[Array, Array, Array, Array]:
    """The polar decomposition ``x = u h`` of an ``m x n`` matrix with ``m >= n`` by the
    QR-based dynamically weighted Halley iteration (the module docstring), as
    ``jax.lax.linalg.qdwh``: ``(u, h, num_iters, is_converged)``, the iteration stopping
    when ``|u_k - u_k-1| < (5 eps)^(1/3)`` or after ``max_iterations`` (10) steps.
    ``is_hermitian`` is accepted and unused, as in JAX.

    Raises:
      ValueError: ``x`` is not a matrix with ``m >= n``.
      NotImplementedError: ``dynamic_shape`` (a matrix padded from a smaller one).
    """
    del is_hermitian  # (JAX's is unused too)
    if dynamic_shape is not None:
        raise NotImplementedError("qdwh: dynamic_shape (a matrix padded from a smaller "
                                  "true shape) is not supported; pass the unpadded matrix")
    arr = pnp.asarray(x)
    if arr.ndim != 2:
        raise ValueError(f"qdwh: expected a matrix, but got an array of shape {arr.shape}")
    if arr.shape[0] < arr.shape[1]:
        raise ValueError("The input matrix of shape M x N must have M >= N.")
    iterations = _MAX_ITERATIONS if max_iterations is None else operator.index(max_iterations)
    return _qdwh_jit(arr, None if eps is None else float(eps), iterations)


def _polar_2d(a: Array, side: str, method: str, eps: float | None) -> tuple[Array, Array]:
    m, n = a.shape
    if method == "qdwh":
        if m >= n and side == "right":
            unitary, posdef, _, _ = _qdwh(a, eps)
        elif m < n and side == "left":
            unitary, posdef, _, _ = _qdwh(_h(a), eps)
            unitary, posdef = _h(unitary), _h(posdef)
        else:
            raise NotImplementedError(
                "method='qdwh' only supports mxn matrices where m < n where side='right' "
                f"and m >= n side='left', got {a.shape} with {side=}")
    elif method == "svd":
        u, s, vh = lax_linalg.svd(a, full_matrices=False)
        s = s.astype(u.dtype)
        unitary = u @ vh
        if side == "right":
            posdef = (_h(vh) * s[None, :]) @ vh
        else:
            posdef = (u * s[None, :]) @ _h(u)
    else:
        raise ValueError(f"Unknown polar decomposition method {method}.")
    return unitary, posdef


def _polar(a: Array, side: str, method: str, eps: float | None) -> tuple[Array, Array]:
    sig = "(m,n)->(m,n),(n,n)" if side == "right" else "(m,n)->(m,n),(m,m)"
    out: tuple[Array, Array] = pnp.vectorize(
        partial(_polar_2d, side=side, method=method, eps=eps), signature=sig)(a)
    return out


_polar_jit = jit(_polar, static_argnums=(1, 2, 3))


def polar(a: Any, side: str = "right", *, method: str = "qdwh", eps: float | None = None,
          max_iterations: int | None = None) -> tuple[Array, Array]:
    """The polar decomposition ``(u, p)`` of ``a`` (``(..., m, n)``): ``a = u p``
    (``side='right'``, ``p`` ``(..., n, n)``) or ``a = p u`` (``side='left'``, ``p``
    ``(..., m, m)``), ``p`` Hermitian positive semidefinite and ``u`` with orthonormal
    columns (rows if ``n > m``).  ``method`` is 'qdwh' (see the module docstring; it
    takes tall matrices with ``side='right'`` and wide ones with ``side='left'``) or
    'svd'.  ``eps`` is QDWH's tolerance (the dtype's epsilon by default);
    ``max_iterations`` is ignored (at most 10 iterations), as in JAX.

    Raises:
      ValueError: ``a`` has fewer than 2 dimensions, or ``side`` or ``method`` is
        unknown.
      NotImplementedError: ``method='qdwh'`` with a wide ``a`` and ``side='right'``, or
        a square or tall ``a`` and ``side='left'``.
    """
    arr = pnp.asarray(a)
    if arr.ndim < 2:
        raise ValueError("The input `a` must be at least a 2-D array.")
    if side not in ["right", "left"]:
        raise ValueError("The argument `side` must be either 'right' or 'left'.")
    return _polar_jit(arr, side, method, None if eps is None else float(eps))

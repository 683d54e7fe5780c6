"""``lax.linalg.hessenberg``, ``lax.linalg.tridiagonal`` and ``lax.linalg.schur``, with the
signatures and semantics of JAX 0.10.2's ``jax.lax.linalg`` (CPU only: LAPACK)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from plait.frontend.core.array_base import Array
from plait.frontend.core.tracing import bind
from plait.ir import primitives as P

__all__ = ["hessenberg", "tridiagonal", "schur"]


def hessenberg(a: Any) -> tuple[Array, Array]:
    """Reduction of square matrices ``[..., n, n]`` to upper Hessenberg form (LAPACK's
    ``gehrd``).

    Returns ``(a, taus)``: the upper triangle and first subdiagonal of ``a`` hold the
    Hessenberg matrix ``H``, the entries below the Householder reflectors of ``Q``
    (``A = Q H Q^H``), and ``taus`` (``[..., n - 1]``) their scales; see
    :func:`plait.scipy.linalg.hessenberg` for ``H`` and ``Q`` themselves.  Not
    differentiable (nor in JAX).

    Raises:
      TypeError: ``a`` is not a (batch of) nonempty square matrices of float32, float64,
        complex64 or complex128.
    """
    h, taus = bind(P.hessenberg_p, a)
    return h, taus


def tridiagonal(a: Any, *, lower: bool = True) -> tuple[Array, Array, Array, Array]:
    """Reduction of Hermitian matrices ``[..., n, n]`` to real symmetric tridiagonal form
    ``A = Q T Q^H`` (LAPACK's ``sytrd``/``hetrd``); only the ``lower`` (or upper) triangle
    of ``a`` is read.

    Returns ``(a, d, e, taus)``: the diagonal and first sub- (``lower``) or superdiagonal
    of ``a`` hold ``T``, the entries beyond the Householder reflectors of ``Q``; ``d``
    (``[..., n]``) is ``T``'s diagonal and ``e`` (``[..., n - 1]``) its off-diagonal, both
    real; ``taus`` are the reflectors' scales.  Not differentiable (nor in JAX).

    Raises:
      TypeError: ``a`` is not a (batch of) nonempty square matrices of float32, float64,
        complex64 or complex128.
    """
    out, d, e, taus = bind(P.tridiagonal_p, a, lower=bool(lower))
    return out, d, e, taus


def schur(x: Any, *, compute_schur_vectors: bool = True, sort_eig_vals: bool = False,
          select_callable: Callable[..., Any] | None = None) -> Any:
    """The Schur decomposition ``x = Z T Z^H`` of square matrices ``[..., n, n]`` (LAPACK's
    ``gees``).

    Returns ``[T, Z]``, or ``[T]`` without ``compute_schur_vectors``: ``T`` is upper
    triangular, for real ``x`` quasi-upper-triangular (a 2x2 diagonal block per complex
    conjugate pair of eigenvalues), and ``Z`` unitary.  A decomposition that fails gives
    NaNs.  ``sort_eig_vals`` and ``select_callable`` are unused by JAX (sorting does not
    lower on the CPU).  Not differentiable (nor in JAX).

    Raises:
      TypeError: ``x`` is not a (batch of) square matrices of float32, float64, complex64
        or complex128.
    """
    out = bind(P.schur_p, x, compute_schur_vectors=bool(compute_schur_vectors),
               sort_eig_vals=bool(sort_eig_vals), select_callable=select_callable)
    return list(out)

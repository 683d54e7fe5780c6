"""Sparse linear algebra, as JAX 0.10.2's ``jax.experimental.sparse.linalg``:
:func:`lobpcg_standard` (the top eigenpairs of a Hermitian operator) and :func:`spsolve`
(a direct solve with a CSR matrix).

``lobpcg_standard`` follows JAX's variant of LOBPCG step for step (the same
orthonormalizations, basis extension, convergence test and iteration count), as one
``while_loop``; unlike JAX's it also takes complex Hermitian operators (JAX transposes
where the conjugate transpose is needed and fails on them) and sparse arrays.

``spsolve`` solves on the host with ``scipy.sparse.linalg.spsolve``, as JAX's CPU path,
through ``pure_callback``; it is staged as a ``custom_linear_solve`` whose operator is
the CSR matrix-vector product, so that derivatives with respect to ``b`` and to
``data`` are JAX's (``x' = A⁻¹(b' - A' x)``, transposed with a solve by ``Aᵀ``).
Unlike JAX's, it also batches under ``vmap`` (one host solve per element) and takes
CSR buffers with unsorted or repeated column indices (JAX hands SciPy read-only buffers,
which SciPy then fails to sort in place).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

import numpy as np

from plait.frontend import lax
from plait.frontend import numpy as pnp
from plait.frontend.api.callbacks import pure_callback
from plait.frontend.api.control_flow import while_loop
from plait.frontend.api.jit import jit
from plait.frontend.api.solves import custom_linear_solve
from plait.frontend.core.arguments import ShapeDtypeStruct
from plait.frontend.core.array_base import Array
from plait.frontend.numpy import linalg as la
from plait.frontend.numpy._core import check_arraylike
from plait.frontend.sparse.base import JAXSparse
from plait.frontend.sparse.csr import csr_to_coo
from plait.ir import dtypes as dt
from plait.ir.primitives import Precision

__all__ = ["lobpcg_standard", "spsolve"]

Operator = Callable[[Array], Array]
_HIGHEST = (Precision.HIGHEST, Precision.HIGHEST)
# The dtypes LAPACK's eigh takes (JAX's lobpcg fails on the others in eigh).
_LAPACK_DTYPES = (np.float32, np.float64, np.complex64, np.complex128)


def lobpcg_standard(A: Array | np.ndarray | JAXSparse | Operator,  # noqa: N803  (JAX's)
                    X: Any, m: int = 100,
                    tol: Array | float | None = None) -> tuple[Array, Array, Array]:
    """The top ``k`` eigenvalues and eigenvectors of a Hermitian ``(n, n)`` operator ``A``
    (an array, a sparse array, or a function computing ``A @ x`` for ``(n, j)`` blocks
    ``x``) by LOBPCG, from the ``(n, k)`` initial block ``X`` (linearly independent
    columns; ``0 < 5 k < n``).

    At most ``m`` iterations; an eigenpair ``(λ, v)`` has converged when
    ``|A v - λ v| < tol * 10 n (λ + |A v|)``, and the loop stops once all have.
    ``tol`` defaults to the machine epsilon of ``X``'s dtype.

    Returns:
      ``(theta, U, i)``: the ``(k,)`` eigenvalues in descending order, their ``(n, k)``
      eigenvectors (orthonormal columns), and the number of iterations done.

    Raises:
      TypeError: ``A`` is none of the above, or ``X`` is not an array.
      ValueError: ``X`` is not ``(n, k)`` with ``0 < 5 k < n``, ``A`` is not ``(n, n)``
        or gives results of another dtype than ``X``'s, or ``X`` is not inexact.
      NotImplementedError: ``X`` is of a half-precision dtype (which eigh lacks).
    """
    check_arraylike("lobpcg_standard", X)
    result: tuple[Array, Array, Array]
    if isinstance(A, Array | np.ndarray):
        result = _lobpcg_matrix(A, X, m, tol)
    elif isinstance(A, JAXSparse):
        result = _lobpcg_sparse(A, X, m, tol)
    elif callable(A):
        result = _lobpcg_callable(A, X, m, tol)
    else:
        raise TypeError(f"lobpcg_standard: expected A to be an array, a sparse array or a "
                        f"callable computing A @ x, but got {type(A).__name__}")
    return result


@partial(jit, static_argnames=("m",))
def _lobpcg_matrix(A: Array, X: Array, m: int,
                   tol: Array | float | None) -> tuple[Array, Array, Array]:
    _check_square(tuple(A.shape), X)
    return _lobpcg(partial(_mm, A), X, m, tol)


def _check_square(shape: tuple[int, ...], X: Array) -> None:
    n = X.shape[0] if X.ndim == 2 else None
    if len(shape) != 2 or shape[0] != shape[1] or (n is not None and shape[0] != n):
        raise ValueError(f"lobpcg_standard: expected A of shape (n, n) with n = X.shape[0] "
                         f"(X of shape {tuple(X.shape)}), but got A of shape {shape}")


# A sparse array is a pytree: its buffers are arguments, as a dense matrix is.
@partial(jit, static_argnames=("m",))
def _lobpcg_sparse(A: JAXSparse, X: Array, m: int,
                   tol: Array | float | None) -> tuple[Array, Array, Array]:
    _check_square(tuple(A.shape), X)

    def product(x: Array) -> Array:
        out: Array = A @ x
        return out
    return _lobpcg(product, X, m, tol)


# A is static, as in JAX: one compilation per operator function.
@partial(jit, static_argnames=("A", "m"))
def _lobpcg_callable(A: Operator, X: Array, m: int,
                     tol: Array | float | None) -> tuple[Array, Array, Array]:
    return _lobpcg(A, X, m, tol)


def _lobpcg(A: Operator, X: Array, m: int,
            tol: Array | float | None) -> tuple[Array, Array, Array]:
    """The LOBPCG iteration, keeping the current eigenvector estimates ``X``, the search
    directions ``P`` and the residuals ``R`` orthonormal (some ``P`` and ``R`` columns
    may be zero, where the basis was truncated)."""
    _check_inputs(A, X)
    n, k = X.shape
    if tol is None:
        tol = float(np.finfo(X.dtype).eps)
    X = _orthonormalize(X)
    P = _extend_basis(X, k)
    AX = A(X)
    # (The real part: exact for a Hermitian A, and the eigenvalues eigh gives are real.)
    theta = pnp.real(pnp.sum(pnp.conj(X) * AX, axis=0, keepdims=True))
    R = AX - theta * X

    def cond(state: tuple[Any, ...]) -> Array:
        i, _, _, _, converged, _ = state
        return pnp.logical_and(i < m, converged < k)

    def body(state: tuple[Any, ...]) -> tuple[Any, ...]:
        i, X, P, R, _, _ = state
        R = _project_out(pnp.concatenate((X, P), axis=1), R)
        XPR = pnp.concatenate((X, P, R), axis=1)
        theta, Q = _rayleigh_ritz(A, XPR)
        # The new estimates: the top k Ritz vectors.
        B = Q[:, :k]
        B = B / _column_norms(B)
        X = _mm(XPR, B)
        X = X / _column_norms(X)
        # The new directions: the part of span(X, previous X) orthogonal to the new X.
        # In XPR's coordinates that is spanned by Q's trailing columns combined by an
        # orthonormal basis of Q[:k, k:]ᴴ (by Q's unitarity), and comes out orthonormal
        # (as XPR is), with no further orthonormalization.
        q, _ = la.qr(_ct(Q[:k, k:]))
        P = _mm(XPR, _mm(Q[:, k:], q))
        norm_p = _column_norms(P)
        P = P / pnp.where(norm_p == 0, 1.0, norm_p)
        AX = A(X)
        R = AX - theta[pnp.newaxis, :k] * X
        resid_norms = la.norm(R, ord=2, axis=0)
        # Converged: the residual is within the rounding error computing it would make
        # for an exact eigenvector (with a margin for a few elementwise operations).
        reltol = la.norm(AX, ord=2, axis=0) + theta[:k]
        reltol = reltol * n
        reltol = reltol * 10
        converged = pnp.sum(resid_norms < tol * reltol)
        return i + 1, X, P, R, converged, theta[pnp.newaxis, :k]

    i, X, _, _, _, theta = while_loop(cond, body, (0, X, P, R, 0, theta))
    return theta[0, :], X, i


def _check_inputs(A: Operator, X: Array) -> None:
    if X.ndim != 2:
        raise ValueError(f"lobpcg_standard: expected X of shape (n, k), but got shape "
                         f"{tuple(X.shape)}")
    n, k = X.shape
    if k == 0:
        raise ValueError(f"lobpcg_standard: expected search dim k > 0 (X of shape (n, k)), "
                         f"but got X of shape {tuple(X.shape)}")
    if k * 5 >= n:
        raise ValueError(f"lobpcg_standard: expected search dim * 5 < matrix dim, but got "
                         f"{k} * 5 = {k * 5} >= {n} (X of shape {tuple(X.shape)})")
    out = A(pnp.zeros((n, 1), X.dtype))
    if out.dtype != X.dtype:
        raise ValueError(f"lobpcg_standard: expected A's results to have X's dtype "
                         f"{X.dtype}, but got {out.dtype}")
    if tuple(out.shape) != (n, 1):
        raise ValueError(f"lobpcg_standard: expected A to be a ({n}, {n}) operator, mapping "
                         f"({n}, 1) arrays to ({n}, 1) arrays, but got a result of shape "
                         f"{tuple(out.shape)}")
    if not dt.is_inexact(X.dtype):
        raise ValueError(f"lobpcg_standard: expected X and A of a floating or complex "
                         f"dtype, but got {X.dtype}")
    if X.dtype not in _LAPACK_DTYPES:
        raise NotImplementedError(f"lobpcg_standard: expected X and A of dtype float32, "
                                  f"float64, complex64 or complex128 (those eigh takes), "
                                  f"but got {X.dtype}")


def _mm(a: Array, b: Array) -> Array:
    return lax.dot(a, b, precision=_HIGHEST)


def _ct(x: Array) -> Array:
    """The conjugate transpose (the transpose, for real ``x``)."""
    return pnp.conj(x).T


def _column_norms(x: Array) -> Array:
    return la.norm(x, ord=2, axis=0, keepdims=True)


def _eigh_descending(a: Array) -> tuple[Array, Array]:
    w, v = la.eigh(a)
    return w[::-1], v[:, ::-1]


def _svqb(X: Array) -> Array:
    """An orthonormal basis of ``X``'s columns by SVQB (an eigendecomposition of the
    small Gram matrix ``Xᴴ X``): columns along directions where ``X`` is numerically
    rank deficient come out zero."""
    # With unit columns first, SVQB's diagonal scaling is the identity.
    norms = _column_norms(X)
    X = X / pnp.where(norms == 0, 1.0, norms)
    inner = _mm(_ct(X), X)
    w, V = _eigh_descending(inner)
    # Directions with eigenvalues below eps times the largest are degenerate; the masks
    # keep zero columns (given, or truncated) from dividing by zero.
    tau = float(np.finfo(X.dtype).eps) * w[0]
    padded = pnp.maximum(w, tau)
    # (tau == 0 when X is all zeros.)
    scale = pnp.where(tau > 0, padded, 1.0) ** (-0.5)
    ortho = _mm(X, V * scale[pnp.newaxis, :])
    keep = ((w > tau) & (pnp.real(pnp.diagonal(inner)) > 0))[pnp.newaxis, :]
    ortho = ortho * keep.astype(ortho.dtype)
    norms = _column_norms(ortho)
    keep = keep & (norms > 0)
    return ortho / pnp.where(keep, norms, 1.0)


def _orthonormalize(basis: Array) -> Array:
    # Twice is enough (Kahan): one pass leaves rounding-level overlaps.
    return _svqb(_svqb(basis))


def _project_out(basis: Array, U: Array) -> Array:
    """The part of ``U`` orthogonal to the orthonormal (zero columns allowed) ``basis``,
    orthonormalized, with columns zeroed where that part is numerically nil."""
    for _ in range(2):
        U = U - _mm(basis, _mm(_ct(basis), U))
        U = _orthonormalize(U)
    # Normalizing a near-zero remainder can bring basis components back (near
    # convergence the residuals vanish): end on subtractions and drop every column that
    # lost length in them, so that [basis, U] stays orthonormal or zero.
    for _ in range(2):
        U = U - _mm(basis, _mm(_ct(basis), U))
    norms = _column_norms(U)
    return U * (norms >= 0.99).astype(U.dtype)


def _rayleigh_ritz(A: Operator, S: Array) -> tuple[Array, Array]:
    """The eigenpairs (descending) of ``A`` restricted to the orthonormal (zero columns
    allowed) ``S``: those of ``Sᴴ A S``."""
    return _eigh_descending(_mm(_ct(S), A(S)))


def _extend_basis(X: Array, m: int) -> Array:
    """``m`` orthonormal columns orthogonal to the orthonormal ``(n, k)`` ``X``: columns
    of the block Householder reflector that maps ``X`` onto its top ``k`` rows
    (deterministic, unlike projecting out a random block, which can overlap ``X``)."""
    n, k = X.shape
    upper, lower = X[:k], X[k:]
    u, s, vh = la.svd(upper)
    # upper + u vh has upper's row and column spaces, with singular values 1 + s.
    y = pnp.concatenate([upper + _mm(u, vh), lower], axis=0)
    # The reflector is I - 2 w wᴴ with 2 w wᴴ = y v diag(1 + s)⁻¹ vᴴ yᴴ; it maps X to
    # [-u vh; 0], so its columns past the k-th are orthogonal to X.
    w = _mm(y, _ct(vh) * ((2 * (1 + s)) ** (-1 / 2))[pnp.newaxis, :])
    other = pnp.concatenate([pnp.eye(m, dtype=X.dtype),
                             pnp.zeros((n - k - m, m), dtype=X.dtype)], axis=0)
    h = -2 * la.multi_dot([w, _ct(w[k:, :]), other], precision=Precision.HIGHEST)
    return h.at[k:].add(other)


def spsolve(data: Any, indices: Any, indptr: Any, b: Any, tol: float = 1e-6,
            reorder: int = 1) -> Array:
    """``x`` with ``A @ x == b``, for the square CSR matrix ``A`` of ``data``, ``indices``
    and ``indptr`` (JAX's direct sparse solve; on the CPU, ``scipy.sparse.linalg.spsolve``
    on the host).  ``tol`` and ``reorder`` (``0`` to ``3``) are the GPU solver's singularity
    tolerance and fill-reducing ordering: checked, and unused on the CPU, as in JAX.

    Differentiable in ``b`` and ``data`` (each tangent or cotangent takes one more solve,
    by ``A`` or ``Aᵀ``); under ``vmap``, one host solve per element.

    Raises:
      TypeError: an argument is not an array, or ``tol`` is not a number.
      ValueError: the buffers' dtypes or shapes do not make a CSR system (``data`` and
        ``b`` of one dtype, integer indices, 1-D buffers, ``len(indptr) == len(b) + 1``,
        ``len(data) == len(indices)``), or ``reorder`` is not ``0``, ``1``, ``2`` or ``3``.
    """
    check_arraylike("spsolve", data, indices, indptr, b)
    data, indices, indptr, b = (pnp.asarray(x) for x in (data, indices, indptr, b))
    _check_system(data, indices, indptr, b, tol, reorder)
    rows, _ = csr_to_coo(indices, indptr)

    def matvec(x: Array) -> Array:
        return pnp.zeros_like(x).at[rows].add(data * x[indices])

    def solve(_: Operator, rhs: Array) -> Array:
        return _host_solve(data, indices, indptr, rhs, transpose=False)

    def transpose_solve(_: Operator, rhs: Array) -> Array:
        return _host_solve(data, indices, indptr, rhs, transpose=True)

    x: Array = custom_linear_solve(matvec, b, solve, transpose_solve)
    return x


def _check_system(data: Array, indices: Array, indptr: Array, b: Array, tol: Any,
                  reorder: Any) -> None:
    if data.dtype != b.dtype:
        raise ValueError(f"spsolve: expected data and b of one dtype, but got data of dtype "
                         f"{data.dtype} and b of dtype {b.dtype}")
    if not (dt.is_integer(indices.dtype) and dt.is_integer(indptr.dtype)):
        raise ValueError(f"spsolve: expected integer indices and indptr, but got dtypes "
                         f"{indices.dtype} and {indptr.dtype}")
    shapes = tuple(tuple(x.shape) for x in (data, indices, indptr, b))
    if not data.ndim == indices.ndim == indptr.ndim == b.ndim == 1:
        raise ValueError(f"spsolve: expected 1-D data, indices, indptr and b, but got shapes "
                         f"{shapes[0]}, {shapes[1]}, {shapes[2]} and {shapes[3]}")
    if indptr.shape[0] != b.shape[0] + 1 or data.shape != indices.shape:
        raise ValueError(f"spsolve: expected CSR buffers with len(indptr) == len(b) + 1 and "
                         f"len(data) == len(indices), but got shapes {shapes[0]}, "
                         f"{shapes[1]}, {shapes[2]} for data, indices, indptr and "
                         f"{shapes[3]} for b")
    if reorder not in (0, 1, 2, 3):
        raise ValueError(f"spsolve: expected reorder to be 0, 1, 2 or 3 (no reordering, "
                         f"symrcm, symamd, csrmetisnd), but got {reorder!r}")
    if isinstance(tol, Array):
        float(tol)  # (a traced tol raises its own concretization error here)
        return
    try:
        float(tol)
    except (TypeError, ValueError) as e:
        raise type(e)(f"spsolve: expected tol to be a number, but got {tol!r}") from e


def _host_solve(data: Array, indices: Array, indptr: Array, b: Array, *,
                transpose: bool) -> Array:
    out: Array = pure_callback(partial(_scipy_solve, transpose=transpose),
                               ShapeDtypeStruct(tuple(b.shape), b.dtype),
                               data, indices, indptr, b, vmap_method="sequential")
    return out


def _scipy_solve(data: Any, indices: Any, indptr: Any, b: Any, *,
                 transpose: bool) -> np.ndarray:
    """``A⁻¹ b`` (or ``A⁻ᵀ b``) on the host, in ``b``'s dtype, as JAX's CPU path."""
    # scipy is needed only here, so only spsolve's callers need it installed.
    import scipy.sparse  # type: ignore[import-untyped]  # (no stubs)
    import scipy.sparse.linalg  # type: ignore[import-untyped]  # (no stubs)

    b = np.asarray(b)
    n = b.shape[0]
    # (Copies: SciPy sorts and sums duplicate entries in place, and the callback's
    # arguments are read-only views.)
    a = scipy.sparse.csr_matrix((np.array(data), np.array(indices), np.array(indptr)),
                                shape=(n, n))
    # (A CSR matrix's transpose is a CSC one, which spsolve takes as well.)
    x = scipy.sparse.linalg.spsolve(a.T if transpose else a, b)
    return np.asarray(x).astype(b.dtype).reshape(b.shape)

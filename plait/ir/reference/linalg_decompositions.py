"""Reference rules of ``cholesky`` and ``triangular_solve`` in NumPy.

Both loop over the batch dimensions explicitly: NumPy's batched ``cholesky`` fails as a
whole when one matrix is not positive definite, where the primitive gives NaNs for that
matrix only.
"""

from __future__ import annotations

import numpy as np

from plait.ir import primitives as P
from plait.ir.reference.elementwise import _def


def _cholesky_one(x: np.ndarray) -> np.ndarray:
    # LAPACK's potrf with uplo='L' overwrites the lower triangle and leaves the strict
    # upper one as it was: the lowering returns x's upper triangle there, and so do we.
    try:
        lower = np.linalg.cholesky(np.tril(x) + np.tril(x, -1).conj().T)
    except np.linalg.LinAlgError:
        return np.full_like(x, np.nan)
    return np.triu(x, 1) + lower


def _cholesky(x: np.ndarray) -> np.ndarray:
    out = np.empty_like(x)
    for idx in np.ndindex(*x.shape[:-2]):
        out[idx] = _cholesky_one(x[idx])
    return out


def _op_a(a: np.ndarray, lower: bool, transpose_a: bool, conjugate_a: bool,
          unit_diagonal: bool) -> np.ndarray:
    """``op(a)`` as a dense matrix: the triangle read, then transposed and conjugated."""
    t = np.tril(a) if lower else np.triu(a)
    if unit_diagonal:
        t = t - np.diag(np.diag(t)) + np.eye(len(t), dtype=a.dtype)
    if transpose_a:
        t = t.T
    return t.conj() if conjugate_a else t


def _triangular_solve(a: np.ndarray, b: np.ndarray, *, left_side: bool, lower: bool,
                      transpose_a: bool, conjugate_a: bool, unit_diagonal: bool) -> np.ndarray:
    out = np.empty_like(b)
    for idx in np.ndindex(*a.shape[:-2]):
        op = _op_a(a[idx], lower, transpose_a, conjugate_a, unit_diagonal)
        out[idx] = _solve(op, b[idx], left_side)
    return out


def _solve(op: np.ndarray, b: np.ndarray, left_side: bool) -> np.ndarray:
    try:
        # X op(a) = b  <=>  op(a)^T X^T = b^T
        x = np.linalg.solve(op, b) if left_side else np.linalg.solve(op.T, b.T).T
    except np.linalg.LinAlgError:  # a zero on the diagonal: LAPACK divides by it
        return np.full_like(b, np.nan)
    return x.astype(b.dtype)


_def(P.cholesky_p, _cholesky)
_def(P.triangular_solve_p, _triangular_solve)

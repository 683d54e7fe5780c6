"""``plait.scipy.linalg``: SciPy's dense linear algebra, with JAX's signatures and semantics.

The factorizations are :mod:`plait.frontend.lax.linalg`'s (LAPACK kernels); solves
broadcast over leading batch dimensions as generalized ufuncs.
"""

from __future__ import annotations

import warnings
from functools import partial
from typing import Any

from plait.frontend.api.solves import custom_linear_solve
from plait.frontend.core.array_base import Array
from plait.frontend.lax import linalg as lax_linalg
from plait.frontend.lax.ops import pad, stop_gradient
from plait.frontend.numpy import linalg as np_linalg
from plait.frontend.numpy._core import promote_dtypes, promote_dtypes_inexact
from plait.frontend.numpy.creation import arange, asarray, eye, zeros
from plait.frontend.numpy.functional import vectorize
from plait.frontend.numpy.linalg_ops import matmul
from plait.frontend.numpy.manipulation import atleast_2d, concatenate
from plait.frontend.numpy.matrices import tril, triu
from plait.frontend.numpy.ufuncs import conj
from plait.ir.primitives import Precision

__all__ = ["cholesky", "cho_factor", "cho_solve", "solve_triangular", "block_diag", "lu",
           "lu_factor", "lu_solve", "solve", "inv", "det", "eigh", "svd", "qr"]


def _adjoint(x: Array) -> Array:
    return conj(x.mT)


def cholesky(a: Any, lower: bool = False, overwrite_a: bool = False,
             check_finite: bool = True) -> Array:
    """The Cholesky factor of each Hermitian positive-definite matrix of ``a``: upper
    ``U`` with ``a = U^H U`` (SciPy's default), or lower ``L`` with ``a = L L^H``.  Only
    the triangle of ``a`` on that side is read."""
    (x,) = promote_dtypes_inexact("cholesky", asarray(a))
    factor = lax_linalg.cholesky(x if lower else _adjoint(x), symmetrize_input=False)
    return factor if lower else _adjoint(factor)


def cho_factor(a: Any, lower: bool = False, overwrite_a: bool = False,
               check_finite: bool = True) -> tuple[Array, bool]:
    """``(c, lower)``: the Cholesky factor of :func:`cholesky` and its side, the input of
    :func:`cho_solve`."""
    return cholesky(a, lower=lower), lower


def _solve_signature(name: str, a: Array, b: Array) -> str:
    if b.ndim == 1:
        return "(n,n),(n)->(n)"
    if a.ndim == b.ndim + 1 and a.shape[-1] == b.shape[-1]:
        warnings.warn(
            f"jax.scipy.linalg.{name}: batched 1D solves with b.ndim > 1 are deprecated, and "
            "in the future will be treated as a batched 2D solve. Use "
            f"{name}(..., b[..., None]).squeeze(-1) to avoid this warning.",
            category=FutureWarning, stacklevel=3)
        return "(n,n),(n)->(n)"
    return "(n,n),(n,k)->(n,k)"


def cho_solve(c_and_lower: tuple[Any, bool], b: Any, overwrite_b: bool = False,
              check_finite: bool = True) -> Array:
    """``x`` solving ``a x = b`` given ``cho_factor(a)``: two triangular solves."""
    c_in, lower = c_and_lower
    c, rhs = promote_dtypes_inexact("cho_solve", asarray(c_in), asarray(b))
    signature = _solve_signature("cho_solve", c, rhs)
    # L L^H x = b: solve with L, then with L^H (with U: U^H first, then U).
    first = partial(lax_linalg.triangular_solve, left_side=True, lower=lower,
                    transpose_a=not lower, conjugate_a=not lower)
    second = partial(lax_linalg.triangular_solve, left_side=True, lower=lower,
                     transpose_a=lower, conjugate_a=lower)
    y = vectorize(first, signature=signature)(c, rhs)
    out: Array = vectorize(second, signature=signature)(c, y)
    return out


_TRANS = {0: (False, False), "N": (False, False), 1: (True, False), "T": (True, False),
          2: (True, True), "C": (True, True)}


def solve_triangular(a: Any, b: Any, trans: int | str = 0, lower: bool = False,
                     unit_diagonal: bool = False, overwrite_b: bool = False,
                     debug: Any = None, check_finite: bool = True) -> Array:
    """``x`` solving ``op(a) x = b`` for triangular ``a`` (``lower`` or upper; ``trans``
    0/'N', 1/'T' or 2/'C' for ``a``, its transpose or its conjugate transpose)."""
    if trans not in _TRANS:
        raise ValueError(f"Invalid 'trans' value {trans}")
    transpose_a, conjugate_a = _TRANS[trans]
    x, rhs = promote_dtypes_inexact("solve_triangular", asarray(a), asarray(b))
    solve = partial(lax_linalg.triangular_solve, left_side=True, lower=lower,
                    transpose_a=transpose_a, conjugate_a=conjugate_a,
                    unit_diagonal=unit_diagonal)
    out: Array = vectorize(solve, signature=_solve_signature("solve_triangular", x, rhs))(x, rhs)
    return out


def block_diag(*arrs: Any) -> Array:
    """A block-diagonal matrix of the given (at most two-dimensional) blocks."""
    blocks = [asarray(a) for a in arrs] if arrs else [zeros((1, 0))]
    blocks = [asarray(a) for a in promote_dtypes("block_diag", *blocks)]
    for i, blk in enumerate(blocks):
        if blk.ndim > 2:
            raise ValueError("Arguments to jax.scipy.linalg.block_diag must have at most 2 "
                             f"dimensions, got {blk} at argument {i}.")
    mats = [atleast_2d(blk) for blk in blocks]
    total = sum(m.shape[1] for m in mats)
    rows, col = [], 0
    for m in mats:
        width = m.shape[1]
        rows.append(pad(m, asarray(0, dtype=m.dtype), ((0, 0, 0), (col, total - width - col, 0))))
        col += width
    return concatenate(rows, axis=0)


def lu_factor(a: Any, overwrite_a: bool = False,
              check_finite: bool = True) -> tuple[Array, Array]:
    """``(lu, pivots)``: the packed factors of ``P a = L U`` and LAPACK's row swaps, the
    input of :func:`lu_solve`."""
    (x,) = promote_dtypes_inexact("lu_factor", asarray(a))
    factors, pivots, _ = lax_linalg.lu(x)
    return factors, pivots


def lu_solve(lu_and_piv: tuple[Any, Any], b: Any, trans: int = 0, overwrite_b: bool = False,
             check_finite: bool = True) -> Array:
    """``x`` solving ``a x = b`` (``trans`` 0), ``aᵀ x = b`` (1) or ``aᴴ x = b`` (2) given
    :func:`lu_factor`'s result."""
    factors_in, pivots = lu_and_piv
    factors, rhs = promote_dtypes_inexact("lu_solve", asarray(factors_in), asarray(b))
    perm = lax_linalg.lu_pivots_to_permutation(pivots, factors.shape[-2])
    signature = _solve_signature("lu_solve", factors, rhs)
    core = signature.replace("(n,n),", "(n,n),(n),")
    out: Array = vectorize(partial(np_linalg.lu_solve, trans=trans), signature=core)(
        factors, perm, rhs)
    return out


def lu(a: Any, permute_l: bool = False, overwrite_a: bool = False,
       check_finite: bool = True) -> tuple[Array, Array] | tuple[Array, Array, Array]:
    """``(p, l, u)`` with ``a = p l u`` (``l`` unit lower trapezoidal, ``u`` upper), or
    ``(p l, u)`` with ``permute_l``, for a matrix ``a``."""
    (x,) = promote_dtypes_inexact("lu", asarray(a))
    factors, _, perm = lax_linalg.lu(x)
    m, n = x.shape[-2:]
    p = (perm[None, :] == arange(m, dtype=perm.dtype)[:, None]).astype(x.dtype)
    k = min(m, n)
    lower = tril(factors, -1)[:, :k] + eye(m, k, dtype=x.dtype)
    upper = triu(factors)[:k, :]
    if permute_l:
        return matmul(p, lower, precision=Precision.HIGHEST), upper
    return p, lower, upper


def _solve_pos(a: Array, b: Array, lower: bool) -> Array:
    factors = cho_factor(stop_gradient(a), lower=lower)
    x: Array = custom_linear_solve(lambda v: matmul(a, v, precision=Precision.HIGHEST), b,
                                   solve=lambda _, v: cho_solve(factors, v), symmetric=True)
    return x


def solve(a: Any, b: Any, lower: bool = False, overwrite_a: bool = False,
          overwrite_b: bool = False, debug: bool = False, check_finite: bool = True,
          assume_a: str = "gen") -> Array:
    """``x`` solving ``a x = b``; ``assume_a='pos'`` uses a Cholesky factorization (``a``
    Hermitian positive definite), the others an LU factorization."""
    kinds = ["gen", "sym", "her", "pos"]
    if assume_a not in kinds:
        raise ValueError(f"Expected assume_a to be one of {kinds}; got {assume_a!r}")
    if assume_a != "pos":
        return np_linalg.solve(a, b)
    x, rhs = promote_dtypes_inexact("solve", asarray(a), asarray(b))
    signature = "(m,m),(m)->(m)" if rhs.ndim == x.ndim - 1 else "(m,m),(m,n)->(m,n)"
    out: Array = vectorize(partial(_solve_pos, lower=lower), signature=signature)(x, rhs)
    return out


def inv(a: Any, overwrite_a: bool = False, check_finite: bool = True) -> Array:
    """The inverse of each square matrix of ``a``."""
    return np_linalg.inv(a)


def det(a: Any, overwrite_a: bool = False, check_finite: bool = True) -> Array:
    """The determinant of each square matrix of ``a``."""
    return np_linalg.det(a)


def eigh(a: Any, b: Any = None, lower: bool = True, eigvals_only: bool = False,
         overwrite_a: bool = False, overwrite_b: bool = False, turbo: bool = True,
         eigvals: None = None, type: int = 1, check_finite: bool = True) -> Any:
    """The eigenvalues (ascending) and eigenvectors ``(w, v)`` of a Hermitian matrix read
    from its ``lower`` (or upper) triangle; only ``w`` with ``eigvals_only``."""
    if b is not None:
        raise NotImplementedError("Only the b=None case of eigh is implemented")
    if type != 1:
        raise NotImplementedError("Only the type=1 case of eigh is implemented.")
    if eigvals is not None:
        raise NotImplementedError("Only the eigvals=None case of eigh is implemented.")
    (x,) = promote_dtypes_inexact("eigh", asarray(a))
    v, w = lax_linalg.eigh(x, lower=lower)
    return w if eigvals_only else (w, v)


def svd(a: Any, full_matrices: bool = True, compute_uv: bool = True,
        overwrite_a: bool = False, check_finite: bool = True,
        lapack_driver: str = "gesdd") -> Any:
    """``(u, s, vh)`` with ``a = u diag(s) vh`` (``s`` descending), or ``s`` alone."""
    return np_linalg.svd(a, full_matrices=full_matrices, compute_uv=compute_uv)


def qr(a: Any, overwrite_a: bool = False, lwork: Any = None, mode: str = "full",
       pivoting: bool = False, check_finite: bool = True) -> Any:
    """``(q, r)`` (``mode`` 'full' or 'economic'), or ``(r,)`` (mode 'r'); with
    ``pivoting``, the rank-revealing ``a[..., :, p] = q @ r`` and ``p`` (int32) last:
    ``(q, r, p)``, or ``(r, p)`` in mode 'r'."""
    if mode not in ("full", "r", "economic"):
        raise ValueError(f"Unsupported QR decomposition mode '{mode}'")
    (x,) = promote_dtypes_inexact("qr", asarray(a))
    q, r, *p = lax_linalg.qr(x, pivoting=bool(pivoting), full_matrices=mode != "economic")
    return (r, *p) if mode == "r" else (q, r, *p)


from plait.frontend.scipy import linalg_schur  # noqa: E402
from plait.frontend.scipy.linalg_schur import *  # noqa: E402,F403

__all__ += linalg_schur.__all__  # (a form mypy follows, so the re-exports are typed)

from plait.frontend.scipy import linalg_expm  # noqa: E402
from plait.frontend.scipy.linalg_expm import *  # noqa: E402,F403

__all__ += linalg_expm.__all__  # (a form mypy follows, so the re-exports are typed)

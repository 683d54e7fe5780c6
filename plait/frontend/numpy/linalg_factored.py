"""``plait.numpy.linalg``'s functions built on factorizations: solves, inverses,
determinants, eigen- and singular value decompositions, least squares.

As in JAX, ``solve`` is a ``custom_linear_solve`` over one LU factorization of the
(gradient-stopped) matrix, so its derivatives reuse the factors.
"""

from __future__ import annotations

from functools import partial
from typing import Any, NamedTuple

import numpy as np

from plait.frontend.api.custom_derivatives import custom_jvp
from plait.frontend.api.eager_programs import compiled_when_eager
from plait.frontend.api.solves import custom_linear_solve
from plait.frontend.core.array_base import Array
from plait.frontend.lax import linalg as lax_linalg
from plait.frontend.lax.ops import stop_gradient
from plait.frontend.numpy._core import check_arraylike, promote_dtypes_inexact
from plait.frontend.numpy.creation import asarray, empty, eye, zeros
from plait.frontend.numpy.functional import vectorize
from plait.frontend.numpy.linalg_ops import matmul
from plait.frontend.numpy.manipulation import argsort, broadcast_to, moveaxis
from plait.frontend.numpy.matrices import diagonal, trace
from plait.frontend.numpy.reductions import any as np_any
from plait.frontend.numpy.reductions import count_nonzero, prod, sum
from plait.frontend.numpy.ufuncs import abs, conj, divide, exp, log, real, where
from plait.ir import dtypes as dt
from plait.ir.primitives import Precision

__all__ = ["solve", "inv", "det", "slogdet", "eigh", "eigvalsh", "svd", "svdvals", "qr",
           "pinv", "lstsq", "matrix_rank", "tensorsolve", "tensorinv", "lu_solve",
           "EighResult", "SVDResult", "QRResult", "SlogdetResult"]


class EighResult(NamedTuple):
    """The result of :func:`eigh`."""

    eigenvalues: Array
    """Ascending, real."""
    eigenvectors: Array
    """The columns, orthonormal."""


class SVDResult(NamedTuple):
    """The result of :func:`svd`."""

    U: Array
    """Left singular vectors (columns)."""
    S: Array
    """Singular values, descending."""
    Vh: Array
    """Right singular vectors (rows)."""


class QRResult(NamedTuple):
    """The result of :func:`qr` (``Q`` and ``R``, or with ``mode='raw'`` Householder
    reflectors and their scales)."""

    Q: Array
    R: Array


class SlogdetResult(NamedTuple):
    """The result of :func:`slogdet`."""

    sign: Array
    """The determinant's sign (of unit magnitude; 0 for a singular matrix)."""
    logabsdet: Array
    """The log of its magnitude (-inf for a singular matrix)."""


def _inexact(name: str, *xs: Any) -> list[Array]:
    check_arraylike(f"jnp.linalg.{name}", *xs)
    return [asarray(x) for x in promote_dtypes_inexact(f"jnp.linalg.{name}", *xs)]


def _square(name: str, a: Array) -> None:
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ValueError(f"Argument to {name}() must have shape [..., n, n], got {a.shape}")


def lu_solve(lu: Any, permutation: Any, b: Any, trans: int = 0) -> Array:
    """``x`` solving ``a x = b`` (``trans`` 0), ``aᵀ x = b`` (1) or ``aᴴ x = b`` (2) given
    ``lax.linalg.lu(a)``'s factors and permutation; ``b`` is ``[..., m]`` or ``[..., m, k]``."""
    lu_, perm, rhs = asarray(lu), asarray(permutation), asarray(b)
    vector = rhs.ndim == lu_.ndim - 1
    if vector:
        rhs = rhs[..., None]
    solve = partial(lax_linalg.triangular_solve, lu_, left_side=True)
    if trans == 0:
        # x[perm] = ... : P a = L U, so a x = b is L U x = P b.
        rows = _take_rows(rhs, perm)
        x = solve(solve(rows, lower=True, unit_diagonal=True), lower=False)
    elif trans in (1, 2):
        conj_a = trans == 2
        y = solve(rhs, lower=False, transpose_a=True, conjugate_a=conj_a)
        y = solve(y, lower=True, transpose_a=True, conjugate_a=conj_a, unit_diagonal=True)
        x = _take_rows(y, argsort(perm, axis=-1))
    else:
        raise ValueError(f"'trans' value must be 0, 1, or 2, got {trans}")
    return x[..., 0] if vector else x


def _take_rows(x: Array, rows: Array) -> Array:
    take: Array = vectorize(lambda m, r: m[r, :], signature="(m,k),(m)->(m,k)")(x, rows)
    return take


def _solve_core(a: Array, b: Array) -> Array:
    factors, _, perm = lax_linalg.lu(stop_gradient(a))
    x: Array = custom_linear_solve(
        lambda x: matmul(a, x, precision=Precision.HIGHEST), b,
        solve=lambda _, x: lu_solve(factors, perm, x, trans=0),
        transpose_solve=lambda _, x: lu_solve(factors, perm, x, trans=1))
    return x


def solve(a: Any, b: Any) -> Array:
    """``x`` solving ``a x = b`` for square ``a`` ``[..., m, m]`` and ``b`` ``[..., m]`` or
    ``[..., m, n]`` (leading dimensions broadcast)."""
    x, rhs = _inexact("solve", a, b)
    if x.ndim < 2:
        raise ValueError(f"left hand array must be at least two dimensional; got "
                         f"a.shape={x.shape}")
    if (rhs.ndim > 1 and x.ndim == rhs.ndim + 1 and x.shape[-1] == rhs.shape[-1]
            and x.shape[-1] != rhs.shape[-2]):
        raise ValueError(f"Invalid shapes for solve: {x.shape}, {rhs.shape}. Prior to JAX "
                         "v0.5.0, this would have been treated as a batched 1-dimensional "
                         "solve. To recover this behavior, use solve(a, b[..., None])"
                         ".squeeze(-1).")
    signature = "(m,m),(m)->(m)" if rhs.ndim == 1 else "(m,m),(m,n)->(m,n)"
    out: Array = vectorize(_solve_core, signature=signature)(x, rhs)
    return out


def inv(a: Any) -> Array:
    """The inverse of each square matrix of ``a``."""
    check_arraylike("jnp.linalg.inv", a)
    arr = asarray(a)
    if arr.ndim < 2 or arr.shape[-1] != arr.shape[-2]:
        raise ValueError(f"Argument to inv must have shape [..., n, n], got {arr.shape}.")
    (arr,) = _inexact("inv", arr)
    return solve(arr, broadcast_to(eye(arr.shape[-1], dtype=arr.dtype), arr.shape))


def _slogdet_lu(a: Array) -> tuple[Array, Array]:
    factors, pivots, _ = lax_linalg.lu(a)
    diag = diagonal(factors, axis1=-2, axis2=-1)
    singular = np_any(diag == 0, axis=-1)
    swaps = count_nonzero(pivots != asarray(np.arange(a.shape[-1]), dtype=pivots.dtype),
                          axis=-1)
    if dt.is_complex(a.dtype):
        sign = prod(diag / abs(diag).astype(diag.dtype), axis=-1)
    else:
        sign = asarray(1, dtype=a.dtype)
        swaps = swaps + count_nonzero(diag < 0, axis=-1)
    sign = where(singular, asarray(0, dtype=a.dtype),
                 sign * asarray(1 - 2 * (swaps % 2), dtype=a.dtype))
    logdet = where(singular, asarray(-np.inf, dtype=a.dtype),
                   sum(log(abs(diag)).astype(a.dtype), axis=-1))
    return sign, real(logdet)


@custom_jvp
def _slogdet(a: Array) -> tuple[Array, Array]:
    return _slogdet_lu(a)


@_slogdet.defjvp
def _slogdet_jvp(primals: Any, tangents: Any) -> Any:
    (x,), (t,) = primals, tangents
    sign, logdet = _slogdet(x)
    dlog = trace(solve(x, t), axis1=-1, axis2=-2)  # d log|det x| = tr(x⁻¹ dx)
    if dt.is_complex(x.dtype):
        dsign = (dlog - real(dlog).astype(dlog.dtype)) * sign
        dlog = real(dlog)
    else:
        dsign = zeros(sign.shape, sign.dtype)
    return (sign, logdet), (dsign, dlog)


@compiled_when_eager(("method",))
def slogdet(a: Any, *, method: str | None = None) -> SlogdetResult:
    """``(sign, log|det a|)`` of each square matrix, by an LU factorization."""
    (arr,) = _inexact("slogdet", a)
    if arr.ndim < 2 or arr.shape[-1] != arr.shape[-2]:
        raise ValueError(f"Argument to slogdet() must have shape [..., n, n], got {arr.shape}")
    if method not in (None, "lu"):
        raise ValueError(f"Unknown slogdet method '{method}'. Supported methods are 'lu' "
                         "(`None`).")
    return SlogdetResult(*_slogdet(arr))


def _det_small(a: Array) -> Array:
    if a.shape[-1] == 2:
        return a[..., 0, 0] * a[..., 1, 1] - a[..., 0, 1] * a[..., 1, 0]
    def e(i: int, j: int) -> Array:
        return a[..., i, j]
    # The cofactor expansion, term by term in JAX's order.
    return (e(0, 0) * e(1, 1) * e(2, 2) + e(0, 1) * e(1, 2) * e(2, 0)
            + e(0, 2) * e(1, 0) * e(2, 1) - e(0, 2) * e(1, 1) * e(2, 0)
            - e(0, 0) * e(1, 2) * e(2, 1) - e(0, 1) * e(1, 0) * e(2, 2))


@custom_jvp
def _det(a: Array) -> Array:
    sign, logdet = _slogdet(a)
    return sign * exp(logdet).astype(sign.dtype)


@_det.defjvp
def _det_jvp(primals: Any, tangents: Any) -> Any:
    (x,), (t,) = primals, tangents
    d = _det(x)
    return d, d * trace(solve(x, t), axis1=-1, axis2=-2)  # d det x = det x tr(x⁻¹ dx)


def det(a: Any) -> Array:
    """The determinant of each square matrix of ``a`` (closed forms for 2×2 and 3×3, as
    JAX; an LU factorization otherwise)."""
    (arr,) = _inexact("det", a)
    if arr.ndim < 2 or arr.shape[-1] != arr.shape[-2]:
        raise ValueError(f"Argument to _det() must have shape [..., n, n], got {arr.shape}")
    if arr.shape[-1] in (2, 3):
        return _det_small(arr)
    return _det(arr)


def eigh(a: Any, UPLO: str | None = None, symmetrize_input: bool = True) -> EighResult:
    """The eigenvalues (ascending) and eigenvectors of each Hermitian matrix of ``a``,
    read from its lower (``UPLO='L'``, the default) or upper triangle."""
    if UPLO not in (None, "L", "U"):
        raise ValueError(f"UPLO must be one of None, 'L', or 'U', got {UPLO}")
    (arr,) = _inexact("eigh", a)
    v, w = lax_linalg.eigh(arr, lower=UPLO != "U", symmetrize_input=symmetrize_input)
    return EighResult(w, v)


def eigvalsh(a: Any, UPLO: str | None = "L", *, symmetrize_input: bool = True) -> Array:
    """The eigenvalues (ascending) of each Hermitian matrix of ``a``."""
    return eigh(a, UPLO, symmetrize_input=symmetrize_input).eigenvalues


def svd(a: Any, full_matrices: bool = True, compute_uv: bool = True, hermitian: bool = False,
        subset_by_index: tuple[int, int] | None = None) -> Any:
    """The singular value decomposition ``a = U diag(S) Vh`` of each matrix, or only the
    singular values (descending) with ``compute_uv=False``."""
    (arr,) = _inexact("svd", a)
    if hermitian:
        w, v = eigh(arr)
        s = abs(w)
        order = argsort(-s, axis=-1)
        s = _take_last(s, order)
        if not compute_uv:
            return s
        u = _take_columns(v, order)
        signs = where(w < 0, -1, 1).astype(v.dtype)
        vh = conj(_take_columns(v * signs[..., None, :], order)).mT
        return SVDResult(u, s, vh)
    if compute_uv:
        u, s, vh = lax_linalg.svd(arr, full_matrices=full_matrices, compute_uv=True,
                                  subset_by_index=subset_by_index)
        return SVDResult(u, s, vh)
    out: Array = lax_linalg.svd(arr, full_matrices=full_matrices, compute_uv=False,
                                subset_by_index=subset_by_index)
    return out


def _take_last(x: Array, idx: Array) -> Array:
    take: Array = vectorize(lambda v, i: v[i], signature="(n),(n)->(n)")(x, idx)
    return take


def _take_columns(x: Array, idx: Array) -> Array:
    take: Array = vectorize(lambda m, i: m[:, i], signature="(m,n),(n)->(m,n)")(x, idx)
    return take


def svdvals(x: Any, /) -> Array:
    """The singular values of each matrix of ``x``, descending."""
    out: Array = svd(x, compute_uv=False)
    return out


def qr(a: Any, mode: str = "reduced") -> Any:
    """The QR decomposition of each matrix: ``mode`` 'reduced' (default) or 'complete'
    give ``(Q, R)``, 'r' only ``R``, 'raw' LAPACK's Householder form."""
    (arr,) = _inexact("qr", a)
    if mode == "raw":
        reflectors, taus = lax_linalg.geqrf(arr)
        return QRResult(reflectors.mT, taus)
    if mode not in ("reduced", "r", "full", "complete"):
        raise ValueError(f"Unsupported QR decomposition mode '{mode}'")
    q, r = lax_linalg.qr(arr, pivoting=False, full_matrices=mode == "complete")
    return r if mode == "r" else QRResult(q, r)


def pinv(a: Any, rtol: Any = None, hermitian: bool = False, *, rcond: Any = None) -> Array:
    """The Moore-Penrose pseudo-inverse of each matrix: singular values below ``rtol``
    times the largest are treated as zero."""
    if rcond is not None:
        if rtol is not None:
            raise ValueError("pinv: only one of rtol and rcond may be specified.")
        rtol = rcond
    (arr,) = _inexact("pinv", a)
    m, n = arr.shape[-2:]
    if m == 0 or n == 0:
        return empty(arr.shape[:-2] + (n, m), dtype=arr.dtype)
    arr = conj(arr)
    if rtol is None:
        rtol = 10.0 * max(m, n) * np.finfo(arr.dtype).eps
    cut = asarray(rtol)
    u, s, vh = svd(arr, full_matrices=False, hermitian=hermitian)
    cut = cut.reshape(cut.shape + (1,) * (s.ndim - cut.ndim))
    s = where(s > cut * s[..., 0:1], s, np.inf).astype(u.dtype)
    res = matmul(vh.mT, divide(u.mT, s[..., None]), precision=Precision.HIGHEST)
    return res.astype(arr.dtype)


def lstsq(a: Any, b: Any, rcond: float | None = None, *,
          numpy_resid: bool = False) -> tuple[Array, Array, Array, Array]:
    """The least-squares solution ``x`` of ``a x = b`` (``a`` two-dimensional), with the
    residual sums of squares, the rank of ``a`` and its singular values."""
    x_a, x_b = _inexact("lstsq", a, b)
    if x_a.shape[0] != x_b.shape[0]:
        raise ValueError("Leading dimensions of input arrays must match")
    vector = x_b.ndim == 1
    rhs = x_b[:, None] if vector else x_b
    if x_a.ndim != 2:
        raise TypeError(f"{x_a.ndim}-dimensional array given. Array must be two-dimensional")
    if rhs.ndim != 2:
        raise TypeError(f"{rhs.ndim}-dimensional array given. Array must be one or "
                        "two-dimensional")
    m, n = x_a.shape
    if x_a.size == 0:
        s, rank = empty(0, dtype=x_a.dtype), asarray(0)
        x = zeros((n, *rhs.shape[1:]), dtype=x_a.dtype)
    else:
        eps = float(np.finfo(x_a.dtype).eps)
        cut = eps * max(n, m) if rcond is None else (eps if rcond < 0 else rcond)
        u, s, vt = svd(x_a, full_matrices=False)
        mask = (s > 0) & (s >= asarray(cut, dtype=s.dtype) * s[0])
        rank = sum(mask)
        safe = where(mask, s, 1).astype(x_a.dtype)
        s_inv = where(mask, 1 / safe, 0)[:, None]
        utb = matmul(conj(u).T, rhs, precision=Precision.HIGHEST)
        x = matmul(conj(vt).T, s_inv * utb, precision=Precision.HIGHEST)
    if numpy_resid and (int(rank) < n or m <= n):
        resid = asarray([], dtype=x_a.dtype)
    else:
        fit = matmul(x_a, x, precision=Precision.HIGHEST)
        resid = sum(real((rhs - fit) * conj(rhs - fit)), axis=0)
    return (x.ravel() if vector else x), resid, rank, s


def matrix_rank(M: Any, rtol: Any = None, *, hermitian: bool = False, tol: Any = None) -> Array:
    """The number of singular values of each matrix above ``rtol`` (by default the
    largest times the larger dimension times the dtype's epsilon)."""
    if tol is not None:
        if rtol is not None:
            raise ValueError("matrix_rank: only one of tol or rtol may be specified.")
        rtol = tol
    (arr,) = _inexact("matrix_rank", M)
    if arr.ndim < 2:
        return np_any(arr != 0).astype(np.int32)
    s = svd(arr, full_matrices=False, compute_uv=False, hermitian=hermitian)
    if rtol is None:
        rtol = s.max(-1) * np.asarray(max(arr.shape[-2:]), s.dtype) * np.finfo(s.dtype).eps
    cut = asarray(rtol)
    return sum(s > cut[..., None], axis=-1)


def tensorsolve(a: Any, b: Any, axes: tuple[int, ...] | None = None) -> Array:
    """``x`` with ``tensordot(a, x, x.ndim) == b``."""
    check_arraylike("tensorsolve", a, b)
    x_a, x_b = asarray(a), asarray(b)
    if axes is not None:
        x_a = moveaxis(x_a, axes, len(axes) * (x_a.ndim - 1,))
    out_shape = x_a.shape[x_b.ndim:]
    if x_a.shape[:x_b.ndim] != x_b.shape:
        raise ValueError("a.shape[:b.ndim] must match b.shape; got a.shape="
                         f"{x_a.shape}, b.ndim={x_b.shape}")
    size = int(np.prod(out_shape))
    if int(np.prod(x_b.shape)) != size:
        raise ValueError(f"tensorsolve: a.shape={x_a.shape} does not give a square matrix "
                         f"for b.shape={x_b.shape}")
    return solve(x_a.reshape(size, size), x_b.ravel()).reshape(out_shape)


def tensorinv(a: Any, ind: int = 2) -> Array:
    """The inverse of ``a`` for :func:`tensordot` over ``ind`` axes."""
    check_arraylike("tensorinv", a)
    arr = asarray(a)
    if ind <= 0:
        raise ValueError(f"ind must be a positive integer, got {ind}")
    contracting, batch = arr.shape[:ind], arr.shape[ind:]
    size = int(np.prod(contracting))
    if size != int(np.prod(batch)):
        raise ValueError(f"tensorinv: a.shape={arr.shape} does not give a square matrix "
                         f"for ind={ind}")
    return inv(arr.reshape(size, size)).reshape(*batch, *contracting)


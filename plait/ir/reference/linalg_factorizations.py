"""Reference rules of the matrix factorizations in NumPy.

``eigh`` and ``svd`` call the LAPACK routines of the lowering (``syevd``/``heevd``,
``gesdd``/``gesvd``) through SciPy, whose LAPACK jaxlib's kernels use, so the signs and
phases of the vectors agree; so does ``geqp3`` (QR with column pivoting, whose pivots
must agree); ``qr`` is NumPy's (``geqrf`` and ``orgqr`` too).  LU is
written out (NumPy has none), pivoting as LAPACK's ``getrf`` does: on the largest
``|re| + |im|`` of the column.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from plait.ir import primitives as P
from plait.ir.interpreter import impl_rules
from plait.ir.primitive import Primitive


def _lu_one(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    a = a.copy()
    m, n = a.shape
    k = min(m, n)
    pivots = np.zeros(k, np.int32)
    for j in range(k):
        col = a[j:, j]
        p = j + int(np.argmax(np.abs(col.real) + np.abs(col.imag)))
        pivots[j] = p
        if p != j:
            a[[j, p]] = a[[p, j]]
        if a[j, j] != 0:  # a zero pivot: LAPACK leaves the column (info > 0, not a failure)
            a[j + 1:, j] /= a[j, j]
        a[j + 1:, j + 1:] -= np.outer(a[j + 1:, j], a[j, j + 1:])
    return a, pivots


def _permutation_one(pivots: np.ndarray, size: int) -> np.ndarray:
    perm = np.arange(size, dtype=np.int32)
    for i, p in enumerate(pivots):
        perm[i], perm[p] = perm[p], perm[i]
    return perm


def _lu(x: np.ndarray) -> list[np.ndarray]:
    batch, (m, n) = x.shape[:-2], x.shape[-2:]
    lu = np.empty_like(x)
    pivots = np.empty(batch + (min(m, n),), np.int32)
    perm = np.empty(batch + (m,), np.int32)
    for idx in np.ndindex(*batch):
        lu[idx], pivots[idx] = _lu_one(x[idx])
        perm[idx] = _permutation_one(pivots[idx], m)
    return [lu, pivots, perm]


def _lu_pivots_to_permutation(pivots: np.ndarray, *, permutation_size: int) -> np.ndarray:
    out = np.empty(pivots.shape[:-1] + (permutation_size,), np.int32)
    for idx in np.ndindex(*pivots.shape[:-1]):
        out[idx] = _permutation_one(pivots[idx], permutation_size)
    return out


def _geqrf(x: np.ndarray) -> list[np.ndarray]:
    m, n = x.shape[-2:]
    a = np.empty_like(x)
    taus = np.empty(x.shape[:-2] + (min(m, n),), x.dtype)
    for idx in np.ndindex(*x.shape[:-2]):
        h, tau = np.linalg.qr(x[idx], mode="raw")  # h is LAPACK's array, transposed
        a[idx], taus[idx] = h.T, tau
    return [a, taus]


def _geqp3_one(a: np.ndarray, jpvt: np.ndarray) -> tuple[np.ndarray, ...]:
    """LAPACK's ``geqp3`` (SciPy's binding) on one matrix; the columns ``jpvt`` marks
    (nonzero) go first unpivoted, as LAPACK moves them: ``geqrf`` on them, then the
    pivoted factorization of what is left below them."""
    m, n = a.shape
    k = min(m, n)
    if k == 0:  # (LAPACK returns at once, jpvt untouched)
        return a.copy(), jpvt.copy(), np.zeros(0, a.dtype)
    a = a.copy()
    perm = np.arange(1, n + 1, dtype=np.int32)
    fixed = 0
    for j in range(n):  # LAPACK's swaps, in its order
        if jpvt[j] != 0:
            if j != fixed:
                a[:, [j, fixed]] = a[:, [fixed, j]]
                perm[j], perm[fixed] = perm[fixed], j + 1
            fixed += 1
    taus = np.zeros(k, a.dtype)
    f = min(fixed, k)
    if f:  # (as LAPACK: geqrf on the first min(m, fixed) columns, applied to the others)
        h, tau = np.linalg.qr(a[:, :f], mode="raw")  # (h is LAPACK's array, transposed)
        q = _householder_full(h.T, tau.astype(a.dtype))
        a[:, f:] = q.conj().T @ a[:, f:]
        a[:, :f], taus[:f] = h.T, tau
    if f < k:
        sub, piv, tau, _, _ = _lapack("geqp3", a)(a[f:, f:])
        cols = f + piv - 1
        a[:f, f:] = a[:f, cols]
        a[f:, f:], perm[f:], taus[f:] = sub, perm[cols], tau
    return a, perm, taus


def _householder_full(a: np.ndarray, taus: np.ndarray) -> np.ndarray:
    """All ``m`` columns of the unitary matrix of the reflectors below ``a``'s diagonal."""
    m, k = a.shape[0], min(a.shape)
    padded = np.zeros((m, m), a.dtype)
    padded[:, :k] = a[:, :k]
    return _householder_one(padded, taus)


def _geqp3(a: np.ndarray, jpvt: np.ndarray, *, use_magma: bool | None) -> list[np.ndarray]:
    m, n = a.shape[-2:]
    out, perm = np.empty_like(a), np.empty_like(jpvt)
    taus = np.empty(a.shape[:-2] + (min(m, n),), a.dtype)
    for idx in np.ndindex(*a.shape[:-2]):
        out[idx], perm[idx], taus[idx] = _geqp3_one(a[idx], jpvt[idx])
    return [out, perm, taus]


def _householder_one(a: np.ndarray, taus: np.ndarray) -> np.ndarray:
    m, n = a.shape
    q = np.eye(m, dtype=a.dtype)
    for i in range(len(taus)):
        v = np.zeros(m, a.dtype)
        v[i] = 1
        v[i + 1:] = a[i + 1:, i]
        q = q - taus[i] * np.outer(q @ v, v.conj())  # q @ (I - tau v v^H)
    return q[:, :n]


def _householder_product(a: np.ndarray, taus: np.ndarray) -> np.ndarray:
    out = np.empty_like(a)
    for idx in np.ndindex(*a.shape[:-2]):
        out[idx] = _householder_one(a[idx], taus[idx])
    return out


def _ormqr(a: np.ndarray, taus: np.ndarray, c: np.ndarray, *, left: bool,
           transpose: bool) -> list[np.ndarray]:
    complex_ = np.iscomplexobj(a)
    fn = _lapack("unmqr" if complex_ else "ormqr", a)
    side, trans = ("L" if left else "R"), ("C" if complex_ else "T") if transpose else "N"
    out = np.empty_like(c)
    k = taus.shape[-1]
    for idx in np.ndindex(*a.shape[:-2]):
        if k == 0 or 0 in c.shape[-2:]:  # (no reflectors, or nothing to multiply)
            out[idx] = c[idx]
            continue
        args = (side, trans, a[idx][:, :k], taus[idx], c[idx])
        lwork = int(np.real(fn(*args, -1)[1][0]))
        out[idx] = fn(*args, max(lwork, 1))[0]
    return [out]


def _pivoted_qr(x: np.ndarray, full_matrices: bool) -> list[np.ndarray]:
    """``qr`` with pivoting, as JAX builds it: ``geqp3``, then ``Q`` from the reflectors."""
    batch, (m, n) = x.shape[:-2], x.shape[-2:]
    k = m if full_matrices else min(m, n)
    if m == 0 or n == 0:  # (JAX's answer: Q from the identity, R and the pivots zeros)
        q = np.broadcast_to(np.eye(m, k, dtype=x.dtype), batch + (m, k)).copy()
        return [q, np.zeros(batch + (k, n), x.dtype), np.zeros(batch + (n,), np.int32)]
    a, perm, taus = _geqp3(x, np.zeros(batch + (n,), np.int32), use_magma=None)
    q = np.empty(batch + (m, k), x.dtype)
    for idx in np.ndindex(*batch):
        q[idx] = _householder_full(a[idx], taus[idx])[:, :k]
    r = np.triu(a[..., :k, :])
    return [q, r, perm - 1]


def _qr(x: np.ndarray, *, pivoting: bool, full_matrices: bool,
        use_magma: bool | None) -> list[np.ndarray]:
    if pivoting:
        return _pivoted_qr(x, full_matrices)
    q, r = np.linalg.qr(x, mode="complete" if full_matrices else "reduced")
    return [q.astype(x.dtype), r.astype(x.dtype)]


def _subset(subset: tuple[int, int] | None, size: int) -> slice:
    return slice(0, size) if subset is None else slice(*subset)


def _lapack(routine: str, x: np.ndarray) -> Any:
    """SciPy's binding of a LAPACK routine for ``x``'s dtype (the library jaxlib's
    kernels call: NumPy's own LAPACK may choose other signs of eigen- and singular
    vectors)."""
    from scipy.linalg import lapack  # type: ignore[import-untyped]  # (jaxlib needs SciPy)

    (fn,) = lapack.get_lapack_funcs((routine,), (x,))
    return fn


def _eigh(x: np.ndarray, *, lower: bool, sort_eigenvalues: bool,
          subset_by_index: tuple[int, int] | None, algorithm: Any) -> list[np.ndarray]:
    n = x.shape[-1]
    v = np.empty_like(x)
    w = np.empty(x.shape[:-1], P.real_dtype(x.dtype))
    fn = _lapack("heevd" if x.dtype.kind == "c" else "syevd", x)
    for idx in np.ndindex(*x.shape[:-2]):
        w_i, v_i, info = fn(x[idx], compute_v=1, lower=int(lower))
        v[idx], w[idx] = (v_i, w_i) if info == 0 else (np.nan, np.nan)
    cut = _subset(subset_by_index, n)
    return [v[..., :, cut], w[..., cut]]


def _empty_svd(x: np.ndarray, full_matrices: bool, compute_uv: bool) -> list[np.ndarray]:
    """JAX's answer for matrices without entries: no singular values and, with
    ``full_matrices``, the identity as the one nonempty factor."""
    batch, (m, n) = x.shape[:-2], x.shape[-2:]
    s = np.zeros(batch + (0,), P.real_dtype(x.dtype))
    if not compute_uv:
        return [s]
    u_cols, vh_rows = (m, n) if full_matrices else (0, 0)
    u = np.broadcast_to(np.eye(m, u_cols, dtype=x.dtype), batch + (m, u_cols)).copy()
    vh = np.broadcast_to(np.eye(vh_rows, n, dtype=x.dtype), batch + (vh_rows, n)).copy()
    return [s, u, vh]


def _svd(x: np.ndarray, *, full_matrices: bool, compute_uv: bool,
         subset_by_index: tuple[int, int] | None, algorithm: Any) -> list[np.ndarray]:
    batch, (m, n) = x.shape[:-2], x.shape[-2:]
    k = min(m, n)
    if k == 0:
        return _empty_svd(x, full_matrices, compute_uv)
    fn = _lapack("gesvd" if algorithm == P.SvdAlgorithm.QR else "gesdd", x)
    s = np.empty(batch + (k,), P.real_dtype(x.dtype))
    u = np.empty(batch + (m, m if full_matrices else k), x.dtype)
    vh = np.empty(batch + (n if full_matrices else k, n), x.dtype)
    for idx in np.ndindex(*batch):
        u_i, s_i, vh_i, info = fn(x[idx], compute_uv=int(compute_uv),
                                  full_matrices=int(full_matrices))
        s[idx] = s_i if info == 0 else np.nan
        if compute_uv:
            u[idx], vh[idx] = (u_i, vh_i) if info == 0 else (np.nan, np.nan)
    cut = _subset(subset_by_index, k)
    if not compute_uv:
        return [s[..., cut]]
    if subset_by_index is not None:
        u, vh = u[..., :, cut], vh[..., cut, :]
    return [s[..., cut], u, vh]


def _multi(prim: Primitive, fn: Callable[..., list[np.ndarray]]) -> None:
    def rule(*xs: np.ndarray, **params: Any) -> tuple[np.ndarray, ...]:
        with np.errstate(all="ignore"):
            return tuple(fn(*xs, **params))
    impl_rules[prim] = rule


_multi(P.lu_p, _lu)
_multi(P.lu_pivots_to_permutation_p, lambda p, **kw: [_lu_pivots_to_permutation(p, **kw)])
_multi(P.geqrf_p, _geqrf)
_multi(P.geqp3_p, _geqp3)
_multi(P.householder_product_p, lambda a, t: [_householder_product(a, t)])
_multi(P.ormqr_p, _ormqr)
_multi(P.qr_p, _qr)
_multi(P.eigh_p, _eigh)
_multi(P.svd_p, _svd)

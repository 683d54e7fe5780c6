"""Matrix functions and equations of ``plait.scipy.linalg``, computed as JAX 0.10.2's
``jax.scipy.linalg`` computes them: ``sqrtm`` (Björck and Hammarling's Schur method),
``rsf2csf`` (real to complex Schur form by Givens rotations), ``funm`` (Parlett's
recurrence, Golub and Van Loan's algorithm 11.1.1), ``solve_sylvester`` (Bartels-Stewart
over complex Schur forms, or an eigendecomposition) and ``qr_multiply``.

All are written in plait operations over the LAPACK-backed factorizations (``schur``,
``eig``, ``geqrf``/``geqp3``), so they stage under ``jit`` and batch under ``vmap``.  As
in JAX, the ones built on a Schur decomposition have no derivative (``schur`` has none).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

import numpy as np

from plait.frontend import lax
from plait.frontend import numpy as pnp
from plait.frontend.api.control_flow import cond, fori_loop, scan
from plait.frontend.api.jit import jit
from plait.frontend.core.array_base import Array
from plait.frontend.lax import linalg as lax_linalg
from plait.frontend.numpy import linalg as np_linalg
from plait.frontend.numpy._core import promote_dtypes_inexact
from plait.frontend.numpy.linalg_eig import eig, eigvals
from plait.frontend.scipy.linalg_schur import _complex_dtype, schur
from plait.ir import dtypes as dt
from plait.ir.primitives import Precision

__all__ = ["sqrtm", "rsf2csf", "funm", "solve_sylvester", "qr_multiply"]


def _h(x: Array) -> Array:
    """The conjugate transpose of a matrix."""
    return pnp.conj(x.T)


def _eps(dtype: np.dtype[Any]) -> float:
    return float(np.finfo(dtype).eps)


# --- sqrtm ------------------------------------------------------------------------------

def _sqrtm_triu(t: Array) -> Array:
    """The principal square root of an upper triangular ``t`` (Björck and Hammarling
    1983): the diagonal's square roots, then each column upwards."""
    diag = pnp.sqrt(pnp.diag(t))
    n = diag.size
    u0 = pnp.diag(diag)

    def row(step: Any, carry: tuple[Any, Array]) -> tuple[Any, Array]:
        j, u = carry
        i = j - 1 - step
        s = fori_loop(i + 1, j, lambda k, acc: acc + u[i, k] * u[k, j],
                      pnp.zeros((), dtype=u.dtype))
        value = pnp.where(t[i, j] == s, 0.0, (t[i, j] - s) / (diag[i] + diag[j]))
        return j, u.at[i, j].set(value)

    def column(j: Any, u: Array) -> Array:
        _, u = fori_loop(0, j, row, (j, u))
        return u

    out: Array = fori_loop(0, n, column, u0)
    return out


def _sqrtm(a: Any) -> Array:
    t, z = schur(a, output="complex")
    root = _sqrtm_triu(t)
    return pnp.matmul(pnp.matmul(z, root, precision=Precision.HIGHEST), pnp.conj(z.T),
                      precision=Precision.HIGHEST)


_sqrtm_jit = jit(_sqrtm)


def sqrtm(A: Any, blocksize: int = 1) -> Array:
    """The principal square root of a square matrix ``A`` (``(N, N)``), by the complex
    Schur method (Björck and Hammarling 1983): ``Z sqrt(T) Z^H`` with ``A = Z T Z^H``.
    The result is complex, whatever ``A``'s dtype (which must be float32, float64,
    complex64 or complex128, as for :func:`schur`).

    Raises:
      NotImplementedError: ``blocksize > 1`` (as in JAX, only the unblocked method).
    """
    if blocksize > 1:
        raise NotImplementedError("Blocked version is not implemented yet.")
    return _sqrtm_jit(A)


# --- rsf2csf ----------------------------------------------------------------------------

def _rotate(m: Any, t: Array, z: Array) -> tuple[Array, Array]:
    """Zero ``t[m, m-1]`` of a real-Schur 2x2 bump by a complex Givens rotation of rows and
    columns ``m-1, m`` (and of ``z``'s columns)."""
    n = t.shape[0]
    mu = eigvals(lax.dynamic_slice(t, (m - 1, m - 1), (2, 2))) - t[m, m]
    r = np_linalg.norm(pnp.array([mu[0], t[m, m - 1]])).astype(t.dtype)
    c = mu[0] / r
    s = t[m, m - 1] / r
    g = pnp.array([[c.conj(), s], [-s, c]], dtype=t.dtype)

    rows = lax.dynamic_slice_in_dim(t, m - 1, 2, axis=0)
    col_mask = pnp.arange(n) >= m - 1
    rotated = g @ pnp.where(col_mask, rows, 0)
    t = lax.dynamic_update_slice_in_dim(t, pnp.where(~col_mask, rows, rotated), m - 1, axis=0)

    cols = lax.dynamic_slice_in_dim(t, m - 1, 2, axis=1)
    row_mask = pnp.arange(n)[:, None] < m + 1
    rotated = pnp.where(row_mask, cols, 0) @ _h(g)
    t = lax.dynamic_update_slice_in_dim(t, pnp.where(~row_mask, cols, rotated), m - 1, axis=1)

    zcols = lax.dynamic_slice_in_dim(z, m - 1, 2, axis=1)
    z = lax.dynamic_update_slice_in_dim(z, zcols @ _h(g), m - 1, axis=1)
    return t, z


def _rsf2csf_2d(t: Array, z: Array) -> tuple[Array, Array]:
    t, z = promote_dtypes_inexact("rsf2csf", t, z)
    ctype = _complex_dtype(t.dtype)
    t, z = t.astype(ctype), z.astype(ctype)
    eps = _eps(ctype)
    n = t.shape[0]
    if n == 1:
        return t, z

    def step(i: Any, tz: tuple[Array, Array]) -> tuple[Array, Array]:
        m = n - i
        t, z = tz
        bump = pnp.abs(t[m, m - 1]) > eps * (pnp.abs(t[m - 1, m - 1]) + pnp.abs(t[m, m]))
        t, z = cond(bump, _rotate, lambda m, t, z: (t, z), m, t, z)
        return t.at[m, m - 1].set(0.0), z

    out: tuple[Array, Array] = fori_loop(1, n, step, (t, z))
    return out


def _rsf2csf(t: Array, z: Array) -> tuple[Array, Array]:
    out: tuple[Array, Array] = pnp.vectorize(
        _rsf2csf_2d, signature="(n,n),(n,n)->(n,n),(n,n)")(t, z)
    return out


_rsf2csf_jit = jit(_rsf2csf)


def rsf2csf(T: Any, Z: Any, check_finite: bool = True) -> tuple[Array, Array]:
    """The complex Schur form ``(T, Z)`` (``T`` upper triangular) from a real one (``T``
    quasi-upper-triangular, ``Z`` its Schur vectors), by a Givens rotation per 2x2
    diagonal block.  ``T`` and ``Z`` are ``(..., N, N)``, batch dimensions broadcasting;
    the results are complex.  ``check_finite`` is unused (as in JAX).

    Raises:
      ValueError: ``T`` or ``Z`` is not (a batch of) square matrices, or their sizes
        differ.
    """
    t, z = pnp.asarray(T), pnp.asarray(Z)
    if t.ndim < 2 or t.shape[-1] != t.shape[-2]:
        raise ValueError("Input 'T' must be square.")
    if z.ndim < 2 or z.shape[-1] != z.shape[-2]:
        raise ValueError("Input 'Z' must be square.")
    if t.shape[-1] != z.shape[-1]:
        raise ValueError(f"Input array shapes must match: Z: {z.shape} vs. T: {t.shape}")
    return _rsf2csf_jit(t, z)


# --- funm -------------------------------------------------------------------------------

def _parlett(f: Array, t: Array) -> tuple[Array, Array]:
    """Fill the strictly upper triangle of ``f = func(T)`` from its diagonal, superdiagonal
    by superdiagonal (Parlett's recurrence); also the smallest ``|T[j, j] - T[i, i]|``."""
    n = t.shape[0]
    minden = pnp.abs(t[0, 0])

    def inner(i: Any, carry: tuple[Any, Array, Array]) -> tuple[Any, Array, Array]:
        p, f, minden = carry
        j = i + p
        s = t[i - 1, j - 1] * (f[j - 1, j - 1] - f[i - 1, i - 1])
        ind = (pnp.arange(n) >= i) & (pnp.arange(n) < j - 1)
        val = (pnp.where(ind, t[i - 1], 0) @ pnp.where(ind, f[:, j - 1], 0)
               - pnp.where(ind, f[i - 1], 0) @ pnp.where(ind, t[:, j - 1], 0))
        s = s + val
        den = t[j - 1, j - 1] - t[i - 1, i - 1]
        s = pnp.where(den != 0, s / den, s)
        return p, f.at[i - 1, j - 1].set(s), pnp.minimum(minden, pnp.abs(den))

    def outer(p: Any, carry: tuple[Array, Array]) -> tuple[Array, Array]:
        _, f, minden = fori_loop(1, n - p + 1, inner, (p, *carry))
        return f, minden

    out: tuple[Array, Array] = fori_loop(1, n, outer, (f, minden))
    return out


_parlett_jit = jit(_parlett)


def funm(A: Any, func: Callable[[Array], Array],
         disp: bool = True) -> Array | tuple[Array, Array]:
    """The matrix function ``func(A)`` of a square matrix ``A`` (``(N, N)``): ``func``
    (elementwise, on an array) maps the eigenvalues on the diagonal of ``A``'s complex
    Schur form, and Parlett's recurrence fills the rest.  The result is complex (SciPy
    returns a real array when it can; JAX and plait do not).  With ``disp=False``, also
    an estimate of the relative error, ``(F, err)``.

    Raises:
      ValueError: ``A`` is not a square matrix.
    """
    a = pnp.asarray(A)
    if a.ndim != 2 or a.shape[0] != a.shape[1]:
        raise ValueError("expected square array_like input")
    t, z = schur(a)
    t, z = rsf2csf(t, z)
    f = pnp.diag(func(pnp.diag(t))).astype(t.dtype)
    f, minden = _parlett_jit(f, t)
    f = z @ f @ _h(z)
    if disp:
        return f
    # (JAX's choice: float32's epsilon for complex64, float64's otherwise.)
    tol = _eps(np.dtype(np.float32)) if f.dtype.char.lower() == "f" else _eps(
        np.dtype(np.float64))
    minden = pnp.where(minden == 0.0, tol, minden)
    err = pnp.where(pnp.any(pnp.isinf(f)), np.inf, pnp.minimum(1, pnp.maximum(
        tol, (tol / minden) * np_linalg.norm(pnp.triu(t, 1), 1))))
    return f, err


# --- solve_sylvester --------------------------------------------------------------------

def _sylvester_triangular(r: Array, s: Array, f: Array) -> Array:
    """``Y`` with ``R Y + Y S^T = F`` for upper triangular ``R`` and ``S``: one entry at a
    time, from the bottom-right corner (a scan over the ``m n`` entries)."""
    r, s, f = promote_dtypes_inexact("solve_sylvester", r, s, f)
    m, n = f.shape

    def step(y_flat: Array, idx: Array) -> tuple[Array, None]:
        i, j = idx // n, idx % n
        y = y_flat.reshape((m, n))
        row_term = pnp.sum(pnp.where(pnp.arange(m) > i, r[i, :] * y[:, j], 0.0))
        col_term = pnp.sum(pnp.where(pnp.arange(n) > j, y[i, :] * s[:, j], 0.0))
        rhs = f[i, j] - (row_term + col_term)
        return y_flat.at[i * n + j].set(rhs / (r[i, i] + s[j, j])), None

    y_flat, _ = scan(step, pnp.zeros((m * n,), dtype=f.dtype),
                     pnp.arange(m * n - 1, -1, -1))
    out: Array = y_flat.reshape((m, n))
    return out


def _sylvester_2d(a: Array, b: Array, c: Array, *, method: str, tol: float) -> Array:
    m, n = c.shape[-2:]
    if method == "schur":
        r, u = schur(a, output="complex")
        s, v = schur(_h(b), output="complex")
        f = _h(u) @ c.astype(r.dtype) @ v
        x = u @ _sylvester_triangular(r, _h(s), f) @ _h(v)
    elif method == "eigen":
        ra, ua = eig(a)
        rb, ub = eig(b)
        f = np_linalg.solve(ua, c.astype(ra.dtype) @ ub)
        y = f / (ra[:, None] + rb[None, :])
        x = ua[:m, :m] @ y[:m, :n] @ np_linalg.inv(ub)[:n, :n]
    else:
        raise ValueError(f"Unrecognized method {method}. The two valid methods are either "
                         "\"schur\" or \"eigen\".")
    if not dt.is_complex(c.dtype):
        x = x.real
    singular = pnp.any(pnp.abs(eigvals(a)[:, None] + eigvals(b)[None, :]) < tol)
    out: Array = cond(singular, lambda: pnp.zeros_like(x) * np.nan, lambda: x)
    return out


def _sylvester(a: Array, b: Array, c: Array, tol: Any, method: str) -> Array:
    out: Array = pnp.vectorize(partial(_sylvester_2d, method=method, tol=tol),
                               signature="(m,m),(n,n),(m,n)->(m,n)")(a, b, c)
    return out


_sylvester_jit = jit(_sylvester, static_argnums=4)


def solve_sylvester(A: Any, B: Any, C: Any, *, method: str = "schur",
                    tol: float = 1e-8) -> Array:
    """``X`` solving the Sylvester equation ``A X + X B = C`` for ``A`` ``(..., m, m)``,
    ``B`` ``(..., n, n)`` and ``C`` ``(..., m, n)`` (batch dimensions broadcast).

    ``method='schur'`` (the default) is Bartels and Stewart's algorithm over the complex
    Schur forms of ``A`` and ``B^H``; ``method='eigen'`` diagonalizes ``A`` and ``B``
    (faster, less accurate for ill-conditioned eigenvectors).  If some eigenvalues of
    ``A`` and ``B`` sum to less than ``tol`` in magnitude (a singular equation) the result
    is all NaN.  Integers become floating; the result is real unless ``C`` is complex.

    Raises:
      ValueError: the shapes do not fit, or ``method`` is unknown.
    """
    a, b, c = promote_dtypes_inexact("solve_sylvester", pnp.asarray(A), pnp.asarray(B),
                                     pnp.asarray(C))
    m, n = c.shape[-2:]
    if a.shape[-2:] != (m, m) or b.shape[-2:] != (n, n):
        raise ValueError(f"Incompatible shapes for Sylvester equation:\nA: {a.shape}\n"
                         f"B: {b.shape}\nC: {c.shape}")
    return _sylvester_jit(a, b, c, tol, method)


# --- qr_multiply ------------------------------------------------------------------------

def qr_multiply(a: Any, c: Any, mode: str = "right", pivoting: bool = False,
                conjugate: bool = False, overwrite_a: bool = False,
                overwrite_c: bool = False) -> tuple[Array, Array] | tuple[Array, Array, Array]:
    """The QR decomposition ``a = Q R`` of ``a`` (``(..., M, N)``, ``K = min(M, N)``)
    applied to ``c``: ``(Q @ c, R)`` with ``mode='left'`` (``c`` ``(..., K, P)``), or
    ``(c @ Q, R)`` with ``mode='right'`` (``c`` ``(..., P, M)``, the product's first
    ``K`` columns); ``conj(Q)`` with ``conjugate``.  A 1-d ``c`` is a column ('left') or
    a row ('right') and the product is raveled.  With ``pivoting``, the column-pivoted
    decomposition and its permutation ``P`` (int32) last: ``(result, R, P)``.
    ``R`` is ``(..., K, N)``.  ``overwrite_a`` and ``overwrite_c`` are unused.

    Raises:
      ValueError: ``mode`` is not 'left' or 'right', or ``c``'s shape does not fit.
    """
    x, cc = promote_dtypes_inexact("qr_multiply", pnp.asarray(a), pnp.asarray(c))
    if mode not in ("right", "left"):
        raise ValueError(f"mode must be 'right' or 'left', got {mode!r}")
    onedim = cc.ndim == 1
    if onedim:
        cc = cc[:, None] if mode == "left" else cc[None, :]
    m, n = x.shape[-2:]
    k = min(m, n)
    if mode == "left" and cc.shape[-2] != k:
        raise ValueError(
            "Array shapes are not compatible for Q @ c operation: "
            f"a has shape {tuple(x.shape)} so Q has {k} columns, "
            f"but c has {cc.shape[-2]} rows (expected {k}).")
    if mode == "right" and cc.shape[-1] != m:
        raise ValueError(
            "Array shapes are not compatible for c @ Q operation: "
            f"a has shape {tuple(x.shape)} so Q has {m} rows, "
            f"but c has {cc.shape[-1]} columns (expected {m}).")
    batch = pnp.broadcast_shapes(x.shape[:-2], cc.shape[:-2])
    x = pnp.broadcast_to(x, batch + x.shape[-2:])
    cc = pnp.broadcast_to(cc, batch + cc.shape[-2:])
    perm: Array | None = None
    if pivoting:
        r, perm, taus = lax_linalg.geqp3(x, pnp.zeros(x.shape[:-2] + (n,), dtype=np.int32))
        perm = perm - 1  # (LAPACK's 1-based permutation, 0-based)
    else:
        r, taus = lax_linalg.geqrf(x)
    # The first K columns of Q: they are all 'left' and 'right' products need.
    q = lax_linalg.householder_product(r[..., :, :k], taus)
    if conjugate:
        q = pnp.conj(q)
    if mode == "left":
        out = pnp.matmul(q, cc, precision=Precision.HIGHEST)
    else:
        out = pnp.matmul(cc, q, precision=Precision.HIGHEST)
    if onedim:
        out = out.ravel()
    r = pnp.triu(r[..., :k, :])
    if perm is not None:
        return out, r, perm
    return out, r

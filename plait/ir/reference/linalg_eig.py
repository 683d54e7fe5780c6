"""Reference rules of ``eig`` and ``tridiagonal_solve`` in NumPy.

Both call the LAPACK routines of the lowering (``?geev`` and ``?gtsv``) through SciPy,
whose LAPACK jaxlib's kernels use, so eigenvalue order and eigenvector phases agree.
A real ``geev`` gives the eigenvectors of a complex conjugate pair ``w[j], w[j+1]`` as
the two real columns ``re, im``: they become ``re + i im`` and ``re - i im``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from plait.ir import primitives as P
from plait.ir.interpreter import impl_rules
from plait.ir.reference.linalg_factorizations import _lapack


def _pair_vectors(wi: np.ndarray, v: np.ndarray) -> np.ndarray:
    """The complex eigenvectors of a real ``geev``'s packed real ones."""
    out = v.astype(np.result_type(v.dtype, np.complex64))
    j, n = 0, len(wi)
    while j < n:
        if wi[j] != 0 and j + 1 < n:
            re, im = v[:, j], v[:, j + 1]
            out[:, j] = re + 1j * im
            out[:, j + 1] = re - 1j * im
            j += 2
        else:
            j += 1
    return out


def _eig(x: np.ndarray, *, compute_left_eigenvectors: bool, compute_right_eigenvectors: bool,
         enable_eigvec_derivs: bool, implementation: Any) -> tuple[np.ndarray, ...]:
    ctype = P.complex_dtype(x.dtype)
    batch, n = x.shape[:-2], x.shape[-1]
    w = np.empty(batch + (n,), ctype)
    vl = np.empty(x.shape, ctype)
    vr = np.empty(x.shape, ctype)
    fn = _lapack("geev", x)
    real = x.dtype.kind != "c"
    flags = {"compute_vl": int(compute_left_eigenvectors),
             "compute_vr": int(compute_right_eigenvectors)}
    for idx in np.ndindex(*batch):
        if real:
            wr, wi, vl_i, vr_i, info = fn(x[idx], **flags)
            w_i = wr + 1j * wi
            vl_i, vr_i = _pair_vectors(wi, vl_i), _pair_vectors(wi, vr_i)
        else:
            w_i, vl_i, vr_i, info = fn(x[idx], **flags)
        if info != 0:
            w[idx] = vl[idx] = vr[idx] = complex(np.nan, np.nan)
            continue
        w[idx] = w_i
        if compute_left_eigenvectors:
            vl[idx] = vl_i
        if compute_right_eigenvectors:
            vr[idx] = vr_i
    outs = [w]
    if compute_left_eigenvectors:
        outs.append(vl)
    if compute_right_eigenvectors:
        outs.append(vr)
    return tuple(outs)


_PERTURBED = ("tridiagonal_solve(perturb_singular=True) of a singular system: the reference "
              "interpreter does not implement jaxlib's perturbed pivoting")


def _tridiagonal_solve(dl: np.ndarray, d: np.ndarray, du: np.ndarray, b: np.ndarray, *,
                       perturb_singular: bool) -> tuple[np.ndarray]:
    out = np.empty_like(b)
    m = b.shape[-2]
    if m == 0 or b.size == 0:
        return (out,)
    if m == 1:  # (SciPy's binding refuses LAPACK's empty off-diagonals)
        x1 = b / d[..., None]
        singular = (d == 0)[..., None]  # [..., 1, 1]: the whole system
        if perturb_singular and np.any(singular):
            raise NotImplementedError(_PERTURBED)
        return (np.where(singular, np.nan, x1).astype(b.dtype),)
    fn = _lapack("gtsv", b)
    for idx in np.ndindex(*b.shape[:-2]):
        # LAPACK's sub- and superdiagonal have m - 1 entries: dl[0] and du[m-1] are unused.
        *_, x, info = fn(dl[idx][1:], d[idx], du[idx][:-1], b[idx])
        if info != 0 and perturb_singular:
            raise NotImplementedError(_PERTURBED)
        out[idx] = x if info == 0 else np.nan
    return (out,)


def _quiet(fn: Any) -> Any:
    def rule(*xs: np.ndarray, **params: Any) -> tuple[np.ndarray, ...]:
        with np.errstate(all="ignore"):
            out: tuple[np.ndarray, ...] = fn(*xs, **params)
            return out
    return rule


impl_rules[P.eig_p] = _quiet(_eig)
impl_rules[P.tridiagonal_solve_p] = _quiet(_tridiagonal_solve)

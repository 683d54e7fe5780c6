"""Reference rules of ``hessenberg``, ``tridiagonal`` and ``schur`` in NumPy.

Each calls the LAPACK routine of the lowering (``?gehrd``, ``?sytrd``/``?hetrd``,
``?gees``) through SciPy, whose LAPACK jaxlib's kernels use, so the reflectors and Schur
vectors agree (a reduction by similarity is unique only up to signs or phases).  A
matrix whose routine reports a failure gives NaNs, as the lowering does.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from plait.ir import primitives as P
from plait.ir.interpreter import impl_rules
from plait.ir.reference.linalg_factorizations import _lapack


def _hessenberg(a: np.ndarray) -> list[np.ndarray]:
    n = a.shape[-1]
    out = np.empty_like(a)
    taus = np.empty(a.shape[:-2] + (n - 1,), a.dtype)
    fn = _lapack("gehrd", a)
    for idx in np.ndindex(*a.shape[:-2]):
        # SciPy's lo/hi are 0-based: the whole matrix, as JAX's low=1, high=n.
        h, tau, info = fn(a[idx], lo=0, hi=n - 1)
        out[idx], taus[idx] = (h, tau[:n - 1]) if info == 0 else (np.nan, np.nan)
    return [out, taus]


def _tridiagonal(a: np.ndarray, *, lower: bool) -> list[np.ndarray]:
    batch, n = a.shape[:-2], a.shape[-1]
    real = P.real_dtype(a.dtype)
    out = np.empty_like(a)
    d = np.empty(batch + (n,), real)
    e = np.empty(batch + (n - 1,), real)
    taus = np.empty(batch + (n - 1,), a.dtype)
    fn = _lapack("hetrd" if a.dtype.kind == "c" else "sytrd", a)
    for idx in np.ndindex(*batch):
        if n == 1:  # (SciPy's binding refuses LAPACK's empty off-diagonal and scales)
            out[idx], d[idx] = a[idx], a[idx].real[0]
            continue
        c, d_i, e_i, tau, info = fn(a[idx], lower=int(lower))
        if info != 0:
            out[idx] = d[idx] = e[idx] = taus[idx] = np.nan
            continue
        out[idx], d[idx], e[idx], taus[idx] = c, d_i, e_i, tau
    return [out, d, e, taus]


def _no_selection(*_: Any) -> int:
    return 0


def _schur(x: np.ndarray, *, compute_schur_vectors: bool, sort_eig_vals: bool,
           select_callable: Any) -> list[np.ndarray]:
    if sort_eig_vals:
        raise NotImplementedError("The sort feature of LAPACK's gees routine is not "
                                  "implemented.")
    t = np.empty_like(x)
    vs = np.empty_like(x)
    if x.shape[-1] == 0:
        return [t, vs] if compute_schur_vectors else [t]
    fn = _lapack("gees", x)
    for idx in np.ndindex(*x.shape[:-2]):
        t_i, *_, vs_i, _work, info = fn(_no_selection, x[idx],
                                        compute_v=int(compute_schur_vectors), sort_t=0)
        t[idx], vs[idx] = (t_i, vs_i) if info == 0 else (np.nan, np.nan)
    return [t, vs] if compute_schur_vectors else [t]


def _quiet(fn: Any) -> Any:
    def rule(*xs: np.ndarray, **params: Any) -> list[np.ndarray]:
        with np.errstate(all="ignore"):
            out: list[np.ndarray] = fn(*xs, **params)
            return out
    return rule


impl_rules[P.hessenberg_p] = _quiet(_hessenberg)
impl_rules[P.tridiagonal_p] = _quiet(_tridiagonal)
impl_rules[P.schur_p] = _quiet(_schur)

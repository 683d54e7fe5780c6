"""``plait.scipy.linalg.hessenberg`` and ``plait.scipy.linalg.schur``, with the signatures
and semantics of JAX 0.10.2's ``jax.scipy.linalg`` (CPU only: LAPACK's ``gehrd`` and
``gees`` through :mod:`plait.frontend.lax.linalg`)."""

from __future__ import annotations

from typing import Any

from plait.frontend import numpy as pnp
from plait.frontend.core.array_base import Array
from plait.frontend.lax import linalg as lax_linalg
from plait.ir import dtypes as dt

__all__ = ["hessenberg", "schur"]


def hessenberg(a: Any, *, calc_q: bool = False, overwrite_a: bool = False,
               check_finite: bool = True) -> Array | tuple[Array, Array]:
    """The upper Hessenberg form ``H`` of square matrices ``a`` (``[..., n, n]``), zero
    below the first subdiagonal, with ``a = Q H Q^H``; ``(H, Q)`` with ``calc_q``, ``Q``
    unitary.  ``overwrite_a`` and ``check_finite`` are unused (as in JAX).

    ``a`` is used in its own dtype, which must be float32, float64, complex64 or
    complex128 (as in JAX); an empty matrix gives zeros.
    """
    x = pnp.asarray(a)
    n = x.shape[-1]
    if n == 0:
        return (pnp.zeros_like(x), pnp.zeros_like(x)) if calc_q else pnp.zeros_like(x)
    packed, taus = lax_linalg.hessenberg(x)
    h = pnp.triu(packed, -1)
    if not calc_q:
        return h
    # Q = diag(1, Q'), Q' the product of the reflectors stored below the subdiagonal.
    q_inner = lax_linalg.householder_product(packed[..., 1:, :-1], taus)
    batch, dtype = packed.shape[:-2], packed.dtype
    q = pnp.block([[pnp.ones(batch + (1, 1), dtype=dtype),
                    pnp.zeros(batch + (1, n - 1), dtype=dtype)],
                   [pnp.zeros(batch + (n - 1, 1), dtype=dtype), q_inner]])
    return h, q


def _complex_dtype(dtype: Any) -> Any:
    """The complex dtype of the same precision (JAX's ``to_complex_dtype``)."""
    if dt.is_complex(dtype):
        return dtype
    return dt.complex128 if dtype.itemsize == 8 else dt.complex64


def schur(a: Any, output: str = "real") -> tuple[Array, Array]:
    """The Schur decomposition ``(T, Z)`` of square matrices ``a`` (``[..., n, n]``):
    ``a = Z T Z^H`` with ``Z`` unitary and ``T`` upper triangular (``output='complex'``,
    the matrix first made complex) or, for a real ``a`` with ``output='real'``,
    quasi-upper-triangular with a 2x2 diagonal block per complex conjugate pair of
    eigenvalues.

    Raises:
      ValueError: ``output`` is neither ``'real'`` nor ``'complex'``.
    """
    if output not in ("real", "complex"):
        raise ValueError(
            f"Expected 'output' to be either 'real' or 'complex', got {output=}.")
    x = pnp.asarray(a)
    if output == "complex":
        x = x.astype(_complex_dtype(x.dtype))
    t, z = lax_linalg.schur(x)
    return t, z

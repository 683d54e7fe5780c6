"""``plait.numpy.linalg``'s general eigendecomposition: ``eig`` and ``eigvals``, with JAX
0.10.2's semantics (complex results for real input, LAPACK's ``geev`` on the CPU)."""

from __future__ import annotations

from typing import Any, NamedTuple

from plait.frontend.core.array_base import Array
from plait.frontend.lax import linalg_eig as lax_eig
from plait.frontend.numpy._core import check_arraylike, promote_dtypes_inexact
from plait.frontend.numpy.creation import asarray

__all__ = ["eig", "eigvals", "EigResult"]


class EigResult(NamedTuple):
    """The result of :func:`eig`."""

    eigenvalues: Array
    """Complex, in LAPACK's order (not sorted)."""
    eigenvectors: Array
    """The right eigenvectors (columns ``[..., :, i]``), of unit norm."""


def _inexact(name: str, a: Any) -> Array:
    check_arraylike(f"jnp.linalg.{name}", a)
    (out,) = promote_dtypes_inexact(f"jnp.linalg.{name}", a)
    return asarray(out)


def eig(a: Any) -> EigResult:
    """The eigenvalues and right eigenvectors of each square matrix of ``a``
    (``[..., M, M]``): ``a[..., :, :] @ v[..., :, i] = w[..., i] * v[..., :, i]``.

    Unlike NumPy's, the results are always complex (complex64 for 32-bit input,
    complex128 for 64-bit input).  Only the eigenvalues are differentiable (see
    :func:`plait.lax.linalg.eig`).
    """
    w, v = lax_eig.eig(_inexact("eig", a), compute_left_eigenvectors=False)
    return EigResult(w, v)


def eigvals(a: Any) -> Array:
    """The eigenvalues (complex, ``[..., M]``) of each square matrix of ``a``."""
    (w,) = lax_eig.eig(_inexact("eigvals", a), compute_left_eigenvectors=False,
                       compute_right_eigenvectors=False)
    return w

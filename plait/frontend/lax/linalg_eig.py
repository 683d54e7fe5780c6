"""``lax.linalg.eig`` and ``lax.linalg.tridiagonal_solve``, with the signatures and
semantics of JAX 0.10.2's ``jax.lax.linalg``."""

from __future__ import annotations

import warnings
from typing import Any

from plait.frontend.core.array_base import Array
from plait.frontend.core.tracing import bind, bind1
from plait.ir import primitives as P
from plait.ir.primitives.linalg_eig import EigImplementation

__all__ = ["eig", "tridiagonal_solve", "EigImplementation"]


def _implementation(value: Any) -> EigImplementation | None:
    """``value`` as plait's enum: ``None``, a member, or a member of JAX's same-named enum
    (matched by name)."""
    if value is None or isinstance(value, EigImplementation):
        return value
    name = getattr(value, "name", value)
    if isinstance(name, str) and name in EigImplementation.__members__:
        return EigImplementation[name]
    raise ValueError(f"expected None or an EigImplementation, but got {value!r}")


def eig(x: Any, *, compute_left_eigenvectors: bool = True,
        compute_right_eigenvectors: bool = True, enable_eigvec_derivs: bool = False,
        implementation: Any = None, use_magma: bool | None = None) -> list[Array]:
    """Eigendecomposition of general square matrices ``[..., n, n]`` (LAPACK's ``geev``).

    Returns ``[w, vl, vr]``, ``vl`` and ``vr`` only as asked: the eigenvalues ``w``
    (complex, ``[..., n]``, unsorted), the left eigenvectors (``vl[..., :, j]^H x =
    w[j] vl[..., :, j]^H``) and the right ones (``x vr[..., :, j] = w[j] vr[..., :, j]``),
    complex, each of unit 2-norm with its largest component real.  A decomposition that
    fails gives NaNs.

    Derivatives: of the eigenvalues alone always; of the eigenvectors only with
    ``enable_eigvec_derivs`` (valid for distinct eigenvalues, and no eigenvector with two
    components tied for the largest magnitude).  ``use_magma`` is deprecated (as in JAX):
    ``True`` means ``implementation=EigImplementation.MAGMA``, which does not run on the
    CPU, ``False`` ``LAPACK``.

    Raises:
      TypeError: ``x`` is not a (batch of) square matrices of float32, float64,
        complex64 or complex128.
    """
    if use_magma is not None:
        warnings.warn("use_magma is deprecated, please use "
                      "implementation=EigImplementation.MAGMA instead.", DeprecationWarning,
                      stacklevel=2)
        implementation = EigImplementation.MAGMA if use_magma else EigImplementation.LAPACK
    out = bind(P.eig_p, x, compute_left_eigenvectors=bool(compute_left_eigenvectors),
               compute_right_eigenvectors=bool(compute_right_eigenvectors),
               enable_eigvec_derivs=bool(enable_eigvec_derivs),
               implementation=_implementation(implementation))
    return list(out)


def tridiagonal_solve(dl: Any, d: Any, du: Any, b: Any, *,
                      perturb_singular: bool = False) -> Array:
    """``X`` solving ``A X = b`` for the tridiagonal matrices ``A`` of the diagonals
    ``dl``, ``d``, ``du`` (``[..., m]`` each; ``dl[..., i] = A[i, i-1]`` with ``dl[..., 0]``
    unused, ``d[..., i] = A[i, i]``, ``du[..., i] = A[i, i+1]`` with ``du[..., m-1]``
    unused) and right-hand sides ``b`` (``[..., m, n]``), by LU with partial pivoting
    (LAPACK's ``gtsv``).

    A singular system gives NaNs, unless ``perturb_singular``: then tiny pivots are
    perturbed (by about ``eps * max |U|``) to give a finite result, as inverse iteration
    for eigenvectors needs.

    Raises:
      TypeError: operands of different dtypes, or not of float32, float64, complex64 or
        complex128; diagonals of different shapes, or not ``b.shape[:-1]``.
    """
    return bind1(P.tridiagonal_solve_p, dl, d, du, b, perturb_singular=bool(perturb_singular))

"""``lax.linalg`` factorizations (``lu``, ``qr``, ``eigh``, ``svd`` and their pieces), with
the signatures and semantics of JAX 0.10.2's ``jax.lax.linalg``."""

from __future__ import annotations

from typing import Any, Literal, overload

from plait.frontend.core.array_base import Array
from plait.frontend.core.host_values import value_aval
from plait.frontend.core.tracing import bind, bind1
from plait.frontend.lax.linalg_common import symmetrize
from plait.ir import primitives as P
from plait.ir.primitives.linalg_factorizations import EighImplementation, SvdAlgorithm

__all__ = ["lu", "lu_pivots_to_permutation", "geqrf", "geqp3", "householder_product", "ormqr",
           "qr",
           "eigh", "svd", "SvdAlgorithm", "EighImplementation"]


def lu(x: Any) -> tuple[Array, Array, Array]:
    """LU decomposition with partial pivoting, ``P x = L U``, of matrices ``[..., m, n]``.

    Returns ``(lu, pivots, permutation)``: ``L`` (below the diagonal, its unit diagonal
    implicit) and ``U`` packed in one matrix of ``x``'s shape; the ``min(m, n)`` row swaps
    as int32 indices; the permutation they make, ``[..., m]`` int32 (``x[perm] = L U``).

    Raises:
      TypeError: ``x`` is not a (batch of) matrices of float32, float64, complex64 or
        complex128.
    """
    out = bind(P.lu_p, x)
    return out[0], out[1], out[2]


def lu_pivots_to_permutation(pivots: Any, permutation_size: int) -> Array:
    """The permutation of ``range(permutation_size)`` made by the row swaps ``pivots``
    (int32 ``[..., k]``, ``k <= permutation_size``), as ``lu`` returns them."""
    return bind1(P.lu_pivots_to_permutation_p, pivots,
                 permutation_size=int(permutation_size))


def geqrf(a: Any) -> tuple[Array, Array]:
    """LAPACK's ``geqrf`` on matrices ``[..., m, n]``: ``(a, taus)``, ``R`` in the upper
    triangle of ``a``, Householder reflectors below it with their scales ``taus``."""
    out = bind(P.geqrf_p, a)
    return out[0], out[1]


def _optional_bool(value: Any) -> bool | None:
    return None if value is None else bool(value)


def geqp3(a: Any, jpvt: Any, *, use_magma: bool | None = None) -> tuple[Array, Array, Array]:
    """LAPACK's ``geqp3``, QR with column pivoting, on matrices ``[..., m, n]``.

    ``jpvt`` (int32 ``[..., n]``) marks with a nonzero entry the columns to move to the
    front unpivoted; the others are pivoted (all zeros: every column free).  Returns
    ``(a, jpvt, taus)``: ``R`` in the upper triangle of ``a``, Householder reflectors
    below it with their scales ``taus``, and the 1-based column permutation ``jpvt``
    (``a[..., :, jpvt - 1] = Q R``).  ``use_magma`` matters on GPU only.
    """
    out = bind(P.geqp3_p, a, jpvt, use_magma=_optional_bool(use_magma))
    return out[0], out[1], out[2]


def householder_product(a: Any, taus: Any) -> Array:
    """The product of the elementary Householder reflectors stored below the diagonal of
    ``a`` (``[..., m, n]``, ``m >= n``) with scales ``taus`` (``[..., k]``, ``k <= n``):
    the first ``n`` columns of a unitary matrix (LAPACK's ``orgqr``)."""
    return bind1(P.householder_product_p, a, taus)


def ormqr(a: Any, taus: Any, c: Any, *, left: bool = True, transpose: bool = False) -> Array:
    """``Q @ c`` (``left``, the default) or ``c @ Q``, without forming ``Q``: the product of
    the Householder reflectors below the diagonal of ``a`` (``[..., m, n]``) with scales
    ``taus`` (``[..., k]``), as :func:`geqrf` returns them; ``transpose`` uses ``Q``'s
    (conjugate) transpose (LAPACK's ``ormqr``/``unmqr``)."""
    return bind1(P.ormqr_p, a, taus, c, left=bool(left), transpose=bool(transpose))


@overload
def qr(x: Any, *, pivoting: Literal[False] = False, full_matrices: bool = True,
       use_magma: bool | None = None) -> tuple[Array, Array]: ...


@overload
def qr(x: Any, *, pivoting: Literal[True], full_matrices: bool = True,
       use_magma: bool | None = None) -> tuple[Array, Array, Array]: ...


@overload
def qr(x: Any, *, pivoting: bool = False, full_matrices: bool = True,
       use_magma: bool | None = None) -> tuple[Array, Array] | tuple[Array, Array, Array]: ...


def qr(x: Any, *, pivoting: bool = False, full_matrices: bool = True,
       use_magma: bool | None = None) -> tuple[Array, Array] | tuple[Array, Array, Array]:
    """QR decomposition ``x = Q R`` of matrices ``[..., m, n]``: ``Q`` unitary with
    ``m`` columns (``min(m, n)`` unless ``full_matrices``), ``R`` upper triangular.

    With ``pivoting`` (LAPACK's ``geqp3``), the rank-revealing ``x[..., :, p] = Q R``,
    ``R``'s diagonal non-increasing in magnitude: returns ``(q, r, p)``, ``p`` the
    0-based column permutation (int32 ``[..., n]``).  ``use_magma`` matters on GPU only.

    Raises:
      TypeError: ``x`` is not a (batch of) matrices of a LAPACK dtype.
    """
    out = bind(P.qr_p, x, pivoting=bool(pivoting), full_matrices=bool(full_matrices),
               use_magma=_optional_bool(use_magma))
    if pivoting:
        return out[0], out[1], out[2]
    return out[0], out[1]


def _named(enum_type: Any, value: Any) -> Any:
    """``value`` as plait's enum: ``None``, a member, or a member of JAX's same-named enum
    (matched by name)."""
    if value is None or isinstance(value, enum_type):
        return value
    name = getattr(value, "name", value)
    if isinstance(name, str) and name in enum_type.__members__:
        return enum_type[name]
    raise ValueError(f"expected None or a {enum_type.__name__}, but got {value!r}")


def _subset(subset_by_index: Any) -> tuple[int, int] | None:
    if subset_by_index is None:
        return None
    start, end = subset_by_index
    return int(start), int(end)


def eigh(x: Any, *, lower: bool = True, symmetrize_input: bool = True,
         sort_eigenvalues: bool = True, subset_by_index: tuple[int, int] | None = None,
         implementation: Any = None) -> tuple[Array, Array]:
    """Eigendecomposition of Hermitian matrices ``[..., n, n]``: ``(v, w)``, the
    eigenvectors as the columns of ``v`` and the (real) eigenvalues ``w`` ascending.

    With ``symmetrize_input`` the decomposition is of ``(x + x^H) / 2``; otherwise only
    the ``lower`` (or upper) triangle is read.  ``subset_by_index=(start, end)`` keeps
    those eigenvalues (not supported on CPU, as in JAX).
    """
    if symmetrize_input:
        x = symmetrize(x, value_aval(x))
    out = bind(P.eigh_p, x, lower=bool(lower), sort_eigenvalues=bool(sort_eigenvalues),
               subset_by_index=_subset(subset_by_index),
               algorithm=_named(EighImplementation, implementation))
    return out[0], out[1]


def svd(x: Any, *, full_matrices: bool = True, compute_uv: bool = True,
        subset_by_index: tuple[int, int] | None = None,
        algorithm: Any = None) -> Any:
    """Singular value decomposition ``x = U diag(s) V^H`` of matrices ``[..., m, n]``.

    Returns ``(u, s, vh)`` with ``compute_uv`` (``u`` square with ``full_matrices``, else
    ``min(m, n)`` columns; ``vh`` likewise), else only ``s`` (real, descending).
    ``algorithm`` is ``None`` or an :class:`SvdAlgorithm` (``QR`` uses LAPACK's
    ``gesvd``, the others ``gesdd``).
    """
    out = bind(P.svd_p, x, full_matrices=bool(full_matrices), compute_uv=bool(compute_uv),
               subset_by_index=_subset(subset_by_index),
               algorithm=_named(SvdAlgorithm, algorithm))
    if compute_uv:
        return out[1], out[0], out[2]
    return out[0]

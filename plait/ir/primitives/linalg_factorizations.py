"""Matrix factorizations of (batches of) matrices, as JAX 0.10.2 has them: ``lu`` (with
``lu_pivots_to_permutation``), ``geqrf``, ``geqp3``, ``householder_product`` and
``ormqr`` (the pieces of QR), ``qr``, ``eigh`` and ``svd``.

Each acts on the trailing two dimensions (one for pivots and Householder scales); any
leading dimensions are batch dimensions, native to the primitive.  Only float32,
float64, complex64 and complex128 are accepted (the dtypes LAPACK has kernels for).
"""

from __future__ import annotations

import enum
from typing import Any

from plait.ir import dtypes as dt
from plait.ir.avals import ShapedArray
from plait.ir.params import ParamDef, decode_bool, decode_int, decode_optional_ints
from plait.ir.primitive import Primitive
from plait.ir.primitives._typing import fail
from plait.ir.primitives.linalg_decompositions import LAPACK_DTYPES

__all__ = ["lu_p", "lu_pivots_to_permutation_p", "geqrf_p", "geqp3_p", "householder_product_p",
           "ormqr_p", "qr_p",
           "eigh_p", "svd_p", "SvdAlgorithm", "EighImplementation", "real_dtype"]


class _NamedEnum(enum.Enum):
    """An enum printed as JAX prints its own (``SvdAlgorithm.QR``)."""

    def __str__(self) -> str:
        return f"{type(self).__name__}.{self.name}"

    __repr__ = __str__


class SvdAlgorithm(_NamedEnum):
    """The SVD algorithm (JAX's ``lax.linalg.SvdAlgorithm``, with its values)."""

    DEFAULT = "default"
    QR = "QR"
    JACOBI = "Jacobi"
    POLAR = "polar"
    DIVIDE_AND_CONQUER = "divide_and_conquer"


class EighImplementation(_NamedEnum):
    """The eigensolver (JAX's ``lax.linalg.EighImplementation``, with its values)."""

    QR = "qr"
    JACOBI = "jacobi"
    QDWH = "qdwh"


def _decode_named(enum_type: type[_NamedEnum]) -> Any:
    """A decoder of ``None``, a member, or its printed name (``SvdAlgorithm.QR``)."""
    def decode(value: Any) -> _NamedEnum | None:
        if value is None or isinstance(value, enum_type):
            return value
        prefix = enum_type.__name__ + "."
        if isinstance(value, str) and value.startswith(prefix) \
                and value[len(prefix):] in enum_type.__members__:
            return enum_type[value[len(prefix):]]
        raise ValueError(f"expected None or a {enum_type.__name__}, but got {value!r}")
    return decode


def _decode_subset(value: Any) -> tuple[int, int] | None:
    ints = decode_optional_ints(value)
    if ints is not None and len(ints) != 2:
        raise ValueError(f"expected None or (start, end), but got {value!r}")
    return None if ints is None else (ints[0], ints[1])


real_dtype = dt.real_dtype


def _check_matrix(name: str, x: ShapedArray, what: str = "the operand") -> tuple[int, int]:
    """Fail unless ``x`` is a (batch of) matrices of a LAPACK dtype; returns ``(m, n)``."""
    if x.dtype not in LAPACK_DTYPES:
        fail(f"{name}: expected float32, float64, complex64 or complex128 for {what}, "
             f"but got {x.str_short()}")
    if x.ndim < 2:
        fail(f"{name}: expected {what} to be a matrix (or a batch of them, [..., m, n]), "
             f"but got {x.str_short()}")
    return x.shape[-2], x.shape[-1]


def _check_square(name: str, x: ShapedArray) -> int:
    m, n = _check_matrix(name, x)
    if m != n:
        fail(f"{name}: expected a square matrix (or a batch of them, [..., n, n]), "
             f"but got {x.str_short()}")
    return n


# -- LU -----------------------------------------------------------------------------------


def _lu_rule(x: ShapedArray) -> tuple[ShapedArray, ...]:
    m, n = _check_matrix("lu", x)
    batch = x.shape[:-2]
    # (As JAX: every result weak exactly when the operand is.)
    return (x, ShapedArray(batch + (min(m, n),), dt.int32, x.weak_type),
            ShapedArray(batch + (m,), dt.int32, x.weak_type))


lu_p = Primitive("lu", _lu_rule, multiple_results=True)
"""LU factorization with partial pivoting, ``P x = L U``: the factors packed in one
matrix (``L``'s unit diagonal implicit), the row swaps (``pivots``, 0-based,
``min(m, n)`` of them) and the permutation they make (``m`` indices).  A factorization
that fails (not a singular matrix: LAPACK's error codes) gives NaNs."""


def _permutation_rule(pivots: ShapedArray, *,
                      permutation_size: int) -> tuple[ShapedArray, ...]:
    if pivots.dtype != dt.int32:
        fail(f"lu_pivots_to_permutation: expected int32 pivots, but got {pivots.str_short()}")
    if pivots.ndim < 1:
        fail(f"lu_pivots_to_permutation: expected pivots of rank at least 1, but got "
             f"{pivots.str_short()}")
    if permutation_size < pivots.shape[-1]:
        fail(f"lu_pivots_to_permutation: expected a permutation_size of at least the "
             f"number of pivots {pivots.shape[-1]}, but got {permutation_size}")
    return (ShapedArray(pivots.shape[:-1] + (permutation_size,), dt.int32, pivots.weak_type),)


lu_pivots_to_permutation_p = Primitive(
    "lu_pivots_to_permutation", _permutation_rule,
    (ParamDef("permutation_size", decode=decode_int),))
"""The permutation of ``range(permutation_size)`` made by swapping entry ``i`` with
entry ``pivots[i]``, for ``i`` in order."""


# -- QR -----------------------------------------------------------------------------------


def _geqrf_rule(x: ShapedArray) -> tuple[ShapedArray, ...]:
    m, n = _check_matrix("geqrf", x)
    return x, ShapedArray(x.shape[:-2] + (min(m, n),), x.dtype, x.weak_type)


geqrf_p = Primitive("geqrf", _geqrf_rule, multiple_results=True)
"""LAPACK's ``geqrf``: ``R`` in the upper triangle, the Householder reflectors below it
and their scales (``taus``)."""


def _decode_optional_bool(value: Any) -> bool | None:
    return None if value is None else decode_bool(value)


def _geqp3_rule(a: ShapedArray, jpvt: ShapedArray, *,
                use_magma: bool | None) -> tuple[ShapedArray, ...]:
    m, n = _check_matrix("geqp3", a, "a")
    # (JAX accepts any integer jpvt here and fails when running: LAPACK's kernel takes
    # int32 only.)
    if jpvt.dtype != dt.int32:
        fail(f"geqp3: expected int32 jpvt, but got {jpvt.str_short()}")
    if jpvt.shape != a.shape[:-2] + (n,):
        fail(f"geqp3: expected jpvt of shape {a.shape[:-2] + (n,)} (a's batch dimensions "
             f"and its {n} columns), but got a: {a.str_short()}, jpvt: {jpvt.str_short()}")
    weak = a.weak_type and jpvt.weak_type  # (as JAX: every result weak when all operands are)
    return (ShapedArray(a.shape, a.dtype, weak), ShapedArray(jpvt.shape, jpvt.dtype, weak),
            ShapedArray(a.shape[:-2] + (min(m, n),), a.dtype, weak))


geqp3_p = Primitive("geqp3", _geqp3_rule, (
    ParamDef("use_magma", decode=_decode_optional_bool),
), multiple_results=True)
"""LAPACK's ``geqp3``, QR with column pivoting: ``R`` in the upper triangle of ``a``, the
Householder reflectors below it, the column permutation (1-based: ``a[:, jpvt - 1] =
Q R``) and the reflectors' scales.  On entry a nonzero ``jpvt[j]`` moves column ``j`` to
the front, unpivoted; the other columns are pivoted by largest remaining norm."""


def _householder_rule(a: ShapedArray, taus: ShapedArray) -> tuple[ShapedArray, ...]:
    m, n = _check_matrix("householder_product", a, "a")
    if taus.dtype != a.dtype:
        fail(f"householder_product: expected taus of a's dtype {a.dtype.name}, but got "
             f"{taus.str_short()}")
    if taus.ndim != a.ndim - 1 or taus.shape[:-1] != a.shape[:-2]:
        fail(f"householder_product: expected taus with a's batch dimensions ([..., k]), "
             f"but got a: {a.str_short()}, taus: {taus.str_short()}")
    if m < n:
        fail(f"householder_product: expected a with at least as many rows as columns, "
             f"but got {a.str_short()}")
    if taus.shape[-1] > n:
        fail(f"householder_product: expected at most {n} taus, but got {taus.str_short()}")
    return (ShapedArray(a.shape, a.dtype, a.weak_type and taus.weak_type),)


householder_product_p = Primitive("householder_product", _householder_rule)
"""The first columns of ``H_1 ... H_k``, the elementary reflectors stored below the
diagonal of ``a`` (as ``geqrf`` leaves them) with scales ``taus`` (LAPACK's ``orgqr``)."""


def _ormqr_rule(a: ShapedArray, taus: ShapedArray, c: ShapedArray, *, left: bool,
                transpose: bool) -> tuple[ShapedArray, ...]:
    m, n = _check_matrix("ormqr", a, "a")
    _check_matrix("ormqr", c, "c")
    if taus.dtype != a.dtype or c.dtype != a.dtype:
        fail(f"ormqr: expected taus and c of a's dtype {a.dtype.name}, but got "
             f"taus: {taus.str_short()}, c: {c.str_short()}")
    if taus.ndim != a.ndim - 1 or c.ndim != a.ndim or taus.shape[:-1] != a.shape[:-2] or \
            c.shape[:-2] != a.shape[:-2]:
        fail(f"ormqr: expected taus ([..., k]) and c ([..., rows, cols]) with a's batch "
             f"dimensions, but got a: {a.str_short()}, taus: {taus.str_short()}, "
             f"c: {c.str_short()}")
    if taus.shape[-1] > min(m, n):
        fail(f"ormqr: expected at most {min(m, n)} taus, but got {taus.str_short()}")
    side, length = ("rows", c.shape[-2]) if left else ("columns", c.shape[-1])
    if length != m:
        fail(f"ormqr: expected c with {m} {side} (a's rows) when left={left}, but got "
             f"a: {a.str_short()}, c: {c.str_short()}")
    return (ShapedArray(c.shape, c.dtype, a.weak_type and taus.weak_type and c.weak_type),)


ormqr_p = Primitive("ormqr", _ormqr_rule, (
    ParamDef("left", decode=decode_bool),
    ParamDef("transpose", decode=decode_bool),
))
"""``Q @ c`` (``left``) or ``c @ Q``, ``Q`` (its conjugate transpose with ``transpose``) the
product of the reflectors below the diagonal of ``a`` with scales ``taus``, as
``geqrf`` leaves them, without forming ``Q`` (LAPACK's ``ormqr``/``unmqr``)."""


def _qr_rule(x: ShapedArray, *, pivoting: bool, full_matrices: bool,
             use_magma: bool | None) -> tuple[ShapedArray, ...]:
    m, n = _check_matrix("qr", x)
    k = m if full_matrices else min(m, n)
    batch = x.shape[:-2]
    out = (ShapedArray(batch + (m, k), x.dtype, x.weak_type),
           ShapedArray(batch + (k, n), x.dtype, x.weak_type))
    return out + (ShapedArray(batch + (n,), dt.int32, x.weak_type),) if pivoting else out


qr_p = Primitive("qr", _qr_rule, (
    ParamDef("full_matrices", decode=decode_bool),
    ParamDef("pivoting", decode=decode_bool),
    ParamDef("use_magma", decode=_decode_optional_bool),
), multiple_results=True)
"""``x = Q R`` (``Q`` unitary, ``R`` upper triangular): ``Q`` of ``m`` columns with
``full_matrices``, else ``min(m, n)``; with ``pivoting``, also the column permutation."""


# -- eigh -----------------------------------------------------------------------------------


def _subset_size(name: str, subset: tuple[int, int] | None, n: int) -> int:
    if subset is None:
        return n
    start, end = subset
    if not 0 <= start <= end <= n:
        fail(f"{name}: expected subset_by_index (start, end) with 0 <= start <= end <= {n}, "
             f"but got {subset}")
    return end - start


def _eigh_rule(x: ShapedArray, *, lower: bool, sort_eigenvalues: bool,
               subset_by_index: tuple[int, int] | None,
               algorithm: EighImplementation | None) -> tuple[ShapedArray, ...]:
    n = _check_square("eigh", x)
    d = _subset_size("eigh", subset_by_index, n)
    batch = x.shape[:-2]
    return (ShapedArray(batch + (n, d), x.dtype, x.weak_type),
            ShapedArray(batch + (d,), real_dtype(x.dtype), x.weak_type))


eigh_p = Primitive("eigh", _eigh_rule, (
    ParamDef("algorithm", decode=_decode_named(EighImplementation)),
    ParamDef("lower", decode=decode_bool),
    ParamDef("sort_eigenvalues", decode=decode_bool),
    ParamDef("subset_by_index", decode=_decode_subset),
), multiple_results=True)
"""Eigenvectors (columns) and real eigenvalues (ascending) of Hermitian matrices, of
which only the ``lower`` (or upper) triangle is read."""


# -- svd ------------------------------------------------------------------------------------


def _svd_rule(x: ShapedArray, *, full_matrices: bool, compute_uv: bool,
              subset_by_index: tuple[int, int] | None,
              algorithm: SvdAlgorithm | None) -> tuple[ShapedArray, ...]:
    m, n = _check_matrix("svd", x)
    rank = min(m, n)
    if subset_by_index is not None:
        if full_matrices and subset_by_index != (0, rank):
            fail(f"svd: expected full_matrices=False with subset_by_index, but got "
                 f"full_matrices=True, subset_by_index={subset_by_index}")
        rank = min(rank, _subset_size("svd", subset_by_index, rank))
    batch = x.shape[:-2]
    s = ShapedArray(batch + (rank,), real_dtype(x.dtype), x.weak_type)
    if not compute_uv:
        return (s,)
    return (s, ShapedArray(batch + (m, m if full_matrices else rank), x.dtype, x.weak_type),
            ShapedArray(batch + (n if full_matrices else rank, n), x.dtype, x.weak_type))


svd_p = Primitive("svd", _svd_rule, (
    ParamDef("algorithm", decode=_decode_named(SvdAlgorithm)),
    ParamDef("compute_uv", decode=decode_bool),
    ParamDef("full_matrices", decode=decode_bool),
    ParamDef("subset_by_index", decode=_decode_subset),
), multiple_results=True)
"""Singular values (descending) and, with ``compute_uv``, ``U`` and ``V^H`` of
``x = U diag(s) V^H`` (square with ``full_matrices``, else ``min(m, n)`` columns/rows)."""

"""The reductions of square matrices by orthogonal (unitary) similarity, as JAX 0.10.2 has
them: ``hessenberg`` (LAPACK's ``gehrd``), ``tridiagonal`` (``sytrd``/``hetrd``) and
``schur`` (``gees``).

Each acts on the trailing two dimensions; leading dimensions are batch dimensions,
native to the primitive.  Only float32, float64, complex64 and complex128 are accepted
(the dtypes LAPACK has kernels for).  As in JAX, every result is weak exactly when the
operand is.
"""

from __future__ import annotations

import re
from typing import Any

from plait.ir.avals import ShapedArray
from plait.ir.params import ParamDef, decode_bool
from plait.ir.primitive import Primitive
from plait.ir.primitives._typing import fail
from plait.ir.primitives.linalg_decompositions import LAPACK_DTYPES
from plait.ir.primitives.linalg_factorizations import real_dtype

__all__ = ["hessenberg_p", "tridiagonal_p", "schur_p"]


def _check_square(name: str, x: ShapedArray) -> int:
    """Fail unless ``x`` is a (batch of) square matrices of a LAPACK dtype; returns ``n``."""
    if x.dtype not in LAPACK_DTYPES:
        fail(f"{name}: expected float32, float64, complex64 or complex128 for the operand, "
             f"but got {x.str_short()}")
    if x.ndim < 2 or x.shape[-1] != x.shape[-2]:
        fail(f"{name}: expected a square matrix (or a batch of them, [..., n, n]), but got "
             f"{x.str_short()}")
    return x.shape[-1]


# -- hessenberg -------------------------------------------------------------------------------


def _hessenberg_rule(a: ShapedArray) -> tuple[ShapedArray, ...]:
    n = _check_square("hessenberg", a)
    # (JAX's shape rule gives n - 1 taus, -1 for an empty matrix: refuse that instead.)
    if n == 0:
        fail(f"hessenberg: expected a nonempty matrix, but got {a.str_short()}")
    return a, ShapedArray(a.shape[:-2] + (n - 1,), a.dtype, a.weak_type)


hessenberg_p = Primitive("hessenberg", _hessenberg_rule, multiple_results=True)
"""Reduction to upper Hessenberg form ``A = Q H Q^H`` (LAPACK's ``gehrd``): ``H`` in the
upper triangle and first subdiagonal of the first result, the Householder reflectors of
``Q = H_1 ... H_{n-1}`` below that, and their ``n - 1`` scales (``taus``)."""


# -- tridiagonal ------------------------------------------------------------------------------


def _tridiagonal_rule(a: ShapedArray, *, lower: bool) -> tuple[ShapedArray, ...]:
    n = _check_square("tridiagonal", a)
    if n == 0:
        fail(f"tridiagonal: expected a nonempty matrix, but got {a.str_short()}")
    batch, real, weak = a.shape[:-2], real_dtype(a.dtype), a.weak_type
    return (a, ShapedArray(batch + (n,), real, weak), ShapedArray(batch + (n - 1,), real, weak),
            ShapedArray(batch + (n - 1,), a.dtype, weak))


tridiagonal_p = Primitive("tridiagonal", _tridiagonal_rule, (
    ParamDef("lower", decode=decode_bool),
), multiple_results=True)
"""Reduction of Hermitian matrices (only the ``lower`` or upper triangle read) to real
symmetric tridiagonal form ``A = Q T Q^H`` (LAPACK's ``sytrd``/``hetrd``): the packed
array (``T``'s diagonal and sub- or superdiagonal, the Householder reflectors beyond),
``T``'s diagonal ``d`` and off-diagonal ``e`` (real), and the reflectors' scales."""


# -- schur ------------------------------------------------------------------------------------


def _schur_rule(x: ShapedArray, *, compute_schur_vectors: bool, sort_eig_vals: bool,
                select_callable: Any) -> tuple[ShapedArray, ...]:
    _check_square("schur", x)
    return (x, x) if compute_schur_vectors else (x,)


def _decode_callable(value: Any) -> Any:
    """``None`` or a callable (a printed function cannot be read back)."""
    if value is not None and not callable(value):
        raise ValueError(f"expected None or a callable, but got {value!r}")
    return value


def _encode_callable(value: Any) -> str:
    # As JAX prints params: object addresses masked, so that printing is reproducible.
    return re.sub(r" at 0x([0-9a-fA-F]+)", lambda m: " at 0x" + "X" * len(m.group(1)),
                  str(value))


schur_p = Primitive("schur", _schur_rule, (
    ParamDef("compute_schur_vectors", decode=decode_bool),
    ParamDef("select_callable", decode=_decode_callable, encode=_encode_callable),
    ParamDef("sort_eig_vals", decode=decode_bool),
), multiple_results=True)
"""The Schur decomposition ``A = Z T Z^H`` (LAPACK's ``gees``): ``T``, upper triangular
(quasi-triangular for real matrices, with a 2x2 block per complex conjugate pair of
eigenvalues), and, with ``compute_schur_vectors``, the unitary ``Z``.  ``sort_eig_vals``
(which does not lower on the CPU) and ``select_callable`` are JAX's unused flags."""

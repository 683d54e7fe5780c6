"""The general (non-Hermitian) eigendecomposition ``eig`` and the tridiagonal solve
``tridiagonal_solve``, as JAX 0.10.2 has them.

Both take leading batch dimensions natively.  Only float32, float64, complex64 and
complex128 are accepted (the dtypes LAPACK has kernels for).
"""

from __future__ import annotations

from typing import Any

from plait.ir import dtypes as dt
from plait.ir.avals import ShapedArray
from plait.ir.params import ParamDef, decode_bool
from plait.ir.primitive import Primitive
from plait.ir.primitives._typing import fail
from plait.ir.primitives.linalg_decompositions import LAPACK_DTYPES
from plait.ir.primitives.linalg_factorizations import _decode_named, _NamedEnum

__all__ = ["eig_p", "tridiagonal_solve_p", "EigImplementation", "complex_dtype"]


class EigImplementation(_NamedEnum):
    """The eigensolver (JAX's ``lax.linalg.EigImplementation``, with its values); only
    ``LAPACK`` (or ``None``) runs on the CPU."""

    CUSOLVER = "cusolver"
    MAGMA = "magma"
    LAPACK = "lapack"


def complex_dtype(dtype: Any) -> Any:
    """The complex dtype of a real (or complex) LAPACK dtype."""
    if dtype == dt.float32:
        return dt.complex64
    return dt.complex128 if dtype == dt.float64 else dtype


def _lapack_dtype(name: str, x: ShapedArray, what: str) -> None:
    if x.dtype not in LAPACK_DTYPES:
        fail(f"{name}: expected float32, float64, complex64 or complex128 for {what}, "
             f"but got {x.str_short()}")


# -- eig ------------------------------------------------------------------------------------


def _eig_rule(x: ShapedArray, *, compute_left_eigenvectors: bool,
              compute_right_eigenvectors: bool, enable_eigvec_derivs: bool,
              implementation: EigImplementation | None) -> tuple[ShapedArray, ...]:
    _lapack_dtype("eig", x, "the operand")
    if x.ndim < 2 or x.shape[-1] != x.shape[-2]:
        fail(f"eig: expected a square matrix (or a batch of them, [..., n, n]), but got "
             f"{x.str_short()}")
    ctype = complex_dtype(x.dtype)
    # (As JAX: every result weak exactly when the operand is.)
    w = ShapedArray(x.shape[:-1], ctype, x.weak_type)
    v = ShapedArray(x.shape, ctype, x.weak_type)
    return (w,) + (v,) * (int(compute_left_eigenvectors) + int(compute_right_eigenvectors))


eig_p = Primitive("eig", _eig_rule, (
    ParamDef("compute_left_eigenvectors", decode=decode_bool),
    ParamDef("compute_right_eigenvectors", decode=decode_bool),
    ParamDef("enable_eigvec_derivs", decode=decode_bool),
    ParamDef("implementation", decode=_decode_named(EigImplementation)),
), multiple_results=True)
"""Eigenvalues ``w`` (complex, in LAPACK's order) and, as asked, left eigenvectors
``vl`` (``vl[:, j]^H x = w[j] vl[:, j]^H``) and right ones ``vr`` (``x vr[:, j] =
w[j] vr[:, j]``) of general square matrices: complex, each column of unit 2-norm with
its largest component real (LAPACK's ``geev``)."""


# -- tridiagonal_solve ------------------------------------------------------------------------


def _tridiagonal_solve_rule(dl: ShapedArray, d: ShapedArray, du: ShapedArray, b: ShapedArray,
                            *, perturb_singular: bool) -> tuple[ShapedArray, ...]:
    name = "tridiagonal_solve"
    for what, x in (("dl", dl), ("d", d), ("du", du), ("b", b)):
        _lapack_dtype(name, x, what)
    if not dl.dtype == d.dtype == du.dtype == b.dtype:
        fail(f"{name}: expected operands of one dtype, but got dl: {dl.str_short()}, "
             f"d: {d.str_short()}, du: {du.str_short()}, b: {b.str_short()}")
    if b.ndim < 2:
        fail(f"{name}: expected b of rank at least 2 ([..., m, n]), but got {b.str_short()}")
    if not dl.shape == d.shape == du.shape:
        fail(f"{name}: expected diagonals of one shape, but got dl: {dl.str_short()}, "
             f"d: {d.str_short()}, du: {du.str_short()}")
    if d.shape != b.shape[:-1]:
        fail(f"{name}: expected diagonals of shape b.shape[:-1] = {b.shape[:-1]}, but got "
             f"d: {d.str_short()}, b: {b.str_short()}")
    return (ShapedArray(b.shape, b.dtype,
                        dl.weak_type and d.weak_type and du.weak_type and b.weak_type),)


tridiagonal_solve_p = Primitive("tridiagonal_solve", _tridiagonal_solve_rule, (
    ParamDef("perturb_singular", decode=decode_bool),
))
"""``X`` solving ``A X = b`` for tridiagonal ``A`` (``[..., m, m]``) given by its three
diagonals (``[..., m]`` each): ``dl[i] = A[i, i-1]`` (``dl[0]`` unused), ``d[i] =
A[i, i]``, ``du[i] = A[i, i+1]`` (``du[m-1]`` unused); ``b`` is ``[..., m, n]``.  A
singular system gives NaNs, unless ``perturb_singular``, which perturbs tiny pivots of
the LU factorization to give a finite result."""

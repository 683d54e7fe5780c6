"""Dense linear algebra on (batches of) square matrices: ``cholesky`` and ``triangular_solve``.

Both act on the two trailing dimensions; any leading dimensions are batch
dimensions, native to the primitives (the lowering hands them to LAPACK's
batched kernels).  As in JAX 0.10.2, only float32, float64, complex64 and
complex128 are accepted (the dtypes LAPACK has kernels for).
"""

from __future__ import annotations

from typing import Final

from plait.ir import dtypes as dt
from plait.ir.avals import ShapedArray
from plait.ir.params import ParamDef, decode_bool
from plait.ir.primitive import Primitive
from plait.ir.primitives._typing import Dtypes, fail

__all__ = ["cholesky_p", "triangular_solve_p", "LAPACK_DTYPES"]

LAPACK_DTYPES: Final[Dtypes] = frozenset({dt.float32, dt.float64, dt.complex64, dt.complex128})
"""The element types of the LAPACK kernels."""


def _check_matrices(name: str, x: ShapedArray, what: str) -> None:
    """Fail unless ``x`` is a (batch of) square matrices of a LAPACK dtype."""
    if x.dtype not in LAPACK_DTYPES:
        fail(f"{name}: expected float32, float64, complex64 or complex128 for {what}, "
             f"but got {x.str_short()}")
    if x.ndim < 2 or x.shape[-1] != x.shape[-2]:
        fail(f"{name}: expected {what} to be a square matrix (or a batch of them, "
             f"[..., n, n]), but got {x.str_short()}")


def _cholesky_rule(x: ShapedArray) -> tuple[ShapedArray, ...]:
    _check_matrices("cholesky", x, "the operand")
    return (x,)


cholesky_p = Primitive("cholesky", _cholesky_rule)
"""The lower Cholesky factor ``L`` of ``x = L L^H``, computed from the lower triangle of
``x``; the strict upper triangle of the result is unspecified (the lowering leaves
``x``'s there, as JAX's), and a matrix that is not positive definite gives NaNs."""


def _triangular_solve_rule(a: ShapedArray, b: ShapedArray, *, left_side: bool, lower: bool,
                           transpose_a: bool, conjugate_a: bool,
                           unit_diagonal: bool) -> tuple[ShapedArray, ...]:
    _check_matrices("triangular_solve", a, "a")
    if b.dtype != a.dtype:
        fail(f"triangular_solve: expected b of a's dtype {a.dtype.name}, but got "
             f"{b.str_short()}")
    if b.ndim != a.ndim:
        fail(f"triangular_solve: expected b of rank {a.ndim} (a's batch dimensions, then a "
             f"matrix), but got a: {a.str_short()}, b: {b.str_short()}")
    if b.shape[:-2] != a.shape[:-2]:
        fail(f"triangular_solve: expected equal batch dimensions, but got a: "
             f"{a.str_short()}, b: {b.str_short()}")
    m = a.shape[-1]
    common = -2 if left_side else -1
    if b.shape[common] != m:
        side = "rows" if left_side else "columns"
        fail(f"triangular_solve: expected b with {m} {side} (left_side={left_side}), but got "
             f"a: {a.str_short()}, b: {b.str_short()}")
    return (ShapedArray(b.shape, b.dtype, a.weak_type and b.weak_type),)


triangular_solve_p = Primitive("triangular_solve", _triangular_solve_rule, (
    ParamDef("conjugate_a", decode=decode_bool),
    ParamDef("left_side", decode=decode_bool),
    ParamDef("lower", decode=decode_bool),
    ParamDef("transpose_a", decode=decode_bool),
    ParamDef("unit_diagonal", decode=decode_bool),
))
"""``X`` solving ``op(a) X = b`` (``left_side``) or ``X op(a) = b``, where ``a`` is
triangular (only its ``lower`` or upper triangle is read; its diagonal is taken as ones
when ``unit_diagonal``) and ``op`` transposes (``transpose_a``) and/or conjugates
(``conjugate_a``).  Linear in ``b``."""

"""``lax.linalg``: dense linear algebra (``cholesky``, ``triangular_solve``), with the
signatures and semantics of JAX 0.10.2's ``jax.lax.linalg``."""

from __future__ import annotations

from typing import Any

from plait.frontend.core.array_base import Array
from plait.frontend.core.host_values import value_aval
from plait.frontend.core.tracing import bind1
from plait.frontend.lax.linalg_common import symmetrize, tril
from plait.frontend.lax.ops import (
    expand_dims,
    squeeze,
)
from plait.ir import dtypes as dt
from plait.ir import primitives as P
from plait.ir.avals import ShapedArray

__all__ = ["cholesky", "triangular_solve"]


def _check_square(name: str, aval: ShapedArray) -> None:
    if aval.ndim < 2 or aval.shape[-1] != aval.shape[-2]:
        raise TypeError(f"{name}: expected a square matrix (or a batch of them, [..., n, n]), "
                        f"but got {aval.str_short()}")


def cholesky(x: Any, *, symmetrize_input: bool = True) -> Array:
    """The lower Cholesky factor ``L`` of each matrix of ``x`` (``x = L L^H``), shape
    ``[..., n, n]``.

    With ``symmetrize_input`` the factorization is of ``(x + x^H) / 2``; otherwise only the
    lower triangle of ``x`` is read.  A matrix that is not positive definite gives a
    matrix of NaNs (JAX's behavior, which it says may change).

    Raises:
      TypeError: ``x`` is not a (batch of) square matrices, or (without symmetrization)
        not float32, float64, complex64 or complex128.
    """
    aval = value_aval(x)
    _check_square("cholesky", aval)
    if symmetrize_input:
        x = symmetrize(x, aval)
    return tril(bind1(P.cholesky_p, x))


def triangular_solve(a: Any, b: Any, *, left_side: bool = False, lower: bool = False,
                     transpose_a: bool = False, conjugate_a: bool = False,
                     unit_diagonal: bool = False) -> Array:
    """``X`` solving ``op(a) X = b`` (``left_side``) or ``X op(a) = b``, for triangular
    ``a`` of shape ``[..., m, m]`` and ``b`` of shape ``[..., m, n]`` (left) or
    ``[..., n, m]`` (right); a ``b`` with one dimension fewer than ``a`` is a single
    vector.

    Only the ``lower`` (or upper) triangle of ``a`` is read, its diagonal taken as ones
    with ``unit_diagonal``; ``op`` transposes ``a`` with ``transpose_a`` and conjugates it
    with ``conjugate_a`` (which does nothing for real ``a``).

    Raises:
      TypeError: shapes or dtypes that do not fit (see the primitive's typing rule).
    """
    a_aval, b_aval = value_aval(a), value_aval(b)
    conjugate = bool(conjugate_a) and dt.is_complex(a_aval.dtype)
    vector = b_aval.ndim == a_aval.ndim - 1
    if vector:
        b = expand_dims(b, (-1 if left_side else -2,))
    out = bind1(P.triangular_solve_p, a, b, left_side=bool(left_side), lower=bool(lower),
                transpose_a=bool(transpose_a), conjugate_a=conjugate,
                unit_diagonal=bool(unit_diagonal))
    if vector:
        out = squeeze(out, (out.ndim - 1 if left_side else out.ndim - 2,))
    return out


from plait.frontend.lax import linalg_factorizations  # noqa: E402
from plait.frontend.lax.linalg_factorizations import *  # noqa: E402,F403

__all__ += linalg_factorizations.__all__  # (a form mypy follows, so the re-exports are typed)

from plait.frontend.lax import linalg_eig  # noqa: E402
from plait.frontend.lax.linalg_eig import *  # noqa: E402,F403

__all__ += linalg_eig.__all__  # (a form mypy follows, so the re-exports are typed)

from plait.frontend.lax import linalg_schur  # noqa: E402
from plait.frontend.lax.linalg_schur import *  # noqa: E402,F403

__all__ += linalg_schur.__all__  # (a form mypy follows, so the re-exports are typed)

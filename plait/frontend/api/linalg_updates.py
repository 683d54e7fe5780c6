"""Low-rank updates: ``symmetric_product`` (``alpha A A^T + beta C``) and
``cholesky_update`` (the factor of ``R^T R + w w^T`` from ``R``), as JAX 0.10.2's
``jax.lax.linalg`` (``plait.lax.linalg`` re-exports them).  Both are built from the
operations JAX lowers them to off GPU, in the same order, and run as one compiled
program when called eagerly (as JAX's primitives do), so the numbers are JAX's; their
derivatives and batching come from those operations (JAX's primitives have neither)."""

from __future__ import annotations

from typing import Any

from plait.frontend.api.control_flow import cond
from plait.frontend.api.eager_programs import compiled_when_eager
from plait.frontend.core.array_base import Array
from plait.frontend.core.host_values import value_aval
from plait.frontend.lax.linalg_common import swap_last, tril
from plait.frontend.lax.ops import (
    abs,
    add,
    concatenate,
    div,
    dot_general,
    eq,
    full_like,
    gt,
    integer_pow,
    mul,
    neg,
    reshape,
    select,
    slice_in_dim,
    sqrt,
    sub,
)
from plait.ir import dtypes as dt
from plait.ir.primitives import Precision

__all__ = ["symmetric_product", "cholesky_update"]


def _floating(name: str, *xs: Any) -> None:
    for x in xs:
        d = value_aval(x).dtype
        if not dt.is_float(d):
            raise TypeError(f"{name}: expected floating-point operands, but got {d}")


@compiled_when_eager(("alpha", "beta", "symmetrize_output"))
def symmetric_product(a_matrix: Any, c_matrix: Any, *, alpha: float = 1.0, beta: float = 0.0,
                      symmetrize_output: bool = False) -> Array:
    """``alpha * A @ A^T + beta * C`` for ``A`` of shape ``[..., m, n]`` and symmetric ``C``
    of shape ``[..., m, m]``.  Only the lower triangle is meaningful on every platform
    (as JAX says); ``symmetrize_output`` copies it into the upper one.

    Raises:
      TypeError: operands that are not floating point.
      ValueError: shapes that do not fit.
    """
    _floating("symmetric_product", a_matrix, c_matrix)
    a_shape, c_shape = value_aval(a_matrix).shape, value_aval(c_matrix).shape
    if (len(a_shape) < 2 or len(c_shape) != len(a_shape) or a_shape[:-2] != c_shape[:-2]
            or a_shape[-2] != c_shape[-1] or c_shape[-2] != c_shape[-1]):
        raise ValueError(f"symmetric_product: expected a matrix A of shape [..., m, n] and a "
                         f"square matrix C of shape [..., m, m], but got shapes {a_shape} "
                         f"and {c_shape}")
    nb = len(a_shape) - 2
    batch = tuple(range(nb))
    product = dot_general(a_matrix, swap_last(a_matrix, len(a_shape)),
                          (((nb + 1,), (nb,)), (batch, batch)), precision=Precision.HIGHEST)
    result = add(mul(alpha, product), mul(beta, c_matrix))
    if symmetrize_output:
        result = add(tril(result), swap_last(tril(result, -1), result.ndim))
    return result


def _givens(x: Array, y: Array) -> tuple[Array, Array]:
    """The rotation ``(c, s)`` zeroing ``y`` against ``x``: ``(1, 0)`` when ``y`` is 0 (a
    ``cond``, as JAX's, so that no NaN of the other branch reaches a derivative)."""
    def nonzero(x: Array, y: Array) -> tuple[Array, Array]:
        ax, ay = abs(x), abs(y)
        scale = select(gt(ax, ay), ax, ay)
        xs, ys = div(x, scale), div(y, scale)
        rh = div(full_like(x, 1), sqrt(add(integer_pow(xs, 2), integer_pow(ys, 2))))
        return mul(xs, rh), mul(neg(ys), rh)

    def identity(x: Array, y: Array) -> tuple[Array, Array]:
        return full_like(x, 1), full_like(x, 0)
    out: tuple[Array, Array] = cond(eq(y, full_like(y, 0)), identity, nonzero, x, y)
    return out


@compiled_when_eager(())
def cholesky_update(r_matrix: Any, w_vector: Any) -> Array:
    """The upper-triangular Cholesky factor of ``R^T R + w w^T``, from the factor ``R``
    (``[n, n]``) of ``R^T R`` and ``w`` (``[n]``), in O(n^2) by Givens rotations.

    Raises:
      TypeError: operands that are not floating point.
      ValueError: shapes that do not fit.
    """
    _floating("cholesky_update", r_matrix, w_vector)
    r_shape, w_shape = value_aval(r_matrix).shape, value_aval(w_vector).shape
    if len(r_shape) != 2 or len(w_shape) != 1 or r_shape[0] != r_shape[1] \
            or w_shape[0] != r_shape[1]:
        raise ValueError(f"Rank-1 update to Cholesky decomposition takes a square matrix and "
                         f"a vector of the same size as input. Got shapes {r_shape} and "
                         f"{w_shape} instead")
    n = r_shape[0]
    z: Array = w_vector
    rows = []
    for k in range(n):
        row = reshape(slice_in_dim(r_matrix, k, k + 1, axis=0), (n,))
        c, s = _givens(reshape(slice_in_dim(row, k, k + 1), ()),
                       reshape(slice_in_dim(z, k, k + 1), ()))
        new_row = sub(mul(c, row), mul(s, z))
        z = add(mul(c, z), mul(s, row))
        rows.append(reshape(new_row, (1, n)))
    return concatenate(rows, 0) if rows else r_matrix

"""``plait.numpy.linalg``: NumPy's and the array API's linear algebra, with JAX's
signatures and semantics.

Norms and products are compositions of ``plait.numpy``; factorizations and solves
come from :mod:`plait.frontend.lax.linalg` (LAPACK kernels on the CPU).
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

from plait.frontend.api.eager_programs import compiled_when_eager
from plait.frontend.core.array_base import Array
from plait.frontend.lax import linalg as lax_linalg
from plait.frontend.lax.ops import transpose
from plait.frontend.numpy._core import check_arraylike, promote_dtypes_inexact
from plait.frontend.numpy.arithmetic import power
from plait.frontend.numpy.creation import asarray, eye
from plait.frontend.numpy.einsum import einsum
from plait.frontend.numpy.linalg_eig import EigResult, eig, eigvals
from plait.frontend.numpy.linalg_factored import (
    EighResult,
    QRResult,
    SlogdetResult,
    SVDResult,
    det,
    eigh,
    eigvalsh,
    inv,
    lstsq,
    lu_solve,
    matrix_rank,
    pinv,
    qr,
    slogdet,
    solve,
    svd,
    svdvals,
    tensorinv,
    tensorsolve,
)
from plait.frontend.numpy.linalg_ops import matmul, tensordot
from plait.frontend.numpy.manipulation import broadcast_to, expand_dims, moveaxis
from plait.frontend.numpy.matrices import cross as np_cross
from plait.frontend.numpy.matrices import diagonal as np_diagonal
from plait.frontend.numpy.matrices import trace as np_trace
from plait.frontend.numpy.matrices import vecdot
from plait.frontend.numpy.reductions import amax, amin, sum
from plait.frontend.numpy.reductions import any as np_any
from plait.frontend.numpy.ufuncs import abs, conj, isnan, real, sqrt, where
from plait.ir import dtypes as dt

__all__ = ["cholesky", "norm", "vector_norm", "matrix_norm", "cross", "outer", "multi_dot",
           "matrix_power", "matrix_transpose", "diagonal", "trace", "tensordot", "vecdot",
           "matmul", "cond", "solve", "inv", "det", "slogdet", "eigh", "eigvalsh", "svd",
           "svdvals", "qr", "pinv", "lstsq", "matrix_rank", "tensorsolve", "tensorinv",
           "lu_solve", "EighResult", "SVDResult", "QRResult", "SlogdetResult", "eig",
           "eigvals", "EigResult"]


def _array(name: str, x: Any) -> Array:
    check_arraylike(f"jnp.linalg.{name}", x)
    return asarray(x)


def _inexact(name: str, x: Any) -> Array:
    check_arraylike(f"jnp.linalg.{name}", x)
    (out,) = promote_dtypes_inexact(f"jnp.linalg.{name}", x)
    return asarray(out)


def matrix_transpose(x: Any, /) -> Array:
    """The transpose of each matrix in ``x`` (its two trailing axes swapped)."""
    arr = _array("matrix_transpose", x)
    if arr.ndim < 2:
        raise ValueError(f"matrix_transpose requires at least 2 dimensions; got ndim={arr.ndim}")
    return transpose(arr, (*range(arr.ndim - 2), arr.ndim - 1, arr.ndim - 2))


def cholesky(a: Any, *, upper: bool = False, symmetrize_input: bool = True) -> Array:
    """The Cholesky factor of each Hermitian positive-definite matrix of ``a``: lower
    ``L`` with ``a = L L^H``, or upper ``U = L^H`` with ``upper=True``; NaNs where ``a``
    is not positive definite."""
    factor = lax_linalg.cholesky(_inexact("cholesky", a), symmetrize_input=symmetrize_input)
    return conj(matrix_transpose(factor)) if upper else factor


def _sum_squares(x: Array, axis: Any, keepdims: bool) -> Array:
    return sqrt(sum(real(x * conj(x)), axis=axis, keepdims=keepdims))


def vector_norm(x: Any, /, *, axis: int | tuple[int, ...] | None = None,
                keepdims: bool = False, ord: int | float | str = 2) -> Array:
    """The ``ord``-norm of ``x`` over ``axis`` (all axes by default) taken as vectors."""
    arr = _array("vector_norm", x)
    if ord is None or ord == 2:
        return _sum_squares(arr, axis, keepdims)
    if ord == np.inf:
        return amax(abs(arr), axis=axis, keepdims=keepdims, initial=0)
    if ord == -np.inf:
        return amin(abs(arr), axis=axis, keepdims=keepdims)
    if ord == 0:
        real_dtype = dt.canonicalize(np.finfo(arr.dtype).dtype) if dt.is_inexact(arr.dtype) \
            else dt.canonicalize(np.float64)
        return sum(arr != 0, dtype=real_dtype, axis=axis, keepdims=keepdims)
    if ord == 1:
        return sum(abs(arr), axis=axis, keepdims=keepdims)
    if isinstance(ord, str):
        hint = {"inf": "Use 'jax.numpy.inf' instead.", "-inf": "Use '-jax.numpy.inf' instead."}
        raise ValueError(f"Invalid order '{ord}' for vector norm." + hint.get(ord, ""))
    magnitudes = abs(arr)
    p = asarray(ord, dtype=magnitudes.dtype)
    return power(sum(power(magnitudes, p), axis=axis, keepdims=keepdims),
                 asarray(1.0 / np.float64(ord), dtype=magnitudes.dtype))


def _axis(ax: int, ndim: int) -> int:
    ax = operator.index(ax)
    if not -ndim <= ax < ndim:
        raise ValueError(f"axis {ax} is out of bounds for array of dimension {ndim}")
    return ax % ndim


def _matrix_norm(x: Array, ord: Any, rows: int, cols: int, keepdims: bool) -> Array:
    if ord is None or ord in ("f", "fro"):
        return _sum_squares(x, (rows, cols), keepdims)
    if ord in (1, -1, np.inf, -np.inf):
        # Sum magnitudes along one axis (columns for 1, rows for inf), extremum along the other.
        summed, other = (rows, cols) if ord in (1, -1) else (cols, rows)
        if not keepdims and other > summed:
            other -= 1
        sums = sum(abs(x), axis=summed, keepdims=keepdims)
        if ord in (1, np.inf):
            return amax(sums, axis=other, keepdims=keepdims, initial=0)
        return amin(sums, axis=other, keepdims=keepdims)
    if ord in ("nuc", 2, -2):
        s = svd(moveaxis(x, (rows, cols), (-2, -1)), compute_uv=False)
        y = amax(s, axis=-1, initial=0) if ord == 2 else (
            amin(s, axis=-1) if ord == -2 else sum(s, axis=-1))
        return expand_dims(y, (rows, cols)) if keepdims else y
    raise ValueError(f"Invalid order '{ord}' for matrix norm.")


@compiled_when_eager(("ord", "axis", "keepdims"))
def norm(x: Any, ord: int | float | str | None = None,
         axis: None | tuple[int, ...] | int = None, keepdims: bool = False) -> Array:
    """A vector norm (one axis) or matrix norm (two axes) of ``x``: with neither ``ord``
    nor ``axis``, the 2-norm of ``x`` flattened."""
    arr = _inexact("norm", x)
    if axis is None:
        if ord is None:
            return _sum_squares(arr, None, keepdims)
        axes = tuple(range(arr.ndim))
    elif isinstance(axis, tuple):
        axes = tuple(_axis(a, arr.ndim) for a in axis)
    else:
        axes = (_axis(axis, arr.ndim),)
    if len(axes) == 1:
        return vector_norm(arr, ord=2 if ord is None else ord, axis=axes, keepdims=keepdims)
    if len(axes) == 2:
        return _matrix_norm(arr, ord, axes[0], axes[1], keepdims)
    raise ValueError(f"Improper number of axes for norm: axis={axis!r}. Pass one axis to "
                     "compute a vector-norm, or two axes to compute a matrix-norm.")


def matrix_norm(x: Any, /, *, keepdims: bool = False, ord: str | int = "fro") -> Array:
    """The ``ord``-norm of each matrix of ``x`` (its two trailing axes)."""
    check_arraylike("jnp.linalg.matrix_norm", x)
    return norm(x, ord=ord, keepdims=keepdims, axis=(-2, -1))


@compiled_when_eager(("axis",))
def cross(x1: Any, x2: Any, /, *, axis: int = -1) -> Array:
    """The cross product of (arrays of) 3-vectors along ``axis``."""
    a, b = _array("cross", x1), _array("cross", x2)
    if a.shape[axis] != 3 or b.shape[axis] != 3:
        raise ValueError("Both input arrays must be (arrays of) 3-dimensional vectors, but they "
                         f"have x1.shape[axis]={a.shape[axis]} and "
                         f"x2.shape[axis]={b.shape[axis]}")
    return np_cross(a, b, axis=axis)


def outer(x1: Any, x2: Any, /) -> Array:
    """The outer product of two vectors."""
    a, b = _array("outer", x1), _array("outer", x2)
    if a.ndim != 1 or b.ndim != 1:
        raise ValueError(f"Input arrays must be one-dimensional, but they are x1.ndim={a.ndim} "
                         f"x2.ndim={b.ndim}")
    return a[:, None] * b[None, :]


def multi_dot(arrays: Sequence[Any], *, precision: Any = None) -> Array:
    """The product of a chain of matrices (the first and last may be vectors), contracted
    in an efficient order."""
    arrs = [_array("multi_dot", a) for a in arrays]
    if len(arrs) < 2:
        raise ValueError(f"multi_dot requires at least two arrays; got len(arrays)={len(arrs)}")
    shapes = [a.shape for a in arrs]
    if not (arrs[0].ndim in (1, 2) and arrs[-1].ndim in (1, 2)
            and all(a.ndim == 2 for a in arrs[1:-1])):
        raise ValueError("multi_dot: input arrays must all be two-dimensional, except for the "
                         "first and last array which may be 1 or 2 dimensional. Got array "
                         f"shapes {shapes}")
    if any(a.shape[-1] != b.shape[0] for a, b in zip(arrs[:-1], arrs[1:])):
        raise ValueError("multi_dot: last dimension of each array must match first dimension "
                         f"of following array. Got array shapes {shapes}")
    operands: list[Any] = []
    for i, a in enumerate(arrs):
        subs = [i, i + 1]
        if a.ndim == 1:
            subs = subs[1:] if i == 0 else subs[:1]
        operands += [a, subs]
    return einsum(*operands, optimize="auto", precision=precision)


def matrix_power(a: Any, n: int) -> Array:
    """``a`` multiplied by itself ``n`` times (by repeated squaring); ``n = 0`` gives
    identities, a negative ``n`` powers of the inverse."""
    arr = _array("matrix_power", a)
    if arr.ndim < 2:
        raise TypeError(f"{arr.ndim}-dimensional array given. Array must be at least "
                        "two-dimensional")
    if arr.shape[-2] != arr.shape[-1]:
        raise TypeError("Last 2 dimensions of the array must be square")
    try:
        k = operator.index(n)
    except TypeError:
        raise TypeError(f"exponent must be an integer, got {n}") from None
    if k == 0:
        return broadcast_to(eye(arr.shape[-2], dtype=arr.dtype), arr.shape)
    if k < 0:
        arr, k = inv(arr), -k
    if k <= 3:  # the products JAX writes out, in its order
        out = arr
        for _ in range(k - 1):
            out = out @ arr
        return out
    result: Array | None = None
    square: Array | None = None
    while k > 0:
        square = arr if square is None else square @ square
        k, bit = divmod(k, 2)
        if bit:
            result = square if result is None else result @ square
    assert result is not None
    return result


def diagonal(x: Any, /, *, offset: int = 0) -> Array:
    """The diagonals of the matrices of ``x`` (its two trailing axes)."""
    return np_diagonal(_array("diagonal", x), offset=offset, axis1=-2, axis2=-1)


def trace(x: Any, /, *, offset: int = 0, dtype: Any = None) -> Array:
    """The traces of the matrices of ``x`` (its two trailing axes)."""
    return np_trace(_array("trace", x), offset=offset, axis1=-2, axis2=-1, dtype=dtype)


def cond(x: Any, p: Any = None) -> Array:
    """The condition number of each matrix in the ``p``-norm (by default the 2-norm: the
    ratio of the extreme singular values); infinite for a singular matrix."""
    check_arraylike("cond", x)
    arr = asarray(x)
    if arr.ndim < 2:
        raise ValueError(f"jnp.linalg.cond: input array must be at least 2D; got "
                         f"arr.shape={arr.shape}")
    if arr.shape[-1] == 0 or arr.shape[-2] == 0:
        raise ValueError(f"jnp.linalg.cond: input array must not be empty; got "
                         f"arr.shape={arr.shape}")
    if p is None or p == 2:
        s: Array = svd(arr, compute_uv=False)
        return s[..., 0] / s[..., -1]
    if p == -2:
        s = svd(arr, compute_uv=False)
        r = s[..., -1] / s[..., 0]
    else:
        if arr.shape[-2] != arr.shape[-1]:
            raise ValueError(f"jnp.linalg.cond: for p={p}, array must be square; got "
                             f"arr.shape={arr.shape}")
        r = norm(arr, ord=p, axis=(-2, -1)) * norm(inv(arr), ord=p, axis=(-2, -1))
    # A singular matrix (NaN from an infinite inverse), not a NaN input: infinite.
    return where(isnan(r) & ~np_any(isnan(arr), axis=(-2, -1)), np.inf, r)

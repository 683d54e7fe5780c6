"""Matrix structure and small products: ``tri``, ``tril``, ``triu``, ``diagonal``,
``diag``, ``trace``, ``matrix_transpose``, ``kron``, ``cross``, ``vecdot``.

Diagonals are read with a strided slice of the flattened matrices (no gather):
element ``(i, i + k)`` of an ``n`` by ``m`` matrix is element ``i * (m + 1) + k``
of its rows laid end to end.
"""

from __future__ import annotations

import operator
from typing import Any

from plait.frontend import lax
from plait.frontend.api.eager_programs import compiled_when_eager
from plait.frontend.core.array_base import Array
from plait.frontend.core.promotion import dtype_and_weak, result_type_info
from plait.frontend.core.x64_warnings import check_user_dtype
from plait.frontend.numpy._core import (
    as_array,
    canonical_axis,
    check_arraylike,
    convert,
    promote_dtypes,
)
from plait.frontend.numpy.creation import eye, zeros_like
from plait.frontend.numpy.manipulation import (
    broadcast_shapes,
    broadcast_to,
    expand_dims,
    moveaxis,
    reshape,
    stack,
)
from plait.frontend.numpy.reductions import sum
from plait.frontend.numpy.ufuncs import _const_like, _py, conj, multiply, subtract, where
from plait.ir import dtypes as dt
from plait.ir.atoms import Literal

__all__ = ["tri", "tril", "triu", "diagonal", "diag", "trace", "matrix_transpose", "kron",
           "cross", "vecdot"]


def _input(name: str, a: Any) -> Array:
    check_arraylike(name, a)
    return as_array(a)


def _tri_mask(n: int, m: int, k: int) -> Array:
    """``n`` by ``m`` booleans, true on and below the ``k``-th diagonal."""
    rows = lax.broadcasted_iota(dt.int32, (n, m), 0)
    cols = lax.broadcasted_iota(dt.int32, (n, m), 1)
    return lax.ge(lax.add(rows, k) if k else rows, cols)


def tri(N: int, M: int | None = None, k: int = 0, dtype: Any = None) -> Array:
    """``N`` by ``M`` ones on and below the ``k``-th diagonal, zeros above (``float32``
    unless ``dtype`` is given, as in JAX)."""
    n = operator.index(N)
    m = n if M is None else operator.index(M)
    if n < 0 or m < 0:
        raise ValueError(f"tri: negative dimensions are not allowed, but got {N} and {M}")
    d = dt.float32 if dtype is None else check_user_dtype(dtype, "tri")
    return lax.convert_element_type(_tri_mask(n, m, operator.index(k)), d)


def _triangle(name: str, m: Any, k: int, lower: bool) -> Array:
    a = _input(name, m)
    if a.ndim < 2:
        raise ValueError(f"Argument to {name} must be at least 2D")
    n, mm = a.shape[-2:]
    mask = _tri_mask(n, mm, operator.index(k) - (0 if lower else 1))
    which = lax.broadcast_in_dim(mask, a.shape, (a.ndim - 2, a.ndim - 1))
    zero = zeros_like(a)
    return lax.select_n(which, zero, a) if lower else lax.select_n(which, a, zero)


def tril(m: Any, k: int = 0) -> Array:
    """Zeros above the ``k``-th diagonal of the last two axes."""
    return _triangle("tril", m, k, lower=True)


def triu(m: Any, k: int = 0) -> Array:
    """Zeros below the ``k``-th diagonal of the last two axes."""
    return _triangle("triu", m, k, lower=False)


def diagonal(a: Any, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Array:
    """The ``offset``-th diagonal of the ``axis1``, ``axis2`` planes, as a last axis."""
    arr = _input("diagonal", a)
    if arr.ndim < 2:
        raise ValueError("diagonal requires an array of at least two dimensions.")
    offset = operator.index(offset)
    arr = moveaxis(arr, (axis1, axis2), (-2, -1))
    *batch, n, m = arr.shape
    size = max(0, min(n + min(offset, 0), m - max(offset, 0)))
    flat = reshape(arr, (*batch, n * m))
    nb = len(batch)
    if size == 0:
        return lax.slice(flat, [0] * (nb + 1), [*batch, 0])
    start = offset if offset >= 0 else -offset * m
    return lax.slice(flat, [0] * nb + [start], [*batch, start + (size - 1) * (m + 1) + 1],
                     None if size == 1 else [1] * nb + [m + 1])


def _zero_like(a: Array) -> Literal:
    """A scalar zero of ``a``'s dtype, weakly typed when ``a`` is."""
    return _py(a, 0) if a.weak_type else _const_like(a, 0)


def diag(v: Any, k: int = 0) -> Array:
    """The ``k``-th diagonal of a 2-d array, or a 2-d array with the 1-d ``v`` on its
    ``k``-th diagonal.

    Raises:
      ValueError: ``v`` is not 1-d or 2-d.
    """
    a = _input("diag", v)
    k = operator.index(k)
    if a.ndim == 1:
        n = a.shape[0] + abs(k)
        zero = _zero_like(a)
        padded = lax.pad(a, zero, [(max(0, -k), max(0, k), 0)])
        return where(eye(n, k=k, dtype=dt.bool_), padded[:, None], zero)
    if a.ndim == 2:
        return diagonal(a, offset=k)
    raise ValueError("diag input must be 1d or 2d")


def trace(a: Any, offset: int = 0, axis1: int = 0, axis2: int = 1, dtype: Any = None,
          out: None = None) -> Array:
    """Sum along the ``offset``-th diagonal of the ``axis1``, ``axis2`` planes.

    Raises:
      ValueError: ``axis1`` and ``axis2`` are the same axis.
    """
    if out is not None:
        raise NotImplementedError("The 'out' argument to trace is not supported.")
    arr = _input("trace", a)
    if canonical_axis(axis1, arr.ndim) == canonical_axis(axis2, arr.ndim):
        raise ValueError(f"axis1 and axis2 can not be same. axis1={axis1} and axis2={axis2}")
    n, m = arr.shape[axis1], arr.shape[axis2]
    arr = moveaxis(arr, (axis1, axis2), (-2, -1))
    masked = where(eye(n, m, k=operator.index(offset), dtype=dt.bool_), arr, zeros_like(arr))
    return sum(masked, axis=(-2, -1),
               dtype=None if dtype is None else check_user_dtype(dtype, "trace"))


def matrix_transpose(x: Any, /) -> Array:
    """Exchange the last two axes.

    Raises:
      ValueError: ``x`` has fewer than two dimensions.
    """
    a = _input("matrix_transpose", x)
    nd = a.ndim
    if nd < 2:
        raise ValueError(f"x must be at least two-dimensional for matrix_transpose; got "
                         f"ndim={nd}")
    return lax.transpose(a, (*range(nd - 2), nd - 1, nd - 2))


def kron(a: Any, b: Any) -> Array:
    """Kronecker product: blocks ``a[i, j] * b``."""
    check_arraylike("kron", a, b)
    x, y = (as_array(v) for v in promote_dtypes("kron", a, b))
    if x.ndim < y.ndim:
        x = expand_dims(x, tuple(range(y.ndim - x.ndim)))
    elif y.ndim < x.ndim:
        y = expand_dims(y, tuple(range(x.ndim - y.ndim)))
    nd = x.ndim
    xr = expand_dims(x, tuple(range(1, 2 * nd, 2))) if nd else x
    yr = expand_dims(y, tuple(range(0, 2 * nd, 2))) if nd else y
    out_shape = tuple(int(p) * int(q) for p, q in zip(x.shape, y.shape))
    return reshape(lax.mul(xr, yr), out_shape)


@compiled_when_eager(("axisa", "axisb", "axisc", "axis"))
def cross(a: Any, b: Any, axisa: int = -1, axisb: int = -1, axisc: int = -1,
          axis: int | None = None) -> Array:
    """Cross product of 3-vectors (or 2-vectors, a z component of 0 assumed) along
    ``axisa``/``axisb``, the result's vectors along ``axisc``.

    Raises:
      ValueError: vectors of a length other than 2 or 3.
    """
    check_arraylike("cross", a, b)
    if axis is not None:
        axisa = axisb = axisc = axis
    x = moveaxis(as_array(a), axisa, -1)
    y = moveaxis(as_array(b), axisb, -1)
    if x.shape[-1] not in (2, 3) or y.shape[-1] not in (2, 3):
        raise ValueError("Dimension must be either 2 or 3 for cross product")
    if x.shape[-1] == 2 and y.shape[-1] == 2:
        return subtract(multiply(x[..., 0], y[..., 1]), multiply(x[..., 1], y[..., 0]))
    a0, a1 = x[..., 0], x[..., 1]
    a2 = x[..., 2] if x.shape[-1] == 3 else zeros_like(a0)
    b0, b1 = y[..., 0], y[..., 1]
    b2 = y[..., 2] if y.shape[-1] == 3 else zeros_like(b0)
    c = stack([subtract(multiply(a1, b2), multiply(a2, b1)),
               subtract(multiply(a2, b0), multiply(a0, b2)),
               subtract(multiply(a0, b1), multiply(a1, b0))])
    return moveaxis(c, 0, axisc)


def vecdot(x1: Any, x2: Any, /, *, axis: int = -1, precision: Any = None,
           preferred_element_type: Any = None) -> Array:
    """Dot products of the vectors along ``axis`` (``x1`` conjugated), the other
    axes broadcast.

    Raises:
      ValueError: the vectors differ in length.
    """
    check_arraylike("vecdot", x1, x2)
    a, b = as_array(x1), as_array(x2)
    ax1, ax2 = canonical_axis(axis, a.ndim), canonical_axis(axis, b.ndim)
    if a.shape[ax1] != b.shape[ax2]:
        raise ValueError(f"axes must match; got shapes {a.shape} and {b.shape} with "
                         f"axis={axis}")
    a, b = moveaxis(a, ax1, -1), moveaxis(b, ax2, -1)
    if dt.is_complex(a.dtype):
        a = conj(a)
    if preferred_element_type is None:
        pet, weak = result_type_info([dtype_and_weak(a), dtype_and_weak(b)])
    else:
        pet, weak = check_user_dtype(preferred_element_type, "dot"), False
    batch = broadcast_shapes(a.shape[:-1], b.shape[:-1])
    n = a.shape[-1]
    a = broadcast_to(convert(a, pet, False), (*batch, n))
    b = broadcast_to(convert(b, pet, False), (*batch, n))
    nb = len(batch)
    out = lax.dot_general(a, b, (((nb,), (nb,)), (tuple(range(nb)), tuple(range(nb)))),
                          precision=precision, preferred_element_type=pet)
    return lax.convert_element_type(out, pet, weak)


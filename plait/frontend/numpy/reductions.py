"""Reductions of the NumPy namespace: ``sum``, ``max``, ``mean``, ``argmax``; cumulative
ops and differences (``cumsum``, ``cumulative_prod``, ``diff``).

Results are strongly typed (as in JAX, a reduction of a weakly typed value
is not weak).  Small integers and bools are summed in the default integer
type; ``float16``/``bfloat16`` sums are computed in ``float32``.
"""

from __future__ import annotations

import builtins
import operator
from collections.abc import Callable
from typing import Any

import numpy as np

from plait.frontend import lax
from plait.frontend.core.array_base import Array
from plait.frontend.numpy._core import (
    as_array,
    canonical_axes,
    canonical_axis,
    check_arraylike,
    shape,
)
from plait.frontend.numpy.manipulation import concatenate
from plait.frontend.numpy.ufuncs import (
    _const_like,
    _real_dtype,
    _to_bool,
    not_equal,
    subtract,
    where,
)
from plait.ir import dtypes as dt

__all__ = ["sum", "prod", "max", "min", "amax", "amin", "mean", "var", "std", "any", "all",
           "argmax", "argmin", "cumsum", "cumprod", "cumulative_sum", "cumulative_prod",
           "count_nonzero", "diff"]


def _input(name: str, a: Any) -> Array:
    check_arraylike(name, a)
    return as_array(a)


def _axes(name: str, axis: Any, nd: int) -> tuple[int, ...]:
    if isinstance(axis, list):
        axis = tuple(axis)
    if isinstance(axis, tuple) and len(set(canonical_axis(a, nd) for a in axis)) != len(axis):
        raise ValueError(f"{name}: duplicate value in 'axis': {axis}")
    return canonical_axes(axis, nd)


def _user_dtype(dtype: Any) -> np.dtype[Any]:
    return dt.canonicalize(dtype)


def _default_int() -> np.dtype[Any]:
    return dt.canonicalize(dt.int64)


def _default_float() -> np.dtype[Any]:
    return dt.canonicalize(dt.float64)


def _promote_integer(d: np.dtype[Any]) -> np.dtype[Any]:
    # Bools and integers narrower than the default integer widen to it (JAX uses
    # the default width where NumPy always uses 64 bits).
    if d == dt.bool_:
        return _default_int()
    if dt.is_unsigned(d):
        u = dt.canonicalize(dt.uint64)
        return u if d.itemsize < u.itemsize else d
    if dt.is_signed(d):
        i = _default_int()
        return i if d.itemsize < i.itemsize else d
    return d


def _upcast_f16(d: np.dtype[Any]) -> np.dtype[Any]:
    return dt.float32 if d in (dt.float16, dt.bfloat16) else d


def _cast(x: Any, d: np.dtype[Any]) -> Array:
    """``x`` as a strongly typed array of dtype ``d``."""
    a = as_array(x)
    if a.dtype == d and not a.weak_type:
        return a
    return lax.convert_element_type(a, d)


def _keep(x: Array, axes: tuple[int, ...], in_ndim: int, keepdims: bool) -> Array:
    if not keepdims:
        return x
    out_shape = list(shape(x))
    for a in axes:
        out_shape.insert(a, 1)
    kept = [i for i in range(in_ndim) if i not in axes]
    return lax.broadcast_in_dim(x, out_shape, kept)


def _sum_like(name: str, op: Callable[[Any, tuple[int, ...]], Any],
              bool_op: Callable[[Any, tuple[int, ...]], Any]) -> Callable[..., Array]:
    def reduce(a: Any, axis: Any = None, dtype: Any = None, keepdims: bool = False) -> Array:
        a = _input(name, a)
        if a.dtype == dt.bool_:
            a = _cast(a, _default_int())
        nd = a.ndim
        axes = _axes(name, axis, nd)
        if dtype is None:
            result = _promote_integer(a.dtype)
            computation = _upcast_f16(result)
        else:
            result = computation = _user_dtype(dtype)
        x = _cast(a, computation)
        out = (bool_op if computation == dt.bool_ else op)(x, axes)
        return _cast(_keep(out, axes, nd, keepdims), result)
    reduce.__name__ = reduce.__qualname__ = name
    reduce.__doc__ = (f"``{name}`` over ``axis`` (all axes when ``None``); bools and small "
                      "integers accumulate in the default integer type.")
    return reduce


sum = _sum_like("sum", lax.reduce_sum, lax.reduce_or)
prod = _sum_like("prod", lax.reduce_prod, lax.reduce_and)


def _minmax(name: str, op: Callable[[Any, tuple[int, ...]], Any]) -> Callable[..., Array]:
    def reduce(a: Any, axis: Any = None, keepdims: bool = False) -> Array:
        a = _input(name, a)
        nd = a.ndim
        axes = _axes(name, axis, nd)
        if builtins.any(a.shape[i] == 0 for i in axes):
            raise ValueError(f"zero-size array to reduction operation {name} which has no "
                             "identity")
        return _cast(_keep(op(a, axes), axes, nd, keepdims), a.dtype)
    reduce.__name__ = reduce.__qualname__ = name
    reduce.__doc__ = f"``{name}`` over ``axis`` (all axes when ``None``)."
    return reduce


max = _minmax("max", lax.reduce_max)
min = _minmax("min", lax.reduce_min)
amax = max
amin = min


def _as_bool(a: Array) -> Array:
    if dt.is_complex(a.dtype):
        return lax.ne(a, _const_like(a, 0))
    return _cast(a, dt.bool_)


def any(a: Any, axis: Any = None, keepdims: bool = False) -> Array:
    """Whether any element along ``axis`` is true (nonzero)."""
    b = _as_bool(_input("any", a))
    axes = _axes("any", axis, b.ndim)
    return _keep(lax.reduce_or(b, axes), axes, b.ndim, keepdims)


def all(a: Any, axis: Any = None, keepdims: bool = False) -> Array:
    """Whether every element along ``axis`` is true (nonzero)."""
    b = _as_bool(_input("all", a))
    axes = _axes("all", axis, b.ndim)
    return _keep(lax.reduce_and(b, axes), axes, b.ndim, keepdims)


def count_nonzero(a: Any, axis: Any = None, keepdims: bool = False) -> Array:
    """The number of nonzero elements along ``axis``."""
    a = _input("count_nonzero", a)
    return sum(_to_bool(a), axis=axis, dtype=_default_int(), keepdims=keepdims)


def _count(a: Any, axes: tuple[int, ...]) -> int:
    n = 1
    for i in axes:
        n *= shape(a)[i]
    return n


def mean(a: Any, axis: Any = None, dtype: Any = None, keepdims: bool = False) -> Array:
    """Arithmetic mean along ``axis`` (bools and integers average in the default float)."""
    a = _input("mean", a)
    axes = _axes("mean", axis, a.ndim)
    if dtype is None:
        result = a.dtype if dt.is_inexact(a.dtype) else _default_float()
        computation = _upcast_f16(result)
    else:
        result = computation = _user_dtype(dtype)
    total = sum(a, axis=axes, dtype=computation, keepdims=keepdims)
    out = lax.div(total, _const_like(total, _count(a, axes)))
    return _cast(out, result)


def var(a: Any, axis: Any = None, dtype: Any = None, ddof: int = 0,
        keepdims: bool = False) -> Array:
    """Variance along ``axis`` with ``ddof`` delta degrees of freedom (NaN when
    ``ddof`` leaves no degrees of freedom)."""
    a = _input("var", a)
    if dtype is not None:
        d = _user_dtype(dtype)
        if dt.is_complex(a.dtype) and not dt.is_complex(d):
            raise ValueError("var: a real dtype for the variance of a complex array is not "
                             "supported")
        computation, result = _upcast_f16(d), d
    elif not dt.is_inexact(a.dtype):
        computation = result = _default_float()
    else:
        result = _real_dtype(a.dtype)
        computation = _upcast_f16(a.dtype)
    x = _cast(a, computation)
    axes = _axes("var", axis, x.ndim)
    centered = lax.sub(x, mean(x, axis=axes, dtype=computation, keepdims=True))
    if dt.is_complex(computation):
        centered = lax.real(lax.mul(centered, lax.conj(centered)))
        computation = centered.dtype
    else:
        centered = lax.integer_pow(centered, 2)
    n = _count(x, axes) - ddof
    total = sum(centered, axis=axes, dtype=computation, keepdims=keepdims)
    out = _cast(lax.div(total, _const_like(total, n)), result)
    if n <= 0:
        out = where(False, out, float("nan"))
    return out


def std(a: Any, axis: Any = None, dtype: Any = None, ddof: int = 0,
        keepdims: bool = False) -> Array:
    """Standard deviation along ``axis``."""
    if dtype is not None and not dt.is_inexact(_user_dtype(dtype)):
        raise ValueError(f"std: the dtype argument must be inexact, but got {np.dtype(dtype)}")
    return lax.sqrt(var(a, axis=axis, dtype=dtype, ddof=ddof, keepdims=keepdims))


def _arg(name: str, op: Callable[[Any, int, Any], Any]) -> Callable[..., Array]:
    def arg(a: Any, axis: int | None = None, keepdims: bool = False) -> Array:
        a = _input(name, a)
        nd = a.ndim
        if axis is None:
            dims = tuple(range(nd))
            a = lax.reshape(a, (a.size,)) if nd != 1 else a
            ax = 0
        else:
            ax = canonical_axis(axis, nd)
            dims = (ax,)
        if shape(a)[ax] == 0:
            raise ValueError(f"attempt to get {name} of an empty sequence")
        out = op(a, ax, _default_int())
        return _keep(out, dims, nd, keepdims)
    arg.__name__ = arg.__qualname__ = name
    arg.__doc__ = (f"Index of the first {name[3:]}imum along ``axis`` (of the flattened "
                   "array when ``None``).")
    return arg


argmax = _arg("argmax", lax.argmax)
argmin = _arg("argmin", lax.argmin)


def _cumulative(name: str, op: Callable[..., Any], promote_integers: bool = False
                ) -> Callable[..., Array]:
    def cumulative(a: Any, axis: int | None = None, dtype: Any = None) -> Array:
        a = _input(name, a)
        if axis is None or a.ndim == 0:
            a = lax.reshape(a, (a.size,)) if a.ndim != 1 else a
        ax = canonical_axis(0 if axis is None else axis, a.ndim)
        if dtype is None:
            result = _promote_integer(a.dtype) if promote_integers or a.dtype == dt.bool_ \
                else a.dtype
            computation = result
        else:
            result = _user_dtype(dtype)
            if result == dt.bool_:
                if a.dtype != dt.bool_:
                    a = _to_bool(a)
                computation = _promote_integer(result)
            else:
                computation = result
        x = _cast(a, computation)
        # (An empty array is its own cumulative result.)
        return _cast(op(x, ax) if x.size else x, result)
    cumulative.__name__ = cumulative.__qualname__ = name
    cumulative.__doc__ = (f"Cumulative {name[3:]} along ``axis`` (of the flattened array "
                          "when ``None``).")
    return cumulative


cumsum = _cumulative("cumsum", lax.cumsum)
cumprod = _cumulative("cumprod", lax.cumprod)
_cumsum_promoted = _cumulative("cumulative_sum", lax.cumsum, promote_integers=True)


def _cumulative_axis(name: str, x: Array, axis: int | None) -> int:
    if x.ndim == 0:
        raise ValueError(f"{name}: the input must be non-scalar, but got a scalar")
    if axis is None:
        if x.ndim > 1:
            raise ValueError(f"{name}: the input array has rank {x.ndim}, but axis was not "
                             "set; it is only optional for one-dimensional arrays")
        axis = 0
    return canonical_axis(axis, x.ndim)


def _with_initial(out: Array, ax: int, value: int) -> Array:
    """``out`` with a slice of ``value`` put first along ``ax``."""
    shape_ = list(out.shape)
    shape_[ax] = 1
    first = lax.broadcast_in_dim(_const_like(out, value), shape_, ())
    return lax.concatenate([first, out], ax)


def cumulative_sum(x: Any, axis: int | None = None, dtype: Any = None,
                   include_initial: bool = False) -> Array:
    """Cumulative sum (the array API's ``cumulative_sum``): ``axis`` is required for
    arrays of more than one dimension; integers accumulate in the default integer."""
    x = _input("cumulative_sum", x)
    ax = _cumulative_axis("cumulative_sum", x, axis)
    out = _cumsum_promoted(x, axis=ax, dtype=dtype)
    return _with_initial(out, ax, 0) if include_initial else out


def cumulative_prod(x: Any, /, *, axis: int | None = None, dtype: Any = None,
                    include_initial: bool = False) -> Array:
    """Cumulative product (the array API's ``cumulative_prod``): ``axis`` is required for
    arrays of more than one dimension; with ``include_initial``, a leading 1."""
    x = _input("cumulative_prod", x)
    ax = _cumulative_axis("cumulative_prod", x, axis)
    out = cumprod(x, axis=ax, dtype=dtype)
    return _with_initial(out, ax, 1) if include_initial else out


def diff(a: Any, n: int = 1, axis: int = -1, prepend: Any = None, append: Any = None) -> Array:
    """The ``n``-th discrete difference along ``axis`` (``not_equal`` for bools), after
    joining ``prepend`` before and ``append`` after (scalars broadcast).

    Raises:
      ValueError: a negative ``n``, or a 0-d array.
    """
    arr = _input("diff", a)
    n = operator.index(n)
    axis = operator.index(axis)
    if n == 0:
        return arr
    if n < 0:
        raise ValueError(f"order must be non-negative but got {n}")
    if arr.ndim == 0:
        raise ValueError(f"diff requires input that is at least one dimensional; got {a}")
    ax = canonical_axis(axis, arr.ndim)
    def edge(extra: Any) -> Array:
        e = _input("diff", extra)
        if e.ndim:
            return e
        shape_ = list(arr.shape)
        shape_[ax] = 1
        return lax.broadcast_in_dim(e, shape_, ())

    parts = ([] if prepend is None else [edge(prepend)]) + [arr] + (
        [] if append is None else [edge(append)])
    if len(parts) > 1:
        arr = concatenate(parts, ax)
    later = tuple(slice(1, None) if i == ax else slice(None) for i in range(arr.ndim))
    earlier = tuple(slice(None, -1) if i == ax else slice(None) for i in range(arr.ndim))
    op = not_equal if arr.dtype == dt.bool_ else subtract
    for _ in range(n):
        arr = op(arr[later], arr[earlier])
    return arr

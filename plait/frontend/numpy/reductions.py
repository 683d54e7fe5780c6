"""Reductions of the NumPy namespace: ``sum``, ``max``, ``mean``, ``argmax``, cumulative ops."""

from __future__ import annotations

import builtins
from collections.abc import Callable
from typing import Any

import numpy as np

from plait.ir import dtypes as dt
from plait.frontend import lax
from plait.frontend.array_base import Array
from plait.frontend.numpy._core import canonical_axes, canonical_axis, convert, ndim, promote, shape
from plait.frontend.numpy.ufuncs import _const_like, _to_bool, square

__all__ = ["sum", "prod", "max", "min", "amax", "amin", "mean", "var", "std", "any", "all",
           "argmax", "argmin", "cumsum", "cumprod", "cumulative_sum", "count_nonzero"]


def _keep(x: Any, axes: tuple[int, ...], in_ndim: int, keepdims: bool) -> Any:
    if not keepdims:
        return x
    out_shape = list(shape(x))
    for a in axes:
        out_shape.insert(a, 1)
    kept = [i for i in range(in_ndim) if i not in axes]
    return lax.broadcast_in_dim(x, out_shape, kept)


def _sum_dtype(d: np.dtype[Any]) -> np.dtype[Any]:
    # NumPy sums small integers (and bools) in the default integer type.
    if d == dt.bool_:
        return dt.canonicalize(dt.int64)
    if dt.is_signed(d) and d.itemsize < dt.canonicalize(dt.int64).itemsize:
        return dt.canonicalize(dt.int64)
    if dt.is_unsigned(d) and d.itemsize < dt.canonicalize(dt.uint64).itemsize:
        return dt.canonicalize(dt.uint64)
    return d


def _reduction(name: str, op: Callable[[Any, tuple[int, ...]], Any], upcast: bool,
               identity_ok: bool) -> Callable[..., Array]:
    def reduce(a: Any, axis: Any = None, dtype: Any = None, keepdims: bool = False) -> Array:
        a, = promote(name, a)
        nd = ndim(a)
        axes = canonical_axes(axis, nd)
        if not identity_ok and builtins.any(shape(a)[i] == 0 for i in axes):
            raise ValueError(f"{name}: zero-size array to reduction operation with no identity")
        if dtype is not None:
            target = dt.canonicalize(dtype)
        else:
            target = _sum_dtype(a.dtype) if upcast else a.dtype
        weak = a.weak_type and target == a.dtype
        a = convert(a, target, weak)
        if target in (dt.float16, dt.bfloat16) and upcast:
            out = convert(op(convert(a, dt.float32, False), axes), target, False)
        else:
            out = op(a, axes)
        return _keep(out, axes, nd, keepdims)  # type: ignore[no-any-return]
    reduce.__name__ = name
    reduce.__doc__ = f"``{name}`` over ``axis`` (all axes when ``None``)."
    return reduce


sum = _reduction("sum", lax.reduce_sum, upcast=True, identity_ok=True)
prod = _reduction("prod", lax.reduce_prod, upcast=True, identity_ok=True)


def _minmax(name: str, op: Callable[[Any, tuple[int, ...]], Any]) -> Callable[..., Array]:
    def reduce(a: Any, axis: Any = None, keepdims: bool = False) -> Array:
        a, = promote(name, a)
        nd = ndim(a)
        axes = canonical_axes(axis, nd)
        if builtins.any(shape(a)[i] == 0 for i in axes):
            raise ValueError(f"{name}: zero-size array to reduction operation {name} which has "
                             "no identity")
        return _keep(op(a, axes), axes, nd, keepdims)  # type: ignore[no-any-return]
    reduce.__name__ = name
    reduce.__doc__ = f"``{name}`` over ``axis`` (all axes when ``None``)."
    return reduce


max = _minmax("max", lax.reduce_max)
min = _minmax("min", lax.reduce_min)
amax = max
amin = min


def any(a: Any, axis: Any = None, keepdims: bool = False) -> Array:
    """Whether any element along ``axis`` is true (nonzero)."""
    b = _to_bool(a)
    axes = canonical_axes(axis, ndim(b))
    return _keep(lax.reduce_or(b, axes), axes, ndim(b), keepdims)  # type: ignore[no-any-return]


def all(a: Any, axis: Any = None, keepdims: bool = False) -> Array:
    """Whether every element along ``axis`` is true (nonzero)."""
    b = _to_bool(a)
    axes = canonical_axes(axis, ndim(b))
    return _keep(lax.reduce_and(b, axes), axes, ndim(b), keepdims)  # type: ignore[no-any-return]


def count_nonzero(a: Any, axis: Any = None, keepdims: bool = False) -> Array:
    """The number of nonzero elements along ``axis``."""
    return sum(_to_bool(a), axis=axis, keepdims=keepdims)


def _count(a: Any, axes: tuple[int, ...]) -> int:
    n = 1
    for i in axes:
        n *= shape(a)[i]
    return n


def mean(a: Any, axis: Any = None, dtype: Any = None, keepdims: bool = False) -> Array:
    """Arithmetic mean along ``axis`` (integers are averaged in the default float)."""
    a, = promote("mean", a)
    axes = canonical_axes(axis, ndim(a))
    if dtype is None:
        d = a.dtype if dt.is_inexact(a.dtype) else dt.canonicalize(dt.float64)
    else:
        d = dt.canonicalize(dtype)
    total = sum(a, axis=axes, dtype=d, keepdims=keepdims)
    return lax.div(total, _const_like(total, float(_count(a, axes))))  # type: ignore[no-any-return]


def var(a: Any, axis: Any = None, dtype: Any = None, ddof: int = 0,
        keepdims: bool = False) -> Array:
    """Variance along ``axis`` with ``ddof`` delta degrees of freedom."""
    a, = promote("var", a)
    if not dt.is_inexact(a.dtype):
        a = convert(a, dt.canonicalize(dt.float64), False)
    axes = canonical_axes(axis, ndim(a))
    centered = lax.sub(a, mean(a, axis=axes, keepdims=True))
    if dt.is_complex(a.dtype):
        sq = lax.real(lax.mul(centered, lax.conj(centered)))
    else:
        sq = square(centered)
    total = sum(sq, axis=axes, dtype=dtype, keepdims=keepdims)
    n = _count(a, axes) - ddof
    return lax.div(total, _const_like(total, float(n)))  # type: ignore[no-any-return]


def std(a: Any, axis: Any = None, dtype: Any = None, ddof: int = 0,
        keepdims: bool = False) -> Array:
    """Standard deviation along ``axis``."""
    return lax.sqrt(var(a, axis=axis, dtype=dtype, ddof=ddof, keepdims=keepdims))  # type: ignore[no-any-return]


def _arg(name: str, op: Callable[[Any, int, Any], Any]) -> Callable[..., Array]:
    def arg(a: Any, axis: int | None = None, keepdims: bool = False) -> Array:
        a, = promote(name, a)
        if dt.is_complex(a.dtype):
            raise TypeError(f"{name}: expected a real array, but got {a.aval.str_short()}")
        if axis is None:
            from plait.frontend.numpy.manipulation import ravel
            flat = ravel(a)
            if shape(flat)[0] == 0:
                raise ValueError(f"{name}: attempt to get {name} of an empty sequence")
            out = op(flat, 0, dt.canonicalize(dt.int64))
            if keepdims:
                out = lax.reshape(out, (1,) * ndim(a))
            return out  # type: ignore[no-any-return]
        ax = canonical_axis(axis, ndim(a))
        if shape(a)[ax] == 0:
            raise ValueError(f"{name}: attempt to get {name} of an empty sequence")
        return _keep(op(a, ax, dt.canonicalize(dt.int64)), (ax,), ndim(a), keepdims)  # type: ignore[no-any-return]
    arg.__name__ = name
    arg.__doc__ = f"Index of the first ``{name[3:]}``imum along ``axis`` (flattened when ``None``)."
    return arg


argmax = _arg("argmax", lax.argmax)
argmin = _arg("argmin", lax.argmin)


def _cumulative(name: str, op: Callable[..., Any]) -> Callable[..., Array]:
    def cumulative(a: Any, axis: int | None = None, dtype: Any = None) -> Array:
        a, = promote(name, a)
        if axis is None:
            from plait.frontend.numpy.manipulation import ravel
            a = ravel(a)
            axis = 0
        ax = canonical_axis(axis, ndim(a))
        target = dt.canonicalize(dtype) if dtype is not None else _sum_dtype(a.dtype)
        a = convert(a, target, a.weak_type and target == a.dtype)
        return op(a, ax)  # type: ignore[no-any-return]
    cumulative.__name__ = name
    cumulative.__doc__ = f"Cumulative ``{name[3:]}`` along ``axis`` (flattened when ``None``)."
    return cumulative


cumsum = _cumulative("cumsum", lax.cumsum)
cumprod = _cumulative("cumprod", lax.cumprod)
cumulative_sum = cumsum

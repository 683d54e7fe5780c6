"""Array creation: ``zeros``, ``ones``, ``full``, ``arange``, ``linspace``, ``eye``, ``asarray``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from plait.errors import ArgumentError
from plait.ir import dtypes as dt
from plait.frontend import lax
from plait.frontend.array_base import Array
from plait.frontend.numpy._core import aval_of, convert, is_scalar, promote, shape
from plait.frontend.promotion import dtype_and_weak
from plait.frontend.tracing import scalar_literal

__all__ = ["zeros", "ones", "full", "empty", "zeros_like", "ones_like", "full_like",
           "empty_like", "arange", "linspace", "eye", "identity", "asarray", "array", "astype"]


def _shape_arg(shape_: Any) -> tuple[int, ...]:
    if isinstance(shape_, int | np.integer):
        return (int(shape_),)
    try:
        dims = tuple(int(d) for d in shape_)
    except TypeError:
        raise ArgumentError(f"expected a shape (an int or a sequence of ints), but got {shape_!r}") from None
    if any(d < 0 for d in dims):
        raise ArgumentError(f"expected non-negative dimensions, but got shape {dims}")
    return dims


def full(shape_: Any, fill_value: Any, dtype: Any = None) -> Array:
    """An array of ``shape`` filled with ``fill_value``."""
    dims = _shape_arg(shape_)
    if dtype is None:
        d, weak = dtype_and_weak(fill_value) if (is_scalar(fill_value) or aval_of(fill_value)
                                                 is not None) else (asarray(fill_value).dtype, False)
        dtype_, weak_ = d, weak
    else:
        dtype_, weak_ = dt.canonicalize(dtype), False
    value = convert(fill_value, dtype_, weak_)
    vshape = shape(value)
    return lax.broadcast_in_dim(value, dims, tuple(range(len(dims) - len(vshape), len(dims))))  # type: ignore[no-any-return]


def zeros(shape_: Any, dtype: Any = None) -> Array:
    """An array of zeros (float32 by default)."""
    return full(shape_, 0.0 if dtype is None else 0, dt.canonicalize(dtype or dt.float64))


def ones(shape_: Any, dtype: Any = None) -> Array:
    """An array of ones (float32 by default)."""
    return full(shape_, 1.0 if dtype is None else 1, dt.canonicalize(dtype or dt.float64))


empty = zeros


def _like(a: Any, fill: Any, dtype: Any, shape_: Any) -> Array:
    s = shape(a) if shape_ is None else _shape_arg(shape_)
    if dtype is None:
        d, weak = dtype_and_weak(a) if aval_of(a) is not None else (asarray(a).dtype, False)
        value = convert(fill, d, weak)
        return lax.broadcast_in_dim(value, s, ())  # type: ignore[no-any-return]
    return full(s, fill, dtype)


def zeros_like(a: Any, dtype: Any = None, shape: Any = None) -> Array:
    """Zeros with the shape and dtype of ``a``."""
    return _like(a, 0, dtype, shape)


def ones_like(a: Any, dtype: Any = None, shape: Any = None) -> Array:
    """Ones with the shape and dtype of ``a``."""
    return _like(a, 1, dtype, shape)


def full_like(a: Any, fill_value: Any, dtype: Any = None, shape: Any = None) -> Array:
    """``fill_value`` with the shape and dtype of ``a``."""
    return _like(a, fill_value, dtype, shape)


empty_like = zeros_like


def arange(start: Any, stop: Any = None, step: Any = None, dtype: Any = None) -> Array:
    """Evenly spaced values in ``[start, stop)`` (static bounds)."""
    for v in (start, stop, step):
        if aval_of(v) is not None:
            raise ArgumentError("arange: expected concrete bounds, but got a traced value; the "
                                "length of the result must be known when tracing")
    if stop is None:
        start, stop = 0, start
    if step is None:
        step = 1
    if dtype is None:
        d = dt.canonicalize(np.result_type(*[np.asarray(v) for v in (start, stop, step)]))
    else:
        d = dt.canonicalize(dtype)
    if dt.is_integer(d) and all(isinstance(v, int | np.integer) for v in (start, stop, step)):
        size = max(0, -(-(int(stop) - int(start)) // int(step)))
        out = lax.iota(d, size)
        if step != 1:
            out = lax.mul(scalar_literal(int(step), d), out)
        if start != 0:
            out = lax.add(scalar_literal(int(start), d), out)
        return out  # type: ignore[no-any-return]
    return asarray(np.arange(start, stop, step, dtype=d))


def linspace(start: Any, stop: Any, num: int = 50, endpoint: bool = True, dtype: Any = None) -> Array:
    """``num`` evenly spaced values from ``start`` to ``stop``."""
    num = int(num)
    if num < 0:
        raise ArgumentError(f"linspace: expected a non-negative num, but got {num}")
    d = dt.canonicalize(dtype) if dtype is not None else dt.canonicalize(dt.float64)
    start_, stop_ = promote("linspace", start, stop)
    fd = d if dt.is_inexact(d) else dt.canonicalize(dt.float64)
    start_, stop_ = convert(start_, fd, False), convert(stop_, fd, False)
    div = (num - 1) if endpoint else num
    iota = lax.convert_element_type(lax.iota(dt.int32, num), fd)
    if div > 0:
        step = lax.div(lax.sub(stop_, start_), scalar_literal(float(div), fd))
        out = lax.add(start_, lax.mul(iota, step))
        if endpoint and num > 1:
            out = lax.concatenate([lax.slice(out, (0,), (num - 1,)),
                                   lax.broadcast_in_dim(stop_, (1,), ())], 0)
    else:
        out = lax.broadcast_in_dim(start_, (num,), ())
    return convert(out, d, False)  # type: ignore[no-any-return]


def eye(N: int, M: int | None = None, k: int = 0, dtype: Any = None) -> Array:
    """A 2-d array with ones on the ``k``-th diagonal."""
    M = N if M is None else M
    d = dt.canonicalize(dtype or dt.float64)
    rows = lax.broadcasted_iota(dt.int32, (N, M), 0)
    cols = lax.broadcasted_iota(dt.int32, (N, M), 1)
    on = lax.eq(lax.add(rows, scalar_literal(int(k), dt.int32)), cols) if k else lax.eq(rows, cols)
    return lax.convert_element_type(on, d)  # type: ignore[no-any-return]


def identity(n: int, dtype: Any = None) -> Array:
    """The ``n`` by ``n`` identity matrix."""
    return eye(n, dtype=dtype)


def asarray(a: Any, dtype: Any = None) -> Array:
    """``a`` as an array (a no-op for arrays of the right dtype)."""
    from plait.frontend.array_impl import ArrayImpl
    if aval_of(a) is not None:
        return astype(a, dtype) if dtype is not None else a  # type: ignore[no-any-return]
    if isinstance(a, Sequence) and not isinstance(a, str | bytes) and any(
            aval_of(x) is not None for x in _flat(a)):
        from plait.frontend.numpy.manipulation import stack
        return stack([asarray(x, dtype) for x in a])
    if is_scalar(a):
        d, weak = dtype_and_weak(a)
        if dtype is not None:
            d, weak = dt.canonicalize(dtype), False
        arr = np.asarray(a).astype(d)
        return ArrayImpl.from_numpy(arr, weak)
    arr = np.asarray(a, dtype=None if dtype is None else dt.canonicalize(dtype))
    if arr.dtype == object or arr.dtype not in dt._SHORT:
        raise TypeError(f"asarray: expected array-like data of a supported dtype, but got "
                        f"{type(a).__name__} with dtype {arr.dtype}")
    arr = arr.astype(dt.canonicalize(arr.dtype), copy=False)
    return ArrayImpl.from_numpy(arr, False)


def _flat(a: Any) -> list[Any]:
    if isinstance(a, Sequence) and not isinstance(a, str | bytes):
        return [y for x in a for y in _flat(x)]
    return [a]


array = asarray


def astype(x: Any, dtype: Any) -> Array:
    """``x`` cast to ``dtype``."""
    d = dt.canonicalize(dtype)
    if aval_of(x) is None:
        x = asarray(x)
    if x.dtype == d and not x.weak_type:
        return x  # type: ignore[no-any-return]
    return lax.convert_element_type(x, d)  # type: ignore[no-any-return]

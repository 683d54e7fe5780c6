"""Finite differences and integrals: ``ediff1d``, ``gradient``, ``trapezoid`` and
``unwrap``; spaced samples: ``logspace``, ``geomspace`` and ``spacing``; diagonals:
``diagflat`` and ``fill_diagonal``.

As in JAX, ``gradient`` supports only second-order edges (no ``edge_order``), and
``fill_diagonal`` returns a new array (``inplace=False`` is required).
"""

from __future__ import annotations

import builtins
import math
import operator
from collections.abc import Callable, Sequence
from typing import Any

import ml_dtypes

from plait.frontend import lax
from plait.frontend.api.eager_programs import compiled_when_eager
from plait.frontend.core.array_base import Array
from plait.frontend.core.promotion import result_type
from plait.frontend.core.x64_warnings import check_user_dtype
from plait.frontend.numpy._core import (
    as_array,
    canonical_axis,
    check_arraylike,
    ndim,
    promote_dtypes,
    promote_dtypes_inexact,
    promote_to_inexact,
)
from plait.frontend.numpy.arithmetic import mod, power
from plait.frontend.numpy.creation import arange, linspace, zeros
from plait.frontend.numpy.index_tricks import diag_indices
from plait.frontend.numpy.manipulation import concatenate, moveaxis, ravel, reshape, tile
from plait.frontend.numpy.reductions import _default_float, cumsum, diff, sum
from plait.frontend.numpy.ufuncs import (
    _const_like,
    abs,
    copysign,
    equal,
    greater,
    less,
    log10,
    logical_and,
    nextafter,
    sign,
    where,
)
from plait.ir import dtypes as dt

__all__ = ["ediff1d", "gradient", "trapezoid", "unwrap", "logspace", "geomspace", "spacing",
           "diagflat", "fill_diagonal"]

# (``ml_dtypes`` has no type annotations.)
_finfo: Callable[[Any], Any] = ml_dtypes.finfo


def _slice(a: Array, start: int | None, stop: int | None, axis: int) -> Array:
    """``a[start:stop]`` along ``axis``."""
    return a[(slice(None),) * axis + (slice(start, stop),)]


def ediff1d(ary: Any, to_end: Any = None, to_begin: Any = None) -> Array:
    """The differences of consecutive elements of the flattened ``ary``, with
    ``to_begin`` and ``to_end`` (flattened, cast to its dtype) joined around them."""
    check_arraylike("ediff1d", ary)
    arr = ravel(ary)
    result = lax.sub(arr[1:], arr[:-1])
    if to_begin is not None:
        check_arraylike("ediff1d", to_begin)
        result = concatenate((ravel(lax.convert_element_type(to_begin, arr.dtype)), result))
    if to_end is not None:
        check_arraylike("ediff1d", to_end)
        result = concatenate((result, ravel(lax.convert_element_type(to_end, arr.dtype))))
    return result


def _gradient_along(a: Array, h: Any, axis: int) -> Array:
    """Central differences inside, one-sided differences at the two edges."""
    upper = _slice(a, 1, 2, axis) - _slice(a, 0, 1, axis)
    lower = _slice(a, -1, None, axis) - _slice(a, -2, -1, axis)
    if ndim(h) == 0:
        inner = (_slice(a, 2, None, axis) - _slice(a, None, -2, axis)) * 0.5 / h
        upper, lower = upper / h, lower / h
    elif ndim(h) == 1:
        x = as_array(h)
        if x.shape[0] != a.shape[axis]:
            raise ValueError("Spacing arrays must have the same length as the dimension along "
                             "which the gradient is calculated.")
        x = reshape(x, tuple(x.shape[0] if i == axis else 1 for i in range(a.ndim)))
        upper = upper / (_slice(x, 1, 2, axis) - _slice(x, 0, 1, axis))
        lower = lower / (_slice(x, -1, None, axis) - _slice(x, -2, -1, axis))
        dx1 = _slice(x, 1, -1, axis) - _slice(x, 0, -2, axis)
        dx2 = _slice(x, 2, None, axis) - _slice(x, 1, -1, axis)
        # Second-order weights for uneven spacing (NumPy's formula).
        w0 = -dx2 / (dx1 * (dx1 + dx2))
        w1 = (dx2 - dx1) / (dx1 * dx2)
        w2 = dx1 / (dx2 * (dx1 + dx2))
        inner = (w0 * _slice(a, 0, -2, axis) + w1 * _slice(a, 1, -1, axis)
                 + w2 * _slice(a, 2, None, axis))
    else:
        raise ValueError("Spacing arrays must be 1D arrays or scalars.")
    return concatenate((upper, inner, lower), axis=axis)


@compiled_when_eager(("axis", "edge_order"))
def gradient(f: Any, *varargs: Any, axis: int | Sequence[int] | None = None,
             edge_order: int | None = None) -> Array | list[Array]:
    """The numerical gradient of the samples ``f`` along each of ``axis`` (all axes by
    default), with unit spacing, one spacing for all axes, or one per axis (a scalar
    step or the 1-d sample coordinates); a list of arrays for several axes.

    Raises:
      NotImplementedError: ``edge_order`` is given.
      ValueError: an axis of fewer than two samples, or a bad spacing array.
      TypeError: a number of spacings other than 0, 1 or one per axis.
    """
    if edge_order is not None:
        raise NotImplementedError("The 'edge_order' argument to jnp.gradient is not "
                                  "supported.")
    check_arraylike("gradient", f, *varargs)
    a, *spacing = promote_dtypes_inexact("gradient", f, *varargs)
    a = as_array(a)
    if axis is None:
        axes = tuple(range(a.ndim))
    else:
        given = tuple(axis) if isinstance(axis, Sequence) else (axis,)
        axes = tuple(canonical_axis(i, a.ndim) for i in given)
    if not axes:
        return []
    if min(a.shape[i] for i in axes) < 2:
        raise ValueError("Shape of array too small to calculate a numerical gradient, at least "
                         "2 elements are required.")
    if not spacing:
        steps: list[Any] = [1.0] * len(axes)
    elif len(spacing) == 1:
        steps = spacing * len(axes)
    elif len(spacing) == len(axes):
        steps = spacing
    else:
        raise TypeError(f"Invalid number of spacing arguments {len(spacing)} for {axis=}")
    grads = [_gradient_along(a, h, ax) for ax, h in zip(axes, steps)]
    return grads[0] if len(axes) == 1 else grads


def trapezoid(y: Any, x: Any = None, dx: Any = 1.0, axis: int = -1) -> Array:
    """The integral of the samples ``y`` along ``axis`` by the trapezoidal rule, at
    the coordinates ``x`` or with the step ``dx``."""
    if x is None:
        check_arraylike("trapezoid", y)
        y_arr = as_array(promote_dtypes_inexact("trapezoid", y)[0])
        step = as_array(dx)
        if step.ndim > 0:
            step = lax.expand_dims(step, tuple(range(y_arr.ndim - step.ndim)))
            step = moveaxis(step, axis, -1)
    else:
        check_arraylike("trapezoid", y, x)
        y_arr, x_arr = (as_array(v) for v in promote_dtypes_inexact("trapezoid", y, x))
        step = diff(x_arr) if x_arr.ndim == 1 else moveaxis(diff(x_arr, axis=axis), axis, -1)
    y_arr = moveaxis(y_arr, axis, -1)
    if step.ndim == 0 or step.shape[-1] == 1:
        # A constant step: the sum less half the two end samples.
        h = step if step.ndim == 0 else step[..., 0]
        return h * (sum(y_arr, axis=-1) - 0.5 * (y_arr[..., 0] + y_arr[..., -1]))
    return sum(0.5 * (step * (y_arr[..., 1:] + y_arr[..., :-1])), axis=-1)


def unwrap(p: Any, discont: Any = None, axis: int = -1, period: Any = 2 * math.pi) -> Array:
    """``p`` with jumps larger than ``discont`` (default ``period / 2``) between
    neighbours along ``axis`` replaced by their complement modulo ``period``.

    Raises:
      ValueError: a complex ``p``.
    """
    check_arraylike("unwrap", p)
    arr, per = (as_array(v) for v in promote_dtypes("unwrap", as_array(p), period))
    if dt.is_complex(arr.dtype):
        raise ValueError("jnp.unwrap does not support complex inputs.")
    ax = canonical_axis(axis, arr.ndim)
    if arr.shape[ax] == 0:
        return arr
    if discont is None:
        discont = per / 2
    interval = per // 2 if dt.is_integer(arr.dtype) else per / 2
    dd = diff(arr, axis=ax)
    ddmod = mod(dd + interval, per) - interval
    # NumPy maps a jump of exactly -interval to +interval when the step was positive.
    ddmod = where(logical_and(equal(ddmod, -interval), greater(dd, 0)), interval, ddmod)
    correction = where(less(abs(dd), discont), 0, ddmod - dd)
    return concatenate((_slice(arr, 0, 1, ax),
                        _slice(arr, 1, None, ax) + cumsum(correction, axis=ax)), axis=ax)


def _space_dtypes(start: Any, stop: Any, dtype: Any, name: str) -> tuple[Any, Any]:
    """The result dtype (that of ``start``/``stop`` made inexact unless given) and the
    inexact dtype the samples are computed in."""
    if dtype is None:
        d = result_type(start, stop)
        d = d if dt.is_inexact(d) else _default_float()
    else:
        d = check_user_dtype(dtype, name)
    return d, d if dt.is_inexact(d) else _default_float()


@compiled_when_eager(("num", "endpoint", "dtype", "axis"))
def logspace(start: Any, stop: Any, num: int = 50, endpoint: bool = True, base: Any = 10.0,
             dtype: Any = None, axis: int = 0) -> Array:
    """``num`` samples ``base ** t`` for ``t`` evenly spaced from ``start`` to ``stop``."""
    num, axis = operator.index(num), operator.index(axis)
    check_arraylike("logspace", start, stop)
    d, computation = _space_dtypes(start, stop, dtype, "logspace")
    lo = lax.convert_element_type(start, computation)
    hi = lax.convert_element_type(stop, computation)
    lin = linspace(lo, hi, num, endpoint=endpoint, axis=axis)
    return lax.convert_element_type(power(base, lin), d)


@compiled_when_eager(("num", "endpoint", "dtype", "axis"))
def geomspace(start: Any, stop: Any, num: int = 50, endpoint: bool = True, dtype: Any = None,
              axis: int = 0) -> Array:
    """``num`` samples from ``start`` to ``stop`` in geometric progression."""
    num, axis = operator.index(num), operator.index(axis)
    check_arraylike("geomspace", start, stop)
    d, computation = _space_dtypes(start, stop, dtype, "geomspace")
    lo = lax.convert_element_type(start, computation)
    hi = lax.convert_element_type(stop, computation)
    s = sign(lo)
    res = s * logspace(log10(lo / s), log10(hi / s), num, endpoint=endpoint, base=10.0,
                       dtype=computation, axis=0)
    ax = canonical_axis(axis, res.ndim)
    if ax:
        res = moveaxis(res, 0, ax)
    return lax.convert_element_type(res, d)


def spacing(x: Any, /) -> Array:
    """The distance from each element of ``x`` to the next representable number away
    from zero (towards +inf for ``float16``, as NumPy).

    Raises:
      ValueError: a complex ``x``.
    """
    check_arraylike("spacing", x)
    arr = as_array(promote_to_inexact("spacing", x)[0])
    if dt.is_complex(arr.dtype):
        raise ValueError("jnp.spacing is not defined for complex inputs.")
    inf = _const_like(arr, float("inf"))
    if arr.dtype == dt.float16:
        return nextafter(arr, inf) - arr
    result = nextafter(arr, copysign(inf, arr)) - arr
    tiny = _const_like(arr, _finfo(arr.dtype).smallest_subnormal)
    return where(equal(result, 0), copysign(tiny, arr), result)


def diagflat(v: Any, k: int = 0) -> Array:
    """A square 2-d array with the flattened ``v`` on its ``k``-th diagonal."""
    check_arraylike("diagflat", v)
    flat = ravel(v)
    n = flat.shape[0] + builtins.abs(k)
    i = arange(0, flat.shape[0])
    flat_index = i + k + i * n if k >= 0 else i + (i - k) * n
    return reshape(zeros(n * n, dtype=flat.dtype).at[flat_index].set(flat), (n, n))


def fill_diagonal(a: Any, val: Any, wrap: bool = False, *, inplace: bool = True) -> Array:
    """A copy of ``a`` with its main diagonal set to ``val`` (repeated as needed).

    Raises:
      NotImplementedError: ``inplace`` (arrays are immutable) or ``wrap``.
      ValueError: ``a`` of fewer than two dimensions, or of unequal dimensions.
    """
    if inplace:
        raise NotImplementedError("JAX arrays are immutable, must use inplace=False")
    if wrap:
        raise NotImplementedError("wrap=True is not implemented, must use wrap=False")
    check_arraylike("fill_diagonal", a, val)
    arr, values = as_array(a), as_array(val)
    if arr.ndim < 2:
        raise ValueError("array must be at least 2-d")
    if arr.ndim > 2 and any(n != arr.shape[0] for n in arr.shape[1:]):
        raise ValueError("All dimensions of input must be of equal length")
    n = min(arr.shape)
    if values.ndim:
        values = ravel(values)
        if values.shape[0] < n:
            values = tile(values, -(-n // values.shape[0]))
        values = values[:n]
    return arr.at[diag_indices(n, arr.ndim)].set(values)

"""NaN-aware functions: ``fmax``/``fmin`` (NaN loses against a number), ``nanargmax``,
``nanargmin``, ``nancumsum``, ``nancumprod``, ``nanvar`` and ``nanstd``.

As in JAX, ``nanargmax``/``nanargmin`` give -1 where every element is NaN (NumPy
raises), and the variance is NaN where fewer than ``ddof + 1`` elements are not NaN.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

import numpy as np

from plait.frontend import lax
from plait.frontend.api.eager_programs import compiled_when_eager
from plait.frontend.core.array_base import Array
from plait.frontend.core.x64_warnings import check_user_dtype
from plait.frontend.numpy import ufuncs
from plait.frontend.numpy._core import as_array, check_arraylike
from plait.frontend.numpy.reductions import (
    _cast,
    _input,
    _var_dtypes,
    all,
    argmax,
    argmin,
    cumprod,
    cumsum,
)
from plait.frontend.numpy.statistics import _check_where, _no_out, _reduce, nanmean
from plait.frontend.numpy.ufuncs import (
    _const_like,
    greater,
    isnan,
    less,
    logical_or,
    where,
)
from plait.ir import dtypes as dt

__all__ = ["fmax", "fmin", "nanargmax", "nanargmin", "nancumsum", "nancumprod", "nanvar",
           "nanstd"]


def fmax(x1: Any, x2: Any) -> Array:
    """Elementwise maximum that ignores a NaN operand (NaN only where both are)."""
    return where(logical_or(greater(x1, x2), isnan(x2)), x1, x2)


def fmin(x1: Any, x2: Any) -> Array:
    """Elementwise minimum that ignores a NaN operand (NaN only where both are)."""
    return where(logical_or(less(x1, x2), isnan(x2)), x1, x2)


def _nanarg(name: str, arg: Callable[..., Array], fill: float) -> Callable[..., Array]:
    def nanarg(a: Any, axis: int | None = None, out: None = None,
               keepdims: bool | None = None) -> Array:
        if out is not None:
            raise NotImplementedError(f"The 'out' argument to jnp.{name} is not supported.")
        arr = _input(name, a)
        ax = None if axis is None else operator.index(axis)
        keep = bool(keepdims)
        if not dt.is_inexact(arr.dtype):
            return arg(arr, axis=ax, keepdims=keep)
        nans = isnan(arr)
        res = arg(where(nans, fill, arr), axis=ax, keepdims=keep)
        return where(all(nans, axis=ax, keepdims=keep), -1, res)
    nanarg.__name__ = nanarg.__qualname__ = name
    nanarg.__doc__ = (f"``{name[3:]}`` ignoring NaNs: -1 where every element along ``axis`` "
                      "is NaN.")
    return nanarg


nanargmax = _nanarg("nanargmax", argmax, -np.inf)
nanargmin = _nanarg("nanargmin", argmin, np.inf)


def _nancumulative(name: str, op: Callable[..., Array], fill: int) -> Callable[..., Array]:
    def nancumulative(a: Any, axis: int | None = None, dtype: Any = None,
                      out: None = None) -> Array:
        if out is not None:
            raise NotImplementedError(f"The 'out' argument to jnp.{name} is not supported")
        arr = _input(name, a)
        if dt.is_inexact(arr.dtype):
            arr = where(isnan(arr), _const_like(arr, fill), arr)
        return op(arr, axis=axis, dtype=dtype)
    nancumulative.__name__ = nancumulative.__qualname__ = name
    nancumulative.__doc__ = (f"``{name[3:]}`` with NaNs counted as {fill} (of the flattened "
                             "array when ``axis`` is ``None``).")
    return nancumulative


nancumsum = _nancumulative("nancumsum", cumsum, 0)
nancumprod = _nancumulative("nancumprod", cumprod, 1)


@compiled_when_eager(("axis", "dtype", "out", "keepdims"))
def nanvar(a: Any, axis: Any = None, dtype: Any = None, out: None = None, ddof: int = 0,
           keepdims: bool = False, where: Any = None, mean: Any = None) -> Array:
    """Variance of the elements that are not NaN (and selected by ``where``), with
    ``ddof`` delta degrees of freedom; ``mean`` replaces the computed mean."""
    arr = _input("nanvar", a)
    mask = _check_where("nanvar", where)
    _no_out("nanvar", out)
    computation, result = _var_dtypes(arr.dtype, dtype, "nanvar")
    x = _cast(arr, computation)
    if mean is None:
        centre = nanmean(x, axis, dtype=computation, keepdims=True, where=mask)
    else:
        check_arraylike("nanvar", mean)
        centre = _cast(as_array(mean), computation)
    nans = isnan(x)
    # (``where`` is a parameter here, hence ``ufuncs.where``.)
    # The double where keeps NaN out of the gradient of the ignored elements.
    centered = ufuncs.where(nans, 0, lax.sub(x, centre))
    if dt.is_complex(centered.dtype):
        centered = lax.real(lax.mul(centered, lax.conj(centered)))
    else:
        centered = lax.integer_pow(centered, 2)
    count = _reduce("nanvar", "sum", lax.bitwise_not(nans), axis, None, keepdims, None, mask)
    count = count - ddof
    empty = lax.le(count, _const_like(count, 0))
    total = _reduce("nanvar", "sum", centered, axis, None, keepdims, None, mask)
    total = ufuncs.where(empty, np.nan, total)
    divisor = _cast(ufuncs.where(empty, 1, count), total.dtype)
    return _cast(lax.div(total, divisor), result)


@compiled_when_eager(("axis", "dtype", "out", "keepdims"))
def nanstd(a: Any, axis: Any = None, dtype: Any = None, out: None = None, ddof: int = 0,
           keepdims: bool = False, where: Any = None, mean: Any = None) -> Array:
    """Standard deviation of the elements that are not NaN (see :func:`nanvar`)."""
    _no_out("nanstd", out)
    dtype = None if dtype is None else check_user_dtype(dtype, "nanstd")
    return lax.sqrt(nanvar(a, axis=axis, dtype=dtype, ddof=ddof, keepdims=keepdims,
                           where=where, mean=mean))

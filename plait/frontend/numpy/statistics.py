"""Statistics: ``average``, the NaN-ignoring reductions (``nansum``, ``nanprod``,
``nanmean``, ``nanmax``, ``nanmin``), ``cov``, ``corrcoef`` and ``ptp``.

The NaN-ignoring reductions take ``initial`` and a boolean ``where`` mask, as
in JAX.
"""

from __future__ import annotations

import builtins
import math
from typing import Any

import numpy as np

from plait.frontend import lax
from plait.frontend.api.eager_programs import compiled_when_eager
from plait.frontend.core.array_base import Array
from plait.frontend.core.x64_warnings import check_user_dtype
from plait.frontend.numpy._core import (
    as_array,
    canonical_axis,
    check_arraylike,
    promote_dtypes_inexact,
)
from plait.frontend.numpy.creation import asarray, full
from plait.frontend.numpy.linalg_ops import dot
from plait.frontend.numpy.manipulation import (
    atleast_2d,
    broadcast_to,
    concatenate,
    reshape,
    squeeze,
    transpose,
)
from plait.frontend.numpy.matrices import diag
from plait.frontend.numpy.reductions import (
    _axes,
    _cast,
    _identity,
    _input,
    _reduction,
    all,
    amax,
    amin,
    mean,
    sum,
)

# (Re-exported for nan_functions.py.)
from plait.frontend.numpy.reductions import _check_where as _check_where
from plait.frontend.numpy.reductions import _no_out as _no_out
from plait.frontend.numpy.ufuncs import (
    _const_like,
    _lax_const,
    abs,
    clip,
    conj,
    imag,
    isnan,
    multiply,
    real,
    sqrt,
    true_divide,
    where,
)
from plait.ir import dtypes as dt

__all__ = ["average", "nansum", "nanprod", "nanmean", "nanmax", "nanmin", "cov", "corrcoef",
           "ptp"]


@compiled_when_eager(("axis", "returned", "keepdims"))
def average(a: Any, axis: Any = None, weights: Any = None, returned: bool = False,
            keepdims: bool = False) -> Array | tuple[Array, Array]:
    """The (weighted) mean along ``axis``; with ``returned``, also the sum of the weights.

    Raises:
      ValueError: ``weights`` of another shape than ``a`` without an ``axis``, or
        not of the shape of ``a`` along ``axis``.
    """
    if weights is None:
        arr, = promote_dtypes_inexact("average", _input("average", a))
        arr = as_array(arr)
        axes = _axes("average", axis, arr.ndim)
        avg = mean(arr, axis=axis, keepdims=keepdims)
        count = math.prod(arr.shape[i] for i in axes)
        weights_sum = full((), count, dtype=avg.dtype)
    else:
        check_arraylike("average", a, weights)
        arr, w = (as_array(v) for v in promote_dtypes_inexact("average", a, weights))
        if arr.shape != w.shape:
            if axis is None:
                raise ValueError("Axis must be specified when shapes of a and weights differ.")
            given = tuple(axis) if isinstance(axis, tuple | list) else (axis,)
            axes_given = tuple(canonical_axis(x, arr.ndim) for x in given)
            if w.shape != tuple(arr.shape[x] for x in axes_given):
                raise ValueError("Shape of weights must be consistent with shape of a along "
                                 "specified axis.")
            w = transpose(w, tuple(int(i) for i in np.argsort(axes_given)))
            w = reshape(w, tuple(d if i in axes_given else 1 for i, d in enumerate(arr.shape)))
        weights_sum = sum(w, axis=axis, keepdims=keepdims)
        avg = true_divide(sum(multiply(arr, w), axis=axis, keepdims=keepdims), weights_sum)
    if returned:
        if avg.shape != weights_sum.shape:
            weights_sum = broadcast_to(weights_sum, avg.shape)
        return avg, weights_sum
    return avg


def _reduce(name: str, kind: str, a: Any, axis: Any, dtype: Any, keepdims: bool,
            initial: Any, where_: Any) -> Array:
    """``sum``/``prod``/``max``/``min`` with an ``initial`` value and a ``where`` mask (the
    errors name the plain reduction, as JAX's do)."""
    return _reduction(kind, kind, a, axis, dtype, None, keepdims, initial, where_)


def _nan_reduction(name: str, kind: str, a: Any, axis: Any, keepdims: bool, initial: Any,
                   where_: Any, dtype: Any = None, nan_if_all_nan: bool = False) -> Array:
    arr = _input(name, a)
    mask = _check_where(name, where_)
    if not dt.is_inexact(arr.dtype):
        return _reduce(name, kind, arr, axis, dtype, keepdims, initial, mask)
    nans = isnan(arr)
    filled = where(nans, _const_like(arr, _identity(kind, arr.dtype)), arr)
    out = _reduce(name, kind, filled, axis, dtype, keepdims, initial, mask)
    if nan_if_all_nan:
        out = where(all(nans, axis=axis, keepdims=keepdims), _lax_const(arr, np.nan), out)
    return out


def nansum(a: Any, axis: Any = None, dtype: Any = None, out: None = None,
           keepdims: bool = False, initial: Any = None, where: Any = None) -> Array:
    """``sum`` with NaNs counted as zero."""
    _no_out("nansum", out)
    return _nan_reduction("nansum", "sum", a, axis, keepdims, initial, where, dtype)


def nanprod(a: Any, axis: Any = None, dtype: Any = None, out: None = None,
            keepdims: bool = False, initial: Any = None, where: Any = None) -> Array:
    """``prod`` with NaNs counted as one."""
    _no_out("nanprod", out)
    return _nan_reduction("nanprod", "prod", a, axis, keepdims, initial, where, dtype)


def nanmax(a: Any, axis: Any = None, out: None = None, keepdims: bool = False,
           initial: Any = None, where: Any = None) -> Array:
    """``max`` ignoring NaNs (NaN where every element is NaN, unless ``initial``)."""
    _no_out("nanmax", out)
    return _nan_reduction("nanmax", "max", a, axis, keepdims, initial, where,
                          nan_if_all_nan=initial is None)


def nanmin(a: Any, axis: Any = None, out: None = None, keepdims: bool = False,
           initial: Any = None, where: Any = None) -> Array:
    """``min`` ignoring NaNs (NaN where every element is NaN, unless ``initial``)."""
    _no_out("nanmin", out)
    return _nan_reduction("nanmin", "min", a, axis, keepdims, initial, where,
                          nan_if_all_nan=initial is None)


@compiled_when_eager(("axis", "dtype", "out", "keepdims"))
def nanmean(a: Any, axis: Any = None, dtype: Any = None, out: None = None,
            keepdims: bool = False, where: Any = None) -> Array:
    """``mean`` of the elements that are not NaN (NaN where there are none)."""
    _no_out("nanmean", out)
    arr = _input("nanmean", a)
    mask = _check_where("nanmean", where)
    if not dt.is_inexact(arr.dtype):
        return mean(arr, axis=axis, dtype=dtype, keepdims=keepdims, where=mask)
    d = arr.dtype if dtype is None else check_user_dtype(dtype, "mean")
    normalizer = _reduce("nanmean", "sum", lax.bitwise_not(isnan(arr)), axis, d, keepdims,
                         None, mask)
    return lax.div(nansum(arr, axis, dtype=d, keepdims=keepdims, where=mask), normalizer)


@compiled_when_eager(("rowvar", "bias", "ddof", "dtype"))
def cov(m: Any, y: Any = None, rowvar: bool = True, bias: bool = False,
        ddof: int | None = None, fweights: Any = None, aweights: Any = None,
        dtype: Any = None) -> Array:
    """Covariance matrix of the variables in the rows of ``m`` (and ``y``), with
    optional integer frequency weights and observation weights.

    Raises:
      ValueError: ``m`` or ``y`` of more than two dimensions, or a non-inexact ``dtype``.
      RuntimeError: weights of more than one dimension, or of another length than the
        number of observations.
      TypeError: non-integer ``fweights``.
    """
    if y is not None:
        check_arraylike("cov", m, y)
        mm, yy = (as_array(v) for v in promote_dtypes_inexact("cov", m, y))
        if yy.ndim > 2:
            raise ValueError("y has more than 2 dimensions")
        # (Ranks are made equal by leading unit dimensions, as JAX does.)
        nd = builtins.max(mm.ndim, yy.ndim)
        mm, yy = (reshape(v, (1,) * (nd - v.ndim) + v.shape) for v in (mm, yy))
    else:
        mm = as_array(promote_dtypes_inexact("cov", _input("cov", m))[0])
    if mm.ndim > 2:
        raise ValueError("m has more than 2 dimensions")
    if dtype is not None and not dt.is_inexact(dt.canonicalize(dtype)):
        raise ValueError(f"cov: dtype must be a subclass of float or complex; got {dtype=}")
    X = atleast_2d(mm)
    if not rowvar and mm.ndim != 1:
        X = transpose(X)
    if X.shape[0] == 0:
        return reshape(asarray(np.zeros((0,), np.float32)), (0, 0))
    if y is not None:
        y2 = atleast_2d(yy)
        if not rowvar and y2.shape[0] != 1:
            y2 = transpose(y2)
        X = concatenate((X, y2), axis=0)
    if X.shape[1] == 0:
        return full(() if X.shape[0] == 1 else (X.shape[0], X.shape[0]), np.nan,
                    dtype=X.dtype)
    if ddof is None:
        ddof = 1 if not bias else 0
    w: Array | None = None
    aw: Array | None = None
    if fweights is not None:
        fw = _input("cov", fweights)
        if fw.ndim > 1:
            raise RuntimeError("cannot handle multidimensional fweights")
        if fw.shape[0] != X.shape[1]:
            raise RuntimeError("incompatible numbers of samples and fweights")
        if not dt.is_integer(fw.dtype):
            raise TypeError("fweights must be integer.")
        w = abs(fw)
    if aweights is not None:
        aw = _input("cov", aweights)
        if aw.ndim > 1:
            raise RuntimeError("cannot handle multidimensional aweights")
        if aw.shape[0] != X.shape[1]:
            raise RuntimeError("incompatible numbers of samples and aweights")
        aw = abs(aw)
        w = aw if w is None else asarray(multiply(w, aw))
    if dtype is not None:
        d = check_user_dtype(dtype, "astype")
        X = _cast(X, d)
        w = None if w is None else _cast(w, d)
    avg, w_sum = average(X, axis=1, weights=w, returned=True)
    w_sum = w_sum[0]
    f: Any
    if w is None:
        f = X.shape[1] - ddof
    elif ddof == 0:
        f = w_sum
    elif aw is None:
        f = w_sum - ddof
    else:
        f = w_sum - ddof * sum(multiply(w, aw)) / w_sum
    X = X - avg[:, None]
    X_T = transpose(X) if w is None else transpose(multiply(X, reshape(w, (1, -1))))
    return squeeze(true_divide(dot(X, conj(X_T)), f))


@compiled_when_eager(("rowvar", "dtype"))
def corrcoef(x: Any, y: Any = None, rowvar: bool = True, dtype: Any = None) -> Array:
    """Pearson correlation coefficients of the variables in the rows of ``x`` (and ``y``)."""
    check_arraylike("corrcoef", x)
    if dtype is not None and not dt.is_inexact(dt.canonicalize(dtype)):
        raise ValueError(f"corrcoef: dtype must be a subclass of float or complex; got "
                         f"{dtype=}")
    c = cov(x, y, rowvar, dtype=dtype)
    if c.ndim == 0:
        # A scalar: NaN for nan/nan, inf/inf and 0/0, else 1.
        return true_divide(c, c)
    stddev = _cast(sqrt(real(diag(c))), c.dtype)
    c = c / stddev[:, None] / stddev[None, :]
    real_part = clip(real(c), -1, 1)
    if dt.is_complex(c.dtype):
        return lax.complex(real_part, clip(imag(c), -1, 1))
    return real_part


def ptp(a: Any, axis: Any = None, out: None = None, keepdims: bool = False) -> Array:
    """The range (maximum minus minimum) along ``axis`` (all axes when ``None``)."""
    _no_out("ptp", out)
    return lax.sub(amax(a, axis=axis, keepdims=keepdims), amin(a, axis=axis, keepdims=keepdims))

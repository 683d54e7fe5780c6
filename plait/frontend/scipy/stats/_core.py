"""Summary statistics of samples, as JAX 0.10.2's ``jax.scipy.stats``: :func:`mode`,
:func:`rankdata` and :func:`sem` (each one compiled program, as JAX's)."""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np

from plait.frontend import lax
from plait.frontend import numpy as pnp
from plait.frontend.api.control_flow import cond
from plait.frontend.api.jit import jit
from plait.frontend.api.vmap import vmap
from plait.frontend.core.array_base import Array
from plait.frontend.numpy._core import as_array, canonical_axis, check_arraylike
from plait.frontend.scipy._util import promote
from plait.ir import dtypes as dt

__all__ = ["ModeResult", "mode", "rankdata", "sem"]

_NAN_POLICIES = ("propagate", "omit", "raise")
_RANK_METHODS = ("average", "min", "max", "dense", "ordinal")


class ModeResult(NamedTuple):
    """What :func:`mode` returns: the most frequent values and how often each occurs."""
    mode: Array
    count: Array  # type: ignore[assignment]  # JAX's field name (it hides tuple.count)


def _check_nan_policy(name: str, nan_policy: str) -> None:
    """Only ``'propagate'`` is implemented (as in JAX).

    Raises:
      ValueError: an unknown policy.
      NotImplementedError: ``'omit'`` or ``'raise'``.
    """
    if nan_policy not in _NAN_POLICIES:
        raise ValueError(f"Illegal nan_policy value {nan_policy!r}; expected one of "
                         "{'propagate', 'omit', 'raise'}")
    if nan_policy == "omit":
        raise NotImplementedError(f"Logic for `nan_policy` of {nan_policy} is not implemented")
    if nan_policy == "raise":
        raise NotImplementedError(
            f"In order to best JIT compile `{name}`, we cannot know whether `x` contains "
            f"nans. Please check if nans exist in `x` outside of the `{name}` function.")


def _default_float() -> np.dtype[Any]:
    return dt.canonicalize(dt.float64)


def _mode_of_column(x: Array) -> tuple[Array, Array]:
    """The smallest most frequent value of the vector ``x`` and its count."""
    if x.size == 0:
        return (pnp.array(np.nan, dtype=_default_float()),
                pnp.array(0, dtype=_default_float()))
    values, counts = pnp.unique(x, return_counts=True, size=x.size)
    return values[pnp.argmax(counts)], counts.max()


def _mode(a: Any, *, axis: int | None, nan_policy: str, keepdims: bool) -> ModeResult:
    check_arraylike("mode", a)
    x = pnp.atleast_1d(a)
    _check_nan_policy("mode", nan_policy)
    if axis is not None:
        axis = canonical_axis(axis, x.ndim)
    if axis is None:
        out_shape = tuple(1 for _ in x.shape) if keepdims else ()
        x = x.ravel()
        axis = 0
    elif keepdims:
        out_shape = tuple(1 if i == axis else s for i, s in enumerate(x.shape))
    else:
        out_shape = tuple(s for i, s in enumerate(x.shape) if i != axis)
    x = pnp.moveaxis(x, axis, 0)
    x = x.reshape(x.shape[0], math.prod(x.shape[1:]))
    values, counts = vmap(_mode_of_column, in_axes=1)(x)
    return ModeResult(values.reshape(out_shape), counts.reshape(out_shape))


_mode.__name__ = _mode.__qualname__ = "mode"
_mode_jit = jit(_mode, static_argnames=("axis", "nan_policy", "keepdims"))


def mode(a: Any, axis: int | None = 0, nan_policy: str = "propagate",
         keepdims: bool = False) -> ModeResult:
    """The most frequent value along ``axis`` (of the flattened array when ``None``; the
    smallest when several tie) and its count.  An empty slice gives NaN and a count of
    0, both in the default float dtype.

    Raises:
      TypeError: ``a`` is not an array or scalar.
      ValueError: an unknown ``nan_policy``, or ``axis`` out of range.
      NotImplementedError: ``nan_policy`` ``'omit'`` or ``'raise'``.
    """
    result: ModeResult = _mode_jit(a, axis=axis, nan_policy=nan_policy, keepdims=keepdims)
    return result


def _invert_permutation(p: Array) -> Array:
    return pnp.empty_like(p).at[p].set(pnp.arange(p.size, dtype=p.dtype))


def _ranks(a: Array, method: str) -> Array:
    """The ranks of the elements of the vector ``a`` (no NaN in it)."""
    out_dtype = _default_float()
    ordered, order = lax.sort_key_val(a, pnp.arange(a.size))
    position = _invert_permutation(order)
    if method == "ordinal":
        return (position + 1).astype(out_dtype)
    # starts[j]: the j-th sorted value differs from the one before it (starts a group).
    starts = pnp.concatenate([pnp.array([True]), ordered[1:] != ordered[:-1]])
    dense = starts.cumsum()[position]
    if method == "dense":
        return dense.astype(out_dtype)
    # ends[g]: how many elements come before group g + 1 (ends[g - 1] + 1 is g's first rank).
    ends = pnp.nonzero(starts, size=ordered.size + 1,
                       fill_value=starts.size)[0].astype(out_dtype)
    if method == "max":
        return ends[dense]
    if method == "min":
        return ends[dense - 1] + 1
    return 0.5 * (ends[dense] + ends[dense - 1] + 1)


def _rankdata(a: Any, *, method: str, axis: int | None, nan_policy: str) -> Array:
    check_arraylike("rankdata", a)
    _check_nan_policy("rankdata", nan_policy)
    if method not in _RANK_METHODS:
        raise ValueError(f"unknown method '{method}'")
    if axis is not None:
        along: Array = pnp.apply_along_axis(
            lambda v: _rankdata_jit(v, method=method, axis=None, nan_policy="propagate"),
            axis, a)
        return along
    flat = pnp.ravel(a)
    out_dtype = _default_float()
    result: Array = cond(pnp.any(pnp.isnan(flat)),
                         lambda v: pnp.full_like(v, np.nan, out_dtype),
                         lambda v: _ranks(v, method), flat)
    return result


_rankdata.__name__ = _rankdata.__qualname__ = "rankdata"
_rankdata_jit = jit(_rankdata, static_argnames=("method", "axis", "nan_policy"))


def rankdata(a: Any, method: str = "average", *, axis: int | None = None,
             nan_policy: str = "propagate") -> Array:
    """The ranks (from 1, in the default float dtype) of the elements of ``a``, each
    vector along ``axis`` ranked apart (the flattened array when ``None``).  Ties get
    the mean of their ranks (``method='average'``), the lowest (``'min'``), the highest
    (``'max'``), consecutive group numbers (``'dense'``), or distinct ranks in order of
    appearance (``'ordinal'``).  A vector holding a NaN ranks as all NaN.

    Raises:
      TypeError: ``a`` is not an array or scalar.
      ValueError: an unknown ``method`` or ``nan_policy``.
      NotImplementedError: ``nan_policy`` ``'omit'`` or ``'raise'``.
    """
    result: Array = _rankdata_jit(a, method=method, axis=axis, nan_policy=nan_policy)
    return result


def _sem(a: Any, *, axis: int | None, ddof: int, nan_policy: str, keepdims: bool) -> Array:
    b, = promote("sem", a)
    if nan_policy == "propagate":
        size = b.size if axis is None else b.shape[axis]
        spread = b.std(axis, ddof=ddof, keepdims=keepdims)
        return spread / pnp.sqrt(size).astype(b.dtype)
    if nan_policy == "omit":
        count = as_array(~pnp.isnan(b)).sum(axis, keepdims=keepdims)
        spread = pnp.nanstd(b, axis, ddof=ddof, keepdims=keepdims)
        return spread / pnp.sqrt(count).astype(b.dtype)
    raise ValueError(f"{nan_policy} is not supported")


_sem.__name__ = _sem.__qualname__ = "sem"
_sem_jit = jit(_sem, static_argnames=("axis", "ddof", "nan_policy", "keepdims"))


def sem(a: Any, axis: int | None = 0, ddof: int = 1, nan_policy: str = "propagate", *,
        keepdims: bool = False) -> Array:
    """The standard error of the mean along ``axis`` (all of ``a`` when ``None``): the
    standard deviation with ``ddof`` degrees of freedom removed, over the square root of
    the number of values.  ``nan_policy='omit'`` leaves NaNs out of both.

    Unlike JAX's (where ``ddof`` may be traced), ``ddof`` is a static Python number.

    Raises:
      TypeError: ``a`` is not an array or scalar.
      ValueError: ``nan_policy`` other than ``'propagate'`` and ``'omit'``.
    """
    result: Array = _sem_jit(a, axis=axis, ddof=ddof, nan_policy=nan_policy,
                             keepdims=keepdims)
    return result

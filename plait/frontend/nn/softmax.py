"""Normalizing functions, as JAX 0.10.2's ``jax.nn``: ``softmax``, ``log_softmax``,
``logsumexp`` (``plait.scipy.special``'s), ``logmeanexp`` and ``standardize``, with
``axis`` (an int, a tuple of ints or ``None`` for all axes) and a ``where`` mask.

``softmax`` subtracts the maximum with no derivative through it, as JAX does by default
(its ``jax_softmax_custom_jvp`` option off).  With the option on (a config value
``softmax_custom_jvp``) it is JAX's ``custom_jvp`` form instead, whose tangent is
``y * (t - sum(y * t))``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from plait.frontend import lax
from plait.frontend import numpy as pnp
from plait.frontend.api.custom_derivatives import custom_jvp
from plait.frontend.core.array_base import Array
from plait.frontend.nn._util import jit_as, static_axis
from plait.frontend.numpy._core import as_array, canonical_axes, check_arraylike
from plait.frontend.scipy.special import logsumexp
from plait.ir.config import values as _config

__all__ = ["logsumexp", "logmeanexp", "log_softmax", "softmax", "standardize"]

Axis = int | Sequence[int] | None


def _count(x: Array, axis: Axis, where: Any, keepdims: bool, dtype: Any) -> Array:
    # How many elements each reduction takes: the reduced size, or the mask's count.
    if where is None:
        dims = canonical_axes(axis, x.ndim)
        size = int(np.prod([x.shape[d] for d in dims], dtype=np.int64))
        return lax.convert_element_type(size, dtype)
    return pnp.sum(pnp.broadcast_to(where, x.shape), axis, dtype=dtype, keepdims=keepdims)


def _logmeanexp(x: Any, axis: Axis, where: Any, keepdims: bool) -> Array:
    check_arraylike("logmeanexp", x)
    x_arr = as_array(x)
    lse = logsumexp(x_arr, axis=axis, where=where, keepdims=keepdims)
    count = _count(x_arr, axis, where, keepdims, lse.dtype)
    return lse - pnp.log(count)


_logmeanexp_jit = jit_as("logmeanexp", _logmeanexp, static_argnames=("axis", "keepdims"))


def logmeanexp(x: Any, axis: Axis = None, where: Any = None, keepdims: bool = False) -> Array:
    """``log(mean(exp(x)))`` over ``axis``, computed stably as ``logsumexp(x) - log(n)``
    (``n`` the number of elements reduced, or of those ``where`` selects)."""
    return _logmeanexp_jit(x, axis=static_axis(axis), where=where, keepdims=bool(keepdims))


def _log_softmax(x: Any, axis: Axis, where: Any) -> Array:
    check_arraylike("log_softmax", x)
    x_arr = as_array(x)
    x_max = pnp.max(x_arr, axis, where=where, initial=-np.inf, keepdims=True)
    x_safe = x_arr if where is None else pnp.where(where, x_arr, -np.inf)
    # The shift only steadies the computation: no derivative flows through it.
    shifted = x_safe - lax.stop_gradient(x_max)
    shifted_logsumexp = pnp.log(pnp.sum(pnp.exp(shifted), axis, where=where, keepdims=True))
    result: Array = shifted - shifted_logsumexp
    if where is not None:
        return pnp.where(where, result, -np.inf)
    return result


_log_softmax_jit = jit_as("log_softmax", _log_softmax, static_argnames=("axis",))


def log_softmax(x: Any, axis: Axis = -1, where: Any = None) -> Array:
    """``log(softmax(x))`` over ``axis``, computed as ``x - logsumexp(x)``.  Elements
    ``where`` masks out are ``-inf``.  A ``+inf`` input makes the result NaN."""
    return _log_softmax_jit(x, axis=static_axis(axis), where=where)


def softmax(x: Any, axis: Axis = -1, where: Any = None) -> Array:
    """``exp(x) / sum(exp(x))`` over ``axis``: values in ``[0, 1]`` summing to 1.
    Elements ``where`` masks out are 0.  A ``+inf`` input makes the result NaN."""
    # Not jitted, as JAX's (its jit was found to change numerics).
    check_arraylike("softmax", x)
    if _config.softmax_custom_jvp:
        out: Array = _softmax(x, axis, where, -np.inf)
        return out
    return _softmax_stop_gradient(x, axis, where)


def _softmax_body(x: Any, axis: Axis, where: Any, initial: Any, shift_grad: bool) -> Array:
    x_max = pnp.max(x, axis, where=where, initial=initial, keepdims=True)
    x_safe = x if where is None else pnp.where(where, x, initial)
    if not shift_grad:
        x_max = lax.stop_gradient(x_max)
    unnormalized = pnp.exp(x_safe - x_max)
    result = unnormalized / pnp.sum(unnormalized, axis, where=where, keepdims=True)
    if where is not None:
        result = pnp.where(where, result, 0)
    return result


def _softmax_stop_gradient(x: Any, axis: Axis = -1, where: Any = None,
                           initial: Any = -np.inf) -> Array:
    # JAX's default softmax: differentiated through, with the shift's derivative cut.
    return _softmax_body(x, axis, where, initial, False)


def _softmax_fun(x: Any, axis: Axis = -1, where: Any = None, initial: Any = -np.inf) -> Array:
    # The custom rule below gives the derivative, so the shift needs no stop_gradient.
    return _softmax_body(x, axis, where, initial, True)


_softmax_fun.__name__ = _softmax_fun.__qualname__ = "_softmax"
_softmax = custom_jvp(_softmax_fun, nondiff_argnums=(1,))


@_softmax.defjvp
def _softmax_jvp(axis: Axis, primals: tuple[Any, ...], tangents: tuple[Any, ...]
                 ) -> tuple[Array, Array]:
    (x, where, initial), (x_dot, _, _) = primals, tangents
    y = _softmax(x, axis, where, initial)
    return y, y * (x_dot - (y * x_dot).sum(axis, where=where, keepdims=True))


def _standardize(x: Any, axis: Axis, mean: Any, variance: Any, epsilon: Any, where: Any,
                 algorithm: str) -> Array:
    check_arraylike("standardize", x)
    check_arraylike("standardize", *[a for a in (mean, variance, where) if a is not None])
    if mean is None:
        mean = pnp.mean(x, axis, keepdims=True, where=where)
    if variance is None:
        if algorithm == "stable":
            variance = pnp.mean(pnp.square(pnp.subtract(x, mean)), axis, keepdims=True,
                                where=where)
        else:
            # One pass: cheaper, but may cancel catastrophically and go slightly
            # negative, which the clip keeps out of rsqrt.
            variance = pnp.mean(pnp.square(x), axis, keepdims=True, where=where) \
                - pnp.square(mean)
            variance = pnp.clip(variance, 0)
    return pnp.subtract(x, mean) * lax.rsqrt(variance + epsilon)


_standardize_jit = jit_as("standardize", _standardize, static_argnames=("axis", "algorithm"))


def standardize(x: Any, axis: Axis = -1, mean: Any = None, variance: Any = None,
                epsilon: Any = 1e-5, where: Any = None, *, algorithm: str = "fast") -> Array:
    """``(x - mean) / sqrt(variance + epsilon)`` over ``axis``; ``mean`` and ``variance``
    default to those of ``x`` (of the elements ``where`` selects).  ``algorithm="fast"``
    (the default) computes the variance as ``mean(x**2) - mean(x)**2`` clipped at 0,
    ``"stable"`` as ``mean((x - mean(x))**2)``.

    Raises:
      TypeError: an argument is not an array or scalar.
      ValueError: ``algorithm`` is neither ``"fast"`` nor ``"stable"`` (and
        ``variance`` is not given).
    """
    if variance is None and algorithm not in ("fast", "stable"):
        raise ValueError(f"standardize: expected algorithm 'fast' or 'stable', but got "
                         f"{algorithm!r}")
    return _standardize_jit(x, axis=static_axis(axis), mean=mean, variance=variance,
                            epsilon=epsilon, where=where, algorithm=algorithm)

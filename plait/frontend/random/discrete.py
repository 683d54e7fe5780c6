"""Discrete samplers, as ``jax.random``'s: ``poisson``, ``binomial``, ``multinomial`` and
``geometric``.

Poisson and binomial samples come from loops that draw until every element is
accepted (Knuth's multiplication method or inversion for small means, transformed
rejection for large ones), all elements in step; the loops, keys and arithmetic are
JAX's, so for the same key the values equal JAX's bit for bit.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from plait.frontend import lax
from plait.frontend import numpy as pnp
from plait.frontend.api.control_flow import scan, while_loop
from plait.frontend.api.jit import jit
from plait.frontend.core.array_base import Array
from plait.frontend.core.x64_warnings import check_user_dtype
from plait.frontend.random.gamma import broadcast_param_shapes, split2
from plait.frontend.random.keys import check_prng_key, split_keys
from plait.frontend.random.samplers import _check_shape, _finfo, _float_dtype, _shape, uniform
from plait.frontend.random.sharded import takes_out_sharding
from plait.ir import dtypes as dt
from plait.ir.primitives.random import PRNGImpl, impl_of

__all__ = ["poisson", "binomial", "multinomial", "geometric"]

_F32 = np.dtype(np.float32)


def _isnan(x: Array) -> Array:
    return lax.ne(x, x)


def _poisson_knuth(key: Array, lam: Array, shape: tuple[int, ...], dtype: np.dtype[Any],
                   max_iters: Any) -> Array:
    # Multiply uniforms (add their logs) until the product falls below exp(-lam).
    def body_fn(carry: tuple[Any, Array, Array, Array]) -> tuple[Any, Array, Array, Array]:
        i, k, rng, log_prod = carry
        rng, subkey = split2(rng)
        k = lax.select(log_prod > -lam, k + 1, k)
        u = uniform(subkey, shape, _F32)
        return i + 1, k, rng, log_prod + pnp.log(u)

    def cond_fn(carry: tuple[Any, Array, Array, Array]) -> Array:
        out: Array = (carry[3] > -lam).any() & (carry[0] < max_iters)
        return out

    k_init = lax.full(shape, 0, dtype)
    log_rate_init = lax.full(shape, 0, _F32)
    k = while_loop(cond_fn, body_fn, (0, k_init, key, log_rate_init))[1]
    out: Array = (k - 1).astype(dtype)
    return out


def _poisson_rejection(key: Array, lam: Array, shape: tuple[int, ...], dtype: np.dtype[Any],
                       max_iters: Any) -> Array:
    # Hörmann's transformed rejection (PTRS).
    log_lam = lax.log(lam)
    b = 0.931 + 2.53 * lax.sqrt(lam)
    a = -0.059 + 0.02483 * b
    inv_alpha = 1.1239 + 1.1328 / (b - 3.4)
    v_r = 0.9277 - 3.6224 / (b - 2)

    def body_fn(carry: tuple[Any, Array, Array, Array]) -> tuple[Any, Array, Array, Array]:
        i, k_out, accepted, key = carry
        key, subkey_0, subkey_1 = split2(key, 3)
        u = uniform(subkey_0, shape, lam.dtype) - 0.5
        v = uniform(subkey_1, shape, lam.dtype)
        u_shifted = 0.5 - abs(u)
        k = lax.floor((2 * a / u_shifted + b) * u + lam + 0.43)
        s = lax.log(v * inv_alpha / (a / (u_shifted * u_shifted) + b))
        t = -lam + k * log_lam - lax.lgamma(k + 1)
        accept1 = (u_shifted >= 0.07) & (v <= v_r)
        reject = (k < 0) | ((u_shifted < 0.013) & (v > u_shifted))
        accept2 = s <= t
        accept = accept1 | (~reject & accept2)
        k_out = lax.select(accept, k, k_out)
        accepted = accepted | accept
        return i + 1, k_out, accepted, key

    def cond_fn(carry: tuple[Any, Array, Array, Array]) -> Array:
        out: Array = (~carry[2]).any() & (carry[0] < max_iters)
        return out

    k_init = lax.full(shape, -1, lam.dtype)
    accepted = lax.full(shape, False, dt.bool_)
    k = while_loop(cond_fn, body_fn, (0, k_init, accepted, key))[1]
    out: Array = k.astype(dtype)
    return out


_poisson_knuth_jit = jit(_poisson_knuth, static_argnums=(2, 3, 4))
_poisson_rejection_jit = jit(_poisson_rejection, static_argnums=(2, 3, 4))


def _poisson(key: Array, lam: Array, shape: tuple[int, ...], dtype: np.dtype[Any]) -> Array:
    # Knuth's method below lam = 10 (and for NaN), rejection above, as TensorFlow and
    # NumPy; each method runs on all elements, with a harmless lam elsewhere.
    use_knuth = _isnan(lam) | (lam < 10)
    lam_knuth = lax.select(use_knuth, lam, lax.full_like(lam, 0.0))
    lam_rejection = lax.select(use_knuth, lax.full_like(lam, 1e5), lam)
    max_iters = dtype.type(np.iinfo(dtype).max)  # never reached in practice
    result = lax.select(use_knuth,
                        _poisson_knuth_jit(key, lam_knuth, shape, dtype, max_iters),
                        _poisson_rejection_jit(key, lam_rejection, shape, dtype, max_iters))
    return lax.select(lam == 0, pnp.zeros_like(result), result)


_poisson_jit = jit(_poisson, static_argnums=(2, 3))


@takes_out_sharding
def poisson(key: Any, lam: Any, shape: Any = None, dtype: Any = None,
            *, out_sharding: Any = None) -> Array:
    """Poisson values of rate ``lam`` (computed in ``float32``), of integer ``dtype``.

    Raises:
      ValueError: ``shape`` does not hold ``lam``'s shape.
      NotImplementedError: the key is not a threefry2x32 key (as in JAX).
    """
    typed, _ = check_prng_key("poisson", key)
    impl = impl_of(typed.dtype)
    if impl is not PRNGImpl.THREEFRY2X32:
        raise NotImplementedError("`poisson` is only implemented for the threefry2x32 RNG, "
                                  f"not {impl}")
    d = dt.canonicalize(np.dtype(int)) if dtype is None else check_user_dtype(dtype)
    out_shape = tuple(np.shape(lam)) if shape is None else _shape(shape)
    lam_arr = lax.convert_element_type(pnp.broadcast_to(lam, out_shape), _F32)
    return _poisson_jit(typed, lam_arr, out_shape, d)


def _stirling_approx_tail(k: Array) -> Array:
    stirling_tail_vals = pnp.array(
        [0.0810614667953272, 0.0413406959554092, 0.0276779256849983, 0.02079067210376509,
         0.0166446911898211, 0.0138761288230707, 0.0118967099458917, 0.0104112652619720,
         0.00925546218271273, 0.00833056343336287], dtype=k.dtype)
    use_tail_values = k <= 9
    k = lax.clamp(np.array(0.0, k.dtype), k, np.array(9.0, k.dtype))
    kp1sq = (k + 1) * (k + 1)
    approx = (1.0 / 12 - (1.0 / 360 - 1.0 / 1260 / kp1sq) / kp1sq) / (k + 1)
    k = pnp.floor(k)
    return lax.select(use_tail_values, stirling_tail_vals[pnp.asarray(k, dtype="int32")],
                      approx)


def _binomial_inversion(key: Array, count: Array, prob: Array, shape: tuple[int, ...],
                        dtype: np.dtype[Any], max_iters: Any) -> Array:
    log1minusprob = pnp.log1p(-prob)

    def body_fn(carry: tuple[Any, Array, Array, Array]) -> tuple[Any, Array, Array, Array]:
        i, num_geom, geom_sum, key = carry
        keys = split_keys(key, (2,))
        subkey, key = keys[0], keys[1]
        num_geom_out = lax.select(geom_sum <= count, num_geom + 1, num_geom)
        u = uniform(subkey, shape, prob.dtype)
        geom = pnp.ceil(pnp.log(u) / log1minusprob)
        return i + 1, num_geom_out, geom_sum + geom, key

    def cond_fn(carry: tuple[Any, Array, Array, Array]) -> Array:
        out: Array = (carry[2] <= count).any() & (carry[0] < max_iters)
        return out

    num_geom_init = lax.full(shape, 0, prob.dtype)
    geom_sum_init = lax.full(shape, 0, prob.dtype)
    k = while_loop(cond_fn, body_fn, (0, num_geom_init, geom_sum_init, key))[1]
    out: Array = (k - 1).astype(dtype)
    return out


def _btrs(key: Array, count: Array, prob: Array, shape: tuple[int, ...],
          dtype: np.dtype[Any], max_iters: Any) -> Array:
    # Hörmann's transformed rejection with squeeze (BTRS).
    stddev = pnp.sqrt(count * prob * (1 - prob))
    b = 1.15 + 2.53 * stddev
    a = -0.0873 + 0.0248 * b + 0.01 * prob
    c = count * prob + 0.5
    v_r = 0.92 - 4.2 / b
    r = prob / (1 - prob)
    alpha = (2.83 + 5.1 / b) * stddev
    m = pnp.floor((count + 1) * prob)

    def body_fn(carry: tuple[Any, Array, Array, Array]) -> tuple[Any, Array, Array, Array]:
        i, k_out, accepted, key = carry
        keys = split_keys(key, (3,))
        key, subkey_0, subkey_1 = keys[0], keys[1], keys[2]
        u = uniform(subkey_0, shape, prob.dtype)
        v = uniform(subkey_1, shape, prob.dtype)
        u = u - 0.5
        us = 0.5 - pnp.abs(u)
        accept1 = (us >= 0.07) & (v <= v_r)
        k = pnp.floor((2 * a / us + b) * u + c)
        reject = (k < 0) | (k > count)
        v = pnp.log(v * alpha / (a / (us * us) + b))
        ub = ((m + 0.5) * pnp.log((m + 1) / (r * (count - m + 1)))
              + (count + 1) * pnp.log((count - m + 1) / (count - k + 1))
              + (k + 0.5) * pnp.log(r * (count - k + 1) / (k + 1))
              + _stirling_approx_tail(m)
              + _stirling_approx_tail(count - m)
              - _stirling_approx_tail(k)
              - _stirling_approx_tail(count - k))
        accept2 = v <= ub
        accept = accept1 | (~reject & accept2)
        k_out = lax.select(accept, k, k_out)
        return i + 1, k_out, accepted | accept, key

    def cond_fn(carry: tuple[Any, Array, Array, Array]) -> Array:
        out: Array = (~carry[2]).any() & (carry[0] < max_iters)
        return out

    k_init = lax.full(shape, -1, prob.dtype)
    carry = (0, k_init, pnp.full(shape, False, bool), key)
    out: Array = while_loop(cond_fn, body_fn, carry)[1].astype(dtype)
    return out


def _binomial(key: Array, count: Any, prob: Any, shape: tuple[int, ...] | None,
              dtype: np.dtype[Any]) -> Array:
    # Inversion where count * q <= 10, BTRS elsewhere, as TensorFlow (Probability).
    if shape is None:
        shape = tuple(np.broadcast_shapes(np.shape(count), np.shape(prob)))
    else:
        _check_shape("binomial", shape, np.shape(count), np.shape(prob))
    prob_arr = pnp.asarray(prob)
    if not dt.is_inexact(prob_arr.dtype):
        prob_arr = prob_arr.astype(dt.canonicalize(np.dtype(float)))
    count_arr = pnp.broadcast_to(lax.convert_element_type(count, prob_arr.dtype), shape)
    prob_arr = pnp.broadcast_to(prob_arr, shape)
    p_lt_half = prob_arr < 0.5
    q = lax.select(p_lt_half, prob_arr, 1.0 - prob_arr)
    count_nan_or_neg = _isnan(count_arr) | (count_arr < 0.0)
    count_inf = pnp.isinf(count_arr)
    q_is_nan = _isnan(q)
    q_l_0 = q < 0.0
    q = lax.select(q_is_nan | q_l_0, lax.full_like(q, 0.01), q)
    use_inversion = count_nan_or_neg | (count_arr * q <= 10.0)
    # A float count is rounded down, as np.random.binomial does.
    count_arr = pnp.floor(count_arr)
    count_inv = lax.select(use_inversion, count_arr, lax.full_like(count_arr, 0.0))
    count_btrs = lax.select(use_inversion, lax.full_like(count_arr, 1e4), count_arr)
    q_btrs = lax.select(use_inversion, lax.full_like(q, 0.5), q)
    max_iters = dtype.type(_finfo(dtype).max)
    samples = lax.select(use_inversion,
                         _binomial_inversion(key, count_inv, q, shape, dtype, max_iters),
                         _btrs(key, count_btrs, q_btrs, shape, dtype, max_iters))
    # NaN q, and NaN or negative counts, give NaN; an infinite count gives inf.
    invalid = q_l_0 | q_is_nan | count_nan_or_neg
    samples = lax.select(invalid, pnp.full_like(samples, np.nan, dtype), samples)
    samples = lax.select(count_inf & (~invalid), pnp.full_like(samples, np.inf, dtype), samples)
    return lax.select(p_lt_half | count_nan_or_neg | q_is_nan | count_inf, samples,
                      count_arr.astype(dtype) - samples)


_binomial_jit = jit(_binomial, static_argnums=(3, 4))


def binomial(key: Any, n: Any, p: Any, shape: Any = None, dtype: Any = None) -> Array:
    """Binomial counts of ``n`` trials of success probability ``p``, as floats of
    ``dtype`` (NaN for invalid parameters)."""
    typed, _ = check_prng_key("binomial", key)
    for x in (n, p):
        if not isinstance(x, Array | np.ndarray | np.generic | int | float | bool):
            raise TypeError(f"binomial requires ndarray or scalar arguments, got {type(x)}")
    d = _float_dtype("binomial", dtype)
    return _binomial_jit(typed, n, p, None if shape is None else _shape(shape), d)


def multinomial(key: Any, n: Any, p: Any, *, shape: Any = None, dtype: Any = None,
                unroll: int | bool = 1) -> Array:
    """Multinomial counts of ``n`` trials over the categories of the last axis of ``p``,
    drawn as a chain of binomials (one ``scan`` step per category)."""
    typed, _ = check_prng_key("multinomial", key)
    n_arr, p_arr = pnp.asarray(n), pnp.asarray(p)
    common = pnp.result_type(n_arr, p_arr)
    if not dt.is_inexact(common):
        common = pnp.result_type(common, dt.canonicalize(np.dtype(float)))
    n_arr, p_arr = n_arr.astype(common), p_arr.astype(common)
    out_shape = tuple(p_arr.shape) if shape is None else _shape(shape)
    n_arr = pnp.broadcast_to(n_arr, out_shape[:-1])
    p_arr = pnp.moveaxis(pnp.broadcast_to(p_arr, out_shape), -1, 0)

    def step(remainder: Array, ratio_key: tuple[Array, Array]) -> tuple[Array, Array]:
        ratio, k = ratio_key
        count = binomial(k, remainder, ratio.clip(0, 1), dtype=remainder.dtype)
        return remainder - count, count

    remaining_probs = lax.cumsum(p_arr, 0, reverse=True)
    ratios = p_arr / pnp.where(remaining_probs == 0, 1, remaining_probs)
    keys = split_keys(typed, (ratios.shape[0],))
    _, counts = scan(step, n_arr, (ratios, keys), unroll=unroll)
    out: Array = pnp.moveaxis(counts, 0, -1).astype(
        dt.canonicalize(np.dtype(float)) if dtype is None else check_user_dtype(dtype))
    return out


def _geometric(key: Array, p: Any, shape: tuple[int, ...], dtype: np.dtype[Any]) -> Array:
    p_arr = pnp.asarray(p)
    if not dt.is_inexact(p_arr.dtype):
        p_arr = p_arr.astype(dt.canonicalize(np.dtype(float)))
    u = uniform(key, shape, p_arr.dtype)
    # u == 0 is mapped to 1 (log 0 would be -inf), as JAX does.
    u = pnp.where(u == 0, 1, u)
    log_u = lax.log(u)
    log_one_minus_p = pnp.broadcast_to(lax.log1p(-p_arr), shape)
    g = lax.floor(lax.div(log_u, log_one_minus_p)) + 1
    out: Array = g.astype(dtype)
    return out


_geometric_jit = jit(_geometric, static_argnums=(2, 3))


@takes_out_sharding
def geometric(key: Any, p: Any, shape: Any = None, dtype: Any = None,
              *, out_sharding: Any = None) -> Array:
    """Geometric values (trials until the first success, at least 1) of success
    probability ``p``, of integer ``dtype``.

    Raises:
      ValueError: ``dtype`` is not an integer dtype.
    """
    typed, _ = check_prng_key("geometric", key)
    d = dt.canonicalize(np.dtype(int)) if dtype is None else check_user_dtype(dtype)
    if not dt.is_integer(d):
        raise ValueError(f"dtype argument to `geometric` must be an int dtype, got {d}")
    return _geometric_jit(typed, p, broadcast_param_shapes("geometric", shape, p), d)

"""The gamma family of samplers, as ``jax.random``'s: ``gamma``, ``loggamma`` and the
samplers built on them (``beta``, ``dirichlet``, ``t``, ``chisquare``, ``f``,
``generalized_normal``, ``ball``).

A gamma sample is drawn by Marsaglia and Tsang's rejection method: a ``while_loop``
per element, each element from its own key, split from the caller's key in the
element's flat position.  The loops, their keys and their arithmetic are JAX's
(the ``random_gamma`` primitive's CPU lowering), so for the same key the samples
equal JAX's bit for bit.

plait has no ``random_gamma`` primitive: the sampler is a plain function whose
derivative with respect to ``a`` (implicit reparameterization, through
``random_gamma_grad``) is given by ``custom_jvp``.  Traced programs therefore show
the loops where JAX shows one ``random_gamma[log_space=...]`` equation; the values
and derivatives are the same.  With keys other than threefry's, JAX runs the elements'
loops one after another (a ``map``), and under ``vmap`` all the batch's elements in
one such ``map``: :func:`_gamma_map` does the same through ``custom_vmap`` (mapping
``RngBitGenerator`` over keys would draw from the first key only).
"""

from __future__ import annotations

import math
from functools import partial
from typing import Any

import numpy as np

from plait.frontend import lax
from plait.frontend import numpy as pnp
from plait.frontend.api.control_flow import map as lax_map
from plait.frontend.api.control_flow import while_loop
from plait.frontend.api.custom_batching import custom_vmap
from plait.frontend.api.custom_derivatives import custom_jvp
from plait.frontend.api.incomplete_special import random_gamma_grad
from plait.frontend.api.jit import jit
from plait.frontend.api.vmap import vmap
from plait.frontend.core.array_base import Array
from plait.frontend.random.keys import check_prng_key, split_keys
from plait.frontend.random.samplers import (
    _check_shape,
    _finfo,
    _float_dtype,
    _shape,
    exponential,
    normal,
    rademacher,
    uniform,
)
from plait.frontend.random.sharded import takes_out_sharding
from plait.ir.errors import TypePromotionError
from plait.ir.primitives.random import PRNGImpl, impl_of

__all__ = ["gamma", "loggamma", "beta", "dirichlet", "t", "chisquare", "f",
           "generalized_normal", "ball", "check_safe_to_cast", "broadcast_param_shapes",
           "split2"]


def split2(key: Array, num: int = 2) -> list[Array]:
    """``num`` keys split from one typed key (JAX's internal ``_split``, unstacked)."""
    keys = split_keys(key, (num,))
    # Unstacked as JAX's tuple unpacking of an array does (a stride-1 slice each).
    return [lax.squeeze(lax.slice_in_dim(keys, i, i + 1, 1, 0), (0,)) for i in range(num)]


def check_safe_to_cast(name: str, dtype: np.dtype[Any], *args: Any) -> None:
    """Refuse parameters whose values ``dtype`` cannot hold (a ``float64`` array for a
    ``float32`` sample), as JAX's samplers do.

    Raises:
      TypePromotionError: an argument does not promote to ``dtype``.
    """
    for arg in args:
        arg_dtype = pnp.result_type(arg)
        if arg_dtype != dtype and pnp.result_type(arg, dtype) != dtype:
            raise TypePromotionError(f"In arguments to {name}, cannot safely cast argument of "
                                     f"type {arg_dtype} to {dtype}")


def broadcast_param_shapes(name: str, shape: Any, *args: Any) -> tuple[int, ...]:
    """``shape`` checked against the parameters' shapes, or (``None``) their broadcast."""
    if shape is None:
        return tuple(np.broadcast_shapes(*(np.shape(a) for a in args))) if args else ()
    out = _shape(shape)
    _check_shape(name, out, *(np.shape(a) for a in args))
    return out


def _gamma_one(key: Array, alpha: Array, log_space: bool) -> Array:
    """One Gamma(``alpha``) sample (a scalar) by Marsaglia and Tsang's method."""
    dtype = alpha.dtype

    def const(value: float) -> Any:
        # A NumPy scalar, as JAX's lax._const: a literal of the program.
        return np.array(value, dtype)

    zero, one, two, minus_one = const(0), const(1), const(2), const(-1)
    one_over_two, one_over_three, squeeze_const = const(0.5), const(1.0 / 3.0), const(0.0331)
    # alpha < 1 draws Gamma(alpha + 1) * U**(1/alpha) (in log space: + log(U) / alpha).
    boost_mask = lax.ge(alpha, one)
    alpha_orig = alpha
    alpha = lax.select(boost_mask, alpha, lax.add(alpha, one))
    d = lax.sub(alpha, one_over_three)
    c = lax.div(one_over_three, lax.sqrt(d))

    def cond_fn(state: tuple[Array, Array, Array, Array]) -> Array:
        _, x2, v, u = state
        # Both tests are evaluated, as JAX does (its while_loop cannot short-circuit).
        squeeze = lax.ge(u, lax.sub(one, lax.mul(squeeze_const, lax.mul(x2, x2))))
        log_test = lax.ge(lax.log(u), lax.add(lax.mul(x2, one_over_two),
                                              lax.mul(d, lax.add(lax.sub(one, v), lax.log(v)))))
        return lax.bitwise_and(squeeze, log_test)

    def next_xv(state: tuple[Array, Array, Array]) -> tuple[Array, Array, Array]:
        k, subkey = split2(state[0])
        x = normal(subkey, (), dtype=dtype)
        return k, x, lax.add(one, lax.mul(x, c))

    def body_fn(state: tuple[Array, Array, Array, Array]) -> tuple[Array, Array, Array, Array]:
        k, x_key, u_key = split2(state[0], 3)
        _, x, v = while_loop(lambda s: lax.le(s[2], zero), next_xv, (x_key, zero, minus_one))
        x2 = lax.mul(x, x)
        v3 = lax.mul(lax.mul(v, v), v)
        u = uniform(u_key, (), dtype=dtype)
        return k, x2, v3, u

    # The initial state makes cond_fn true: at least one proposal is drawn.
    key, subkey = split2(key)
    _, _, v, _ = while_loop(cond_fn, body_fn, (key, zero, one, two))
    if log_space:
        log_samples = lax.neg(exponential(subkey, (), dtype=dtype))
        log_boost = lax.select(boost_mask | (log_samples == 0), zero,
                               lax.mul(log_samples, lax.div(one, alpha_orig)))
        return lax.add(lax.add(lax.log(d), lax.log(v)), log_boost)
    samples = 1 - uniform(subkey, (), dtype=dtype)
    boost = lax.select(boost_mask, one, lax.pow(samples, lax.div(one, alpha_orig)))
    return lax.mul(lax.mul(d, v), boost)


def _gamma_mapped(keys: Array, a: Array, log_space: bool) -> Array:
    """JAX's lowering of ``random_gamma`` for keys other than threefry's: ``keys`` (the
    leading dimensions of ``a``) each split into a key per element of the rest of ``a``,
    and the elements' loops run one after another."""
    count = math.prod(a.shape[keys.ndim:])
    flat = split_keys(lax.reshape(keys, (keys.size,)), (count,))
    flat = lax.reshape(flat, (flat.size,))
    samples = lax_map(lambda args: _gamma_one(args[0], args[1], log_space),
                      (flat, lax.reshape(a, (a.size,))))
    return lax.reshape(samples, a.shape)


def _batched_gamma(log_space: bool) -> custom_vmap[[Array, Array], Array]:
    """:func:`_gamma_mapped` of one key, whose ``vmap`` passes the batch of keys to it."""
    @custom_vmap
    def gamma_map(key: Array, a: Array) -> Array:
        return _gamma_mapped(key, a, log_space)

    @gamma_map.def_vmap
    def rule(size: int, in_batched: list[bool], keys: Array, a: Array) -> tuple[Array, bool]:
        keys = keys if in_batched[0] else lax.broadcast(keys, (size,))
        a = a if in_batched[1] else lax.broadcast(a, (size,))
        return _gamma_mapped(keys, a, log_space), True
    return gamma_map


_GAMMA_MAPPED = {log_space: _batched_gamma(log_space) for log_space in (False, True)}


def _gamma_impl(key: Array, a: Array, log_space: bool) -> Array:
    if impl_of(key.dtype) is not PRNGImpl.THREEFRY2X32:
        out: Array = _GAMMA_MAPPED[log_space](key, a)
        return out
    # One key per element of `a`, split in its flat position; the elements' loops are
    # vmapped together (JAX's lowering of random_gamma with threefry keys).
    count = math.prod(a.shape)
    keys = split_keys(key, (count,))
    samples = vmap(partial(_gamma_one, log_space=log_space))(keys, lax.reshape(a, (count,)))
    return lax.reshape(samples, a.shape)


def _gamma_grad(sample: Array, a: Array, log_space: bool) -> Array:
    """d sample / d a at the sample's quantile (implicit reparameterization)."""
    samples = lax.reshape(sample, (math.prod(sample.shape),))
    alphas = lax.reshape(a, (math.prod(a.shape),))
    if log_space:
        # d log(x) = dx / x; exp(log x) may round to zero: the smallest normal then.
        samples = lax.exp(samples)
        tiny = lax.full_like(samples, float(_finfo(samples.dtype).tiny))
        samples = lax.select(lax.eq(samples, np.array(0, samples.dtype)), tiny, samples)

        def grad_one(args: tuple[Array, Array]) -> Array:
            g: Array = random_gamma_grad(args[0], args[1]) / args[1]
            return g
    else:
        def grad_one(args: tuple[Array, Array]) -> Array:
            return random_gamma_grad(args[0], args[1])
    # JAX maps over the elements on CPU (a scan), one at a time.
    grads: Array = lax_map(grad_one, (alphas, samples))
    return lax.reshape(grads, a.shape)


@partial(custom_jvp, nondiff_argnums=(2,))
def _random_gamma(key: Array, a: Array, log_space: bool) -> Array:
    return _gamma_impl(key, a, log_space)


@_random_gamma.defjvp
def _random_gamma_jvp(log_space: bool, primals: tuple[Array, Array],
                      tangents: tuple[Any, Array]) -> tuple[Array, Array]:
    key, a = primals
    a_dot = tangents[1]
    ans = _random_gamma(key, a, log_space)
    out: Array = a_dot * _gamma_grad(ans, a, log_space)
    return ans, out


def _gamma(key: Array, a: Any, shape: tuple[int, ...] | None, dtype: np.dtype[Any],
           log_space: bool) -> Array:
    if shape is None:
        shape = tuple(np.shape(a))
    else:
        _check_shape("gamma", shape, np.shape(a))
    arr = lax.convert_element_type(a, dtype)
    if arr.shape != shape:
        arr = pnp.broadcast_to(arr, shape)
    return _random_gamma(key, arr, log_space)


_gamma_jit = jit(_gamma, static_argnums=(2, 3, 4))


def _opt_shape(shape: Any) -> tuple[int, ...] | None:
    return None if shape is None else _shape(shape)


@takes_out_sharding
def gamma(key: Any, a: Any, shape: Any = None, dtype: Any = None,
          *, out_sharding: Any = None) -> Array:
    """Standard Gamma(``a``) values (unit scale), of ``shape`` (default: ``a``'s),
    by Marsaglia and Tsang's rejection method; differentiable in ``a``.

    Raises:
      ValueError: ``dtype`` is not a float dtype, or ``shape`` does not hold ``a``'s.
    """
    typed, _ = check_prng_key("gamma", key)
    return _gamma_jit(typed, a, _opt_shape(shape), _float_dtype("gamma", dtype), False)


@takes_out_sharding
def loggamma(key: Any, a: Any, shape: Any = None, dtype: Any = None,
             *, out_sharding: Any = None) -> Array:
    """The logarithms of Gamma(``a``) values, computed in log space (accurate where
    ``a`` is small and the samples underflow)."""
    typed, _ = check_prng_key("loggamma", key)
    # JAX's message names `gamma` here too.
    return _gamma_jit(typed, a, _opt_shape(shape), _float_dtype("gamma", dtype), True)


def _beta(key: Array, a: Any, b: Any, shape: tuple[int, ...], dtype: np.dtype[Any]) -> Array:
    _check_shape("beta", shape, np.shape(a), np.shape(b))
    a_arr = pnp.broadcast_to(lax.convert_element_type(a, dtype), shape)
    b_arr = pnp.broadcast_to(lax.convert_element_type(b, dtype), shape)
    key_a, key_b = split2(key)
    log_gamma_a = loggamma(key_a, a_arr, shape, dtype)
    log_gamma_b = loggamma(key_b, b_arr, shape, dtype)
    # gamma_a / (gamma_a + gamma_b), scaled by the larger so that nothing underflows.
    log_max = lax.max(log_gamma_a, log_gamma_b)
    gamma_a_scaled = pnp.exp(log_gamma_a - log_max)
    gamma_b_scaled = pnp.exp(log_gamma_b - log_max)
    out: Array = gamma_a_scaled / (gamma_a_scaled + gamma_b_scaled)
    return out


_beta_jit = jit(_beta, static_argnums=(3, 4))


@takes_out_sharding
def beta(key: Any, a: Any, b: Any, shape: Any = None, dtype: Any = None,
         *, out_sharding: Any = None) -> Array:
    """Beta(``a``, ``b``) values in [0, 1], from two log-gamma samples."""
    typed, _ = check_prng_key("beta", key)
    d = _float_dtype("beta", dtype)
    check_safe_to_cast("beta", d, a, b)
    return _beta_jit(typed, a, b, broadcast_param_shapes("beta", shape, a, b), d)


@custom_jvp
def _softmax_last(x: Array) -> Array:
    # jax.nn.softmax(x, -1): exp(x - max) / sum, with JAX's derivative rule (below), so
    # that derivatives round as JAX's do.
    x_max = pnp.max(x, -1, keepdims=True, initial=-np.inf)
    unnormalized = pnp.exp(x - x_max)
    out: Array = unnormalized / pnp.sum(unnormalized, -1, keepdims=True)
    return out


@_softmax_last.defjvp
def _softmax_last_jvp(primals: tuple[Array], tangents: tuple[Array]) -> tuple[Array, Array]:
    y = _softmax_last(primals[0])
    x_dot = tangents[0]
    out: Array = y * (x_dot - (y * x_dot).sum(-1, keepdims=True))
    return y, out


def _dirichlet(key: Array, alpha: Any, shape: tuple[int, ...] | None,
               dtype: np.dtype[Any]) -> Array:
    if not np.ndim(alpha) >= 1:
        raise ValueError(f"dirichlet requires alpha.ndim >= 1, got alpha.ndim == "
                         f"{np.ndim(alpha)}")
    if shape is None:
        shape = tuple(np.shape(alpha)[:-1])
    else:
        _check_shape("dirichlet", shape, np.shape(alpha)[:-1])
    arr = lax.convert_element_type(alpha, dtype)
    # In log space: small alpha would otherwise give all-zero samples.
    log_gamma_samples = loggamma(key, arr, shape + tuple(np.shape(alpha)[-1:]), dtype)
    return _softmax_last(log_gamma_samples)


_dirichlet_jit = jit(_dirichlet, static_argnums=(2, 3))


@takes_out_sharding
def dirichlet(key: Any, alpha: Any, shape: Any = None, dtype: Any = None,
              *, out_sharding: Any = None) -> Array:
    """Dirichlet(``alpha``) values: vectors along the last axis summing to one; ``shape``
    is the batch shape (default ``alpha.shape[:-1]``)."""
    typed, _ = check_prng_key("dirichlet", key)
    return _dirichlet_jit(typed, alpha, _opt_shape(shape), _float_dtype("dirichlet", dtype))


def _t(key: Array, df: Any, shape: tuple[int, ...], dtype: np.dtype[Any]) -> Array:
    _check_shape("t", shape, np.shape(df))
    df_arr = lax.convert_element_type(df, dtype)
    key_n, key_g = split2(key)
    n = normal(key_n, shape, dtype)
    half_df = lax.div(df_arr, np.array(2, dtype))
    g = gamma(key_g, half_df, shape, dtype)
    out: Array = n * pnp.sqrt(half_df / g)
    return out


_t_jit = jit(_t, static_argnums=(2, 3))


@takes_out_sharding
def t(key: Any, df: Any, shape: Any = None, dtype: Any = None,
      *, out_sharding: Any = None) -> Array:
    """Student's t values with ``df`` degrees of freedom."""
    typed, _ = check_prng_key("t", key)
    d = _float_dtype("t", dtype)
    out_shape = broadcast_param_shapes("t", shape, df)
    check_safe_to_cast("t", d, df)
    return _t_jit(typed, df, out_shape, d)


def _chisquare(key: Array, df: Any, shape: tuple[int, ...], dtype: np.dtype[Any]) -> Array:
    df_arr = lax.convert_element_type(df, dtype)
    two = np.array(2, dtype)
    log_g = loggamma(key, lax.div(df_arr, two), shape, dtype)
    return lax.mul(pnp.exp(log_g), two)


_chisquare_jit = jit(_chisquare, static_argnums=(2, 3))


@takes_out_sharding
def chisquare(key: Any, df: Any, shape: Any = None, dtype: Any = None,
              *, out_sharding: Any = None) -> Array:
    """Chi-square values with ``df`` degrees of freedom (twice Gamma(df / 2))."""
    typed, _ = check_prng_key("chisquare", key)
    d = _float_dtype("chisquare", dtype)
    out_shape = broadcast_param_shapes("chisquare", shape, df)
    check_safe_to_cast("chisquare", d, df)
    return _chisquare_jit(typed, df, out_shape, d)


def _f(key: Array, dfnum: Any, dfden: Any, shape: tuple[int, ...], dtype: np.dtype[Any]
       ) -> Array:
    dfden_arr = lax.convert_element_type(dfden, dtype)
    dfnum_arr = lax.convert_element_type(dfnum, dtype)
    key_dfd, key_dfn = split2(key)
    chi2_dfn = chisquare(key_dfn, dfnum_arr, shape, dtype)
    chi2_dfd = chisquare(key_dfd, dfden_arr, shape, dtype)
    return lax.div(lax.div(chi2_dfn, dfnum_arr), lax.div(chi2_dfd, dfden_arr))


_f_jit = jit(_f, static_argnums=(3, 4))


@takes_out_sharding
def f(key: Any, dfnum: Any, dfden: Any, shape: Any = None, dtype: Any = None,
      *, out_sharding: Any = None) -> Array:
    """F-distribution values with ``dfnum`` and ``dfden`` degrees of freedom."""
    typed, _ = check_prng_key("f", key)
    d = _float_dtype("f", dtype)
    out_shape = broadcast_param_shapes("f", shape, dfnum, dfden)
    check_safe_to_cast("f", d, dfnum, dfden)
    return _f_jit(typed, dfnum, dfden, out_shape, d)


def _generalized_normal(key: Array, p: Any, shape: tuple[int, ...], dtype: np.dtype[Any]
                        ) -> Array:
    keys = split_keys(key, (2,))
    g = gamma(keys[0], 1 / p, shape, dtype)
    r = rademacher(keys[1], shape, dtype)
    out: Array = r * g ** (1 / p)
    return out


_generalized_normal_jit = jit(_generalized_normal, static_argnums=(2, 3))


@takes_out_sharding
def generalized_normal(key: Any, p: Any, shape: Any = (), dtype: Any = None,
                       *, out_sharding: Any = None) -> Array:
    """Generalized normal values of shape parameter ``p`` (density ∝ exp(-|x|**p))."""
    out_shape = _shape(shape)
    typed, _ = check_prng_key("generalized_normal", key)
    return _generalized_normal_jit(typed, p, out_shape, _float_dtype("gamma", dtype))


def _ball(key: Array, p: Any, d: int, shape: tuple[int, ...], dtype: np.dtype[Any]) -> Array:
    k1, k2 = (split_keys(key, (2,))[i] for i in range(2))
    g = generalized_normal(k1, p, (*shape, d), dtype)
    e = exponential(k2, shape, dtype)
    out: Array = g / (((pnp.abs(g) ** p).sum(-1) + e) ** (1 / p))[..., None]
    return out


_ball_jit = jit(_ball, static_argnums=(2, 3, 4))


@takes_out_sharding
def ball(key: Any, d: int, p: Any = 2, shape: Any = (), dtype: Any = None,
         *, out_sharding: Any = None) -> Array:
    """Points uniform in the unit ``p``-norm ball of dimension ``d`` (a trailing axis)."""
    out_shape = _shape(shape)
    typed, _ = check_prng_key("ball", key)
    return _ball_jit(typed, p, int(d), out_shape, _float_dtype("gamma", dtype))

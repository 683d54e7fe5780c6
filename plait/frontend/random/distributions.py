"""More samplers, as ``jax.random``'s: shuffles (``permutation``, ``choice``), the
multivariate normal and random orthogonal matrices, and distributions that are a
closed-form transform of uniform or normal draws (``pareto``, ``maxwell``,
``weibull_min``, ``rayleigh``, ``wald``, ``triangular``, ``lognormal`` ...).

As in :mod:`.samplers`, each public function checks its arguments and calls a jitted
worker named and computed as JAX's, so that the same key gives the same values bit for
bit.  The gamma family is in :mod:`.gamma`, the discrete samplers in :mod:`.discrete`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from plait.frontend import lax
from plait.frontend import numpy as pnp
from plait.frontend.api.jit import jit
from plait.frontend.core.array_base import Array
from plait.frontend.core.x64_warnings import check_user_dtype
from plait.frontend.numpy.linalg import cholesky, norm
from plait.frontend.numpy.linalg_factored import eigh, qr, svd
from plait.frontend.random.gamma import broadcast_param_shapes, check_safe_to_cast, split2
from plait.frontend.random.keys import check_prng_key
from plait.frontend.random.keys import random_bits as _random_bits
from plait.frontend.random.samplers import (
    _check_shape,
    _float_dtype,
    _shape,
    exponential,
    gumbel,
    normal,
    rademacher,
    randint,
    uniform,
)
from plait.frontend.random.sharded import takes_out_sharding
from plait.ir import dtypes as dt

__all__ = ["permutation", "choice", "multivariate_normal", "orthogonal", "pareto", "maxwell",
           "double_sided_maxwell", "weibull_min", "rayleigh", "wald", "triangular",
           "lognormal"]


def _canonical_axis(axis: int, ndim: int) -> int:
    if not -ndim <= axis < ndim:
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {ndim}")
    return axis % ndim


def _is_arraylike(x: Any) -> bool:
    return isinstance(x, Array | np.ndarray | np.generic | int | float | bool)


def _shuffle(key: Array, x: Array, axis: int) -> Array:
    # Sorting by random 32-bit keys, repeated so that ties (which a stable sort leaves
    # in order) are unlikely to remain: JAX's rounds, ceil(3 ln(n) / ln(2**32 - 1)).
    size = math.prod(x.shape)
    num_rounds = int(np.ceil(3 * np.log(max(1, size)) / np.log(np.iinfo(np.uint32).max)))
    for _ in range(num_rounds):
        key, subkey = split2(key)
        sort_keys = _random_bits(subkey, 32, x.shape)
        _, x = lax.sort_key_val(sort_keys, x, axis)
    return x


_shuffle_jit = jit(_shuffle, static_argnums=(2,))


@takes_out_sharding
def permutation(key: Any, x: Any, axis: int = 0, independent: bool = False,
                *, out_sharding: Any = None) -> Array:
    """A random permutation of ``range(x)`` (an integer ``x``) or of ``x``'s slices along
    ``axis`` (``independent``: each vector along ``axis`` shuffled on its own).

    Raises:
      TypeError: ``x`` is a scalar but not an integer.
    """
    typed, _ = check_prng_key("permutation", key)
    if not _is_arraylike(x):
        raise TypeError(f"permutation requires ndarray or scalar arguments, got "
                        f"{type(x)} at position 0.")
    axis = _canonical_axis(axis, np.ndim(x) or 1)
    if not np.ndim(x):
        if not dt.is_integer(pnp.result_type(x)):
            raise TypeError("x must be an integer or at least 1-dimensional")
        return _shuffle_jit(typed, pnp.arange(int(x)), axis)
    arr = pnp.asarray(x)
    if independent or arr.ndim == 1:
        return _shuffle_jit(typed, arr, axis)
    ind = _shuffle_jit(typed, pnp.arange(arr.shape[axis]), 0)
    return pnp.take(arr, ind, axis, unique_indices=True)


def choice(key: Any, a: Any, shape: Sequence[int] = (), replace: bool = True, p: Any = None,
           axis: int = 0, mode: str | None = None) -> Array:
    """Samples of ``a``'s elements along ``axis`` (of ``range(a)``, an integer ``a``), with
    or without replacement, uniformly or with probabilities ``p``.

    Raises:
      TypeError: ``shape`` is not a sequence.
      ValueError: ``a`` is empty, more samples than elements are asked for without
        replacement, or ``p`` does not match ``a``.
    """
    typed, _ = check_prng_key("choice", key)
    if not isinstance(shape, Sequence):
        raise TypeError(f"shape argument of jax.random.choice must be a sequence, got {shape}")
    shape = _shape(shape)
    arr = pnp.asarray(a)
    if arr.ndim == 0:
        n_inputs = int(a)
    else:
        axis = _canonical_axis(axis, arr.ndim)
        n_inputs = arr.shape[axis]
    n_draws = math.prod(shape)
    if n_draws == 0:
        return pnp.zeros(shape, dtype=arr.dtype)
    if n_inputs <= 0:
        raise ValueError("a must be greater than 0 unless no samples are taken")
    if not replace and n_draws > n_inputs:
        raise ValueError(f"Cannot take a larger sample (size {n_draws}) than population "
                         f"(size {n_inputs}) when 'replace=False'")
    if p is None:
        if replace:
            ind = randint(typed, shape, 0, n_inputs)
            result = ind if arr.ndim == 0 else pnp.take(arr, ind, axis)
        else:
            slices = (slice(None),) * axis + (slice(n_draws),)
            result = permutation(typed, n_inputs if arr.ndim == 0 else arr, axis)[slices]
    else:
        p_arr = pnp.asarray(p)
        if not dt.is_inexact(p_arr.dtype):
            p_arr = p_arr.astype(dt.canonicalize(np.dtype(float)))
        if p_arr.shape != (n_inputs,):
            raise ValueError("p must be None or a 1D vector with the same size as "
                             f"a.shape[axis]. p has shape {p_arr.shape} and a.shape[axis] is "
                             f"{n_inputs}.")
        if replace:
            p_cuml = pnp.cumsum(p_arr)
            r = p_cuml[-1] * (1 - uniform(typed, shape, dtype=p_cuml.dtype))
            ind = pnp.searchsorted(p_cuml, r).astype(int)
        else:
            # The Gumbel-top-k trick.
            g = gumbel(typed, (n_inputs,), dtype=p_arr.dtype, mode=mode) + pnp.log(p_arr)
            ind = lax.top_k(g, n_draws)[1].astype(int)
        result = ind if arr.ndim == 0 else pnp.take(arr, ind, axis)
    out_shape = shape if arr.ndim == 0 else arr.shape[:axis] + shape + arr.shape[axis + 1:]
    return result.reshape(out_shape)


def _multivariate_normal(key: Array, mean: Array, cov: Array, shape: tuple[int, ...] | None,
                         dtype: np.dtype[Any], method: str) -> Array:
    if not mean.ndim >= 1:
        raise ValueError(f"multivariate_normal requires mean.ndim >= 1, got mean.ndim == "
                         f"{mean.ndim}")
    if not cov.ndim >= 2:
        raise ValueError(f"multivariate_normal requires cov.ndim >= 2, got cov.ndim == "
                         f"{cov.ndim}")
    n = mean.shape[-1]
    if cov.shape[-2:] != (n, n):
        raise ValueError(f"multivariate_normal requires cov.shape == (..., n, n) for n={n}, "
                         f"but got cov.shape == {cov.shape}.")
    if shape is None:
        shape = tuple(np.broadcast_shapes(mean.shape[:-1], cov.shape[:-2]))
    else:
        _check_shape("normal", shape, mean.shape[:-1], cov.shape[:-2])
    if method == "svd":
        u, s, _ = svd(cov)
        factor = u * pnp.sqrt(s[..., None, :])
    elif method == "eigh":
        w, v = eigh(cov)
        factor = v * pnp.sqrt(w[..., None, :])
    else:
        factor = cholesky(cov)
    normal_samples = normal(key, shape + mean.shape[-1:], dtype)
    if factor.ndim == 2:
        # The dot_general JAX's einsum emits (samples first): under vmap its batching
        # keeps that operand order, and with it the rounding of the sums.
        nd = normal_samples.ndim
        prod = lax.dot_general(normal_samples, factor, (((nd - 1,), (1,)), ((), ())),
                               preferred_element_type=dtype)
    else:
        prod = pnp.einsum("...ij,...j->...i", factor, normal_samples)
    out: Array = mean + prod
    return out


_multivariate_normal_jit = jit(_multivariate_normal, static_argnums=(3, 4, 5))


@takes_out_sharding
def multivariate_normal(key: Any, mean: Any, cov: Any, shape: Any = None, dtype: Any = None,
                        method: str = "cholesky", *, out_sharding: Any = None) -> Array:
    """Normal vectors of mean ``mean`` (``(..., n)``) and covariance ``cov``
    (``(..., n, n)``), of shape ``shape + (n,)``; ``cov`` is factored by ``method``
    (``'cholesky'``, or ``'eigh'`` and ``'svd'``, which allow singular ``cov``).

    Raises:
      ValueError: bad ``method`` or ``dtype``, or shapes that do not fit.
    """
    typed, _ = check_prng_key("multivariate_normal", key)
    mean_arr, cov_arr = pnp.asarray(mean), pnp.asarray(cov)
    common = pnp.result_type(mean_arr, cov_arr)
    if not dt.is_inexact(common):
        common = pnp.result_type(common, dt.canonicalize(np.dtype(float)))
    mean_arr, cov_arr = mean_arr.astype(common), cov_arr.astype(common)
    if method not in {"svd", "eigh", "cholesky"}:
        raise ValueError("method must be one of {'svd', 'eigh', 'cholesky'}")
    d = mean_arr.dtype if dtype is None else check_user_dtype(dtype)
    if not dt.is_float(d):
        raise ValueError(f"dtype argument to `multivariate_normal` must be a float dtype, "
                         f"got {d}")
    out_shape = None if shape is None else _shape(shape)
    return _multivariate_normal_jit(typed, mean_arr, cov_arr, out_shape, d, method)


def _orthogonal(key: Array, n: int, m: int, shape: tuple[int, ...], dtype: np.dtype[Any]
                ) -> Array:
    z = normal(key, (*shape, max(n, m), min(n, m)), dtype)
    q, r = qr(z)
    d = pnp.diagonal(r, axis1=-2, axis2=-1)
    x: Array = q * pnp.expand_dims(pnp.sign(d), -2)
    return x.mT if n < m else x


_orthogonal_jit = jit(_orthogonal, static_argnums=(1, 2, 3, 4))


@takes_out_sharding
def orthogonal(key: Any, n: int, shape: Sequence[int] = (), dtype: Any = None,
               m: int | None = None, *, out_sharding: Any = None) -> Array:
    """Random ``n`` x ``m`` (default ``n`` x ``n``) matrices with orthonormal rows or
    columns, uniform (Haar) over them; ``shape`` is a batch shape."""
    m_ = n if m is None else m
    batch = _shape(shape)
    typed, _ = check_prng_key("orthogonal", key)
    d = dt.canonicalize(np.dtype(float)) if dtype is None else check_user_dtype(dtype)
    return _orthogonal_jit(typed, int(n), int(m_), batch, d)


def _pareto(key: Array, b: Any, shape: tuple[int, ...], dtype: np.dtype[Any]) -> Array:
    b_arr = lax.convert_element_type(b, dtype)
    e = exponential(key, shape, dtype)
    return lax.exp(e / b_arr)


_pareto_jit = jit(_pareto, static_argnums=(2, 3))


@takes_out_sharding
def pareto(key: Any, b: Any, shape: Any = None, dtype: Any = None,
           *, out_sharding: Any = None) -> Array:
    """Pareto values of shape parameter ``b`` (at least 1)."""
    typed, _ = check_prng_key("pareto", key)
    d = _float_dtype("pareto", dtype)
    out_shape = broadcast_param_shapes("pareto", shape, b)
    check_safe_to_cast("pareto", d, b)
    return _pareto_jit(typed, b, out_shape, d)


def _maxwell(key: Array, shape: tuple[int, ...], dtype: np.dtype[Any]) -> Array:
    # The norm of three standard normal values.
    norm_rvs = normal(key, (*shape, 3), dtype)
    return norm(norm_rvs, axis=-1)


_maxwell_jit = jit(_maxwell, static_argnums=(1, 2))


@takes_out_sharding
def maxwell(key: Any, shape: Sequence[int] = (), dtype: Any = None,
            *, out_sharding: Any = None) -> Array:
    """Maxwell(-Boltzmann) values (the speed of a standard normal 3-vector)."""
    typed, _ = check_prng_key("maxwell", key)
    d = _float_dtype("maxwell", dtype)
    return _maxwell_jit(typed, _shape(shape), d)


def _double_sided_maxwell(key: Array, loc: Any, scale: Any, shape: tuple[int, ...],
                          dtype: np.dtype[Any]) -> Array:
    params_shapes = tuple(np.broadcast_shapes(np.shape(loc), np.shape(scale)))
    if not shape:
        shape = params_shapes
    shape = shape + params_shapes
    maxwell_key, rademacher_key = split2(key)
    maxwell_rvs = maxwell(maxwell_key, shape=shape, dtype=dtype)
    random_sign = rademacher(rademacher_key, shape=shape, dtype=dtype)
    out: Array = random_sign * maxwell_rvs * scale + loc
    return out


_double_sided_maxwell_jit = jit(_double_sided_maxwell, static_argnums=(3, 4))


def double_sided_maxwell(key: Any, loc: Any, scale: Any, shape: Sequence[int] = (),
                         dtype: Any = None) -> Array:
    """Maxwell values of random sign, scaled by ``scale`` and shifted by ``loc``; the
    result's shape is ``shape`` followed by the parameters' broadcast shape."""
    typed, _ = check_prng_key("double_sided_maxwell", key)
    d = _float_dtype("double_sided_maxwell", dtype)
    return _double_sided_maxwell_jit(typed, loc, scale, _shape(shape), d)


def _weibull_min(key: Array, scale: Any, concentration: Any, shape: tuple[int, ...],
                 dtype: np.dtype[Any]) -> Array:
    random_uniform = uniform(key, shape, dtype, 0, 1)
    # The inverse of Weibull's CDF.
    out: Array = pnp.power(-pnp.log1p(-random_uniform), 1.0 / concentration) * scale
    return out


_weibull_min_jit = jit(_weibull_min, static_argnums=(3, 4))


def weibull_min(key: Any, scale: Any, concentration: Any, shape: Sequence[int] = (),
                dtype: Any = None) -> Array:
    """Weibull values of ``scale`` and ``concentration``."""
    typed, _ = check_prng_key("weibull_min", key)
    d = _float_dtype("weibull_min", dtype)
    return _weibull_min_jit(typed, scale, concentration, _shape(shape), d)


def _rayleigh(key: Array, scale: Any, shape: tuple[int, ...], dtype: np.dtype[Any]) -> Array:
    u = uniform(key, shape, dtype)
    scale_arr = pnp.broadcast_to(pnp.asarray(scale).astype(dtype), shape)
    sqrt_u = lax.sqrt(lax.mul(lax.log(u), np.array(-2, dtype)))
    return lax.mul(scale_arr, sqrt_u)


_rayleigh_jit = jit(_rayleigh, static_argnums=(2, 3))


@takes_out_sharding
def rayleigh(key: Any, scale: Any, shape: Any = None, dtype: Any = None,
             *, out_sharding: Any = None) -> Array:
    """Rayleigh values of ``scale``."""
    typed, _ = check_prng_key("rayleigh", key)
    d = _float_dtype("rayleigh", dtype)
    out_shape = broadcast_param_shapes("rayleigh", shape, scale)
    check_safe_to_cast("rayleigh", d, scale)
    return _rayleigh_jit(typed, scale, out_shape, d)


def _wald(key: Array, mean: Any, shape: tuple[int, ...], dtype: np.dtype[Any]) -> Array:
    k1, k2 = split2(key)
    mu = pnp.broadcast_to(pnp.asarray(mean).astype(dtype), shape)
    v = normal(k1, shape, dtype)
    z = uniform(k2, shape, dtype)
    y = lax.integer_pow(v, 2)
    y_sq = lax.integer_pow(y, 2)
    mean_sq = lax.integer_pow(mu, 2)
    sqrt_term = lax.sqrt(4 * mu * y + mean_sq * y_sq)
    x = mu + mean_sq * y / 2 - mu / 2 * sqrt_term
    return lax.select(lax.le(z, mu / (mu + x)), x, mean_sq / x)


_wald_jit = jit(_wald, static_argnums=(2, 3))


@takes_out_sharding
def wald(key: Any, mean: Any, shape: Any = None, dtype: Any = None,
         *, out_sharding: Any = None) -> Array:
    """Wald (inverse Gaussian) values of ``mean`` (unit shape parameter)."""
    typed, _ = check_prng_key("wald", key)
    d = _float_dtype("wald", dtype)
    out_shape = broadcast_param_shapes("wald", shape, mean)
    check_safe_to_cast("wald", d, mean)
    return _wald_jit(typed, mean, out_shape, d)


def _triangular(key: Array, left: Any, mode: Any, right: Any, shape: tuple[int, ...],
                dtype: np.dtype[Any]) -> Array:
    lo = pnp.broadcast_to(lax.convert_element_type(left, dtype), shape)
    hi = pnp.broadcast_to(lax.convert_element_type(right, dtype), shape)
    mo = pnp.broadcast_to(lax.convert_element_type(mode, dtype), shape)
    fc = (mo - lo) / (hi - lo)
    u = uniform(key, shape, dtype)
    out1 = lo + lax.sqrt(u * (hi - lo) * (mo - lo))
    out2 = hi - lax.sqrt((1 - u) * (hi - lo) * (hi - mo))
    return lax.select(u < fc, out1, out2)


_triangular_jit = jit(_triangular, static_argnums=(4, 5))


@takes_out_sharding
def triangular(key: Any, left: Any, mode: Any, right: Any, shape: Any = None,
               dtype: Any = None, *, out_sharding: Any = None) -> Array:
    """Triangular values on [``left``, ``right``] peaking at ``mode``."""
    typed, _ = check_prng_key("triangular", key)
    d = _float_dtype("triangular", dtype)
    out_shape = broadcast_param_shapes("triangular", shape, left, mode, right)
    check_safe_to_cast("triangular", d, left, mode, right)
    return _triangular_jit(typed, left, mode, right, out_shape, d)


_ONE_F32 = np.float32(1)  # JAX's default sigma: a float32 scalar


def _lognormal(key: Array, sigma: Any, shape: tuple[int, ...], dtype: np.dtype[Any]) -> Array:
    scaled_norm = normal(key, shape, dtype) * lax.convert_element_type(sigma, dtype)
    return lax.exp(scaled_norm)


_lognormal_jit = jit(_lognormal, static_argnums=(2, 3))


@takes_out_sharding
def lognormal(key: Any, sigma: Any = _ONE_F32, shape: Any = None, dtype: Any = None
              , *, out_sharding: Any = None) -> Array:
    """Log-normal values: ``exp(sigma * normal)``."""
    typed, _ = check_prng_key("lognormal", key)
    d = dt.canonicalize(np.dtype(float)) if dtype is None else check_user_dtype(dtype)
    if not dt.is_inexact(d):
        raise ValueError(f"dtype argument to `lognormal` must be a float or complex dtype, "
                         f"got {d}")
    out_shape = broadcast_param_shapes("lognormal", shape, sigma)
    check_safe_to_cast("lognormal", d, sigma)
    return _lognormal_jit(typed, sigma, out_shape, d)

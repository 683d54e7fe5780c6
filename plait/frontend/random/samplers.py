"""Samplers of the common distributions, as ``jax.random``'s: for the same key, the same
bits, turned into values by the same arithmetic, so results agree with JAX's bit for bit.

Each public sampler checks its arguments and calls a jitted worker named as JAX's
(``_uniform``, ``_normal``, ...), so that traced programs print as JAX's do.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import ml_dtypes
import numpy as np

from plait.frontend import lax
from plait.frontend import numpy as pnp
from plait.frontend.api.jit import jit
from plait.frontend.core.array_base import Array
from plait.frontend.core.x64_warnings import check_user_dtype
from plait.frontend.random.keys import check_prng_key, split_keys
from plait.frontend.random.keys import random_bits as _random_bits
from plait.frontend.random.sharded import takes_out_sharding
from plait.ir import dtypes as dt

__all__ = ["bits", "uniform", "normal", "randint", "bernoulli", "gumbel", "categorical",
           "exponential", "laplace", "logistic", "cauchy", "truncated_normal", "rademacher"]

_UINT = {8: dt.uint8, 16: dt.uint16, 32: dt.uint32, 64: dt.uint64}


def _finfo(dtype: np.dtype[Any]) -> Any:
    """``finfo`` of any float dtype plait has (NumPy's lacks bfloat16)."""
    return ml_dtypes.finfo(dtype)  # type: ignore[no-untyped-call]  # ml_dtypes is untyped


def _shape(shape: Any) -> tuple[int, ...]:
    """A shape argument as a tuple of non-negative ints."""
    dims = (shape,) if isinstance(shape, int) else tuple(shape)
    try:
        out = tuple(int(d) for d in dims)
    except TypeError:
        raise TypeError(f"Shapes must be 1D sequences of concrete values of integer type, "
                        f"got {shape!r}.") from None
    if any(d < 0 for d in out):
        raise ValueError(f"expected a shape of non-negative dimensions, but got {out}")
    return out


def _check_shape(name: str, shape: tuple[int, ...], *param_shapes: Sequence[int]) -> None:
    if param_shapes:
        try:
            joint = np.broadcast_shapes(shape, *param_shapes)
        except ValueError:
            raise ValueError(f"Incompatible shapes for broadcasting: shapes="
                             f"{[shape, *map(tuple, param_shapes)]}") from None
        if joint != shape:
            raise ValueError(f"{name} parameter shapes must be broadcast-compatible with shape "
                             "argument, and the result of broadcasting the shapes must equal "
                             f"the shape argument, but got result {joint} for shape argument "
                             f"{shape}.")


def _float_dtype(name: str, dtype: Any, kinds: str = "f") -> np.dtype[Any]:
    d = dt.canonicalize(np.dtype(float)) if dtype is None else check_user_dtype(dtype)
    if not (dt.is_float(d) or ("c" in kinds and dt.is_complex(d))):
        what = "a float" if kinds == "f" else "an inexact"
        raise ValueError(f"dtype argument to `{name}` must be {what} dtype, got {d}")
    return d


@takes_out_sharding
def bits(key: Any, shape: Sequence[int] = (), dtype: Any = None,
         *, out_sharding: Any = None) -> Array:
    """Random unsigned integers (``uint32``, or ``uint64`` with x64) of ``shape``."""
    typed, _ = check_prng_key("bits", key)
    d = dt.canonicalize(np.dtype(np.uint64)) if dtype is None else check_user_dtype(dtype)
    if not dt.is_unsigned(d):
        raise ValueError(f"dtype argument to `bits` must be an unsigned int dtype, got {d}")
    return _random_bits(typed, d.itemsize * 8, _shape(shape))


def _broadcast_to_rank(x: Array, rank: int) -> Array:
    return x if x.ndim >= rank else lax.broadcast_in_dim(
        x, (1,) * (rank - x.ndim) + x.shape, tuple(range(rank - x.ndim, rank)))


def _uniform(key: Array, minval: Any, maxval: Any, shape: tuple[int, ...],
                  dtype: np.dtype[Any]) -> Array:
    _check_shape("uniform", shape)
    lo = lax.convert_element_type(minval, dtype)
    hi = lax.convert_element_type(maxval, dtype)
    lo, hi = _broadcast_to_rank(lo, len(shape)), _broadcast_to_rank(hi, len(shape))
    finfo = _finfo(dtype)
    nbits, nmant = finfo.bits, finfo.nmant
    rng_bits = 8 if nmant < 8 else nbits
    raw = _random_bits(key, rng_bits, shape)
    uint = _UINT[nbits]
    if rng_bits != nbits:
        raw = lax.convert_element_type(raw, uint)
    # The mantissa bits of a float in [1, 2), shifted down to [0, 1).
    mantissa = lax.shift_right_logical(raw, pnp.array(rng_bits - nmant, uint))
    one_bits = pnp.asarray(np.array(1.0, dtype).view(uint), dtype=uint)
    floats = lax.bitcast_convert_type(lax.bitwise_or(mantissa, one_bits), dtype) \
        - pnp.array(1.0, dtype)
    scaled = floats * (hi - lo) + lo
    return lax.max(lo, scaled if scaled.shape == shape else lax.reshape(scaled, shape))


_uniform_jit = jit(_uniform, static_argnums=(3, 4))


@takes_out_sharding
def uniform(key: Any, shape: Sequence[int] = (), dtype: Any = None, minval: Any = 0.0,
            maxval: Any = 1.0, *, out_sharding: Any = None) -> Array:
    """Values uniform in ``[minval, maxval)``."""
    typed, _ = check_prng_key("uniform", key)
    return _uniform_jit(typed, minval, maxval, _shape(shape), _float_dtype("uniform", dtype))


def _normal_real(key: Array, shape: tuple[int, ...], dtype: np.dtype[Any]) -> Array:
    _check_shape("normal", shape)
    lo = np.nextafter(np.array(-1.0, dtype), np.array(0.0, dtype), dtype=dtype)
    u = _uniform_jit(key, lo, np.array(1.0, dtype), shape, dtype)
    return lax.mul(np.array(np.sqrt(2), dtype), lax.erf_inv(u))


def _normal(key: Array, shape: tuple[int, ...], dtype: np.dtype[Any]) -> Array:
    if dt.is_complex(dtype):
        real = np.dtype(_finfo(dtype).dtype)
        keys = split_keys(key, (2,))
        k_re, k_im = keys  # (unpacking slices with unit strides, as JAX prints it)
        re = _normal_real_jit(k_re, shape, real).astype(dtype)
        im = _normal_real_jit(k_im, shape, real).astype(dtype)
        out: Array = (re + 1j * im) / np.array(np.sqrt(2), dtype)
        return out
    return _normal_real_jit(key, shape, dtype)


_normal_real_jit = jit(_normal_real, static_argnums=(1, 2))
_normal_jit = jit(_normal, static_argnums=(1, 2))


@takes_out_sharding
def normal(key: Any, shape: Sequence[int] = (), dtype: Any = None,
           *, out_sharding: Any = None) -> Array:
    """Standard normal values (complex dtypes: real and imaginary parts each of variance
    1/2)."""
    typed, _ = check_prng_key("normal", key)
    return _normal_jit(typed, _shape(shape), _float_dtype("normal", dtype, "fc"))


def _clip_convert(val: Array, dtype: np.dtype[Any]) -> Array:
    """``val`` in integer ``dtype``, clipped (not wrapped) to its range."""
    lo = max(np.iinfo(dtype).min, np.iinfo(val.dtype).min)
    hi = min(np.iinfo(dtype).max, np.iinfo(val.dtype).max)
    return pnp.clip(val, pnp.array(lo, val.dtype), pnp.array(hi, val.dtype)).astype(dtype)


def _randint(key: Array, minval: Any, maxval: Any, shape: tuple[int, ...],
             dtype: np.dtype[Any]) -> Array:
    _check_shape("randint", shape, np.shape(minval), np.shape(maxval))
    lo, hi = pnp.asarray(minval), pnp.asarray(maxval)
    if not dt.is_integer(lo.dtype):
        lo = lo.astype(int)
    if not dt.is_integer(hi.dtype):
        hi = hi.astype(int)
    # randint(key, shape, 0, 256, uint8) reaches 255: the span is then one larger.
    hi_out_of_range = lax.gt(hi, _clip_convert(pnp.array(np.iinfo(dtype).max, dtype), hi.dtype))
    lo = _broadcast_to_rank(_clip_convert(lo, dtype), len(shape))
    hi = _broadcast_to_rank(_clip_convert(hi, dtype), len(shape))
    nbits = np.iinfo(dtype).bits
    keys = split_keys(key, (2,))
    k1, k2 = keys
    higher = _random_bits(k1, nbits, shape)
    lower = _random_bits(k2, nbits, shape)
    uint = _UINT[nbits]
    span = lax.convert_element_type(hi - lo, uint)
    span = lax.select(hi <= lo, lax.full_like(span, 1), span)
    span = lax.select(hi_out_of_range & (hi > lo), lax.add(span, pnp.array(1, uint)), span)
    # (a * b) % n from two words of random bits: 2**nbits % span, as JAX computes it.
    multiplier = lax.rem(pnp.array(2 ** (nbits // 2), uint), span)
    multiplier = lax.rem(lax.mul(multiplier, multiplier), span)
    offset = lax.add(lax.mul(lax.rem(higher, span), multiplier), lax.rem(lower, span))
    offset = lax.rem(offset, span)
    return lax.add(lo, lax.convert_element_type(offset, dtype))


_randint_jit = jit(_randint, static_argnums=(3, 4))


@takes_out_sharding
def randint(key: Any, shape: Sequence[int], minval: Any, maxval: Any, dtype: Any = int,
            *, out_sharding: Any = None) -> Array:
    """Integers uniform in ``[minval, maxval)``."""
    typed, _ = check_prng_key("randint", key)
    d = check_user_dtype(dtype)
    if not dt.is_integer(d):
        raise TypeError(f"randint only accepts integer dtypes, got {d}")
    info = np.iinfo(d)
    sampling = d
    if info.bits < 32:  # as JAX: sampled in 32 bits, whose bias is smaller
        sampling = dt.int32
        minval = pnp.asarray(minval).astype(dt.int32).clip(int(info.min), int(info.max))
        maxval = pnp.asarray(maxval).astype(dt.int32).clip(int(info.min), int(info.max) + 1)
    out: Array = _randint_jit(typed, minval, maxval, _shape(shape), sampling).astype(d)
    return out


def _bernoulli(key: Array, p: Array, shape: tuple[int, ...] | None, mode: str) -> Array:
    if shape is None:
        shape = tuple(p.shape)
    else:
        _check_shape("bernoulli", shape, p.shape)
    dtype = p.dtype
    if mode == "high":
        u = _uniform_jit(key, 0.0, 1.0, (2, *shape), dtype)
        u1, u2 = u[0], u[1] * 2.0 ** -_finfo(dtype).nmant
        out: Array = u2 < p - u1
        return out
    low: Array = _uniform_jit(key, 0.0, 1.0, shape, dtype) < p
    return low


_bernoulli_jit = jit(_bernoulli, static_argnums=(2, 3))


@takes_out_sharding
def bernoulli(key: Any, p: Any = 0.5, shape: Sequence[int] | None = None,
              mode: str = "low", *, out_sharding: Any = None) -> Array:
    """Booleans, true with probability ``p``."""
    if shape is not None:
        shape = _shape(shape)
    if mode not in ("high", "low"):
        raise ValueError(f"got mode={mode!r}, expected 'high' or 'low'")
    typed, _ = check_prng_key("bernoulli", key)
    dtype = pnp.result_type(p)
    if not dt.is_float(dtype):
        raise ValueError(f"bernoulli probability `p` must have a floating dtype, got {dtype}.")
    return _bernoulli_jit(typed, lax.convert_element_type(p, dtype), shape, mode)


def _gumbel(key: Array, shape: tuple[int, ...], dtype: np.dtype[Any], mode: str) -> Array:
    _check_shape("gumbel", shape)
    info = _finfo(dtype)
    if mode == "high":
        u = _uniform_jit(key, 0.0, 1.0, (2, *shape), dtype)
        high, low = u[0], u[1]
        x = pnp.where(high >= 0.5, high, high + 2.0 ** -info.nmant * low + info.tiny)
        out: Array = -pnp.log(-pnp.log1p(-x))
        return out
    u = _uniform_jit(key, float(info.tiny), 1.0, shape, dtype)
    low_out: Array = -pnp.log(-pnp.log(u))
    return low_out


_gumbel_jit = jit(_gumbel, static_argnums=(1, 2, 3))


@takes_out_sharding
def gumbel(key: Any, shape: Sequence[int] = (), dtype: Any = None, mode: str | None = None
           , *, out_sharding: Any = None) -> Array:
    """Standard Gumbel values (``mode='high'`` resolves the left tail better)."""
    typed, _ = check_prng_key("gumbel", key)
    mode = "low" if mode is None else mode
    if mode not in ("low", "high"):
        raise ValueError(f"Must provide valid mode for gumbel got: {mode}")
    return _gumbel_jit(typed, _shape(shape), _float_dtype("gumbel", dtype), mode)


@takes_out_sharding
def categorical(key: Any, logits: Any, axis: int = -1, shape: Sequence[int] | None = None,
                replace: bool = True, mode: str | None = None,
                *, out_sharding: Any = None) -> Array:
    """Category indices drawn with log-probabilities ``logits`` along ``axis`` (the
    Gumbel-max trick; without replacement, the Gumbel-top-k trick)."""
    typed, _ = check_prng_key("categorical", key)
    arr = pnp.asarray(logits)
    axis = axis % arr.ndim if arr.ndim else axis
    batch_shape = tuple(np.delete(np.array(arr.shape, dtype=np.int64), axis).tolist())
    out_shape = batch_shape if shape is None else _shape(shape)
    if shape is not None:
        _check_shape("categorical", out_shape, batch_shape)
    prefix = out_shape[:len(out_shape) - len(batch_shape)]
    if replace:
        neg_axis = axis - arr.ndim
        logits_shape = list(out_shape[len(out_shape) - len(batch_shape):])
        logits_shape.insert(neg_axis % arr.ndim, arr.shape[neg_axis])
        noise = gumbel(typed, (*prefix, *logits_shape), arr.dtype, mode=mode)
        return pnp.argmax(noise + lax.expand_dims(arr, tuple(range(len(prefix)))),
                          axis=neg_axis)
    arr = arr + gumbel(typed, arr.shape, arr.dtype, mode=mode)
    k = math.prod(prefix)
    if k > arr.shape[axis]:
        raise ValueError(f"Number of samples without replacement ({k}) cannot exceed number "
                         f"of categories ({arr.shape[axis]}).")
    _, indices = lax.top_k(pnp.moveaxis(arr, axis, -1), k)
    dims = (indices.ndim - 1, *range(indices.ndim - 1))
    return lax.reshape(indices, out_shape, dims)


def _exponential(key: Array, shape: tuple[int, ...], dtype: np.dtype[Any]) -> Array:
    _check_shape("exponential", shape)
    return lax.neg(lax.log1p(lax.neg(_uniform_jit(key, 0.0, 1.0, shape, dtype))))


def _laplace(key: Array, shape: tuple[int, ...], dtype: np.dtype[Any]) -> Array:
    _check_shape("laplace", shape)
    u = _uniform_jit(key, -1.0 + float(_finfo(dtype).epsneg), 1.0, shape, dtype)
    return lax.mul(lax.sign(u), lax.log1p(lax.neg(lax.abs(u))))


def _logistic(key: Array, shape: tuple[int, ...], dtype: np.dtype[Any]) -> Array:
    _check_shape("logistic", shape)
    x = _uniform_jit(key, float(_finfo(dtype).tiny), 1.0, shape, dtype)
    return lax.sub(lax.log(x), lax.log1p(lax.neg(x)))


def _cauchy(key: Array, shape: tuple[int, ...], dtype: np.dtype[Any]) -> Array:
    _check_shape("cauchy", shape)
    u = _uniform_jit(key, float(_finfo(dtype).eps), 1.0, shape, dtype)
    return lax.tan(lax.mul(pnp.array(np.pi, dtype), lax.sub(u, pnp.array(0.5, dtype))))


_exponential_jit = jit(_exponential, static_argnums=(1, 2))
_laplace_jit = jit(_laplace, static_argnums=(1, 2))
_logistic_jit = jit(_logistic, static_argnums=(1, 2))
_cauchy_jit = jit(_cauchy, static_argnums=(1, 2))


@takes_out_sharding
def exponential(key: Any, shape: Sequence[int] = (), dtype: Any = None,
                *, out_sharding: Any = None) -> Array:
    """Standard exponential values."""
    typed, _ = check_prng_key("exponential", key)
    return _exponential_jit(typed, _shape(shape), _float_dtype("exponential", dtype))


@takes_out_sharding
def laplace(key: Any, shape: Sequence[int] = (), dtype: Any = None,
            *, out_sharding: Any = None) -> Array:
    """Standard Laplace values."""
    typed, _ = check_prng_key("laplace", key)
    return _laplace_jit(typed, _shape(shape), _float_dtype("laplace", dtype))


@takes_out_sharding
def logistic(key: Any, shape: Sequence[int] = (), dtype: Any = None,
             *, out_sharding: Any = None) -> Array:
    """Standard logistic values."""
    typed, _ = check_prng_key("logistic", key)
    return _logistic_jit(typed, _shape(shape), _float_dtype("logistic", dtype))


@takes_out_sharding
def cauchy(key: Any, shape: Sequence[int] = (), dtype: Any = None,
           *, out_sharding: Any = None) -> Array:
    """Standard Cauchy values."""
    typed, _ = check_prng_key("cauchy", key)
    return _cauchy_jit(typed, _shape(shape), _float_dtype("cauchy", dtype))


def _truncated_normal(key: Array, lower: Any, upper: Any, shape: tuple[int, ...] | None,
                      dtype: np.dtype[Any]) -> Array:
    if shape is None:
        shape = tuple(np.broadcast_shapes(np.shape(lower), np.shape(upper)))
    else:
        _check_shape("truncated_normal", shape, np.shape(lower), np.shape(upper))
    sqrt2 = np.array(np.sqrt(2), dtype)
    lower = lax.convert_element_type(lower, dtype)
    upper = lax.convert_element_type(upper, dtype)
    a = lax.erf(lower / sqrt2)
    b = lax.erf(upper / sqrt2)
    u = _uniform_jit(key, a, b, shape, dtype)
    out = sqrt2 * lax.erf_inv(u)
    # Rounding (or drawing `a` itself) must not leave the open interval.
    return pnp.clip(out,
                    lax.nextafter(lax.stop_gradient(lower), pnp.array(np.inf, dtype)),
                    lax.nextafter(lax.stop_gradient(upper), pnp.array(-np.inf, dtype)))


_truncated_normal_jit = jit(_truncated_normal, static_argnums=(3, 4))


@takes_out_sharding
def truncated_normal(key: Any, lower: Any, upper: Any, shape: Sequence[int] | None = None,
                     dtype: Any = None, *, out_sharding: Any = None) -> Array:
    """Standard normal values conditioned on ``lower < x < upper``."""
    typed, _ = check_prng_key("truncated_normal", key)
    return _truncated_normal_jit(typed, lower, upper, None if shape is None else _shape(shape),
                                 _float_dtype("truncated_normal", dtype))


def _rademacher(key: Array, shape: tuple[int, ...], dtype: np.dtype[Any]) -> Array:
    samples = bernoulli(key, 0.5, shape).astype(dtype)
    out: Array = (2 * samples - 1).astype(dtype)
    return out


_rademacher_jit = jit(_rademacher, static_argnums=(1, 2))


@takes_out_sharding
def rademacher(key: Any, shape: Sequence[int] = (), dtype: Any = int,
               *, out_sharding: Any = None) -> Array:
    """Values -1 and 1 with equal probability."""
    typed, _ = check_prng_key("rademacher", key)
    return _rademacher_jit(typed, _shape(shape), check_user_dtype(dtype))

"""Initializers of neural-network parameters, as ``jax.nn.initializers``'s (Keras' and
Sonnet's definitions): each is a function ``init(key, shape, dtype=None)`` returning
an array, and most are made by a factory of their hyperparameters
(``glorot_uniform()``, ``variance_scaling(2.0, 'fan_in', 'normal')``).  For the same
key they return JAX's values bit for bit: they draw from :mod:`plait.random` and
scale by the same arithmetic.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from typing import Any, Literal, Protocol, cast, runtime_checkable

import numpy as np

from plait.frontend import numpy as pnp
from plait.frontend.api.explicit_sharding import reshard
from plait.frontend.core.array_base import Array
from plait.frontend.core.x64_warnings import check_user_dtype
from plait.frontend.random.distributions import orthogonal as random_orthogonal
from plait.frontend.random.keys import split
from plait.frontend.random.samplers import normal as random_normal
from plait.frontend.random.samplers import truncated_normal as random_truncated_normal
from plait.frontend.random.samplers import uniform as random_uniform
from plait.ir import dtypes as dt

__all__ = ["Initializer", "zeros", "ones", "constant", "uniform", "normal", "truncated_normal",
           "variance_scaling", "glorot_uniform", "xavier_uniform", "glorot_normal",
           "xavier_normal", "lecun_uniform", "lecun_normal", "he_uniform", "kaiming_uniform",
           "he_normal", "kaiming_normal", "orthogonal", "delta_orthogonal"]

Axes = int | Sequence[int]


@runtime_checkable
class Initializer(Protocol):
    """A parameter initializer: ``init(key, shape, dtype=None) -> Array``."""

    def __call__(self, key: Any, shape: Sequence[int], dtype: Any = None,
                 out_sharding: Any = None) -> Array:
        """The initial values of a parameter of ``shape`` and ``dtype``."""
        raise NotImplementedError


def _dtype(dtype: Any) -> np.dtype[Any]:
    # The default float dtype (float32, or float64 with x64), as JAX's initializers.
    return dt.canonicalize(np.dtype(float)) if dtype is None else check_user_dtype(dtype)


def _placed(init: Callable[..., Array]) -> Callable[..., Array]:
    """``init``, its result resharded to ``out_sharding`` when one is given (by keyword or
    as the fourth argument): JAX's initializers draw the values sharded, the same values
    (see :func:`plait.reshard`)."""
    @functools.wraps(init)
    def placed(*args: Any, **kwargs: Any) -> Array:
        out_sharding = kwargs.pop("out_sharding", None)
        if len(args) > 3:
            args, out_sharding = args[:3], args[3]
        out = init(*args, **kwargs)
        return out if out_sharding is None else cast(Array, reshard(out, out_sharding))
    return placed


@_placed
def zeros(key: Any, shape: Sequence[int], dtype: Any = None, out_sharding: Any = None
          ) -> Array:
    """Zeros (``key`` is unused)."""
    return pnp.zeros(shape, _dtype(dtype))


@_placed
def ones(key: Any, shape: Sequence[int], dtype: Any = None, out_sharding: Any = None
         ) -> Array:
    """Ones (``key`` is unused)."""
    return pnp.ones(shape, _dtype(dtype))


def constant(value: Any, dtype: Any = None) -> Initializer:
    """An initializer filling with ``value``."""
    default = dtype

    @_placed
    def init(key: Any, shape: Sequence[int], dtype: Any = default,
             out_sharding: Any = None) -> Array:
        return pnp.full(shape, value, dtype=_dtype(dtype))
    return init


def uniform(scale: Any = 1e-2, dtype: Any = None) -> Initializer:
    """An initializer drawing uniformly from ``[0, scale)``."""
    default = dtype

    @_placed
    def init(key: Any, shape: Sequence[int], dtype: Any = default,
             out_sharding: Any = None) -> Array:
        d = _dtype(dtype)
        out: Array = random_uniform(key, shape, d) * pnp.array(scale, d)
        return out
    return init


def normal(stddev: Any = 1e-2, dtype: Any = None) -> Initializer:
    """An initializer drawing from a centered normal of standard deviation ``stddev``."""
    default = dtype

    @_placed
    def init(key: Any, shape: Sequence[int], dtype: Any = default,
             out_sharding: Any = None) -> Array:
        d = _dtype(dtype)
        out: Array = random_normal(key, shape, d) * pnp.array(stddev, d)
        return out
    return init


def truncated_normal(stddev: Any = 1e-2, dtype: Any = None, lower: Any = -2.0,
                     upper: Any = 2.0) -> Initializer:
    """An initializer drawing from a standard normal truncated to ``(lower, upper)``,
    scaled by ``stddev`` (which is therefore not the result's standard deviation)."""
    default = dtype

    @_placed
    def init(key: Any, shape: Sequence[int], dtype: Any = default,
             out_sharding: Any = None) -> Array:
        d = _dtype(dtype)
        out: Array = random_truncated_normal(key, lower, upper, shape, d) * pnp.array(stddev, d)
        return out
    return init


def _axes_size(shape: Sequence[int], axes: Axes) -> int:
    if isinstance(axes, int):
        return shape[axes]
    return math.prod(shape[i] for i in axes)


def _compute_fans(shape: Sequence[int], in_axis: Axes = -2, out_axis: Axes = -1,
                  batch_axis: Axes = ()) -> tuple[float, float]:
    """The fan-in and fan-out of a weight of ``shape``: the input and output sizes, each
    times the receptive field (the size of the axes that are neither input, output nor
    batch)."""
    if isinstance(in_axis, int) and in_axis == -2 and len(shape) <= 1:
        raise ValueError(f"Can't compute input and output sizes of a {len(shape)}-dimensional "
                         "weights tensor with default in_axis. Must be at least 2D or specify "
                         "in_axis explicitly.")
    in_size = _axes_size(shape, in_axis)
    out_size = _axes_size(shape, out_axis)
    batch_size = _axes_size(shape, batch_axis)
    receptive_field_size = math.prod(shape) / in_size / out_size / batch_size
    return in_size * receptive_field_size, out_size * receptive_field_size


def _complex_dtype(dtype: np.dtype[Any]) -> tuple[np.dtype[Any], np.dtype[Any]]:
    real = np.array(0, dtype).real.dtype
    return real, np.dtype(np.complex128 if real == np.float64 else np.complex64)


def _complex_uniform(key: Any, shape: Sequence[int], dtype: np.dtype[Any]) -> Array:
    # Uniform on the unit disk scaled to variance 1: r = sqrt(2 U), angle uniform.
    key_r, key_theta = split(key)
    real, cdtype = _complex_dtype(dtype)
    r = pnp.sqrt(2 * random_uniform(key_r, shape, real)).astype(cdtype)
    theta = 2 * np.pi * random_uniform(key_theta, shape, real).astype(cdtype)
    out: Array = r * pnp.exp(1j * theta)
    return out


def _complex_truncated_normal(key: Any, upper: Any, shape: Sequence[int],
                              dtype: np.dtype[Any]) -> Array:
    # A complex normal truncated to |z| < upper, by inverting the CDF of |z|.
    key_r, key_theta = split(key)
    real, cdtype = _complex_dtype(dtype)
    t = ((1 - pnp.exp(pnp.array(-(upper ** 2), cdtype)))
         * random_uniform(key_r, shape, real).astype(cdtype))
    r = pnp.sqrt(-pnp.log(1 - t))
    theta = 2 * np.pi * random_uniform(key_theta, shape, real).astype(cdtype)
    out: Array = r * pnp.exp(1j * theta)
    return out


def variance_scaling(scale: Any,
                     mode: Literal["fan_in", "fan_out", "fan_avg", "fan_geo_avg"],
                     distribution: Literal["truncated_normal", "normal", "uniform"],
                     in_axis: Axes = -2, out_axis: Axes = -1, batch_axis: Axes = (),
                     dtype: Any = None) -> Initializer:
    """An initializer of variance ``scale / n``, ``n`` the fan-in, fan-out, their mean
    or geometric mean (``mode``), drawn from ``distribution``: a normal truncated to two
    standard deviations (rescaled to that variance), a normal, or a uniform.  The fans
    are computed from the shape, the axes ``in_axis``, ``out_axis`` and ``batch_axis``
    telling the input, output and batch dimensions."""
    default = dtype

    @_placed
    def init(key: Any, shape: Sequence[int], dtype: Any = default,
             out_sharding: Any = None) -> Array:
        shape = tuple(int(s) for s in shape)
        d = _dtype(dtype)
        fan_in, fan_out = _compute_fans(shape, in_axis, out_axis, batch_axis)
        if mode == "fan_in":
            denominator = fan_in
        elif mode == "fan_out":
            denominator = fan_out
        elif mode == "fan_avg":
            denominator = (fan_in + fan_out) / 2
        elif mode == "fan_geo_avg":
            denominator = (fan_in * fan_out) ** 0.5
        else:
            raise ValueError(f"invalid mode for variance scaling initializer: {mode}")
        variance = pnp.array(scale / denominator, dtype=d)
        out: Array
        if distribution == "truncated_normal":
            if dt.is_float(d):
                # The standard deviation of a standard normal truncated to (-2, 2).
                stddev = pnp.sqrt(variance) / pnp.array(.87962566103423978, d)
                out = random_truncated_normal(key, -2, 2, shape, d) * stddev
            else:
                # That of a complex standard normal truncated to |z| < 2.
                stddev = pnp.sqrt(variance) / pnp.array(.95311164380491208, d)
                out = _complex_truncated_normal(key, 2, shape, d) * stddev
        elif distribution == "normal":
            out = random_normal(key, shape, d) * pnp.sqrt(variance)
        elif distribution == "uniform":
            if dt.is_float(d):
                out = random_uniform(key, shape, d, -1) * pnp.sqrt(3 * variance)
            else:
                out = _complex_uniform(key, shape, d) * pnp.sqrt(variance)
        else:
            raise ValueError(f"invalid distribution for variance scaling initializer: "
                             f"{distribution}")
        return out
    return init


def glorot_uniform(in_axis: Axes = -2, out_axis: Axes = -1, batch_axis: Axes = (),
                   dtype: Any = None) -> Initializer:
    """Glorot (Xavier) uniform: ``variance_scaling(1.0, 'fan_avg', 'uniform')``."""
    return variance_scaling(1.0, "fan_avg", "uniform", in_axis=in_axis, out_axis=out_axis,
                            batch_axis=batch_axis, dtype=dtype)


def glorot_normal(in_axis: Axes = -2, out_axis: Axes = -1, batch_axis: Axes = (),
                  dtype: Any = None) -> Initializer:
    """Glorot (Xavier) normal: ``variance_scaling(1.0, 'fan_avg', 'truncated_normal')``."""
    return variance_scaling(1.0, "fan_avg", "truncated_normal", in_axis=in_axis,
                            out_axis=out_axis, batch_axis=batch_axis, dtype=dtype)


def lecun_uniform(in_axis: Axes = -2, out_axis: Axes = -1, batch_axis: Axes = (),
                  dtype: Any = None) -> Initializer:
    """LeCun uniform: ``variance_scaling(1.0, 'fan_in', 'uniform')``."""
    return variance_scaling(1.0, "fan_in", "uniform", in_axis=in_axis, out_axis=out_axis,
                            batch_axis=batch_axis, dtype=dtype)


def lecun_normal(in_axis: Axes = -2, out_axis: Axes = -1, batch_axis: Axes = (),
                 dtype: Any = None) -> Initializer:
    """LeCun normal: ``variance_scaling(1.0, 'fan_in', 'truncated_normal')``."""
    return variance_scaling(1.0, "fan_in", "truncated_normal", in_axis=in_axis,
                            out_axis=out_axis, batch_axis=batch_axis, dtype=dtype)


def he_uniform(in_axis: Axes = -2, out_axis: Axes = -1, batch_axis: Axes = (),
               dtype: Any = None) -> Initializer:
    """He (Kaiming) uniform: ``variance_scaling(2.0, 'fan_in', 'uniform')``."""
    return variance_scaling(2.0, "fan_in", "uniform", in_axis=in_axis, out_axis=out_axis,
                            batch_axis=batch_axis, dtype=dtype)


def he_normal(in_axis: Axes = -2, out_axis: Axes = -1, batch_axis: Axes = (),
              dtype: Any = None) -> Initializer:
    """He (Kaiming) normal: ``variance_scaling(2.0, 'fan_in', 'truncated_normal')``."""
    return variance_scaling(2.0, "fan_in", "truncated_normal", in_axis=in_axis,
                            out_axis=out_axis, batch_axis=batch_axis, dtype=dtype)


xavier_uniform = glorot_uniform
xavier_normal = glorot_normal
kaiming_uniform = he_uniform
kaiming_normal = he_normal


def orthogonal(scale: Any = 1.0, column_axis: int = -1, dtype: Any = None) -> Initializer:
    """An initializer of (scaled) orthogonal matrices: the weight, flattened to a matrix
    whose columns are along ``column_axis``, has orthonormal rows or columns."""
    default = dtype

    @_placed
    def init(key: Any, shape: Sequence[int], dtype: Any = default,
             out_sharding: Any = None) -> Array:
        d = _dtype(dtype)
        if len(shape) < 2:
            raise ValueError("orthogonal initializer requires at least a 2D shape")
        shape = tuple(int(s) for s in shape)
        if any(dim == 0 for dim in shape):
            return pnp.zeros(shape, dtype=d)
        n_rows, n_cols = math.prod(shape) // shape[column_axis], shape[column_axis]
        q = random_orthogonal(key, n_rows, (), d, n_cols)
        rest = tuple(np.delete(np.array(shape), column_axis).tolist())
        q = pnp.moveaxis(pnp.reshape(q, rest + (shape[column_axis],)), -1, column_axis)
        out: Array = pnp.array(scale, d) * q
        return out
    return init


def delta_orthogonal(scale: Any = 1.0, column_axis: int = -1, dtype: Any = None
                     ) -> Initializer:
    """An initializer of 3-D, 4-D or 5-D convolution kernels that are zero except at the
    spatial center, which holds an orthogonal matrix (Xiao et al., 2018)."""
    default = dtype

    @_placed
    def init(key: Any, shape: Sequence[int], dtype: Any = default,
             out_sharding: Any = None) -> Array:
        d = _dtype(dtype)
        if len(shape) not in (3, 4, 5):
            raise ValueError("Delta orthogonal initializer requires a 3D, 4D or 5D shape.")
        shape = tuple(int(s) for s in shape)
        if shape[-1] < shape[-2]:
            raise ValueError("`fan_in` must be less or equal than `fan_out`. ")
        ortho_matrix = orthogonal(scale=scale, column_axis=column_axis, dtype=d)(
            key, shape[-2:])
        w = pnp.zeros(shape, dtype=d)
        center = tuple((k - 1) // 2 for k in shape[:-2])
        out: Array = w.at[(*center, ...)].set(ortho_matrix)
        return out
    return init

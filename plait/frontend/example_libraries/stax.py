"""Stax, a small neural-network specification library, as JAX 0.10.2's
``jax.example_libraries.stax``.

A layer is a pair ``(init_fun, apply_fun)``: ``init_fun(rng, input_shape)`` returns
``(output_shape, params)`` and ``apply_fun(params, inputs, **kwargs)`` computes the
layer (``rng=`` is the key of the stochastic layers).  Layer constructors are
CamelCase (``Dense(10)``, ``Conv(32, (3, 3))``); ``Flatten``, ``Identity``,
``FanInSum`` and the activations (``Relu``, ``Tanh``...) are layers themselves.
``serial``, ``parallel`` and ``shape_dependent`` combine layers.

For the same key, parameters equal JAX's bit for bit: every layer splits its key in
the order JAX's does, and draws with the same initializers.  Like JAX's, the library
is an example, not a complete framework.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from plait.frontend import lax
from plait.frontend import numpy as pnp
from plait.frontend.core.array_base import Array
from plait.frontend.nn.activations import (
    elu,
    gelu,
    leaky_relu,
    relu,
    selu,
    sigmoid,
    softplus,
)
from plait.frontend.nn.initializers import glorot_normal, normal, ones, zeros
from plait.frontend.nn.softmax import log_softmax, softmax, standardize
from plait.frontend.random.keys import split
from plait.frontend.random.samplers import bernoulli

__all__ = ["Shape", "Params", "ParamInit", "InitFun", "ApplyFun", "Layer",
           "Dense", "GeneralConv", "Conv", "GeneralConvTranspose", "Conv1DTranspose",
           "ConvTranspose", "BatchNorm", "elementwise", "Tanh", "Relu", "Exp", "LogSoftmax",
           "Softmax", "Softplus", "Sigmoid", "Elu", "LeakyRelu", "Selu", "Gelu", "MaxPool",
           "SumPool", "AvgPool", "Flatten", "Identity", "FanOut", "FanInSum", "FanInConcat",
           "Dropout", "serial", "parallel", "shape_dependent",
           # JAX's module exposes the functions its layers use, and three old aliases.
           "relu", "log_softmax", "softmax", "softplus", "sigmoid", "elu", "leaky_relu",
           "selu", "gelu", "standardize", "glorot_normal", "normal", "ones", "zeros",
           "glorot", "randn", "logsoftmax"]

# Older names, which JAX's module keeps.
glorot = glorot_normal
randn = normal
logsoftmax = log_softmax

Shape = tuple[int, ...]
Params = Any  # a pytree of arrays: () for layers without parameters
DimensionNumbers = tuple[str, str, str]
Padding = str | Sequence[tuple[int, int]]
# What stax asks of an initializer: ``init(key, shape)`` returns an array.
ParamInit = Callable[[Any, Sequence[int]], Any]

# The shape a layer takes is a Shape, or a sequence of them for the fan-in layers and
# ``parallel``; what it gives may be a sequence too (``FanOut``).
InitFun = Callable[[Any, Any], tuple[Any, Params]]


class ApplyFun(Protocol):
    """A layer's computation: ``apply_fun(params, inputs, **kwargs)``."""

    def __call__(self, params: Params, inputs: Any, **kwargs: Any) -> Any:
        """The layer's outputs for ``inputs``; ``rng=`` is a key or ``None``."""


Layer = tuple[InitFun, ApplyFun]


# Default initializers, made once as JAX's (default arguments are evaluated once).
_DENSE_W_INIT = glorot_normal()
_DENSE_B_INIT = normal()
_BIAS_INIT = normal(1e-6)


def _split2(rng: Any) -> tuple[Array, Array]:
    first, second = split(rng)
    return first, second


def Dense(out_dim: int, W_init: ParamInit = _DENSE_W_INIT,
          b_init: ParamInit = _DENSE_B_INIT) -> Layer:
    """A fully connected layer: ``inputs @ W + b`` over the last axis."""
    def init_fun(rng: Any, input_shape: Shape) -> tuple[Shape, Params]:
        k_w, k_b = _split2(rng)
        params = W_init(k_w, (input_shape[-1], out_dim)), b_init(k_b, (out_dim,))
        return (*input_shape[:-1], out_dim), params

    def apply_fun(params: Params, inputs: Any, **kwargs: Any) -> Array:
        W, b = params
        out: Array = pnp.dot(inputs, W) + b
        return out
    return init_fun, apply_fun


def _kernel_shape(dimension_numbers: DimensionNumbers, input_shape: Shape, out_chan: int,
                  filter_shape: Sequence[int]) -> list[int]:
    """The kernel's shape in the layout of ``rhs_spec``: spatial sizes in order."""
    lhs_spec, rhs_spec, _ = dimension_numbers
    spatial = iter(filter_shape)
    sizes = {"O": out_chan, "I": input_shape[lhs_spec.index("C")]}
    return [sizes[c] if c in sizes else next(spatial) for c in rhs_spec]


def _conv_layer(shape_of: Callable[..., tuple[int, ...]], conv: Callable[..., Array],
                dimension_numbers: DimensionNumbers, out_chan: int,
                filter_shape: Sequence[int], strides: Sequence[int] | None, padding: Padding,
                W_init: ParamInit | None, b_init: ParamInit) -> Layer:
    """A convolution (``conv``, whose output shape is ``shape_of``'s) plus a bias."""
    _, rhs_spec, out_spec = dimension_numbers
    strides = tuple(strides) if strides else (1,) * len(filter_shape)
    # The kernel's fans are its input and output features, wherever rhs_spec puts them.
    w_init = W_init or glorot_normal(rhs_spec.index("I"), rhs_spec.index("O"))

    def init_fun(rng: Any, input_shape: Shape) -> tuple[Shape, Params]:
        kernel = _kernel_shape(dimension_numbers, input_shape, out_chan, filter_shape)
        out_shape = shape_of(input_shape, kernel, strides, padding, dimension_numbers)
        bias = [out_chan if c == "C" else 1 for c in out_spec]
        k_w, k_b = _split2(rng)
        return out_shape, (w_init(k_w, kernel), b_init(k_b, bias))

    def apply_fun(params: Params, inputs: Any, **kwargs: Any) -> Array:
        W, b = params
        out: Array = conv(inputs, W, strides, padding, dimension_numbers) + b
        return out
    return init_fun, apply_fun


def _conv(inputs: Any, W: Any, strides: Sequence[int], padding: Padding,
          dimension_numbers: DimensionNumbers) -> Array:
    ones_ = (1,) * len(strides)
    return lax.conv_general_dilated(inputs, W, strides, padding, ones_, ones_,
                                    dimension_numbers=dimension_numbers)


def _conv_transpose(inputs: Any, W: Any, strides: Sequence[int], padding: Padding,
                    dimension_numbers: DimensionNumbers) -> Array:
    return lax.conv_transpose(inputs, W, strides, padding,
                              dimension_numbers=dimension_numbers)


def GeneralConv(dimension_numbers: DimensionNumbers, out_chan: int,
                filter_shape: Sequence[int], strides: Sequence[int] | None = None,
                padding: Padding = "VALID", W_init: ParamInit | None = None,
                b_init: ParamInit = _BIAS_INIT) -> Layer:
    """A convolution with ``out_chan`` features and a bias, in the layouts of
    ``dimension_numbers`` (``(lhs_spec, rhs_spec, out_spec)``, e.g.
    ``('NHWC', 'HWIO', 'NHWC')``); ``W_init`` defaults to Glorot normal."""
    return _conv_layer(lax.conv_general_shape_tuple, _conv, dimension_numbers, out_chan,
                       filter_shape, strides, padding, W_init, b_init)


def Conv(out_chan: int, filter_shape: Sequence[int],
         strides: Sequence[int] | None = None, padding: Padding = "VALID",
         W_init: ParamInit | None = None,
         b_init: ParamInit = _BIAS_INIT) -> Layer:
    """A 2-D convolution layer on ``NHWC`` inputs with an ``HWIO`` kernel."""
    return GeneralConv(("NHWC", "HWIO", "NHWC"), out_chan, filter_shape, strides, padding,
                       W_init, b_init)


def GeneralConvTranspose(dimension_numbers: DimensionNumbers, out_chan: int,
                         filter_shape: Sequence[int], strides: Sequence[int] | None = None,
                         padding: Padding = "VALID",
                         W_init: ParamInit | None = None,
                         b_init: ParamInit = _BIAS_INIT) -> Layer:
    """A transposed convolution (``lax.conv_transpose``) with ``out_chan`` features and
    a bias, in the layouts of ``dimension_numbers``."""
    return _conv_layer(lax.conv_transpose_shape_tuple, _conv_transpose, dimension_numbers,
                       out_chan, filter_shape, strides, padding, W_init, b_init)


def Conv1DTranspose(out_chan: int, filter_shape: Sequence[int],
                    strides: Sequence[int] | None = None, padding: Padding = "VALID",
                    W_init: ParamInit | None = None,
                    b_init: ParamInit = _BIAS_INIT) -> Layer:
    """A 1-D transposed convolution layer on ``NHC`` inputs with an ``HIO`` kernel."""
    return GeneralConvTranspose(("NHC", "HIO", "NHC"), out_chan, filter_shape, strides,
                                padding, W_init, b_init)


def ConvTranspose(out_chan: int, filter_shape: Sequence[int],
                  strides: Sequence[int] | None = None, padding: Padding = "VALID",
                  W_init: ParamInit | None = None,
                  b_init: ParamInit = _BIAS_INIT) -> Layer:
    """A 2-D transposed convolution layer on ``NHWC`` inputs with an ``HWIO`` kernel."""
    return GeneralConvTranspose(("NHWC", "HWIO", "NHWC"), out_chan, filter_shape, strides,
                                padding, W_init, b_init)


def BatchNorm(axis: int | Sequence[int] = (0, 1, 2), epsilon: float = 1e-5,
              center: bool = True, scale: bool = True, beta_init: ParamInit = zeros,
              gamma_init: ParamInit = ones) -> Layer:
    """Batch normalization: inputs standardized over ``axis`` (batch statistics, no
    running averages), then scaled by ``gamma`` if ``scale`` and shifted by ``beta`` if
    ``center``.  A parameter that is not used is ``()``."""
    axes = tuple(axis) if isinstance(axis, Sequence) else (axis,)

    def init_fun(rng: Any, input_shape: Shape) -> tuple[Shape, Params]:
        # As in JAX, only non-negative axes are taken out of the parameters' shape.
        shape = tuple(d for i, d in enumerate(input_shape) if i not in axes)
        k_beta, k_gamma = _split2(rng)
        beta = beta_init(k_beta, shape) if center else ()
        gamma = gamma_init(k_gamma, shape) if scale else ()
        return input_shape, (beta, gamma)

    def apply_fun(params: Params, inputs: Any, **kwargs: Any) -> Array:
        beta, gamma = params
        # The parameters get back the normalized axes, as size-1 axes.
        bcast = tuple(None if i in axes else slice(None) for i in range(pnp.ndim(inputs)))
        z = standardize(inputs, axes, epsilon=epsilon)
        if scale:
            z = gamma[bcast] * z
        if center:
            z = z + beta[bcast]
        return z
    return init_fun, apply_fun


def _same_shape(rng: Any, input_shape: Any) -> tuple[Any, Params]:
    return input_shape, ()


def elementwise(fun: Callable[..., Any], **fun_kwargs: Any) -> Layer:
    """A layer without parameters applying ``fun(inputs, **fun_kwargs)``."""
    def apply_fun(params: Params, inputs: Any, **kwargs: Any) -> Any:
        return fun(inputs, **fun_kwargs)
    return _same_shape, apply_fun


Tanh = elementwise(pnp.tanh)
Relu = elementwise(relu)
Exp = elementwise(pnp.exp)
LogSoftmax = elementwise(log_softmax, axis=-1)
Softmax = elementwise(softmax, axis=-1)
Softplus = elementwise(softplus)
Sigmoid = elementwise(sigmoid)
Elu = elementwise(elu)
LeakyRelu = elementwise(leaky_relu)
Selu = elementwise(selu)
Gelu = elementwise(gelu)


def _non_spatial_axes(spec: str | None, ndim: int) -> tuple[int, int]:
    # Without a spec the batch axis is first and the feature axis last.
    return (0, ndim - 1) if spec is None else (spec.index("N"), spec.index("C"))


def _with_unit_axes(sizes: tuple[int, ...], axes: tuple[int, int]) -> tuple[int, ...]:
    """``sizes`` (spatial) with a 1 inserted at each of the (full-rank) ``axes``."""
    for i in sorted(axes):
        sizes = (*sizes[:i], 1, *sizes[i:])
    return sizes


def _window_sizes(inputs: Any, window: tuple[int, ...], strides: tuple[int, ...],
                  padding: str, spec: str | None) -> Array:
    """How many elements of ``inputs`` (not of the padding) each window covers."""
    axes = _non_spatial_axes(spec, inputs.ndim)
    spatial = tuple(n for i, n in enumerate(inputs.shape) if i not in axes)
    counts: Array = lax.reduce_window(pnp.ones(spatial, dtype=inputs.dtype), 0., lax.add,
                                      window, strides, padding)
    for i in sorted(axes):
        counts = pnp.expand_dims(counts, i)
    return counts


def _pool(reducer: Callable[..., Any], init_value: float, average: bool,
          window_shape: Sequence[int], strides: Sequence[int] | None, padding: str,
          spec: str | None) -> Layer:
    """``reducer`` over each window of the spatial axes of the inputs (laid out as
    ``spec``, or ``N...C``), divided by the window's size if ``average``."""
    spatial_window = tuple(window_shape)
    spatial_strides = tuple(strides) if strides else (1,) * len(spatial_window)
    axes = _non_spatial_axes(spec, len(spatial_window) + 2)
    window = _with_unit_axes(spatial_window, axes)
    full_strides = _with_unit_axes(spatial_strides, axes)

    def init_fun(rng: Any, input_shape: Shape) -> tuple[Shape, Params]:
        pads = lax.padtype_to_pads(input_shape, window, full_strides, padding)
        return lax.reduce_window_shape_tuple(input_shape, window, full_strides, pads), ()

    def apply_fun(params: Params, inputs: Any, **kwargs: Any) -> Array:
        out: Array = lax.reduce_window(inputs, init_value, reducer, window, full_strides,
                                       padding)
        if average:
            out = out / _window_sizes(inputs, spatial_window, spatial_strides, padding, spec)
        return out
    return init_fun, apply_fun


def MaxPool(window_shape: Sequence[int], strides: Sequence[int] | None = None,
            padding: str = "VALID", spec: str | None = None) -> Layer:
    """Max pooling over the spatial axes (``window_shape`` and ``strides`` name only
    those; ``spec`` such as ``'NCHW'`` places the batch and feature axes)."""
    return _pool(lax.max, -pnp.inf, False, window_shape, strides, padding, spec)


def SumPool(window_shape: Sequence[int], strides: Sequence[int] | None = None,
            padding: str = "VALID", spec: str | None = None) -> Layer:
    """Sum pooling over the spatial axes, as :func:`MaxPool`'s arguments."""
    return _pool(lax.add, 0., False, window_shape, strides, padding, spec)


def AvgPool(window_shape: Sequence[int], strides: Sequence[int] | None = None,
            padding: str = "VALID", spec: str | None = None) -> Layer:
    """Average pooling over the spatial axes, as :func:`MaxPool`'s arguments; with
    ``'SAME'`` padding a window's average counts only the input elements it covers."""
    return _pool(lax.add, 0., True, window_shape, strides, padding, spec)


def _flatten_init(rng: Any, input_shape: Shape) -> tuple[Shape, Params]:
    return (input_shape[0], math.prod(input_shape[1:])), ()


def _flatten_apply(params: Params, inputs: Any, **kwargs: Any) -> Array:
    return pnp.reshape(inputs, (inputs.shape[0], -1))


Flatten: Layer = (_flatten_init, _flatten_apply)
"""The layer flattening every axis but the leading (batch) one."""


def _identity_apply(params: Params, inputs: Any, **kwargs: Any) -> Any:
    return inputs


Identity: Layer = (_same_shape, _identity_apply)
"""The layer returning its inputs unchanged."""


def FanOut(num: int) -> Layer:
    """A layer giving ``num`` copies of its input, as a list (for :func:`parallel`)."""
    def init_fun(rng: Any, input_shape: Shape) -> tuple[list[Shape], Params]:
        return [input_shape] * num, ()

    def apply_fun(params: Params, inputs: Any, **kwargs: Any) -> list[Any]:
        return [inputs] * num
    return init_fun, apply_fun


def _fan_in_sum_init(rng: Any, input_shape: Sequence[Shape]) -> tuple[Shape, Params]:
    return input_shape[0], ()


def _fan_in_sum_apply(params: Params, inputs: Sequence[Any], **kwargs: Any) -> Any:
    # Python's sum starts from 0, as JAX's layer does: -0.0 + -0.0 also gives +0.0 here.
    return sum(inputs)


FanInSum: Layer = (_fan_in_sum_init, _fan_in_sum_apply)
"""The layer adding up a sequence of equally shaped inputs."""


def FanInConcat(axis: int = -1) -> Layer:
    """A layer concatenating a sequence of inputs along ``axis``."""
    def init_fun(rng: Any, input_shape: Sequence[Shape]) -> tuple[Shape, Params]:
        first = input_shape[0]
        ax = axis % len(first)
        size = sum(shape[ax] for shape in input_shape)
        return (*first[:ax], size, *first[ax + 1:]), ()

    def apply_fun(params: Params, inputs: Sequence[Any], **kwargs: Any) -> Array:
        return pnp.concatenate(inputs, axis)
    return init_fun, apply_fun


def Dropout(rate: float, mode: str = "train") -> Layer:
    """Dropout: in ``'train'`` mode each input is kept with probability ``rate`` (as in
    JAX, ``rate`` is the probability to keep) and divided by it, else set to 0; in any
    other mode inputs pass unchanged.  ``apply_fun`` needs ``rng=`` in every mode."""
    def apply_fun(params: Params, inputs: Any, *, rng: Any = None, **kwargs: Any) -> Any:
        if rng is None:
            raise ValueError("Dropout layer requires a PRNG key: call its apply_fun as "
                             "apply_fun(params, inputs, rng=key), with a key from "
                             "plait.random.key")
        if mode != "train":
            return inputs
        keep = bernoulli(rng, rate, inputs.shape)
        return pnp.where(keep, inputs / rate, 0)
    return _same_shape, apply_fun


def _layer_keys(rng: Any, n: int) -> Sequence[Any]:
    """One key per layer, from the key passed to a combinator's ``apply_fun``."""
    return [None] * n if rng is None else list(split(rng, n))


def serial(*layers: Layer) -> Layer:
    """The layers composed in sequence: each one's output is the next one's input.
    Parameters are a list, one entry per layer."""
    init_funs = [init for init, _ in layers]
    apply_funs = [apply for _, apply in layers]

    def init_fun(rng: Any, input_shape: Any) -> tuple[Any, list[Params]]:
        params = []
        for init in init_funs:
            rng, layer_rng = _split2(rng)
            input_shape, layer_params = init(layer_rng, input_shape)
            params.append(layer_params)
        return input_shape, params

    def apply_fun(params: Params, inputs: Any, *, rng: Any = None, **kwargs: Any) -> Any:
        for apply, p, r in zip(apply_funs, params, _layer_keys(rng, len(layers))):
            inputs = apply(p, inputs, rng=r, **kwargs)
        return inputs
    return init_fun, apply_fun


def parallel(*layers: Layer) -> Layer:
    """The layers side by side: the i-th takes the i-th of a sequence of inputs and
    gives the i-th output (often between :func:`FanOut` and :data:`FanInSum`).
    ``init_fun`` returns a tuple of output shapes and a tuple of parameters."""
    init_funs = [init for init, _ in layers]
    apply_funs = [apply for _, apply in layers]

    def init_fun(rng: Any, input_shape: Sequence[Any]
                 ) -> tuple[tuple[Any, ...], tuple[Params, ...]]:
        rngs = split(rng, len(layers))
        results = [init(r, s) for init, r, s in zip(init_funs, rngs, input_shape)]
        return tuple(s for s, _ in results), tuple(p for _, p in results)

    def apply_fun(params: Params, inputs: Sequence[Any], *, rng: Any = None,
                  **kwargs: Any) -> list[Any]:
        rngs = _layer_keys(rng, len(layers))
        return [apply(p, x, rng=r, **kwargs)
                for apply, p, x, r in zip(apply_funs, params, inputs, rngs)]
    return init_fun, apply_fun


def shape_dependent(make_layer: Callable[[Shape], Layer]) -> Layer:
    """The layer ``make_layer(input_shape)``, built when the input shape is known (at
    ``init_fun``, and again from ``inputs.shape`` at each ``apply_fun``)."""
    def init_fun(rng: Any, input_shape: Shape) -> tuple[Any, Params]:
        return make_layer(input_shape)[0](rng, input_shape)

    def apply_fun(params: Params, inputs: Any, **kwargs: Any) -> Any:
        return make_layer(inputs.shape)[1](params, inputs, **kwargs)
    return init_fun, apply_fun

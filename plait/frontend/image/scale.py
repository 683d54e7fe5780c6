"""Resampling an image, as JAX 0.10.2's ``jax.image``: ``resize``, ``scale_and_translate``
and the :class:`ResizeMethod` enum.

Each spatial dimension is resampled by a matrix of weights ``w[input, output]``: the
kernel (triangle, Keys cubic, Lanczos, area...) evaluated at the distance between each
input pixel centre and each output pixel centre mapped back into the input, widened by
``1 / scale`` when downsampling with ``antialias`` (a low-pass filter), and normalised so
each output pixel's weights sum to 1.  The image is then contracted with these matrices
in one ``einsum`` at the requested ``precision``.  ``NEAREST`` is a gather instead, and
keeps the image's dtype; every other method computes in the image's inexact dtype
(integers and bools become the default float).
"""

from __future__ import annotations

import enum
import operator
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from plait.frontend import numpy as pnp
from plait.frontend.api.jit import jit
from plait.frontend.core.array_base import Array
from plait.frontend.numpy._core import (
    as_array,
    canonical_axis,
    check_arraylike,
    promote_dtypes_inexact,
)
from plait.frontend.numpy.creation import _shape_arg
from plait.ir.primitives import Precision

__all__ = ["ResizeMethod", "resize", "scale_and_translate"]

Kernel = Callable[[Array], Array]


class ResizeMethod(enum.Enum):
    """An image resize method.

    ``NEAREST`` (nearest neighbour), ``LINEAR`` (the triangle kernel), ``LANCZOS3`` and
    ``LANCZOS5`` (Lanczos kernels of radius 3 and 5), ``CUBIC`` (the Keys cubic kernel,
    ``a = -0.5``), ``CUBIC_PYTORCH`` (PyTorch's bicubic: ``CUBIC`` with ``antialias``,
    else the ``a = -0.75`` kernel with the edge pixels repeated) and ``AREA`` (the mean
    of the input pixels each output pixel covers).
    """

    NEAREST = 0
    LINEAR = 1
    LANCZOS3 = 2
    LANCZOS5 = 3
    CUBIC = 4
    CUBIC_PYTORCH = 5
    AREA = 6

    @staticmethod
    def from_string(s: str) -> ResizeMethod:
        """The method a name stands for: ``"nearest"``, ``"linear"`` (or ``"bilinear"``,
        ``"trilinear"``, ``"triangle"``), ``"lanczos3"``, ``"lanczos5"``, ``"cubic"`` (or
        ``"bicubic"``, ``"tricubic"``), ``"cubic-pytorch"`` (or ``"bicubic-pytorch"``),
        ``"area"``.

        Raises:
          ValueError: any other name.
        """
        method = _NAMES.get(s)
        if method is None:
            raise ValueError(f'Unknown resize method "{s}"')
        return method


_NAMES = {
    "nearest": ResizeMethod.NEAREST,
    "linear": ResizeMethod.LINEAR, "bilinear": ResizeMethod.LINEAR,
    "trilinear": ResizeMethod.LINEAR, "triangle": ResizeMethod.LINEAR,
    "lanczos3": ResizeMethod.LANCZOS3, "lanczos5": ResizeMethod.LANCZOS5,
    "cubic": ResizeMethod.CUBIC, "bicubic": ResizeMethod.CUBIC,
    "tricubic": ResizeMethod.CUBIC,
    "cubic-pytorch": ResizeMethod.CUBIC_PYTORCH, "bicubic-pytorch": ResizeMethod.CUBIC_PYTORCH,
    "area": ResizeMethod.AREA,
}


def _method(method: Any) -> ResizeMethod:
    if isinstance(method, str):
        return ResizeMethod.from_string(method)
    if not isinstance(method, ResizeMethod):
        raise TypeError(f"expected a ResizeMethod or a method name (a str) for method, but "
                        f"got {method!r} of type {type(method).__name__}")
    return method


# -- kernels: a weight for each (non-negative) distance, in units of input pixels --------

def _triangle(x: Array) -> Array:
    return pnp.maximum(0, 1 - pnp.abs(x))


def _keys_cubic(x: Array) -> Array:
    # Keys (1981) with a = -0.5 (Pillow's, TensorFlow's and PyTorch's with antialiasing).
    inner = ((1.5 * x - 2.5) * x) * x + 1.0
    outer = ((-0.5 * x + 2.5) * x - 4.0) * x + 2.0
    return pnp.where(x >= 2.0, 0.0, pnp.where(x >= 1.0, outer, inner))


def _opencv_cubic(x: Array) -> Array:
    # The same family with a = -0.75 (OpenCV's, and PyTorch's without antialiasing).
    a = -0.75
    inner = ((a + 2.0) * x - (a + 3.0)) * x * x + 1.0
    outer = ((a * x - 5.0 * a) * x + 8.0 * a) * x - 4.0 * a
    return pnp.where(x >= 2.0, 0.0, pnp.where(x >= 1.0, outer, inner))


def _lanczos(radius: float) -> Kernel:
    def kernel(x: Array) -> Array:
        y = radius * pnp.sin(np.pi * x) * pnp.sin(np.pi * x / radius)
        # y / (pi x)^2, and its limit 1 near 0 (the denominator kept away from 0).
        out = pnp.where(x > 1e-3, pnp.divide(y, pnp.where(x != 0, np.pi**2 * x**2, 1)), 1)
        return pnp.where(x > radius, 0.0, out)
    return kernel


# The area kernel is no function of the distance: the weights are interval overlaps.
_AREA: Kernel | None = None

_KERNELS: dict[ResizeMethod, tuple[int, Kernel | None]] = {
    ResizeMethod.LINEAR: (1, _triangle),
    ResizeMethod.LANCZOS3: (3, _lanczos(3.0)),
    ResizeMethod.LANCZOS5: (5, _lanczos(5.0)),
    ResizeMethod.CUBIC: (2, _keys_cubic),
    ResizeMethod.CUBIC_PYTORCH: (2, _opencv_cubic),
    ResizeMethod.AREA: (1, _AREA),
}

_EPS = 1000.0 * float(np.finfo(np.float32).eps)


def _normalize(weights: Array) -> Array:
    """Each output pixel's (column's) weights divided by their sum; a column whose sum
    is about zero becomes zero."""
    total = pnp.sum(weights, axis=0, keepdims=True)
    safe = pnp.where(total != 0, total, 1)
    return pnp.where(pnp.abs(total) > _EPS, pnp.divide(weights, safe), 0)


def _weight_matrix(in_size: int, out_size: int, scale: Any, translation: Any,
                   kernel: Kernel | None, antialias: bool, edge_padding: bool,
                   radius: int) -> Array:
    """The ``[in_size, out_size]`` weights resampling one dimension (in the dtype of
    ``scale`` and ``translation``: Python floats give the default float)."""
    dtype = pnp.result_type(scale, translation)
    inv_scale = 1.0 / scale
    # Downsampling widens the kernel into a low-pass filter; upsampling only interpolates.
    kernel_scale = pnp.maximum(inv_scale, 1.0) if antialias else 1.0
    # Where each output pixel's centre falls in the input, in input pixel indices.
    sample_f = ((pnp.arange(out_size, dtype=dtype) + 0.5) * inv_scale
                - translation * inv_scale - 0.5)
    # With edge padding, `radius` pixels past each edge (edge padding is only ever
    # asked for without antialiasing, so the kernel keeps its radius).
    pad = radius if edge_padding else 0
    weights: Array
    if kernel is None:
        # Area: the overlap of the output pixel [lo_out, lo_out + 1/scale) mapped into the
        # input with each input pixel [j, j + 1).
        lo_out = pnp.arange(out_size, dtype=dtype) * inv_scale - translation * inv_scale
        hi_out = lo_out + inv_scale
        lo_in = pnp.arange(in_size, dtype=dtype)
        hi_in = lo_in + 1.0
        weights = pnp.maximum(
            0.0,
            pnp.minimum(hi_out[np.newaxis, :], hi_in[:, np.newaxis])
            - pnp.maximum(lo_out[np.newaxis, :], lo_in[:, np.newaxis]))
    else:
        positions = pnp.arange(-pad, in_size + pad, dtype=dtype)
        distance = pnp.abs(sample_f[np.newaxis, :] - positions[:, np.newaxis])
        weights = kernel(distance / kernel_scale)
    if edge_padding:
        # The weights of the pixels past an edge move onto that edge pixel.
        rows = pnp.clip(pnp.arange(-pad, in_size + pad, dtype=dtype).astype(np.int32),
                        0, in_size - 1)
        cols = pnp.broadcast_to(pnp.arange(out_size)[np.newaxis, :],
                                (in_size + 2 * pad, out_size))
        folded = pnp.zeros((in_size, out_size), dtype=dtype)
        return _normalize(folded.at[rows[:, np.newaxis], cols].add(weights))
    weights = _normalize(weights)
    # Output pixels whose centre falls outside the input get nothing.
    inside = pnp.logical_and(sample_f >= -0.5, sample_f <= in_size - 0.5)
    return pnp.where(inside[np.newaxis, :], weights, 0)


def _apply(image: Array, shape: tuple[int, ...], spatial_dims: Sequence[int],
           scales: Sequence[Any], translations: Sequence[Any], method: ResizeMethod,
           antialias: bool, precision: Any) -> Array:
    """Resample ``image`` (already inexact) along ``spatial_dims`` to ``shape``."""
    if not spatial_dims:
        return image
    if method is ResizeMethod.CUBIC_PYTORCH and antialias:
        method = ResizeMethod.CUBIC
    radius, kernel = _KERNELS[method]
    edge_padding = method is ResizeMethod.CUBIC_PYTORCH and not antialias
    nd = image.ndim
    operands: list[tuple[Array, tuple[int, ...]]] = [(image, tuple(range(nd)))]
    out_labels = list(range(nd))
    for i, d in enumerate(spatial_dims):
        w = _weight_matrix(image.shape[d], shape[d], scales[i], translations[i], kernel,
                           antialias, edge_padding, radius)
        operands.append((w.astype(image.dtype), (d, nd + i)))
        out_labels[d] = nd + i
    return _contract(operands, tuple(out_labels), precision)


def _contract(operands: list[tuple[Array, tuple[int, ...]]], output: tuple[int, ...],
              precision: Any) -> Array:
    """The einsum of ``operands`` (arrays with their axis labels) into ``output``, in
    JAX's order of contractions, so the results round alike."""
    args: list[Any] = []
    for array, labels in operands:
        args += [array, list(labels)]
    return pnp.einsum(*args, list(output), precision=precision)


def _check_rank(image: Any, shape: tuple[int, ...]) -> None:
    if len(shape) != pnp.ndim(image):
        raise ValueError(f"shape must have length equal to the number of dimensions of x; "
                         f"expected a shape of length {pnp.ndim(image)}, but got {shape} "
                         f"for an image of shape {pnp.shape(image)}")


def _check_sizes(in_shape: tuple[int, ...], shape: tuple[int, ...],
                 dims: Sequence[int]) -> None:
    for d in dims:
        if in_shape[d] == 0 and shape[d] != 0:
            raise ValueError(f"cannot resample dimension {d} of an empty image (shape "
                             f"{in_shape}) to size {shape[d]}: expected a non-empty input "
                             f"dimension")


def _resize_nearest(x: Array, shape: tuple[int, ...]) -> Array:
    for d in range(x.ndim):
        m, n = x.shape[d], shape[d]
        if m == n:
            continue
        # The input pixel whose cell holds each output pixel's centre (computed in
        # float32, as JAX does).
        centres = (pnp.arange(n, dtype=np.float32) + 0.5) * m / n
        offsets = pnp.floor(centres.astype(np.float32)).astype(np.int32)
        index: list[Any] = [slice(None)] * x.ndim
        index[d] = offsets
        x = x[tuple(index)]
    return x


def _resize(image: Any, shape: tuple[int, ...], method: Any, antialias: bool,
            precision: Any) -> Array:
    m = _method(method)
    if m is ResizeMethod.NEAREST:
        return _resize_nearest(as_array(image), shape)
    x = as_array(promote_dtypes_inexact("resize", image)[0])
    # Dimensions that keep their size are left alone: every kernel interpolates, so the
    # identity warp gives the input back.
    dims = tuple(d for d in range(len(shape)) if x.shape[d] != shape[d])
    scales = [1.0 if shape[d] == 0 else shape[d] / x.shape[d] for d in dims]
    return _apply(x, shape, dims, scales, [0.0] * len(dims), m, antialias, precision)


_resize.__name__ = _resize.__qualname__ = "_resize"
_resize_jit = jit(_resize, static_argnames=("shape", "method", "antialias", "precision"))


def resize(image: Any, shape: int | Sequence[int], method: str | ResizeMethod,
           antialias: bool = True, precision: Any = Precision.HIGHEST) -> Array:
    """``image`` resampled to ``shape`` (one size per dimension, batch and channel
    dimensions included: leave those unchanged) by ``method``, a :class:`ResizeMethod`
    or its name (``"nearest"``, ``"linear"``, ``"cubic"``, ``"lanczos3"``...).

    ``NEAREST`` keeps the image's dtype and ignores ``antialias`` and ``precision``;
    the other methods return the image's inexact dtype, and with ``antialias`` low-pass
    filter when downsampling.

    Raises:
      ValueError: an unknown method name, ``shape`` of the wrong length, a negative size,
        or an empty input dimension resized to a non-empty one.
      TypeError: ``image`` is not an array, ``shape`` is not a sequence of ints, or
        ``method`` is neither a ``ResizeMethod`` nor a str.
    """
    check_arraylike("resize", image)
    dims = _shape_arg(shape)
    _check_rank(image, dims)
    m = _method(method)
    _check_sizes(pnp.shape(image), dims, range(len(dims)))
    return _resize_jit(image, shape=dims, method=m, antialias=bool(antialias),
                       precision=precision)


def scale_and_translate(image: Any, shape: int | Sequence[int], spatial_dims: Sequence[int],
                        scale: Any, translation: Any, method: str | ResizeMethod,
                        antialias: bool = True, precision: Any = Precision.HIGHEST) -> Array:
    """``image`` scaled by ``scale`` and translated by ``translation`` (one of each per
    dimension of ``spatial_dims``) and sampled onto a grid of ``shape``: an input point
    ``x`` (pixel centres at ``i + 0.5``) lands at ``x * scale + translation``.  Output
    pixels whose centre maps outside the input are zero.

    ``method`` is any :class:`ResizeMethod` (or its name) but ``NEAREST``.  ``scale`` and
    ``translation`` are arrays of shape ``[len(spatial_dims)]``, and may be traced
    (differentiated, vmapped).

    Raises:
      ValueError: ``NEAREST``, an unknown method name, ``shape`` of the wrong length or
        with a negative size, or ``scale``/``translation`` of another length than
        ``spatial_dims``.
      TypeError: a non-array ``image``, ``scale`` or ``translation`` (a list, say).
    """
    check_arraylike("scale_and_translate", image, scale, translation)
    dims = _shape_arg(shape)
    _check_rank(image, dims)
    m = _method(method)
    if m is ResizeMethod.NEAREST:
        raise ValueError("Nearest neighbor resampling is not currently supported for "
                         "scale_and_translate.")
    nd = len(dims)
    spatial = [canonical_axis(operator.index(d), nd, "spatial_dims") for d in spatial_dims]
    for name, v in (("scale", scale), ("translation", translation)):
        if pnp.shape(v) != (len(spatial),):
            raise ValueError(f"expected {name} of shape ({len(spatial)},) (one per spatial "
                             f"dimension), but got shape {pnp.shape(v)}")
    x = as_array(promote_dtypes_inexact("scale_and_translate", image)[0])
    s, t = (as_array(v) for v in promote_dtypes_inexact("scale_and_translate",
                                                        scale, translation))
    k = len(spatial)
    return _apply(x, dims, spatial, [s[i] for i in range(k)], [t[i] for i in range(k)],
                  m, bool(antialias), precision)

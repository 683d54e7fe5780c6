"""``plait.numpy.fft``: NumPy's discrete Fourier transforms, on the ``fft`` primitive.

XLA transforms the trailing one to three dimensions: other axes are moved there
and back, and more than three are done in steps.  ``s``/``n`` crop or zero-pad
the input first.  ``norm`` is ``"backward"`` (the default: the inverse divides by
the number of points), ``"ortho"`` or ``"forward"``.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

from plait.frontend.core.array_base import Array
from plait.frontend.lax.fft import fft as lax_fft
from plait.frontend.numpy._core import check_arraylike
from plait.frontend.numpy.creation import arange, asarray
from plait.frontend.numpy.manipulation import moveaxis
from plait.frontend.numpy.padding import pad
from plait.frontend.numpy.rearranging import roll
from plait.frontend.numpy.reductions import prod
from plait.frontend.numpy.ufuncs import conj, sqrt
from plait.ir import dtypes as dt
from plait.ir.primitives.fft import FftType

__all__ = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "fft2", "ifft2", "rfft2", "irfft2",
           "fftn", "ifftn", "rfftn", "irfftn", "fftfreq", "rfftfreq", "fftshift", "ifftshift"]


def _norm_scale(s: Sequence[int], dtype: Any, inverse: bool, norm: str) -> Array | None:
    """The factor ``norm`` applies to an unnormalized (``backward``) result."""
    if norm == "backward":
        return None
    n = prod(asarray(list(s), dtype=dtype))
    if norm == "ortho":
        return sqrt(n) if inverse else 1 / sqrt(n)
    if norm == "forward":
        return n if inverse else 1 / n
    raise ValueError(f'Invalid norm value {norm}; should be "backward", "ortho" or "forward".')


def _transform(x: Array, fft_type: FftType, s: Sequence[int]) -> Array:
    """``fft_type`` over the trailing ``len(s)`` axes, in steps of at most three."""
    if len(s) <= 3:
        return lax_fft(x, fft_type, tuple(s))
    k = 2 if len(s) == 4 else 3  # two 2-d steps rather than 3-d and 1-d
    outer = tuple(range(x.ndim - len(s), x.ndim - k))
    moved = tuple(range(x.ndim - len(s) + k, x.ndim))
    if fft_type in (FftType.FFT, FftType.RFFT):
        x = lax_fft(x, fft_type, tuple(s[-k:]))
        x = _transform(moveaxis(x, outer, moved), FftType.FFT, s[:-k])
        return moveaxis(x, moved, outer)
    x = _transform(moveaxis(x, outer, moved), FftType.IFFT, s[:-k])
    return lax_fft(moveaxis(x, moved, outer), fft_type, tuple(s[-k:]))


def _core(name: str, fft_type: FftType, a: Any, s: Sequence[int] | None,
          axes: Sequence[int] | None, norm: str | None) -> Array:
    check_arraylike(name, a)
    x = asarray(a)
    if s is not None:
        s = tuple(operator.index(n) for n in s)
        if any(n <= 0 for n in s):
            raise ValueError("Shape should be positive.")
        if axes is not None and len(s) != len(axes):
            raise ValueError("Shape and axes have different lengths.")
    given_axes = axes
    if axes is None:
        axes = range(x.ndim) if s is None else range(x.ndim - len(s), x.ndim)
    axes = [operator.index(ax) for ax in axes]
    if len(set(ax % max(x.ndim, 1) for ax in axes)) != len(axes):
        raise ValueError(f"jax.numpy.fft.{name} does not support repeated axes. Got axes "
                         f"{given_axes}.")
    trailing = list(range(x.ndim - len(axes), x.ndim))
    if given_axes is not None:
        x = moveaxis(x, axes, trailing)
    if s is not None:
        target = list(x.shape)
        for ax, n in zip(trailing, s):
            target[ax] = n
        if fft_type == FftType.IRFFT:
            target[-1] = target[-1] // 2 + 1  # the half spectrum of s[-1] points
        x = x[tuple(slice(n) for n in target)]
        x = pad(x, [(0, n - m) for n, m in zip(target, x.shape)])
        lengths = list(s)
    elif fft_type == FftType.IRFFT:
        lengths = [x.shape[ax] for ax in trailing[:-1]]
        if trailing:
            lengths.append(max(0, 2 * (x.shape[-1] - 1)))
    else:
        lengths = [x.shape[ax] for ax in trailing]
    out = _transform(x, fft_type, lengths)
    if norm is not None:
        scale = _norm_scale(lengths, out.dtype, name.startswith("i"), norm)
        if scale is not None:
            out = out * scale
    if given_axes is not None:
        out = moveaxis(out, trailing, axes)
    return out


def _one_axis(name: str, axis: Any) -> list[int]:
    if isinstance(axis, list | tuple):
        raise ValueError(f"jax.numpy.fft.{name} does not support multiple axes. Please use "
                         f"jax.numpy.fft.{name}n. Got axis = {axis!r}.")
    return [axis]


def _two_axes(name: str, axes: Sequence[int]) -> Sequence[int]:
    if len(axes) != 2:
        raise ValueError(f"jax.numpy.fft.{name} only supports 2 axes. Got axes = {axes!r}.")
    return axes


def _n(n: int | None) -> list[int] | None:
    return None if n is None else [n]


def fft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None) -> Array:
    """The one-dimensional discrete Fourier transform along ``axis``."""
    return _core("fft", FftType.FFT, a, _n(n), _one_axis("fft", axis), norm)


def ifft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None) -> Array:
    """The inverse of :func:`fft`."""
    return _core("ifft", FftType.IFFT, a, _n(n), _one_axis("ifft", axis), norm)


def rfft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None) -> Array:
    """The transform of real input: the ``n // 2 + 1`` non-negative frequencies."""
    return _core("rfft", FftType.RFFT, a, _n(n), _one_axis("rfft", axis), norm)


def irfft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None) -> Array:
    """The inverse of :func:`rfft`: ``n`` real points (``2 (m - 1)`` by default)."""
    return _core("irfft", FftType.IRFFT, a, _n(n), _one_axis("irfft", axis), norm)


def hfft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None) -> Array:
    """The transform of a Hermitian-symmetric signal given by its first half: real."""
    x = conj(a)
    ax = _one_axis("hfft", axis)
    points = (x.shape[axis] - 1) * 2 if n is None else n
    return _core("hfft", FftType.IRFFT, x, _n(n), ax, norm) * points


def ihfft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None) -> Array:
    """The inverse of :func:`hfft`."""
    ax = _one_axis("ihfft", axis)
    x = asarray(a)
    points = x.shape[axis] if n is None else n
    return conj(_core("ihfft", FftType.RFFT, x, _n(n), ax, norm)) * (1 / points)


def fftn(a: Any, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
         norm: str | None = None) -> Array:
    """The n-dimensional transform over ``axes`` (all by default)."""
    return _core("fftn", FftType.FFT, a, s, axes, norm)


def ifftn(a: Any, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
          norm: str | None = None) -> Array:
    """The inverse of :func:`fftn`."""
    return _core("ifftn", FftType.IFFT, a, s, axes, norm)


def rfftn(a: Any, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
          norm: str | None = None) -> Array:
    """The n-dimensional transform of real input (the last axis halved)."""
    return _core("rfftn", FftType.RFFT, a, s, axes, norm)


def irfftn(a: Any, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
           norm: str | None = None) -> Array:
    """The inverse of :func:`rfftn`."""
    return _core("irfftn", FftType.IRFFT, a, s, axes, norm)


def fft2(a: Any, s: Sequence[int] | None = None, axes: Sequence[int] = (-2, -1),
         norm: str | None = None) -> Array:
    """The two-dimensional transform over ``axes``."""
    return _core("fft2", FftType.FFT, a, s, _two_axes("fft2", axes), norm)


def ifft2(a: Any, s: Sequence[int] | None = None, axes: Sequence[int] = (-2, -1),
          norm: str | None = None) -> Array:
    """The inverse of :func:`fft2`."""
    return _core("ifft2", FftType.IFFT, a, s, _two_axes("ifft2", axes), norm)


def rfft2(a: Any, s: Sequence[int] | None = None, axes: Sequence[int] = (-2, -1),
          norm: str | None = None) -> Array:
    """The two-dimensional transform of real input."""
    return _core("rfft2", FftType.RFFT, a, s, _two_axes("rfft2", axes), norm)


def irfft2(a: Any, s: Sequence[int] | None = None, axes: Sequence[int] = (-2, -1),
           norm: str | None = None) -> Array:
    """The inverse of :func:`rfft2`."""
    return _core("irfft2", FftType.IRFFT, a, s, _two_axes("irfft2", axes), norm)


def _check_freq_args(name: str, n: Any, d: Any) -> None:
    if isinstance(n, list | tuple):
        raise ValueError(f"The n argument of jax.numpy.fft.{name} only takes an int. "
                         f"Got n = {list(n)}.")
    if isinstance(d, list | tuple):
        raise ValueError(f"The d argument of jax.numpy.fft.{name} only takes a single value. "
                         f"Got d = {list(d)}.")


def fftfreq(n: int, d: Any = 1.0, *, dtype: Any = None, device: None = None) -> Array:
    """The sample frequencies of an ``n``-point transform with sample spacing ``d``:
    ``[0, 1, ..., n/2 - 1, -n/2, ..., -1] / (d n)``."""
    _check_freq_args("fftfreq", n, d)
    out_dtype = dt.canonicalize(np.float64 if dtype is None else dtype)  # the default float
    work = out_dtype  # computed in the real dtype of the requested precision
    if dt.is_complex(out_dtype):
        work = dt.canonicalize(np.float64 if out_dtype == dt.complex128 else np.float32)
    elif not dt.is_inexact(out_dtype):
        work = dt.canonicalize(np.float32)
    i = arange(n, dtype=work)
    k = (i + n // 2) % n - n // 2
    return (k / asarray(d * n, dtype=work)).astype(out_dtype)


def rfftfreq(n: int, d: Any = 1.0, *, dtype: Any = None, device: None = None) -> Array:
    """The sample frequencies of :func:`rfft`: ``[0, 1, ..., n // 2] / (d n)``."""
    _check_freq_args("rfftfreq", n, d)
    work = dt.canonicalize(np.float64 if dtype is None else dtype)  # the default float
    return arange(0, n // 2 + 1, dtype=work) / asarray(d * n, dtype=work)


def _shifts(x: Array, axes: None | int | Sequence[int], sign: int) -> tuple[Any, Any]:
    if axes is None:
        return [sign * (m // 2) for m in x.shape], tuple(range(x.ndim))
    if isinstance(axes, int):
        return sign * (x.shape[axes] // 2), axes
    return [sign * (x.shape[ax] // 2) for ax in axes], axes


def fftshift(x: Any, axes: None | int | Sequence[int] = None) -> Array:
    """The zero frequency moved to the middle of ``axes`` (all by default)."""
    check_arraylike("fftshift", x)
    arr = asarray(x)
    return roll(arr, *_shifts(arr, axes, 1))


def ifftshift(x: Any, axes: None | int | Sequence[int] = None) -> Array:
    """The inverse of :func:`fftshift`."""
    check_arraylike("ifftshift", x)
    arr = asarray(x)
    return roll(arr, *_shifts(arr, axes, -1))

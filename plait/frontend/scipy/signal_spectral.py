"""``plait.scipy.signal``'s spectral analysis, with JAX 0.10.2's signatures and semantics:
``stft`` and its inverse ``istft``, the cross spectral density ``csd`` and Welch's power
spectral density ``welch``.

A signal is cut into segments of ``nperseg`` points, ``nperseg - noverlap`` apart (one
gather), each detrended, windowed and transformed (``rfft`` for real input, ``fft``
otherwise).  Results are in the complex dtype of the (inexact) input, frequencies and
times in its real dtype.  ``window`` is a name or a ``(name, *params)`` tuple (see
:mod:`plait.frontend.scipy.signal_windows`), or an array of ``nperseg`` points.
"""

from __future__ import annotations

import operator
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from plait.frontend import lax
from plait.frontend import numpy as pnp
from plait.frontend.core.array_base import Array
from plait.frontend.numpy import fft as pfft
from plait.frontend.numpy._core import (
    as_array,
    canonical_axis,
    check_arraylike,
    promote_dtypes_inexact,
)
from plait.frontend.scipy.signal import detrend as _detrend
from plait.frontend.scipy.signal_windows import get_window
from plait.ir import dtypes as dt
from plait.ir.errors import ConcretizationTypeError

__all__ = ["stft", "istft", "csd", "welch"]

Window = str | tuple[Any, ...] | Any
"""A window: its name, a tuple of its name and parameters, or its values (an array)."""


def _complex_of(dtype: np.dtype[Any]) -> np.dtype[Any]:
    """JAX's ``to_complex_dtype`` of an inexact dtype."""
    if dtype in (dt.float64, dt.complex128):
        return np.dtype(np.complex128)
    return np.dtype(np.complex64)


def _real_of(dtype: np.dtype[Any]) -> np.dtype[Any]:
    """The real dtype of the same precision."""
    return np.zeros((), dtype).real.dtype


def _static_int(value: Any, what: str) -> int:
    """A Python int from a concrete value.

    Raises:
      ConcretizationTypeError: ``value`` is traced (the message names ``what``).
    """
    try:
        return operator.index(value)
    except ConcretizationTypeError as err:
        raise ConcretizationTypeError(f"{err}\n(The value was needed as the {what}.)") from None
    except TypeError:
        pass
    try:
        return int(value)
    except ConcretizationTypeError as err:
        raise ConcretizationTypeError(f"{err}\n(The value was needed as the {what}.)") from None


def _segments_and_window(window: Window, nperseg: int | None, length: int,
                         dtype: np.dtype[Any]) -> tuple[Array, int]:
    """The window, in ``dtype`` (or as given, for an array), and the segment length."""
    if isinstance(window, str | tuple):
        n = length if nperseg is None else nperseg
        if n > length:
            warnings.warn(f"nperseg={n} is greater than input_length={length}, using "
                          f"nperseg={length}", stacklevel=4)
            n = length
        return pnp.asarray(get_window(window, n), dtype=dtype), n
    win = pnp.asarray(window, dtype=dtype)
    n = win.size if nperseg is None else nperseg
    if win.ndim != 1:
        raise ValueError(f"window must be 1-D, but got a window of shape {win.shape}")
    if length < win.size:
        raise ValueError(f"window is longer than input signal: {win.size} > {length}")
    if n != win.size:
        raise ValueError(f"value specified for nperseg is different from length of window: "
                         f"{n} != {win.size}")
    return win, n


def _pad_last(x: Array, before: int, after: int, mode: str) -> Array:
    widths = [(0, 0)] * (x.ndim - 1) + [(before, after)]
    if mode == "constant":
        return pnp.pad(x, widths, "constant", constant_values=0.0)
    return pnp.pad(x, widths, mode)


def _odd_extension(x: Array, n: int) -> Array:
    """``x`` extended by ``n`` points at each end of its last axis, by point reflection
    about the end points."""
    if n < 1:
        return x
    if n > x.shape[-1] - 1:
        raise ValueError(f"The extension length n ({n}) is too big. It must not exceed "
                         f"x.shape[axis]-1, which is {x.shape[-1] - 1}.")
    first, last = x[..., :1], x[..., -1:]
    left = pnp.flip(x[..., 1:n + 1], axis=-1)
    right = pnp.flip(x[..., -(n + 1):-1], axis=-1)
    return pnp.concatenate([2 * first - left, x, 2 * last - right], axis=-1)


_BOUNDARIES = ("even", "odd", "constant", "zeros", None)


def _extend(x: Array, boundary: str, n: int) -> Array:
    if boundary == "even":
        return _pad_last(x, n, n, "reflect")
    if boundary == "odd":
        return _odd_extension(x, n)
    if boundary == "constant":
        return _pad_last(x, n, n, "edge")
    return _pad_last(x, n, n, "constant")


def _windowed_fft(x: Array, win: Array, detrend: Callable[[Array], Array], nperseg: int,
                  noverlap: int, nfft: int, twosided: bool) -> Array:
    """The transforms of the detrended, windowed segments of ``x``'s last axis:
    ``(..., segments, frequencies)``."""
    step = nperseg - noverlap
    starts = np.arange(0, x.shape[-1] - nperseg + 1, step)
    index = starts[:, None] + np.arange(nperseg)[None, :]
    segments = detrend(pnp.take(x, index, axis=-1))
    if pnp.iscomplexobj(win):
        segments = segments.astype(_complex_of(segments.dtype))
    segments = win * segments
    if twosided:
        return pfft.fft(segments, n=nfft)
    return pfft.rfft(pnp.real(segments), n=nfft)


def _detrend_function(detrend: Any, axis: int) -> Callable[[Array], Array]:
    if isinstance(detrend, str):
        return lambda d: _detrend(d, axis=-1, type=detrend)
    if callable(detrend):
        # As JAX (and SciPy) do: the function sees the segments with ``axis`` moved last.
        def moved(d: Array) -> Array:
            return pnp.moveaxis(detrend(pnp.moveaxis(d, axis, -1)), -1, axis)
        return moved
    if not detrend:
        return lambda d: d
    raise ValueError(f"Unsupported detrend type: {detrend}")


def _spectral(x: Any, y: Any, fs: Any, window: Window, nperseg: int | None,
              noverlap: int | None, nfft: int | None, detrend: Any, return_onesided: bool,
              scaling: str, axis: int, mode: str, boundary: str | None = None,
              padded: bool = False) -> tuple[Array, Array, Array]:
    """``(frequencies, times, spectra)``: the short-time transforms of ``x``
    (``mode='stft'``), or their power (``mode='psd'``), or the cross spectra with ``y``."""
    name = "stft" if mode == "stft" else "csd"
    if boundary not in _BOUNDARIES:
        raise ValueError(f"Unknown boundary option '{boundary}', must be one of: "
                         f"{list(_BOUNDARIES)}")
    axis = _static_int(axis, "axis of windowed-FFT")
    if y is None:
        check_arraylike(name, x)
        xa = as_array(promote_dtypes_inexact(name, x)[0])
        ya = xa
        axis = canonical_axis(axis, xa.ndim)
        outer = xa.shape[:axis] + xa.shape[axis + 1:]
    else:
        check_arraylike(name, x, y)
        xa, ya = (as_array(v) for v in promote_dtypes_inexact(name, x, y))
        if xa.ndim != ya.ndim:
            raise ValueError(f"two-arguments must have the same rank ({xa.ndim} vs {ya.ndim}).")
        axis = canonical_axis(axis, xa.ndim)
        try:
            outer = np.broadcast_shapes(xa.shape[:axis] + xa.shape[axis + 1:],
                                        ya.shape[:axis] + ya.shape[axis + 1:])
        except ValueError as err:
            raise ValueError(f"x and y cannot be broadcast together: shapes {xa.shape} and "
                             f"{ya.shape} along axis {axis}.") from err
    result_dtype = _complex_of(xa.dtype)
    freq_dtype = _real_of(result_dtype)
    if nperseg is not None:
        nperseg = _static_int(nperseg, "nperseg of windowed-FFT")
        if nperseg < 1:
            raise ValueError(f"nperseg must be a positive integer, but got {nperseg}")
    win, nper = _segments_and_window(window, nperseg, xa.shape[axis], xa.dtype)
    nover = nper // 2 if noverlap is None else _static_int(noverlap, "noverlap of windowed-FFT")
    nff = nper if nfft is None else _static_int(nfft, "nfft of windowed-FFT")
    if xa.size == 0 or ya.size == 0:
        if y is None:
            shape = xa.shape
        else:
            shape = outer[:axis] + (min(xa.shape[axis], ya.shape[axis]),) + outer[axis:]
        return (pnp.zeros(shape, freq_dtype), pnp.zeros(shape, freq_dtype),
                pnp.zeros(shape, result_dtype))
    xa = pnp.moveaxis(xa, axis, -1)
    if y is not None:
        ya = pnp.moveaxis(ya, axis, -1)
        gap = xa.shape[-1] - ya.shape[-1]
        if gap < 0:
            xa = _pad_last(xa, 0, -gap, "constant")
        elif gap > 0:
            ya = _pad_last(ya, 0, gap, "constant")
    if nff < nper:
        raise ValueError(f"nfft must be greater than or equal to nperseg, but got nfft={nff} "
                         f"and nperseg={nper}.")
    if nover >= nper:
        raise ValueError(f"noverlap must be less than nperseg, but got noverlap={nover} and "
                         f"nperseg={nper}.")
    step = nper - nover
    if boundary is not None:
        xa = _extend(xa, boundary, nper // 2)
        if y is not None:
            ya = _extend(ya, boundary, nper // 2)
    if padded:
        extra = (-(xa.shape[-1] - nper) % step) % nper
        xa = _pad_last(xa, 0, extra, "constant")
        if y is not None:
            ya = _pad_last(ya, 0, extra, "constant")
    detrend_fn = _detrend_function(detrend, axis)
    if scaling == "density":
        scale = 1.0 / (fs * pnp.sum(win * win))
    elif scaling == "spectrum":
        scale = 1.0 / pnp.sum(win) ** 2
    else:
        raise ValueError(f"Unknown scaling: {scaling!r}; expected 'density' or 'spectrum'.")
    if mode == "stft":
        scale = pnp.sqrt(scale)
    scale = scale.astype(_complex_of(as_array(scale).dtype))
    twosided = not return_onesided
    if not twosided and (pnp.iscomplexobj(xa) or (y is not None and pnp.iscomplexobj(ya))):
        twosided = True
        warnings.warn("Input data is complex, switching to return_onesided=False",
                      stacklevel=3)
    if twosided:
        freqs = pfft.fftfreq(nff, 1 / fs, dtype=freq_dtype)
    else:
        freqs = pfft.rfftfreq(nff, 1 / fs, dtype=freq_dtype)
    result = _windowed_fft(xa, win, detrend_fn, nper, nover, nff, twosided)
    if y is not None:
        result = pnp.conj(result) * _windowed_fft(ya, win, detrend_fn, nper, nover, nff,
                                                   twosided)
    elif mode == "psd":
        result = pnp.conj(result) * result
    result = result * scale
    if not twosided and mode == "psd":
        # Each positive frequency stands for its negative twin, too (not 0 nor Nyquist).
        double = np.full(result.shape[-1], 2.0)
        double[0] = 1.0
        if nff % 2 == 0:
            double[-1] = 1.0
        result = result * double.astype(_real_of(result.dtype))
    times = pnp.arange(nper / 2, xa.shape[-1] - nper / 2 + 1, step, dtype=freq_dtype) / fs
    if boundary is not None:
        times = times - (nper / 2) / fs
    result = result.astype(result_dtype)
    if y is None and mode != "stft":
        result = pnp.real(result)
    return freqs, times, pnp.moveaxis(result, -1, axis)


def stft(x: Any, fs: Any = 1.0, window: Window = "hann", nperseg: int = 256,
         noverlap: int | None = None, nfft: int | None = None, detrend: Any = False,
         return_onesided: bool = True, boundary: str | None = "zeros", padded: bool = True,
         axis: int = -1) -> tuple[Array, Array, Array]:
    """``(f, t, Zxx)``: the short-time Fourier transform of ``x`` along ``axis``, its
    frequencies ``f`` and segment times ``t``; ``Zxx`` has frequencies where ``axis``
    was and times last.  The signal is extended at both ends by ``boundary``
    (``'zeros'``, ``'even'``, ``'odd'``, ``'constant'`` or ``None``) and zero-padded to
    whole segments if ``padded``.

    Raises:
      ValueError: an unknown boundary or scaling, ``nperseg < 1``, ``nfft < nperseg``,
        ``noverlap >= nperseg``, or a window array that does not fit.
    """
    return _spectral(x, None, fs, window, nperseg, noverlap, nfft, detrend, return_onesided,
                     "spectrum", axis, "stft", boundary, padded)


def _median_bias(n: int) -> np.ndarray:
    """How much lower the median of ``n`` periodograms is than their mean."""
    d = dt.canonicalize(np.float64)
    even = np.arange(2.0, n, 2, dtype=d)
    return np.asarray(1 + np.sum(1.0 / (even + 1) - 1.0 / even), d)


def csd(x: Any, y: Any, fs: Any = 1.0, window: Window = "hann", nperseg: int | None = None,
        noverlap: int | None = None, nfft: int | None = None, detrend: Any = "constant",
        return_onesided: bool = True, scaling: str = "density", axis: int = -1,
        average: str = "mean") -> tuple[Array, Array]:
    """``(f, Pxy)``: the cross spectral density (or, ``scaling='spectrum'``, the cross
    spectrum) of ``x`` and ``y`` by Welch's method, the periodograms of the segments
    averaged by their ``'mean'`` or ``'median'``.  ``y=None`` gives ``x``'s own (real)
    power spectrum.

    Raises:
      ValueError: an unknown ``average`` (and :func:`stft`'s errors).
    """
    freqs, _, pxy = _spectral(x, y, fs, window, nperseg, noverlap, nfft, detrend,
                              return_onesided, scaling, axis, "psd")
    if y is not None:
        pxy = pxy + 0j
    if pxy.ndim >= 2 and pxy.size > 0:
        if pxy.shape[-1] > 1:
            if average == "median":
                bias = _median_bias(pxy.shape[-1])
                if pnp.iscomplexobj(pxy):
                    pxy = lax.complex(pnp.median(pnp.real(pxy), axis=-1),
                                      pnp.median(pnp.imag(pxy), axis=-1))
                else:
                    pxy = pnp.median(pxy, axis=-1)
                pxy = pxy / bias.astype(pxy.dtype)
            elif average == "mean":
                pxy = pnp.mean(pxy, axis=-1)
            else:
                raise ValueError(f'average must be "median" or "mean", got {average}')
        else:
            pxy = pnp.reshape(pxy, pxy.shape[:-1])
    return freqs, pxy


def welch(x: Any, fs: Any = 1.0, window: Window = "hann", nperseg: int | None = None,
          noverlap: int | None = None, nfft: int | None = None, detrend: Any = "constant",
          return_onesided: bool = True, scaling: str = "density", axis: int = -1,
          average: str = "mean") -> tuple[Array, Array]:
    """``(f, Pxx)``: the power spectral density of ``x`` by Welch's method (the real
    part of :func:`csd` of ``x`` with itself)."""
    freqs, pxx = csd(x, None, fs=fs, window=window, nperseg=nperseg, noverlap=noverlap,
                     nfft=nfft, detrend=detrend, return_onesided=return_onesided,
                     scaling=scaling, axis=axis, average=average)
    return freqs, pnp.real(pxx)


# -- the inverse ----------------------------------------------------------------------------

def _overlap_add(frames: Array, step: int) -> Array:
    """The sum of ``frames`` (``(..., count, length)``), frame ``i`` starting at point
    ``i * step`` of the result (``(..., step * (count - 1) + length)``)."""
    *batch, count, length = frames.shape
    total = step * (count - 1) + length
    blocks = -(-length // step)  # each frame spans this many step-long blocks
    x = _pad_last(frames, 0, blocks * step - length, "constant")
    x = pnp.reshape(x, (*batch, count, blocks, step))
    out = None
    for j in range(blocks):
        # Block j of frame i lands on block i + j of the result.
        part = x[..., j, :]
        widths = [(0, 0)] * len(batch) + [(j, blocks - 1 - j), (0, 0)]
        part = pnp.pad(part, widths)
        out = part if out is None else out + part
    assert out is not None
    return pnp.reshape(out, (*batch, (count + blocks - 1) * step))[..., :total]


def istft(Zxx: Any, fs: Any = 1.0, window: Window = "hann", nperseg: int | None = None,
          noverlap: int | None = None, nfft: int | None = None, input_onesided: bool = True,
          boundary: bool = True, time_axis: int = -1,
          freq_axis: int = -2) -> tuple[Array, Array]:
    """``(t, x)``: the signal whose :func:`stft` is ``Zxx`` (frequencies along
    ``freq_axis``, segments along ``time_axis``), by inverse transforms, windowed
    overlap-add and division by the summed squared window.

    Raises:
      ValueError: ``Zxx`` of fewer than 2 dimensions, equal axes, ``nperseg < 1``,
        ``nfft < nperseg``, ``noverlap >= nperseg``, or a window array that does not fit.
    """
    check_arraylike("istft", Zxx)
    z = pnp.asarray(Zxx)
    if z.ndim < 2:
        raise ValueError(f"Input stft must be at least 2d, but got shape {z.shape}!")
    freq_axis = canonical_axis(freq_axis, z.ndim, "freq_axis")
    time_axis = canonical_axis(time_axis, z.ndim, "time_axis")
    if freq_axis == time_axis:
        raise ValueError("Must specify differing time and frequency axes!")
    z = z.astype(_complex_of(as_array(promote_dtypes_inexact("istft", z)[0]).dtype))
    default = 2 * (z.shape[freq_axis] - 1) if input_onesided else z.shape[freq_axis]
    nper = _static_int(nperseg or default, "nperseg: segment length of STFT")
    if nper < 1:
        raise ValueError(f"nperseg must be a positive integer, but got {nper}")
    if nfft is None:
        nff = default + 1 if input_onesided and nper == default + 1 else default
    else:
        nff = _static_int(nfft, "nfft of STFT")
    if nff < nper:
        raise ValueError(f"FFT length ({nff}) must be longer than nperseg ({nper}).")
    nover = _static_int(noverlap or nper // 2, "noverlap of STFT")
    if nover >= nper:
        raise ValueError(f"noverlap must be less than nperseg, but got noverlap={nover} and "
                         f"nperseg={nper}.")
    step = nper - nover
    outer = [i for i in range(z.ndim) if i not in (time_axis, freq_axis)]
    z = pnp.transpose(z, (*outer, freq_axis, time_axis))
    # (As JAX: the transform length is the nfft given, else the inverse's default.)
    inverse = pfft.irfft if input_onesided else pfft.ifft
    frames = inverse(z, n=nfft, axis=-2)[..., :nper, :]
    if isinstance(window, str | tuple):
        win = pnp.asarray(get_window(window, nper), dtype=frames.dtype)
    else:
        win = pnp.asarray(window)
        if win.ndim != 1:
            raise ValueError(f"window must be 1-D, but got a window of shape {win.shape}")
        if win.shape[0] != nper:
            raise ValueError(f"window must have length of {nper}, but got {win.shape[0]}")
    frames = frames * pnp.sum(win)  # undoes stft's 'spectrum' scaling
    win = pnp.reshape(win, (1,) * (frames.ndim - 2) + (nper, 1))
    x = _overlap_add(pnp.swapaxes(frames * win, -2, -1), step)
    squares = pnp.repeat(win * win, frames.shape[-1], axis=-1)
    norm = _overlap_add(pnp.swapaxes(squares, -2, -1), step)
    if boundary:
        cut = nper // 2
        x, norm = x[..., cut:-cut], norm[..., cut:-cut]
    x = x / pnp.where(norm > 1e-10, norm, 1.0)
    if x.ndim > 1 and time_axis != z.ndim - 1:
        x = pnp.moveaxis(x, -1, time_axis - 1 if freq_axis < time_axis else time_axis)
    times = pnp.arange(x.shape[0], dtype=_real_of(x.dtype)) / fs
    return times, x

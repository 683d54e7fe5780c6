"""``plait.scipy.signal``'s convolutions and ``detrend``, with JAX 0.10.2's signatures and
semantics: ``convolve``/``correlate`` (n-d, one ``conv_general_dilated`` or FFTs),
``convolve2d``/``correlate2d``, ``fftconvolve`` (with ``axes``) and ``detrend``.

As in JAX, the inputs are promoted to an inexact dtype (integers and bools become
``float32``), the ``'auto'`` method is the direct one, and the 2-d functions take only
``boundary='fill'`` with ``fillvalue=0``.  The spectral functions (``stft``, ``istft``,
``csd``, ``welch``) are in :mod:`plait.frontend.scipy.signal_spectral`.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any, Literal

import numpy as np

from plait.frontend import lax
from plait.frontend import numpy as pnp
from plait.frontend.core.array_base import Array
from plait.frontend.numpy import fft as pfft
from plait.frontend.numpy._core import (
    as_array,
    canonical_axis,
    check_arraylike,
    ndim,
    promote_dtypes_inexact,
)
from plait.ir.errors import ArgumentError

__all__ = ["convolve", "convolve2d", "correlate", "correlate2d", "fftconvolve", "detrend"]

ModeString = Literal["full", "same", "valid"]
"""The three output sizes of a convolution: every overlap, centred on ``in1``, or only
the complete overlaps."""

Precision = Any
"""What ``jax.lax`` takes as a precision (see ``plait.lax.dot_general``)."""

_MODES = ("full", "same", "valid")


def _inexact_pair(name: str, in1: Any, in2: Any) -> tuple[Array, Array]:
    check_arraylike(name, in1, in2)
    a, b = promote_dtypes_inexact(name, in1, in2)
    return as_array(a), as_array(b)


def _ordered(s1: Sequence[int], s2: Sequence[int]) -> tuple[bool, bool]:
    """``(in1 at least in2 everywhere, in1 at most in2 everywhere)``."""
    return (all(a >= b for a, b in zip(s1, s2)), all(a <= b for a, b in zip(s1, s2)))


# -- direct convolution -------------------------------------------------------------------

def _direct(name: str, in1: Any, in2: Any, mode: str, precision: Precision) -> Array:
    """The n-d convolution of ``in1`` and ``in2`` as one ``conv_general_dilated``: the
    smaller operand (in every dimension) is the flipped kernel."""
    if mode not in _MODES:
        raise ValueError(f"{name}: expected mode to be one of {list(_MODES)}, but got {mode!r}")
    check_arraylike(name, in1, in2)
    if ndim(in1) != ndim(in2):
        raise ValueError(f"{name}: expected in1 and in2 of the same number of dimensions, but "
                         f"got {ndim(in1)} and {ndim(in2)}")
    a, b = _inexact_pair(name, in1, in2)
    if a.size == 0 or b.size == 0:
        raise ValueError(f"zero-size arrays not supported in convolutions, got shapes "
                         f"{a.shape} and {b.shape}.")
    bigger, smaller = _ordered(a.shape, b.shape)
    if not (bigger or smaller):
        raise ValueError(f"{name}: expected one input to be at least as large as the other in "
                         f"every dimension, but got shapes {a.shape} and {b.shape}")
    in2_shape = b.shape
    if smaller:
        a, b = b, a
    kernel = b.shape
    if mode == "full":
        padding = [(k - 1, k - 1) for k in kernel]
    elif mode == "same":
        # Centred on in1 (the original second operand's shape gives the offset).
        padding = [(k - 1 - (o - 1) // 2, k - o + (o - 1) // 2)
                   for k, o in zip(kernel, in2_shape)]
    else:
        padding = [(0, 0)] * len(kernel)
    lhs = lax.expand_dims(a, (0, 1))
    rhs = lax.expand_dims(lax.rev(b, tuple(range(b.ndim))), (0, 1))
    out = lax.conv_general_dilated(lhs, rhs, (1,) * len(kernel), padding, precision=precision)
    return lax.squeeze(out, (0, 1))


def convolve(in1: Any, in2: Any, mode: ModeString = "full", method: str = "auto",
             precision: Precision = None) -> Array:
    """The n-d convolution of ``in1`` and ``in2`` (of equal rank): ``mode`` ``'full'``,
    ``'same'`` (the size of ``in1``) or ``'valid'``; ``method`` ``'direct'`` (also
    ``'auto'``: one ``conv_general_dilated``) or ``'fft'`` (:func:`fftconvolve`).

    Raises:
      ValueError: an unknown mode or method, ranks that differ, an empty input, or
        neither input at least as large as the other in every dimension.
    """
    if method == "fft":
        return fftconvolve(in1, in2, mode=mode)
    if method in ("direct", "auto"):
        return _direct("convolve", in1, in2, mode, precision)
    raise ValueError(f"Got method={method!r}; expected 'auto', 'fft', or 'direct'.")


def _flip_all(x: Array) -> Array:
    return lax.rev(x, tuple(range(x.ndim)))


def correlate(in1: Any, in2: Any, mode: ModeString = "full", method: str = "auto",
              precision: Precision = None) -> Array:
    """The n-d cross-correlation of ``in1`` and ``in2``: the convolution of ``in1`` with
    ``in2`` conjugated and reversed along every axis (see :func:`convolve`)."""
    check_arraylike("correlate", in1, in2)
    kernel = _flip_all(pnp.conj(as_array(in2)))
    return convolve(in1, kernel, mode, method=method, precision=precision)


def _check_2d(name: str, in1: Any, in2: Any, boundary: str, fillvalue: Any) -> None:
    if boundary != "fill" or fillvalue != 0:
        raise NotImplementedError(f"{name}() only supports boundary='fill', fillvalue=0")
    check_arraylike(name, in1, in2)
    if ndim(in1) != 2 or ndim(in2) != 2:
        raise ValueError(f"{name}() only supports 2-dimensional inputs, but got inputs of "
                         f"{ndim(in1)} and {ndim(in2)} dimensions.")


def convolve2d(in1: Any, in2: Any, mode: ModeString = "full", boundary: str = "fill",
               fillvalue: float = 0, precision: Precision = None) -> Array:
    """The convolution of two 2-d arrays (see :func:`convolve`).  As in JAX, only the
    zero-filled boundary is supported.

    Raises:
      NotImplementedError: ``boundary`` other than ``'fill'`` or a non-zero ``fillvalue``.
      ValueError: an input is not 2-d (and :func:`convolve`'s errors).
    """
    _check_2d("convolve2d", in1, in2, boundary, fillvalue)
    return _direct("convolve2d", in1, in2, mode, precision)


def correlate2d(in1: Any, in2: Any, mode: ModeString = "full", boundary: str = "fill",
                fillvalue: float = 0, precision: Precision = None) -> Array:
    """The cross-correlation of two 2-d arrays, computed as JAX 0.10.2 computes it
    (a convolution of flipped and conjugated operands; see :func:`correlate`).

    Raises:
      NotImplementedError: ``boundary`` other than ``'fill'`` or a non-zero ``fillvalue``.
      ValueError: an input is not 2-d (and :func:`convolve`'s errors).
    """
    _check_2d("correlate2d", in1, in2, boundary, fillvalue)
    a, b = as_array(in1), as_array(in2)
    swap = all(s1 <= s2 for s1, s2 in zip(a.shape, b.shape))
    equal = a.shape == b.shape

    def conv(x: Array, y: Array) -> Array:
        return _direct("correlate2d", x, y, mode, precision)

    # Which operand is flipped, and how the result is oriented, follows JAX case by case
    # (its 'full' result for a larger in2 is conjugated, not flipped).
    if mode == "full" and swap:
        return pnp.conj(conv(_flip_all(b), pnp.conj(a)))
    if mode == "valid" and swap and not equal:
        return conv(_flip_all(b), pnp.conj(a))
    return _flip_all(conv(_flip_all(a), pnp.conj(b)))


# -- FFT convolution ----------------------------------------------------------------------

def _index_tuple(name: str, axes: int | Sequence[int]) -> tuple[int, ...]:
    try:
        if isinstance(axes, int | np.integer):
            return (operator.index(axes),)
        return tuple(operator.index(a) for a in axes)
    except TypeError:
        raise ArgumentError(f"{name}: expected axes to be an int or a sequence of ints, but "
                            f"got {axes!r}") from None


def fftconvolve(in1: Any, in2: Any, mode: ModeString = "full",
                axes: Sequence[int] | None = None) -> Array:
    """The n-d convolution of ``in1`` and ``in2`` by FFTs (``rfftn`` for real inputs),
    along ``axes`` (all by default); the other axes must have equal sizes in both inputs
    and are computed independently, as a batch.

    Raises:
      ValueError: ranks that differ, an unknown mode, batch axes of different sizes, or
        (for ``'valid'``) neither input at least as large as the other along ``axes``.
    """
    a, b = _inexact_pair("fftconvolve", in1, in2)
    if a.ndim != b.ndim:
        raise ValueError(f"fftconvolve: expected in1 and in2 of the same dimensionality, but "
                         f"got {a.ndim} and {b.ndim}")
    if mode not in _MODES:
        raise ValueError(f"fftconvolve: expected mode to be one of {list(_MODES)}, but got "
                         f"{mode!r}")
    if axes is None:
        ax = tuple(range(a.ndim))
    else:
        ax = tuple(canonical_axis(i, a.ndim, "axis") for i in _index_tuple("fftconvolve", axes))
        batch = [i for i in range(a.ndim) if i not in ax]
        if any(a.shape[i] != b.shape[i] for i in batch):
            raise ValueError(f"mapped axes must have same shape; got in1.shape={a.shape} "
                             f"in2.shape={b.shape} axes={ax}")
        ax = tuple(sorted(set(ax)))
    s1 = tuple(a.shape[i] for i in ax)
    s2 = tuple(b.shape[i] for i in ax)
    if mode == "valid":
        bigger, smaller = _ordered(s1, s2)
        if not (bigger or smaller):
            raise ValueError("For 'valid' mode, One input must be at least as large as the "
                             f"other in every dimension, but got shapes {a.shape} and {b.shape}.")
        if smaller:
            a, b, s1, s2 = b, a, s2, s1
    full = tuple(n + m - 1 for n, m in zip(s1, s2))
    if all(n == 1 or m == 1 for n, m in zip(s1, s2)):
        conv = a * b  # no overlap to sum over: the outer product
    elif pnp.iscomplexobj(a):
        spectrum = pfft.fftn(a, full, ax) * pfft.fftn(b, full, ax)
        conv = pfft.ifftn(spectrum, full, ax)
    else:
        spectrum = pfft.rfftn(a, full, ax) * pfft.rfftn(b, full, ax)
        conv = pfft.irfftn(spectrum, full, ax)
    if mode == "full":
        out = full
    elif mode == "same":
        out = s1
    else:
        out = tuple(n - m + 1 for n, m in zip(s1, s2))
    start = [0] * conv.ndim
    size = list(conv.shape)
    for i, f, o in zip(ax, full, out):
        start[i], size[i] = (f - o) // 2, o
    return lax.slice(conv, start, [s + n for s, n in zip(start, size)])


# -- detrend ------------------------------------------------------------------------------

def _breakpoints(bp: Any, n: int) -> list[int]:
    points = np.sort(np.unique(np.r_[0, np.asarray(bp).ravel(), n]))
    if points[0] < 0 or points[-1] > n:
        raise ValueError("Breakpoints must be non-negative and less than length of data along "
                         f"given axis, but got {bp!r} for length {n}.")
    return [int(p) for p in points]


def _linear_residual(y: Array) -> Array:
    """``y`` (points along the first axis) less its least-squares line."""
    n = y.shape[0]
    if n == 1:
        return pnp.zeros_like(y)  # a line through one point fits it exactly
    real = np.zeros((), y.dtype).real.dtype
    t = np.arange(1, n + 1, dtype=np.float64) / n
    t = (t - t.mean()).astype(real)
    tt = np.asarray((t * t).sum(), real)
    t = t.reshape((n,) + (1,) * (y.ndim - 1))
    centred: Array = y - pnp.mean(y, axis=0, keepdims=True)
    slope: Array = pnp.sum(centred * t, axis=0, keepdims=True) / tt
    out: Array = centred - slope * t
    return out


def detrend(data: Any, axis: int = -1, type: str = "linear",
            bp: int | Sequence[int] | np.ndarray = 0, overwrite_data: None = None) -> Array:
    """``data`` less its trend along ``axis``: its mean (``type='constant'``) or its
    least-squares line, fitted piecewise between the breakpoints ``bp``
    (``type='linear'``).

    Raises:
      NotImplementedError: ``overwrite_data`` is given.
      ValueError: an unknown ``type``, or a breakpoint outside the data.
    """
    if overwrite_data is not None:
        raise NotImplementedError("overwrite_data argument not implemented.")
    if type not in ("constant", "linear"):
        raise ValueError(f"Trend type must be 'linear' or 'constant', but got {type!r}.")
    check_arraylike("detrend", data)
    x = as_array(promote_dtypes_inexact("detrend", pnp.asarray(data))[0])
    if type == "constant":
        return x - pnp.mean(x, axis=axis, keepdims=True)
    ax = canonical_axis(axis, x.ndim)
    n = x.shape[ax]
    points = _breakpoints(bp, n)
    moved = pnp.moveaxis(x, ax, 0)
    pieces = [_linear_residual(moved[lo:hi]) for lo, hi in zip(points[:-1], points[1:])]
    if not pieces:
        return x
    out = pieces[0] if len(pieces) == 1 else pnp.concatenate(pieces, axis=0)
    return pnp.moveaxis(out, 0, ax)

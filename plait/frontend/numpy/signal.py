"""Signal processing: the 1-d ``convolve`` and ``correlate`` (one
``conv_general_dilated`` each), and the window functions ``bartlett``,
``blackman``, ``hamming`` and ``hanning``.

As in JAX, ``convolve``/``correlate`` compute in an inexact dtype unless a
``preferred_element_type`` is given (then the inputs keep their common dtype),
``correlate`` conjugates its second argument, and the windows are in the
default float dtype.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from plait.frontend import lax
from plait.frontend.core.array_base import Array
from plait.frontend.core.x64_warnings import check_user_dtype
from plait.frontend.numpy._core import (
    as_array,
    check_arraylike,
    ndim,
    promote_dtypes,
    promote_dtypes_inexact,
)
from plait.frontend.numpy.composite_ufuncs import i0
from plait.frontend.numpy.ufuncs import abs, conj, cos, sqrt
from plait.ir import dtypes as dt

__all__ = ["convolve", "correlate", "bartlett", "blackman", "hamming", "hanning", "kaiser"]

Precision = Any
"""What ``jax.lax`` takes as a precision (see ``plait.lax.dot_general``)."""


def _conv(name: str, a: Any, v: Any, mode: str, precision: Precision,
          preferred_element_type: Any) -> Array:
    check_arraylike(name, a, v)
    if ndim(a) != 1 or ndim(v) != 1:
        raise ValueError(f"{name}() only support 1-dimensional inputs.")
    if preferred_element_type is None:
        x, y = (as_array(t) for t in promote_dtypes_inexact(name, a, v))
        pet = None
    else:
        x, y = (as_array(t) for t in promote_dtypes(name, a, v))
        pet = check_user_dtype(preferred_element_type, "conv_general_dilated")
    if x.shape[0] == 0 or y.shape[0] == 0:
        raise ValueError(f"{name}: inputs cannot be empty, got shapes {x.shape} and {y.shape}.")
    reverse = False
    if name == "correlate":
        y = conj(y)
        if x.shape[0] < y.shape[0]:
            x, y, reverse = y, x, True
    else:
        if x.shape[0] < y.shape[0]:
            x, y = y, x
        y = lax.rev(y, (0,))
    n = y.shape[0]
    if mode == "valid":
        padding = [(0, 0)]
    elif mode == "same":
        padding = [(n // 2, n - n // 2 - 1)]
    elif mode == "full":
        padding = [(n - 1, n - 1)]
    else:
        raise ValueError("mode must be one of ['full', 'same', 'valid']")
    out = lax.conv_general_dilated(lax.reshape(x, (1, 1, x.shape[0])),
                                   lax.reshape(y, (1, 1, n)), (1,), padding,
                                   precision=precision, preferred_element_type=pet)
    out = lax.reshape(out, (out.shape[2],))
    return lax.rev(out, (0,)) if reverse else out


def convolve(a: Any, v: Any, mode: str = "full", *, precision: Precision = None,
             preferred_element_type: Any = None) -> Array:
    """The discrete linear convolution of two non-empty 1-d arrays: ``'full'``
    (every overlap), ``'same'`` (centred, the length of the longer input) or
    ``'valid'`` (full overlaps only).  ``precision`` is checked as ``jax.lax`` checks
    it; plait always computes at full precision.

    Raises:
      ValueError: an input that is not 1-d or is empty, an unknown ``mode``, or an
        invalid ``precision``.
      TypeError: a non-array argument (a list).
    """
    return _conv("convolve", a, v, mode, precision, preferred_element_type)


def correlate(a: Any, v: Any, mode: str = "valid", *, precision: Precision = None,
              preferred_element_type: Any = None) -> Array:
    """The cross-correlation of two non-empty 1-d arrays, ``sum(a[n+k] * conj(v[k]))``,
    with ``mode`` as in :func:`convolve` (default ``'valid'``).

    Raises:
      ValueError: an input that is not 1-d or is empty, an unknown ``mode``, or an
        invalid ``precision``.
      TypeError: a non-array argument (a list).
    """
    return _conv("correlate", a, v, mode, precision, preferred_element_type)


def _window_grid(M: Any) -> tuple[int, Array | None, np.dtype[Any]]:
    """The window length as an int (``int(M)``: a traced ``M`` is a concretization
    error), the sample numbers ``0 .. M-1`` when ``M > 1``, and the default float."""
    m = int(M)
    d = dt.canonicalize(dt.float64)
    return m, (lax.iota(d, m) if m > 1 else None), d


def _short(m: int, d: np.dtype[Any]) -> Array:
    if m < 0:
        raise TypeError(f"broadcast_in_dim shape must have every element be nonnegative, "
                        f"got ({m},).")
    return lax.full((m,), 1, d)


def bartlett(M: int) -> Array:
    """The Bartlett (triangular) window of ``M`` points.

    Raises:
      TypeError: a negative ``M``.
    """
    m, n, d = _window_grid(M)
    if n is None:
        return _short(m, d)
    return 1 - abs(2 * n + 1 - m) / (m - 1)


def blackman(M: int) -> Array:
    """The Blackman window of ``M`` points.

    Raises:
      TypeError: a negative ``M``.
    """
    m, n, d = _window_grid(M)
    if n is None:
        return _short(m, d)
    return 0.42 - 0.5 * cos(2 * np.pi * n / (m - 1)) + 0.08 * cos(4 * np.pi * n / (m - 1))


def hamming(M: int) -> Array:
    """The Hamming window of ``M`` points.

    Raises:
      TypeError: a negative ``M``.
    """
    m, n, d = _window_grid(M)
    if n is None:
        return _short(m, d)
    return 0.54 - 0.46 * cos(2 * np.pi * n / (m - 1))


def hanning(M: int) -> Array:
    """The Hann window of ``M`` points.

    Raises:
      TypeError: a negative ``M``.
    """
    m, n, d = _window_grid(M)
    if n is None:
        return _short(m, d)
    return 0.5 * (1 - cos(2 * np.pi * n / (m - 1)))


def kaiser(M: int, beta: Any) -> Array:
    """The Kaiser window of ``M`` points and shape ``beta``:
    ``i0(beta sqrt(1 - ((n - a) / a)^2)) / i0(beta)`` with ``a = (M - 1) / 2``.

    Raises:
      TypeError: a negative ``M``.
    """
    m, n, d = _window_grid(M)
    if n is None:
        return _short(m, d)
    alpha = 0.5 * (m - 1)
    return i0(beta * sqrt(1 - ((n - alpha) / alpha) ** 2)) / i0(beta)

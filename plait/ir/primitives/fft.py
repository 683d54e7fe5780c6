"""``fft``: discrete Fourier transforms over the trailing one to three dimensions.

One primitive with four kinds (``fft_type``): complex-to-complex forward and inverse,
real-to-complex (keeping the ``n // 2 + 1`` non-redundant frequencies of the last
dimension) and its inverse, complex-to-real.  As in XLA, the inverse transforms
divide by the number of points.
"""

from __future__ import annotations

import enum
from typing import Any

import numpy as np

from plait.ir import dtypes as dt
from plait.ir.avals import ShapedArray
from plait.ir.params import ParamDef, decode_enum, decode_ints
from plait.ir.primitive import Primitive
from plait.ir.primitives._typing import fail

__all__ = ["FftType", "fft_p", "real_dtype", "complex_dtype"]


class FftType(enum.IntEnum):
    """The kind of transform (printed by value, as JAX prints it)."""

    FFT = 0
    """Complex to complex, forward."""
    IFFT = 1
    """Complex to complex, inverse (divided by the number of points)."""
    RFFT = 2
    """Real to complex: the last dimension keeps ``n // 2 + 1`` frequencies."""
    IRFFT = 3
    """Complex (the non-redundant half) to real, inverse."""


def real_dtype(dtype: np.dtype[Any]) -> np.dtype[Any]:
    """The real dtype of a complex one's components."""
    return np.dtype(np.float64) if dtype == dt.complex128 else np.dtype(np.float32)


def complex_dtype(dtype: np.dtype[Any]) -> np.dtype[Any]:
    """The complex dtype whose components are ``dtype``."""
    return np.dtype(np.complex128) if dtype == dt.float64 else np.dtype(np.complex64)


def _rule(x: ShapedArray, *, fft_type: FftType,
          fft_lengths: tuple[int, ...]) -> tuple[ShapedArray, ...]:
    k = len(fft_lengths)
    if not 1 <= k <= 3:
        fail(f"expected 1 to 3 fft_lengths, but got {fft_lengths}")
    if x.ndim < k:
        fail(f"expected an operand of rank at least {k} for fft_lengths {fft_lengths}, "
             f"but got {x.str_short()}")
    minor = x.shape[x.ndim - k:]
    if fft_type == FftType.RFFT:
        if x.dtype not in (dt.float32, dt.float64):
            fail(f"RFFT: expected a float32 or float64 operand, but got {x.str_short()}")
        if minor != fft_lengths:
            fail(f"RFFT: expected minor dimensions equal to fft_lengths {fft_lengths}, but got "
                 f"{x.str_short()}")
        shape = x.shape[:x.ndim - k] + fft_lengths[:-1] + (fft_lengths[-1] // 2 + 1,)
        return (ShapedArray(shape, complex_dtype(x.dtype), x.weak_type),)
    if x.dtype not in (dt.complex64, dt.complex128):
        fail(f"{fft_type.name}: expected a complex64 or complex128 operand, but got "
             f"{x.str_short()}")
    if fft_type == FftType.IRFFT:
        if minor[:-1] != fft_lengths[:-1] or minor[-1] != fft_lengths[-1] // 2 + 1:
            fail(f"IRFFT: expected minor dimensions {fft_lengths[:-1]} then "
                 f"{fft_lengths[-1] // 2 + 1} for fft_lengths {fft_lengths}, but got "
                 f"{x.str_short()}")
        return (ShapedArray(x.shape[:x.ndim - k] + fft_lengths, real_dtype(x.dtype),
                            x.weak_type),)
    if minor != fft_lengths:
        fail(f"{fft_type.name}: expected minor dimensions equal to fft_lengths {fft_lengths}, "
             f"but got {x.str_short()}")
    return (x,)  # weak types are kept, as JAX keeps them


fft_p = Primitive("fft", _rule, (
    ParamDef("fft_lengths", decode=decode_ints),
    ParamDef("fft_type", decode=decode_enum(FftType)),
))
"""Linear in its operand (the real-to-complex kinds as maps between real vector spaces)."""

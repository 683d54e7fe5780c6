"""Reference rule of ``fft``: NumPy's transforms over the trailing axes."""

from __future__ import annotations

import numpy as np

from plait.ir import primitives as P
from plait.ir.primitives.fft import FftType, complex_dtype, real_dtype
from plait.ir.reference.elementwise import _def


def _fft(x: np.ndarray, *, fft_type: FftType, fft_lengths: tuple[int, ...]) -> np.ndarray:
    axes = tuple(range(x.ndim - len(fft_lengths), x.ndim))
    if fft_type == FftType.FFT:
        return np.fft.fftn(x, axes=axes).astype(x.dtype)
    if fft_type == FftType.IFFT:
        return np.fft.ifftn(x, axes=axes).astype(x.dtype)
    if fft_type == FftType.RFFT:
        return np.fft.rfftn(x, axes=axes).astype(complex_dtype(x.dtype))
    return np.fft.irfftn(x, s=fft_lengths, axes=axes).astype(real_dtype(x.dtype))


_def(P.fft_p, _fft)

"""``lax.fft``: the ``fft`` primitive with JAX's argument handling."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from plait.frontend.core.array_base import Array
from plait.frontend.core.promotion import dtype_and_weak
from plait.frontend.core.tracing import bind1
from plait.frontend.lax.ops import convert_element_type
from plait.ir import dtypes as dt
from plait.ir import primitives as P
from plait.ir.primitives.fft import FftType, complex_dtype

__all__ = ["fft", "FftType"]

_NAMES = {n: t for t in FftType for n in (t.name, t.name.lower())}


def _fft_type(fft_type: Any) -> FftType:
    if isinstance(fft_type, FftType):
        return fft_type
    if isinstance(fft_type, str):
        if fft_type not in _NAMES:
            raise ValueError(f"Unknown FFT type '{fft_type}'")
        return _NAMES[fft_type]
    raise TypeError(f"Unknown FFT type value '{fft_type}'")


def _inexact(dtype: np.dtype[Any]) -> np.dtype[Any]:
    return dtype if dt.is_inexact(dtype) else dt.canonicalize(np.float64)


def fft(x: Any, fft_type: FftType | str, fft_lengths: Sequence[int]) -> Array:
    """The ``fft_type`` transform (``FftType`` or its name, ``'fft'``, ``'IRFFT'``...) of
    ``x`` over its trailing ``len(fft_lengths)`` dimensions.  Real-to-complex takes a real
    ``x``; the others convert ``x`` to complex first."""
    typ = _fft_type(fft_type)
    dtype, _ = dtype_and_weak(x)
    if typ == FftType.RFFT:
        if dt.is_complex(dtype):
            raise ValueError("only real valued inputs supported for rfft")
        operand = convert_element_type(x, _inexact(dtype))
    else:
        operand = convert_element_type(x, dtype if dt.is_complex(dtype)
                                       else complex_dtype(_inexact(dtype)))
    if len(fft_lengths) == 0:
        return operand
    return bind1(P.fft_p, operand, fft_type=typ,
                 fft_lengths=tuple(int(n) for n in fft_lengths))

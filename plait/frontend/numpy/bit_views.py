"""``Array.view(dtype)``: the array's bits read as another dtype, as JAX's.

Equal widths are one ``bitcast_convert_type``; a narrower dtype lengthens the
last axis and a wider one shortens it.  Bools are viewed through ``uint8`` and
complex numbers through their interleaved real and imaginary parts.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from plait.frontend import lax
from plait.frontend.core.array_base import Array
from plait.frontend.core.dtype_queries import finfo
from plait.frontend.core.x64_warnings import check_user_dtype
from plait.frontend.numpy.creation import zeros
from plait.ir import dtypes as dt

__all__ = ["view"]


def _part(dtype: np.dtype[Any]) -> np.dtype[Any]:
    part: np.dtype[Any] = np.dtype(finfo(dtype).dtype)
    return part


def view(a: Array, dtype: Any = None, type: None = None) -> Array:
    """``a``'s bits as ``dtype`` (see the module docstring).

    Raises:
      NotImplementedError: ``type`` is given.
      ValueError: ``a`` is 0-d and the widths differ, or the last axis' bytes do not
        divide into elements of ``dtype``.
    """
    if type is not None:
        raise NotImplementedError("`type` argument of array.view() is not supported.")
    if dtype is None:
        return a
    out_dtype = check_user_dtype(dtype, "view")
    bits_in, bits_out = dt.bit_width(a.dtype), dt.bit_width(out_dtype)
    if a.ndim == 0:
        if bits_in != bits_out:
            raise ValueError("view() of a 0d array is only supported if the itemsize is "
                             "unchanged.")
        return view(lax.expand_dims(a, (0,)), out_dtype).squeeze()
    if (a.shape[-1] * bits_in) % bits_out:
        raise ValueError("When changing to a larger dtype, its size must be a divisor of the "
                         "total size in bytes of the last axis of the array.")
    if a.dtype == out_dtype:
        return a
    if a.dtype == dt.bool_:
        return view(a.astype(np.uint8), out_dtype)
    if dt.is_complex(a.dtype):
        parts = (zeros((*a.shape[:-1], 2 * a.shape[-1]), _part(a.dtype))
                 .at[..., 0::2].set(a.real).at[..., 1::2].set(a.imag))
        return view(parts, out_dtype)
    if out_dtype == dt.bool_:
        return view(a, np.dtype(np.uint8)).astype(dt.bool_)
    if dt.is_complex(out_dtype):
        parts = view(a, _part(out_dtype)).astype(out_dtype)
        return parts[..., 0::2] + 1j * parts[..., 1::2]
    if bits_in < bits_out:
        factor = bits_out // bits_in
        grouped = a.reshape(*a.shape[:-1], a.shape[-1] // factor, factor)
        return lax.bitcast_convert_type(grouped, out_dtype)
    out = lax.bitcast_convert_type(a, out_dtype)
    if bits_in > bits_out:
        out = out.reshape(*out.shape[:-2], out.shape[-2] * out.shape[-1])
    return out

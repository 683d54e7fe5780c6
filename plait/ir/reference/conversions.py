"""Reference rules of ``bitcast_convert_type``, ``reduce_precision``, ``mulhi`` and
``optimization_barrier`` (XLA's semantics, in NumPy)."""

from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np

from plait.ir import primitives as P
from plait.ir.interpreter import impl_rules
from plait.ir.primitives.conversions import bitcast_shape
from plait.ir.reference.elementwise import _def


def _bitcast(x: np.ndarray, *, new_dtype: np.dtype[Any]) -> np.ndarray:
    x = np.array(x)
    shape = bitcast_shape(x.shape, x.dtype, new_dtype)
    # Little-endian, as XLA on CPU: a narrower result's trailing dimension runs from the
    # low bytes of each element to the high ones.
    return x.reshape(-1).view(new_dtype).reshape(shape)


def _reduce_precision(x: np.ndarray, *, exponent_bits: int, mantissa_bits: int) -> np.ndarray:
    """XLA's ReducePrecision, on the bits: round the mantissa to nearest even, then send
    exponents above the reduced range to infinity and those at or below its bottom (the
    reduced format's subnormals too) to zero; NaNs are kept."""
    x = np.array(x)
    nbits = x.dtype.itemsize * 8
    src_mant = {2: 7 if x.dtype == ml_dtypes.bfloat16 else 10, 4: 23, 8: 52}[x.dtype.itemsize]
    src_exp = nbits - 1 - src_mant
    u = np.dtype(f"u{x.dtype.itemsize}")
    bits = x.view(u).copy()
    one = u.type(1)
    if mantissa_bits < src_mant:
        shift = u.type(src_mant - mantissa_bits)
        last_bit = one << shift
        bias = (last_bit >> one) - one
        odd = (bits & last_bit) >> shift
        bits = (bits + odd + bias) & ~(last_bit - one)
    if exponent_bits < src_exp:
        sign_mask = one << u.type(nbits - 1)
        exp_mask = ((one << u.type(src_exp)) - one) << u.type(src_mant)
        bias_src = (1 << (src_exp - 1)) - 1
        bias_dst = (1 << (exponent_bits - 1)) - 1
        top = u.type(bias_src + bias_dst) << u.type(src_mant)
        bottom = u.type(bias_src - bias_dst) << u.type(src_mant)
        exponent = bits & exp_mask
        signed_zero = bits & sign_mask
        bits = np.where(exponent > top, signed_zero | exp_mask, bits)
        bits = np.where(exponent <= bottom, signed_zero, bits).astype(u)
    out = np.where(np.isnan(x), x, bits.view(x.dtype))
    if x.dtype == ml_dtypes.bfloat16 and (exponent_bits < 8 or mantissa_bits < 23):
        # XLA on CPU computes bfloat16 in float32 (where this is no no-op) and rounds
        # back, which makes every NaN the canonical quiet one, keeping its sign.
        nan_bits = (x.view(u) & u.type(0x8000)) | u.type(0x7FC0)
        out = np.where(np.isnan(x), nan_bits.view(x.dtype), out)
    return np.asarray(out, x.dtype)


def _mulhi(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    x, y = np.broadcast_arrays(np.asarray(x), np.asarray(y))
    d = x.dtype
    bits = d.itemsize * 8
    if bits < 64:
        wide = np.int64 if d.kind == "i" else np.uint64
        prod = x.astype(wide) * y.astype(wide)
        return np.asarray(prod >> wide(bits)).astype(d)
    # 64-bit operands: exact products as Python ints.
    prod = x.astype(object) * y.astype(object)
    high = np.vectorize(lambda p: (int(p) >> 64) & (2 ** 64 - 1), otypes=[np.uint64])(prod)
    return np.asarray(high, np.uint64).reshape(x.shape).view(d)


_def(P.bitcast_convert_type_p, _bitcast)
_def(P.reduce_precision_p, _reduce_precision)
_def(P.mulhi_p, _mulhi)
impl_rules[P.optimization_barrier_p] = lambda *xs: tuple(np.asarray(x) for x in xs)

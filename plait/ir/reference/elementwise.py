"""Reference rules of the elementwise primitives (XLA semantics, in NumPy)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from plait.ir import dtypes as dt
from plait.ir import primitives as P
from plait.ir.interpreter import impl_rules
from plait.ir.primitive import Primitive
from plait.ir.primitives import RoundingMethod


def _def(prim: Primitive, fn: Callable[..., Any]) -> None:
    """Register a single-result rule ``fn(*operands, **params)``."""
    def rule(*xs: np.ndarray, **params: Any) -> tuple[np.ndarray]:
        with np.errstate(all="ignore"):
            return (np.asarray(fn(*xs, **params)),)
    impl_rules[prim] = rule


def _ignore_params(fn: Callable[..., Any]) -> Callable[..., Any]:
    return lambda *xs, **_: fn(*xs)


for _prim, _fn in [
    (P.neg_p, np.negative), (P.floor_p, np.floor), (P.ceil_p, np.ceil),
    (P.is_finite_p, np.isfinite), (P.exp_p, np.exp), (P.exp2_p, np.exp2), (P.log_p, np.log),
    (P.log1p_p, np.log1p), (P.expm1_p, np.expm1), (P.tanh_p, np.tanh), (P.sin_p, np.sin),
    (P.cos_p, np.cos), (P.tan_p, np.tan), (P.asin_p, np.arcsin), (P.acos_p, np.arccos),
    (P.atan_p, np.arctan), (P.sinh_p, np.sinh), (P.cosh_p, np.cosh), (P.asinh_p, np.arcsinh),
    (P.acosh_p, np.arccosh), (P.atanh_p, np.arctanh), (P.sqrt_p, np.sqrt), (P.cbrt_p, np.cbrt),
    (P.abs_p, np.abs), (P.real_p, np.real), (P.imag_p, np.imag), (P.conj_p, np.conj),
    (P.copy_p, np.copy), (P.add_p, np.add), (P.sub_p, np.subtract), (P.max_p, np.maximum),
    (P.min_p, np.minimum), (P.atan2_p, np.arctan2), (P.nextafter_p, np.nextafter),
    (P.eq_p, np.equal), (P.ne_p, np.not_equal), (P.lt_p, np.less), (P.le_p, np.less_equal),
    (P.gt_p, np.greater), (P.ge_p, np.greater_equal),
]:
    _def(_prim, _ignore_params(_fn))


def _sign(x: np.ndarray) -> np.ndarray:
    if dt.is_complex(x.dtype):
        mag = np.abs(x)
        return np.where(mag == 0, 0, x / np.where(mag == 0, 1, mag)).astype(x.dtype)
    return np.sign(x)


_def(P.sign_p, _sign)
_def(P.logistic_p, lambda x, **_: 1 / (1 + np.exp(-x)))
_def(P.rsqrt_p, lambda x, **_: 1 / np.sqrt(x))
_def(P.not_p, lambda x: np.logical_not(x) if x.dtype == dt.bool_ else np.invert(x))
_def(P.and_p, lambda x, y: np.logical_and(x, y) if x.dtype == dt.bool_ else np.bitwise_and(x, y))
_def(P.or_p, lambda x, y: np.logical_or(x, y) if x.dtype == dt.bool_ else np.bitwise_or(x, y))
_def(P.xor_p, lambda x, y: np.logical_xor(x, y) if x.dtype == dt.bool_ else np.bitwise_xor(x, y))
_def(P.mul_p, lambda x, y, out_dtype: np.multiply(x, y))
_def(P.complex_p, lambda x, y: x + 1j * y)


def _round(x: np.ndarray, rounding_method: RoundingMethod) -> np.ndarray:
    if rounding_method == RoundingMethod.TO_NEAREST_EVEN:
        return np.round(x)
    return np.sign(x) * np.floor(np.abs(x) + np.asarray(0.5, x.dtype))


_def(P.round_p, _round)


def _div(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    if dt.is_integer(x.dtype):
        # XLA rounds toward zero; x / 0 is -1 (all ones) for integers.
        safe = np.where(y == 0, 1, y)
        q = np.abs(x) // np.abs(safe)
        q = np.where((x < 0) != (safe < 0), -q, q) if dt.is_signed(x.dtype) else x // safe
        return np.where(y == 0, np.array(-1).astype(x.dtype), q)
    return np.divide(x, y)


def _rem(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    if dt.is_integer(x.dtype):
        safe = np.where(y == 0, 1, y)
        return np.where(y == 0, x, np.fmod(x, safe))
    return np.fmod(x, y)


_def(P.div_p, _div)
_def(P.rem_p, _rem)


def _pow(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    if dt.is_integer(y.dtype):
        return np.power(x, y.astype(x.dtype)) if not dt.is_complex(x.dtype) else x ** y
    return np.power(x, y)


_def(P.pow_p, _pow)


def _integer_pow(x: np.ndarray, y: int) -> np.ndarray:
    if y == 0:
        return np.ones_like(x)
    acc = None
    base = x
    n = abs(y)
    while n:
        if n & 1:
            acc = base if acc is None else acc * base
        n >>= 1
        if n:
            base = base * base
    assert acc is not None
    return (1 / acc).astype(x.dtype) if y < 0 else acc


_def(P.integer_pow_p, _integer_pow)
_def(P.select_n_p, lambda which, *cases: np.choose(which.astype(np.int64), cases)
     if which.shape else cases[int(which)])
_def(P.clamp_p, lambda lo, x, hi: np.minimum(np.maximum(x, lo), hi))


def _convert(x: np.ndarray, new_dtype: np.dtype[Any], weak_type: bool, sharding: None) -> np.ndarray:
    if dt.is_integer(new_dtype) and dt.is_inexact(x.dtype):
        # XLA: NaN becomes 0, out-of-range values saturate, the rest truncate.
        info = np.iinfo(new_dtype)
        real = np.real(x).astype(np.float64)
        out = np.where(np.isnan(real), 0, np.clip(np.trunc(real), info.min, info.max))
        return out.astype(new_dtype)
    if new_dtype == dt.bool_:
        return x != 0
    if dt.is_complex(x.dtype) and not dt.is_complex(new_dtype):
        return np.real(x).astype(new_dtype)
    return x.astype(new_dtype)


_def(P.convert_element_type_p, _convert)

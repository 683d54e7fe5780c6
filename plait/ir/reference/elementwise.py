"""Reference rules of the elementwise primitives (XLA semantics, in NumPy)."""

from __future__ import annotations

import operator
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


_UNPARAMETRIZED: list[tuple[Primitive, Callable[..., Any]]] = [
    (P.neg_p, np.negative), (P.square_p, lambda x: np.multiply(x, x)),
    (P.floor_p, np.floor), (P.ceil_p, np.ceil),
    (P.is_finite_p, np.isfinite), (P.exp_p, np.exp), (P.exp2_p, np.exp2), (P.log_p, np.log),
    (P.log1p_p, np.log1p), (P.expm1_p, np.expm1), (P.tanh_p, np.tanh), (P.sin_p, np.sin),
    (P.cos_p, np.cos), (P.tan_p, np.tan), (P.asin_p, np.arcsin), (P.acos_p, np.arccos),
    (P.atan_p, np.arctan), (P.sinh_p, np.sinh), (P.cosh_p, np.cosh), (P.asinh_p, np.arcsinh),
    (P.acosh_p, np.arccosh), (P.atanh_p, np.arctanh), (P.sqrt_p, np.sqrt), (P.cbrt_p, np.cbrt),
    (P.abs_p, np.abs), (P.real_p, np.real), (P.imag_p, np.imag), (P.conj_p, np.conj),
    (P.copy_p, np.copy), (P.add_p, np.add), (P.sub_p, np.subtract), (P.atan2_p, np.arctan2),
    # (The operators, not the ufuncs: key arrays are structured, which the ufuncs refuse.)
    (P.eq_p, operator.eq), (P.ne_p, operator.ne), (P.lt_p, np.less), (P.le_p, np.less_equal),
    (P.gt_p, np.greater), (P.ge_p, np.greater_equal),
]
for _prim, _fn in _UNPARAMETRIZED:
    _def(_prim, _ignore_params(_fn))
_def(P.name_p, _ignore_params(np.copy))  # checkpoint_name's label


def _sign(x: np.ndarray) -> np.ndarray:
    if dt.is_complex(x.dtype):
        # XLA divides each part by |x| (keeping signed zeros) and returns 0 as is.
        mag = np.abs(x)
        safe = np.where(mag == 0, 1, mag)
        out = np.empty_like(x)
        out.real, out.imag = x.real / safe, x.imag / safe
        return np.where(mag == 0, x, out)
    if dt.is_inexact(x.dtype):
        return np.where(x == 0, x, np.sign(x))  # sign(-0.0) is -0.0
    return np.asarray(np.sign(x))


_def(P.sign_p, _sign)
_def(P.logistic_p, lambda x, **_: 1 / (1 + np.exp(-x)))
_def(P.rsqrt_p, lambda x, **_: 1 / np.sqrt(x))
_def(P.not_p, lambda x: np.logical_not(x) if x.dtype == dt.bool_ else np.invert(x))
_def(P.and_p, lambda x, y: np.logical_and(x, y) if x.dtype == dt.bool_ else np.bitwise_and(x, y))
_def(P.or_p, lambda x, y: np.logical_or(x, y) if x.dtype == dt.bool_ else np.bitwise_or(x, y))
_def(P.xor_p, lambda x, y: np.logical_xor(x, y) if x.dtype == dt.bool_ else np.bitwise_xor(x, y))


def _mul(x: np.ndarray, y: np.ndarray, out_dtype: np.dtype[Any] | None) -> np.ndarray:
    if out_dtype is not None:  # the operands are converted first, as JAX lowers it
        x, y = _convert(x, out_dtype), _convert(y, out_dtype)
    return np.asarray(np.multiply(x, y))


_def(P.mul_p, _mul)


def _complex(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    # Built part by part: x + 1j * y would turn an imaginary -0.0 into +0.0.
    out = np.empty(np.broadcast_shapes(x.shape, y.shape), dt.complex64
                   if x.dtype == dt.float32 else dt.complex128)
    out.real, out.imag = x, y
    return out


_def(P.complex_p, _complex)


def _round(x: np.ndarray, rounding_method: RoundingMethod) -> np.ndarray:
    if rounding_method == RoundingMethod.TO_NEAREST_EVEN:
        return np.round(x)
    # x - trunc(x) is exact, unlike x + 0.5 (wrong just below 0.5 and above 2**23).
    t = np.trunc(x)
    return np.asarray(np.where(np.abs(x - t) >= np.asarray(0.5, x.dtype), t + np.sign(x), t))


_def(P.round_p, _round)


def _int_divisor(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    # A divisor that avoids the two traps (x / 0 and INT_MIN / -1); callers patch those lanes.
    safe = np.where(y == 0, np.ones((), y.dtype), y)
    if dt.is_signed(x.dtype):
        safe = np.where((safe == -1) & (x == dt.int_range(x.dtype)[0]), np.ones((), y.dtype), safe)
    return safe


def _div(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    if dt.is_integer(x.dtype):
        # XLA rounds toward zero; x / 0 is -1 (all ones); INT_MIN / -1 is INT_MIN.
        safe = _int_divisor(x, y)
        q = (x - np.fmod(x, safe)) // safe
        return np.where(y == 0, np.array(-1).astype(x.dtype), q)
    return np.asarray(np.divide(x, y))


def _rem(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    # The sign of the dividend, as C's fmod; for integers x % 0 is x, INT_MIN % -1 is 0.
    if dt.is_integer(x.dtype):
        return np.where(y == 0, x, np.fmod(x, _int_divisor(x, y)))
    return np.asarray(np.fmod(x, y))


_def(P.div_p, _div)
_def(P.rem_p, _rem)


def _pick_complex(x: np.ndarray, y: np.ndarray, greater: bool) -> np.ndarray:
    # JAX orders complex numbers lexicographically and picks y on ties and NaNs.
    xr, yr, xi, yi = x.real, y.real, x.imag, y.imag
    if greater:
        pick_x = (xr > yr) | ((xr == yr) & (xi > yi))
    else:
        pick_x = (xr < yr) | ((xr == yr) & (xi < yi))
    return np.where(pick_x, x, y)


def max_(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """XLA's max: NaN wins, and +0.0 is above -0.0."""
    if dt.is_complex(x.dtype):
        return _pick_complex(x, y, greater=True)
    out: np.ndarray = np.maximum(x, y)
    if dt.is_float(x.dtype):
        out = np.where((x == 0) & (y == 0), x + y, out)  # -0 + -0 is the only -0
    return out


def min_(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """XLA's min: NaN wins, and -0.0 is below +0.0."""
    if dt.is_complex(x.dtype):
        return _pick_complex(x, y, greater=False)
    out: np.ndarray = np.minimum(x, y)
    if dt.is_float(x.dtype):
        out = np.where((x == 0) & (y == 0), -(-x - y), out)
    return out


_def(P.max_p, max_)
_def(P.min_p, min_)
# NumPy's float16 nextafter returns x, not y, when x == y (they differ for +-0).
_def(P.nextafter_p, lambda x, y: np.where(x == y, y, np.nextafter(x, y)))


def _pow(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    # An integer exponent is converted to the base's dtype, as JAX lowers it.
    return np.asarray(np.power(x, y.astype(x.dtype)))


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
# Out-of-range cases clamp: JAX lowers select_n to a tree of `which < k` selects.
_def(P.select_n_p, lambda which, *cases: np.choose(which.astype(np.int64), cases, mode="clip"))
_def(P.clamp_p, lambda lo, x, hi: min_(max_(x, lo), hi))


def _convert(x: np.ndarray, new_dtype: np.dtype[Any], weak_type: bool = False,
             sharding: None = None) -> np.ndarray:
    if dt.is_complex(x.dtype) and not dt.is_complex(new_dtype):
        x = np.real(x)  # as JAX lowers it, bool included
    if new_dtype == dt.bool_:
        return np.asarray(x != 0)
    if dt.is_integer(new_dtype) and dt.is_float(x.dtype):
        # XLA: NaN becomes 0, out-of-range values saturate, the rest truncate.
        # The bounds are compared as floats: float(2**63 - 1) rounds up to 2**63.
        lo, hi = dt.int_range(new_dtype)
        t = np.trunc(x.astype(np.float64))
        high, low = t >= float(hi), t <= float(lo)
        inside = np.where(high | low | np.isnan(t), 0, t).astype(new_dtype)
        return np.where(high, hi, np.where(low, lo, inside)).astype(new_dtype)
    return x.astype(new_dtype)


_def(P.convert_element_type_p, _convert)

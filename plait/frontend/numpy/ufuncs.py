"""Elementwise functions of the NumPy namespace, with NumPy broadcasting and
JAX's dtype promotion (seed 003)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from plait.ir import dtypes as dt
from plait.ir.atoms import Literal
from plait.ir.avals import ShapedArray
from plait.frontend import lax
from plait.frontend.array_base import Array
from plait.frontend.numpy._core import aval_of, promote, promote_to_inexact
from plait.frontend.tracing import Tracer, scalar_literal

__all__ = [
    "add", "subtract", "multiply", "divide", "true_divide", "floor_divide", "remainder", "mod",
    "fmod", "power", "negative", "positive", "maximum", "minimum", "arctan2", "nextafter",
    "equal", "not_equal", "less", "less_equal", "greater", "greater_equal", "logical_and",
    "logical_or", "logical_xor", "logical_not", "bitwise_and", "bitwise_or", "bitwise_xor",
    "bitwise_not", "invert", "sin", "cos", "tan", "arcsin", "arccos", "arctan", "sinh", "cosh",
    "tanh", "arcsinh", "arccosh", "arctanh", "exp", "exp2", "expm1", "log", "log1p", "log2",
    "log10", "sqrt", "cbrt", "rsqrt", "abs", "absolute", "sign", "floor", "ceil", "trunc",
    "round", "around", "rint", "square", "reciprocal", "isfinite", "isinf", "isnan", "where",
    "clip", "real", "imag", "conj", "conjugate", "logaddexp", "hypot", "deg2rad", "rad2deg",
    "heaviside", "signbit", "copysign",
]

_SCALAR_TYPES = (int, float)


def _fast_pair(x: Any, y: Any) -> tuple[Any, Any] | None:
    """Operands needing no promotion: a tracer with a tracer of the same type,
    or a tracer with a Python scalar that its dtype absorbs."""
    tx, ty = type(x), type(y)
    if tx is Tracer:
        ax = x.var.aval
        if ty is Tracer:
            ay = y.var.aval
            if ax is ay or (ax.dtype == ay.dtype and ax.weak_type == ay.weak_type
                            and (ax.shape == ay.shape or not ax.shape or not ay.shape)):
                return x, y
            return None
        if ty in _SCALAR_TYPES and (ty is int or dt.is_inexact(ax.dtype)) and ax.dtype != dt.bool_:
            return x, scalar_literal(y, ax.dtype) if ax.weak_type else _strong_literal(y, ax.dtype)
        return None
    if ty is Tracer and tx in _SCALAR_TYPES:
        ay = y.var.aval
        if (tx is int or dt.is_inexact(ay.dtype)) and ay.dtype != dt.bool_:
            return (scalar_literal(x, ay.dtype) if ay.weak_type else _strong_literal(x, ay.dtype)), y
    return None


_strong_cache: dict[tuple[type, Any, np.dtype[Any]], Literal] = {}


def _strong_literal(x: Any, dtype: np.dtype[Any]) -> Literal:
    # A Python scalar joining a strongly typed operand (the literal's dtype is
    # the operand's; its value stays the Python value, as JAX prints it).
    key = (type(x), x, dtype)
    lit = _strong_cache.get(key) if type(x) is not float or x == x else None
    if lit is None:
        weak = scalar_literal(x, dtype)
        lit = Literal(weak.value, weak.aval.strip_weak_type())
        if len(_strong_cache) < 4096:
            _strong_cache[key] = lit
    return lit


def _binary(name: str, op: Callable[[Any, Any], Any], inexact: bool = False
            ) -> Callable[[Any, Any], Array]:
    def ufunc(x: Any, y: Any) -> Array:
        pair = None if inexact else _fast_pair(x, y)
        if pair is None:
            pair = tuple(promote_to_inexact(name, x, y) if inexact else promote(name, x, y))
        return op(*pair)  # type: ignore[no-any-return]
    ufunc.__name__ = name
    ufunc.__qualname__ = name
    ufunc.__doc__ = f"Elementwise ``{name}`` with NumPy broadcasting and dtype promotion."
    return ufunc


def _unary(name: str, op: Callable[[Any], Any], inexact: bool = False) -> Callable[[Any], Array]:
    def ufunc(x: Any) -> Array:
        if type(x) is not Tracer or (inexact and not dt.is_inexact(x.dtype)):
            x, = promote_to_inexact(name, x) if inexact else promote(name, x)
        return op(x)  # type: ignore[no-any-return]
    ufunc.__name__ = name
    ufunc.__qualname__ = name
    ufunc.__doc__ = f"Elementwise ``{name}``."
    return ufunc


add = _binary("add", lambda x, y: lax.bitwise_or(x, y) if _is_bool(x) else lax.add(x, y))
subtract = _binary("subtract", lax.sub)
multiply = _binary("multiply", lambda x, y: lax.bitwise_and(x, y) if _is_bool(x) else lax.mul(x, y))
true_divide = _binary("true_divide", lax.div, inexact=True)
divide = true_divide
maximum = _binary("maximum", lax.max)
minimum = _binary("minimum", lax.min)
arctan2 = _binary("arctan2", lax.atan2, inexact=True)
nextafter = _binary("nextafter", lax.nextafter, inexact=True)
equal = _binary("equal", lax.eq)
not_equal = _binary("not_equal", lax.ne)
less = _binary("less", lax.lt)
less_equal = _binary("less_equal", lax.le)
greater = _binary("greater", lax.gt)
greater_equal = _binary("greater_equal", lax.ge)
bitwise_and = _binary("bitwise_and", lax.bitwise_and)
bitwise_or = _binary("bitwise_or", lax.bitwise_or)
bitwise_xor = _binary("bitwise_xor", lax.bitwise_xor)


def _is_bool(x: Any) -> bool:
    av = aval_of(x)
    if av is None:
        av = x.aval if type(x) is Literal else None
    if av is None:
        return bool(np.asarray(x).dtype == dt.bool_)
    return bool(av.dtype == dt.bool_)


def _to_bool(x: Any) -> Any:
    av = aval_of(x)
    if av is not None and av.dtype == dt.bool_:
        return x
    if av is None and not isinstance(x, Literal):
        x, = promote("logical", x)
        if _is_bool(x):
            return x
    return lax.ne(x, _zero_like(x))


def _zero_like(x: Any) -> Any:
    av = aval_of(x) or x.aval
    return scalar_literal(0, av.dtype) if av.dtype != dt.bool_ else False


def logical_and(x: Any, y: Any) -> Array:
    """Elementwise logical and (nonzero is true)."""
    a, b = promote("logical_and", _to_bool(x), _to_bool(y))
    return lax.bitwise_and(a, b)  # type: ignore[no-any-return]


def logical_or(x: Any, y: Any) -> Array:
    """Elementwise logical or (nonzero is true)."""
    a, b = promote("logical_or", _to_bool(x), _to_bool(y))
    return lax.bitwise_or(a, b)  # type: ignore[no-any-return]


def logical_xor(x: Any, y: Any) -> Array:
    """Elementwise logical xor (nonzero is true)."""
    a, b = promote("logical_xor", _to_bool(x), _to_bool(y))
    return lax.bitwise_xor(a, b)  # type: ignore[no-any-return]


def logical_not(x: Any) -> Array:
    """Elementwise logical not (nonzero is true)."""
    return lax.bitwise_not(_to_bool(x))  # type: ignore[no-any-return]


def _check_int_or_bool(name: str, x: Any) -> None:
    if not (dt.is_integer(x.dtype) or dt.is_bool(x.dtype)):
        raise TypeError(f"{name}: expected an integer or bool array, but got {x.aval.str_short()}")


def invert(x: Any) -> Array:
    """Bitwise not (logical not for booleans)."""
    x, = promote("invert", x)
    _check_int_or_bool("invert", x)
    return lax.bitwise_not(x)  # type: ignore[no-any-return]


bitwise_not = invert


def negative(x: Any) -> Array:
    """``-x``."""
    x, = promote("negative", x)
    if x.dtype == dt.bool_:
        raise TypeError("negative: expected a numeric array, but got a bool array; use logical_not")
    return lax.neg(x)  # type: ignore[no-any-return]


def positive(x: Any) -> Array:
    """``+x`` (the value itself)."""
    x, = promote("positive", x)
    return x  # type: ignore[no-any-return]


sin = _unary("sin", lax.sin, inexact=True)
cos = _unary("cos", lax.cos, inexact=True)
tan = _unary("tan", lax.tan, inexact=True)
arcsin = _unary("arcsin", lax.asin, inexact=True)
arccos = _unary("arccos", lax.acos, inexact=True)
arctan = _unary("arctan", lax.atan, inexact=True)
sinh = _unary("sinh", lax.sinh, inexact=True)
cosh = _unary("cosh", lax.cosh, inexact=True)
tanh = _unary("tanh", lax.tanh, inexact=True)
arcsinh = _unary("arcsinh", lax.asinh, inexact=True)
arccosh = _unary("arccosh", lax.acosh, inexact=True)
arctanh = _unary("arctanh", lax.atanh, inexact=True)
exp = _unary("exp", lax.exp, inexact=True)
exp2 = _unary("exp2", lax.exp2, inexact=True)
expm1 = _unary("expm1", lax.expm1, inexact=True)
log = _unary("log", lax.log, inexact=True)
log1p = _unary("log1p", lax.log1p, inexact=True)
sqrt = _unary("sqrt", lax.sqrt, inexact=True)
rsqrt = _unary("rsqrt", lax.rsqrt, inexact=True)
cbrt = _unary("cbrt", lax.cbrt, inexact=True)


def log2(x: Any) -> Array:
    """Base-2 logarithm."""
    x, = promote_to_inexact("log2", x)
    return lax.div(lax.log(x), lax.log(_const_like(x, 2)))  # type: ignore[no-any-return]


def log10(x: Any) -> Array:
    """Base-10 logarithm."""
    x, = promote_to_inexact("log10", x)
    return lax.div(lax.log(x), lax.log(_const_like(x, 10)))  # type: ignore[no-any-return]


def _const_like(x: Any, value: Any) -> Any:
    av = aval_of(x) or x.aval
    return Literal(scalar_literal(value, av.dtype).value, ShapedArray((), av.dtype, av.weak_type))


def abs(x: Any) -> Array:
    """Absolute value (magnitude for complex; identity for unsigned and bool)."""
    x, = promote("abs", x)
    if dt.is_unsigned(x.dtype) or dt.is_bool(x.dtype):
        return x  # type: ignore[no-any-return]
    return lax.abs(x)  # type: ignore[no-any-return]


absolute = abs


def sign(x: Any) -> Array:
    """-1, 0 or 1 by sign."""
    x, = promote("sign", x)
    if dt.is_bool(x.dtype):
        return x  # type: ignore[no-any-return]
    return lax.sign(x)  # type: ignore[no-any-return]


def _int_identity(name: str, op: Callable[[Any], Any]) -> Callable[[Any], Array]:
    def ufunc(x: Any) -> Array:
        x, = promote(name, x)
        if not dt.is_inexact(x.dtype):
            return x  # type: ignore[no-any-return]
        return op(x)  # type: ignore[no-any-return]
    ufunc.__name__ = name
    ufunc.__doc__ = f"Elementwise ``{name}`` (integers are returned unchanged)."
    return ufunc


floor = _int_identity("floor", lax.floor)
ceil = _int_identity("ceil", lax.ceil)


def trunc(x: Any) -> Array:
    """Round toward zero."""
    x, = promote("trunc", x)
    if not dt.is_inexact(x.dtype):
        return x  # type: ignore[no-any-return]
    return where(lax.lt(x, _const_like(x, 0)), lax.ceil(x), lax.floor(x))


def round(x: Any, decimals: int = 0) -> Array:
    """Round half to even, to ``decimals`` decimals."""
    x, = promote("round", x)
    if not dt.is_inexact(x.dtype):
        if decimals >= 0:
            return x  # type: ignore[no-any-return]
        raise NotImplementedError("round of integers to negative decimals is not supported")
    if decimals == 0:
        return lax.round(x, lax.RoundingMethod.TO_NEAREST_EVEN)  # type: ignore[no-any-return]
    factor = _const_like(x, 10.0 ** decimals)
    return lax.div(lax.round(lax.mul(x, factor), lax.RoundingMethod.TO_NEAREST_EVEN), factor)  # type: ignore[no-any-return]


around = round
rint = round


def square(x: Any) -> Array:
    """``x * x``."""
    x, = promote("square", x)
    return lax.integer_pow(x, 2)  # type: ignore[no-any-return]


def reciprocal(x: Any) -> Array:
    """``1 / x``."""
    x, = promote_to_inexact("reciprocal", x)
    return lax.integer_pow(x, -1)  # type: ignore[no-any-return]


def isfinite(x: Any) -> Array:
    """Whether each element is finite (always true for integers)."""
    x, = promote("isfinite", x)
    if not dt.is_inexact(x.dtype):
        return _full_bool(x, True)
    if dt.is_complex(x.dtype):
        return logical_and(lax.is_finite(real(x)), lax.is_finite(imag(x)))
    return lax.is_finite(x)  # type: ignore[no-any-return]


def isinf(x: Any) -> Array:
    """Whether each element is +inf or -inf."""
    x, = promote("isinf", x)
    if not dt.is_inexact(x.dtype):
        return _full_bool(x, False)
    if dt.is_complex(x.dtype):
        return logical_or(isinf(real(x)), isinf(imag(x)))
    return lax.eq(lax.abs(x), _const_like(x, float("inf")))  # type: ignore[no-any-return]


def isnan(x: Any) -> Array:
    """Whether each element is NaN."""
    x, = promote("isnan", x)
    if not dt.is_inexact(x.dtype):
        return _full_bool(x, False)
    return lax.ne(x, x)  # type: ignore[no-any-return]


def _full_bool(x: Any, value: bool) -> Array:
    from plait.frontend.numpy.creation import full
    return full(x.shape, value, dt.bool_)


def signbit(x: Any) -> Array:
    """Whether the sign bit is set (true for -0.0)."""
    x, = promote("signbit", x)
    if dt.is_unsigned(x.dtype) or dt.is_bool(x.dtype):
        return _full_bool(x, False)
    if dt.is_integer(x.dtype):
        return lax.lt(x, _const_like(x, 0))  # type: ignore[no-any-return]
    # Zeros are replaced by their reciprocals, which keep the sign: -0.0 -> -inf.
    signed = where(lax.eq(x, _const_like(x, 0)), lax.div(_const_like(x, 1), x), x)
    return lax.lt(signed, _const_like(x, 0))  # type: ignore[no-any-return]


def copysign(x: Any, y: Any) -> Array:
    """The magnitude of ``x`` with the sign of ``y``."""
    x, y = promote_to_inexact("copysign", x, y)
    return where(signbit(y), lax.neg(lax.abs(x)), lax.abs(x))


def where(condition: Any, x: Any = None, y: Any = None) -> Array:
    """Elementwise ``x`` where ``condition`` else ``y`` (three-argument form)."""
    if x is None or y is None:
        raise NotImplementedError(
            "where(condition) (one-argument form) has a data-dependent shape; pass x and y")
    c = _to_bool(condition)
    x, y = promote("where", x, y)
    c, x, y = _broadcast_all(c, x, y)
    return lax.select_n(c, y, x)  # type: ignore[no-any-return]


def _broadcast_all(*args: Any) -> list[Any]:
    from plait.frontend.numpy.manipulation import broadcast_shapes, broadcast_to
    from plait.frontend.numpy._core import shape
    out_shape = broadcast_shapes(*[shape(a) for a in args])
    return [a if shape(a) == out_shape else broadcast_to(a, out_shape) for a in args]


def clip(a: Any, a_min: Any = None, a_max: Any = None) -> Array:
    """Values limited to ``[a_min, a_max]`` (either may be ``None``)."""
    if a_min is not None:
        a = maximum(a, a_min)
    if a_max is not None:
        a = minimum(a, a_max)
    if a_min is None and a_max is None:
        a, = promote("clip", a)
    return a  # type: ignore[no-any-return]


def real(x: Any) -> Array:
    """The real part."""
    x, = promote("real", x)
    return lax.real(x) if dt.is_complex(x.dtype) else x  # type: ignore[no-any-return]


def imag(x: Any) -> Array:
    """The imaginary part (zeros for real arrays)."""
    x, = promote("imag", x)
    if dt.is_complex(x.dtype):
        return lax.imag(x)  # type: ignore[no-any-return]
    from plait.frontend.numpy.creation import zeros_like
    return zeros_like(x)


def conj(x: Any) -> Array:
    """The complex conjugate."""
    x, = promote("conj", x)
    return lax.conj(x) if dt.is_complex(x.dtype) else x  # type: ignore[no-any-return]


conjugate = conj


def floor_divide(x: Any, y: Any) -> Array:
    """Division rounded toward negative infinity."""
    x, y = promote("floor_divide", x, y)
    if dt.is_integer(x.dtype):
        if dt.is_unsigned(x.dtype):
            return lax.div(x, y)  # type: ignore[no-any-return]
        div = lax.div(x, y)
        adjust = lax.bitwise_and(lax.ne(lax.sign(x), lax.sign(y)),
                                 lax.ne(lax.rem(x, y), _const_like(x, 0)))
        return lax.select_n(adjust, div, lax.sub(div, _const_like(div, 1)))  # type: ignore[no-any-return]
    if dt.is_bool(x.dtype):
        raise TypeError("floor_divide: expected numeric arrays, but got bool arrays")
    return _float_divmod(x, y)[0]


def _float_divmod(x: Any, y: Any) -> tuple[Any, Any]:
    mod = lax.rem(x, y)
    div = lax.div(lax.sub(x, mod), y)
    ind = lax.bitwise_and(lax.ne(mod, _const_like(mod, 0)), lax.ne(lax.sign(y), lax.sign(mod)))
    mod = lax.select_n(ind, mod, lax.add(mod, y))
    div = lax.select_n(ind, div, lax.sub(div, _const_like(div, 1)))
    return lax.round(div), mod


def remainder(x: Any, y: Any) -> Array:
    """Remainder with the sign of the divisor (Python's ``%``)."""
    x, y = promote("remainder", x, y)
    if dt.is_bool(x.dtype):
        raise TypeError("remainder: expected numeric arrays, but got bool arrays")
    trunc_mod = lax.rem(x, y)
    zero = _const_like(trunc_mod, 0)
    if dt.is_unsigned(x.dtype):
        return trunc_mod  # type: ignore[no-any-return]
    nonzero = lax.ne(trunc_mod, zero)
    sign_differs = lax.ne(lax.lt(trunc_mod, zero), lax.lt(y, zero))
    do_plus = lax.bitwise_and(sign_differs, nonzero)
    return lax.select_n(do_plus, trunc_mod, lax.add(trunc_mod, y))  # type: ignore[no-any-return]


mod = remainder


def fmod(x: Any, y: Any) -> Array:
    """Remainder with the sign of the dividend (C's ``fmod``)."""
    x, y = promote("fmod", x, y)
    return lax.rem(x, y)  # type: ignore[no-any-return]


def power(x: Any, y: Any) -> Array:
    """``x ** y``; a Python int exponent becomes ``integer_pow``."""
    if isinstance(y, int | np.integer) and not isinstance(y, bool) and aval_of(y) is None:
        x, = promote("power", x)
        if dt.is_integer(x.dtype) and y < 0:
            raise ValueError("power: integers to negative integer powers are not allowed")
        return lax.integer_pow(x, int(y))  # type: ignore[no-any-return]
    x, y = promote("power", x, y)
    if dt.is_inexact(x.dtype):
        return lax.pow(x, y)  # type: ignore[no-any-return]
    raise NotImplementedError(
        f"power: an integer base with an array exponent ({x.aval.str_short()} ** "
        f"{y.aval.str_short()}) is not supported yet; cast the base to a float dtype")


def logaddexp(x: Any, y: Any) -> Array:
    """``log(exp(x) + exp(y))``, computed stably."""
    x, y = promote_to_inexact("logaddexp", x, y)
    amax = lax.max(x, y)
    delta = lax.sub(x, y)
    return where(isnan(delta), lax.add(x, y),
                 lax.add(amax, lax.log1p(lax.exp(lax.neg(lax.abs(delta))))))


def hypot(x: Any, y: Any) -> Array:
    """``sqrt(x**2 + y**2)``."""
    x, y = promote_to_inexact("hypot", x, y)
    return lax.sqrt(lax.add(lax.integer_pow(x, 2), lax.integer_pow(y, 2)))  # type: ignore[no-any-return]


def deg2rad(x: Any) -> Array:
    """Degrees to radians."""
    x, = promote_to_inexact("deg2rad", x)
    return lax.mul(x, _const_like(x, np.pi / 180))  # type: ignore[no-any-return]


def rad2deg(x: Any) -> Array:
    """Radians to degrees."""
    x, = promote_to_inexact("rad2deg", x)
    return lax.mul(x, _const_like(x, 180 / np.pi))  # type: ignore[no-any-return]


def heaviside(x: Any, h0: Any) -> Array:
    """0 for negative ``x``, ``h0`` at zero, 1 for positive."""
    x, h0 = promote_to_inexact("heaviside", x, h0)
    zero = _const_like(x, 0)
    return where(lax.lt(x, zero), _const_like(x, 0), where(lax.gt(x, zero), _const_like(x, 1), h0))

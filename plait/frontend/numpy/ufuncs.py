"""Elementwise functions of the NumPy namespace, with NumPy broadcasting and
JAX's dtype promotion (JAX docs: "Type promotion semantics")."""

from __future__ import annotations

import builtins
import operator
from collections.abc import Callable
from typing import Any

import ml_dtypes
import numpy as np

from plait.frontend import lax
from plait.frontend.api.eager_dispatch import dispatched
from plait.frontend.api.eager_programs import compiled_when_eager
from plait.frontend.core.array_base import Array
from plait.frontend.core.array_impl import ArrayImpl
from plait.frontend.core.host_values import numpy_scalar_literal, scalar_literal
from plait.frontend.core.tracing import Tracer, bind, bind1
from plait.frontend.numpy._core import (
    as_array,
    check_arraylike,
    dtype_of,
    promote,
    promote_dtypes,
    promote_numeric,
    promote_to_inexact,
    shape,
)
from plait.frontend.numpy.manipulation import broadcast_shapes, broadcast_to
from plait.ir import dtypes as dt
from plait.ir import primitives as P
from plait.ir.atoms import Literal
from plait.ir.avals import ShapedArray
from plait.ir.caches import BoundedDict
from plait.ir.config import values as _config
from plait.ir.primitive import Primitive

__all__ = [
    "add", "subtract", "multiply", "divide", "true_divide",
    "negative", "positive", "maximum", "minimum", "arctan2", "nextafter",
    "equal", "not_equal", "less", "less_equal", "greater", "greater_equal", "logical_and",
    "logical_or", "logical_xor", "logical_not", "bitwise_and", "bitwise_or", "bitwise_xor",
    "bitwise_not", "invert", "sin", "cos", "tan", "arcsin", "arccos", "arctan", "sinh", "cosh",
    "tanh", "arcsinh", "arccosh", "arctanh", "exp", "exp2", "expm1", "log", "log1p", "log2",
    "log10", "sqrt", "cbrt", "rsqrt", "abs", "absolute", "sign", "floor", "ceil", "trunc",
    "round", "around", "rint", "square", "reciprocal", "isfinite", "isinf", "isnan", "where",
    "clip", "real", "imag", "conj", "conjugate",
    "signbit", "copysign",
]

_SCALAR_TYPES = (int, float)

# ml_dtypes.finfo (np.finfo extended to bfloat16 and the float8 types) is not annotated.
_finfo: Callable[[np.dtype[Any]], np.finfo[Any]] = ml_dtypes.finfo


def _fast_pair(x: Any, y: Any) -> tuple[Any, Any] | None:
    """Operands needing no promotion: two arrays (traced or concrete) of one type,
    or an array with a Python scalar that its dtype absorbs."""
    tx, ty = type(x), type(y)
    if tx is Tracer or tx is ArrayImpl:
        ax = x.aval
        if ty is Tracer or ty is ArrayImpl:
            ay = y.aval
            if ax.dtype.kind not in "bV" and (ax is ay or (
                    ax.dtype == ay.dtype and ax.weak_type == ay.weak_type
                    and (ax.shape == ay.shape or not ax.shape or not ay.shape))):
                return x, y
            return None
        # (Not bools, which promote, nor record dtypes: float0 and PRNG keys.)
        if ty in _SCALAR_TYPES and (ty is int or dt.is_inexact(ax.dtype)) and \
                ax.dtype.kind not in "bV":
            if ty is int and not _fits_default_int(y):
                return None
            try:
                return x, numpy_scalar_literal(y, ax.dtype) if ax.weak_type else _strong_literal(
                    y, ax.dtype)
            except OverflowError:
                return None  # (the slow path wraps it, or refuses it)
        return None
    if (ty is Tracer or ty is ArrayImpl) and tx in _SCALAR_TYPES:
        ay = y.aval
        if (tx is int or dt.is_inexact(ay.dtype)) and ay.dtype.kind not in "bV":
            if tx is int and not _fits_default_int(x):
                return None
            try:
                return (numpy_scalar_literal(x, ay.dtype) if ay.weak_type else _strong_literal(
                    x, ay.dtype)), y
            except OverflowError:
                return None
    return None


def _fits_default_int(x: int) -> bool:
    if _config.enable_x64:
        return -0x8000000000000000 <= x <= 0x7FFFFFFFFFFFFFFF
    return -0x80000000 <= x <= 0x7FFFFFFF


_strong_cache: BoundedDict[tuple[type, Any, np.dtype[Any]], Literal] = BoundedDict(
    "strong scalar literals")


def _strong_literal(x: Any, dtype: np.dtype[Any]) -> Literal:
    # A Python scalar joining a strongly typed operand (the literal's dtype is
    # the operand's, its value rounded to a float32 one, as JAX's).
    key = (type(x), x, dtype)
    # Not for nan (unequal to itself) nor zeros (0.0 == -0.0 would share an entry).
    cached = type(x) is not float or (x == x and x != 0.0)
    lit = _strong_cache.data.get(key) if cached else None
    if lit is None:
        weak = numpy_scalar_literal(x, dtype)
        lit = Literal(weak.val, weak.aval.strip_weak_type())
        if cached:
            _strong_cache[key] = lit
    return lit


def _binary(name: str, prim: Primitive, op: Callable[[Any, Any], Any] | None = None,
            inexact: bool = False, real: bool = False) -> Callable[[Any, Any], Array]:
    slow = op or (lambda x, y: bind(prim, x, y))

    def direct(x: Any, y: Any) -> tuple[Any, Any] | None:
        pair = _fast_pair(x, y)
        if pair is not None and (not inexact or dt.is_inexact(pair[1].aval.dtype)) and (
                not real or not dt.is_complex(pair[1].aval.dtype)):
            return pair  # operands already agree (no bools here): bind directly
        return None

    def general(x: Any, y: Any) -> Array:
        pair = direct(x, y)
        if pair is not None:
            return bind1(prim, *pair)
        check_arraylike(name, x, y)
        args = promote_to_inexact(name, x, y) if inexact else promote(name, x, y)
        return as_array(slow(*args))
    fast = dispatched(name, prim, general, lambda x, y: direct(x, y) is not None)

    def ufunc(x: Any, y: Any) -> Array:
        # Two concrete Arrays: through jaxlib's dispatcher (see eager_dispatch).
        if type(x) is ArrayImpl and type(y) is ArrayImpl:
            out: Array = fast(x, y)
            return out
        return general(x, y)
    ufunc.__name__ = name
    ufunc.__qualname__ = name
    ufunc.__doc__ = f"Elementwise ``{name}`` with NumPy broadcasting and dtype promotion."
    return ufunc


def _arg(name: str, x: Any, kind: str = "any") -> Array:
    """The single operand ``x`` of ``name`` as an Array: ``kind`` ``'numeric'`` turns
    bools into the default int, ``'inexact'`` turns bools and integers into the
    default float (weak types are kept)."""
    check_arraylike(name, x)
    if kind == "inexact":
        x, = promote_to_inexact(name, x)
    elif kind == "numeric":
        x, = promote_numeric(name, x)
    return as_array(x)


def _unary(name: str, prim: Primitive, inexact: bool = False) -> Callable[[Any], Array]:
    def general(x: Any) -> Array:
        tx = type(x)
        aval = x._aval if tx is ArrayImpl else x.aval if tx is Tracer else None
        if aval is None or (inexact and aval.dtype not in dt.INEXACT):
            x = _arg(name, x, "inexact" if inexact else "any")
        return bind1(prim, x)
    fast = dispatched(name, prim, general,
                      lambda x: not inexact or x._aval.dtype in dt.INEXACT)

    def ufunc(x: Any) -> Array:
        # A concrete Array: through jaxlib's dispatcher (see eager_dispatch).
        return fast(x) if type(x) is ArrayImpl else general(x)
    ufunc.__name__ = name
    ufunc.__qualname__ = name
    ufunc.__doc__ = f"Elementwise ``{name}``."
    return ufunc


def _add(x: Any, y: Any) -> Array:
    return lax.bitwise_or(x, y) if _is_bool(x) else lax.add(x, y)


def _mul(x: Any, y: Any) -> Array:
    return lax.bitwise_and(x, y) if _is_bool(x) else lax.mul(x, y)


def _sub(x: Any, y: Any) -> Array:
    if _is_bool(x):
        raise TypeError("subtract: the numpy boolean subtract (the - operator) is not "
                        "supported; use logical_xor or bitwise_xor instead")
    return lax.sub(x, y)


add = _binary("add", P.add_p, _add)
subtract = _binary("subtract", P.sub_p, _sub)
multiply = _binary("multiply", P.mul_p, _mul)
true_divide = _binary("true_divide", P.div_p, inexact=True)
divide = true_divide

arctan2 = _binary("arctan2", P.atan2_p, inexact=True)
nextafter = _binary("nextafter", P.nextafter_p, inexact=True)
equal = _binary("equal", P.eq_p)
not_equal = _binary("not_equal", P.ne_p)


def _ordered(strict: Callable[[Any, Any], Array], op: Callable[[Any, Any], Array]
             ) -> Callable[[Any, Any], Array]:
    # Complex numbers compare lexicographically: real parts, then imaginary parts.
    def compare(x: Any, y: Any) -> Array:
        if not dt.is_complex(dtype_of(x)):
            return op(x, y)
        xr, yr = lax.real(x), lax.real(y)
        return lax.bitwise_or(strict(xr, yr),
                              lax.bitwise_and(lax.eq(xr, yr), op(lax.imag(x), lax.imag(y))))
    return compare


less = _binary("less", P.lt_p, _ordered(lax.lt, lax.lt), real=True)
less_equal = _binary("less_equal", P.le_p, _ordered(lax.lt, lax.le), real=True)
greater = _binary("greater", P.gt_p, _ordered(lax.gt, lax.gt), real=True)
greater_equal = _binary("greater_equal", P.ge_p, _ordered(lax.gt, lax.ge), real=True)


def _extremum(prim: Primitive, first_wins: Callable[[Any, Any], Array]
              ) -> Callable[[Any, Any], Array]:
    # Complex numbers are ordered lexicographically, as by the comparisons above.
    def op(x: Any, y: Any) -> Array:
        if not dt.is_complex(dtype_of(x)):
            return bind1(prim, x, y)
        return where(first_wins(x, y), x, y)
    return op


maximum = _binary("maximum", P.max_p, _extremum(P.max_p, _ordered(lax.gt, lax.ge)), real=True)
minimum = _binary("minimum", P.min_p, _extremum(P.min_p, _ordered(lax.lt, lax.le)), real=True)
bitwise_and = _binary("bitwise_and", P.and_p)
bitwise_or = _binary("bitwise_or", P.or_p)
bitwise_xor = _binary("bitwise_xor", P.xor_p)


def _is_bool(x: Any) -> bool:
    return bool(dtype_of(x) == dt.bool_)


def _to_bool(x: Any) -> Array:
    """``x != 0`` unless ``x`` is already boolean (the weak type is kept)."""
    a = as_array(x)
    if a.dtype == dt.bool_:
        return a
    return lax.ne(a, _lax_const(a, 0))


def _const_like(x: Any, value: Any) -> Literal:
    """A strongly typed scalar constant of ``x``'s dtype (as JAX's ``_constant_like``)."""
    d = dtype_of(x)
    if d == dt.bool_:
        return Literal(bool(value), ShapedArray((), d))
    if dt.is_inexact(d):
        # A NumPy constant of the dtype: its value is rounded to the dtype (a
        # Python float keeps its double value, a float32 constant does not).
        v = np.asarray(value).astype(d).item()
        value = complex(v) if dt.is_complex(d) else float(v)
    lit = scalar_literal(value, d)
    return Literal(lit.val, ShapedArray((), d, False))


def _lax_const(x: Any, value: Any) -> Literal:
    """A scalar constant of ``x``'s dtype, weakly typed when ``x`` is a weakly typed
    scalar (as JAX's ``lax._const``)."""
    a = as_array(x)
    if a.weak_type and not a.shape:
        return _py(a, value)
    return _const_like(a, value)


def _py(x: Any, value: Any) -> Literal:
    """A weakly typed scalar of ``x``'s dtype: what a Python scalar operand becomes."""
    d = dtype_of(x)
    if d == dt.bool_:
        return Literal(bool(value), ShapedArray((), d))
    return numpy_scalar_literal(value, d)


def _logical(name: str, op: Callable[[Any, Any], Array]) -> Callable[[Any, Any], Array]:
    def ufunc(x: Any, y: Any) -> Array:
        check_arraylike(name, x, y)
        a, b = promote(name, x, y)
        return op(_to_bool(a), _to_bool(b))
    ufunc.__name__ = name
    ufunc.__qualname__ = name
    ufunc.__doc__ = f"Elementwise ``{name}`` (nonzero is true)."
    return ufunc


logical_and = _logical("logical_and", lax.bitwise_and)
logical_or = _logical("logical_or", lax.bitwise_or)
logical_xor = _logical("logical_xor", lax.bitwise_xor)


def logical_not(x: Any) -> Array:
    """Elementwise logical not (nonzero is true)."""
    return lax.bitwise_not(_to_bool(_arg("logical_not", x)))


def invert(x: Any) -> Array:
    """Bitwise not (logical not for booleans)."""
    x = _arg("invert", x)
    if not (dt.is_integer(x.dtype) or dt.is_bool(x.dtype)):
        raise TypeError("invert: expected an integer or bool array, but got "
                        f"{x.aval.str_short(short_dtypes=False)}")
    return lax.bitwise_not(x)


bitwise_not = invert


def negative(x: Any) -> Array:
    """``-x``."""
    x = _arg("negative", x)
    if x.dtype == dt.bool_:
        raise TypeError("negative: expected a numeric array, but got a bool array; "
                        "use logical_not")
    return lax.neg(x)


def positive(x: Any) -> Array:
    """``+x`` (the value itself)."""
    return _arg("positive", x)


sin = _unary("sin", P.sin_p, inexact=True)
cos = _unary("cos", P.cos_p, inexact=True)
tan = _unary("tan", P.tan_p, inexact=True)
arcsin = _unary("arcsin", P.asin_p, inexact=True)
arccos = _unary("arccos", P.acos_p, inexact=True)
arctan = _unary("arctan", P.atan_p, inexact=True)
sinh = _unary("sinh", P.sinh_p, inexact=True)
cosh = _unary("cosh", P.cosh_p, inexact=True)
tanh = _unary("tanh", P.tanh_p, inexact=True)
arcsinh = _unary("arcsinh", P.asinh_p, inexact=True)
arccosh = _unary("arccosh", P.acosh_p, inexact=True)
arctanh = _unary("arctanh", P.atanh_p, inexact=True)
exp = _unary("exp", P.exp_p, inexact=True)
exp2 = _unary("exp2", P.exp2_p, inexact=True)
expm1 = _unary("expm1", P.expm1_p, inexact=True)
log = _unary("log", P.log_p, inexact=True)
log1p = _unary("log1p", P.log1p_p, inexact=True)
sqrt = _unary("sqrt", P.sqrt_p, inexact=True)
rsqrt = _unary("rsqrt", P.rsqrt_p, inexact=True)


def cbrt(x: Any) -> Array:
    """Cube root (real inputs only)."""
    x = _arg("cbrt", x, "inexact")
    if dt.is_complex(x.dtype):
        raise TypeError("cbrt: expected a real array, but got "
                        f"{x.aval.str_short(short_dtypes=False)}")
    return lax.cbrt(x)


def _scaled_log(name: str, x: Any, scale: float) -> Array:
    x = _arg(name, x, "inexact")
    r = lax.log(x)
    if dt.is_complex(x.dtype):
        re, im = lax.real(r), lax.imag(r)
        return lax.complex(lax.mul(re, _const_like(re, scale)),
                           lax.mul(im, _const_like(im, scale)))
    return lax.mul(r, _const_like(r, scale))


def log2(x: Any) -> Array:
    """Base-2 logarithm."""
    x = _arg("log2", x, "inexact")
    r = lax.log(x)
    if dt.is_complex(x.dtype):
        re, im = lax.real(r), lax.imag(r)
        ln2 = lax.log(_const_like(re, 2))
        return lax.complex(lax.div(re, ln2), lax.div(im, ln2))
    return lax.div(r, lax.log(_const_like(x, 2)))


def log10(x: Any) -> Array:
    """Base-10 logarithm."""
    return _scaled_log("log10", x, 0.4342944819032518)


def abs(x: Any) -> Array:
    """Absolute value (magnitude for complex; identity for unsigned and bool)."""
    a = _arg("abs", x)
    if dt.is_unsigned(a.dtype) or dt.is_bool(a.dtype):
        return a
    return lax.abs(a)


absolute = abs


def sign(x: Any) -> Array:
    """-1, 0 or 1 by sign (``x / |x|`` for complex)."""
    x = _arg("sign", x)
    if dt.is_bool(x.dtype):
        raise TypeError("sign: expected a numeric array, but got "
                        f"{x.aval.str_short(short_dtypes=False)}")
    if dt.is_unsigned(x.dtype):
        # StableHLO's sign takes no unsigned integers: 0 or 1.
        return lax.convert_element_type(lax.ne(x, _py(x, 0)), x.dtype, x.weak_type)
    return lax.sign(x)


def _int_identity(name: str, op: Callable[[Any], Array]) -> Callable[[Any], Array]:
    def ufunc(x: Any) -> Array:
        a = _arg(name, x)
        if not dt.is_inexact(a.dtype):
            return a
        if dt.is_complex(a.dtype):
            raise TypeError(f"{name}: expected a real array, but got "
                            f"{a.aval.str_short(short_dtypes=False)}")
        return op(a)
    ufunc.__name__ = name
    ufunc.__qualname__ = name
    ufunc.__doc__ = f"Elementwise ``{name}`` (integers and bools are returned unchanged)."
    return ufunc


floor = _int_identity("floor", lax.floor)
ceil = _int_identity("ceil", lax.ceil)
trunc = _int_identity("trunc", lambda x: where(lax.lt(x, _lax_const(x, 0)), lax.ceil(x),
                                                lax.floor(x)))


@compiled_when_eager(("decimals", "out"))  # (XLA turns the division into a multiplication)
def round(a: Any, decimals: int = 0, out: None = None) -> Array:
    """Round half to even, to ``decimals`` decimals (real and imaginary parts apart;
    ``out`` is refused, as in JAX)."""
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.round is not supported.")
    x = _arg("round", a)
    decimals = operator.index(decimals)
    if dt.is_integer(x.dtype):
        if decimals < 0:
            raise NotImplementedError("round: integers to negative decimals are not supported")
        return x
    if not dt.is_inexact(x.dtype):
        raise ValueError("round: expected a numeric array, but got "
                         f"{x.aval.str_short(short_dtypes=False)}")
    if decimals > np.log10(float(_finfo(dt.real_dtype(x.dtype)).max)):
        return x

    def round_real(v: Any) -> Array:
        if decimals == 0:
            return lax.round(v, lax.RoundingMethod.TO_NEAREST_EVEN)
        d = dtype_of(v)
        if d == dt.float16:
            v = lax.convert_element_type(v, dt.float32, as_array(v).weak_type)
        # A weak factor (JAX's is): a weakly typed value stays weak.
        factor = lax.convert_element_type(10.0 ** decimals, dtype_of(v), weak_type=True)
        out = lax.div(lax.round(lax.mul(v, factor), lax.RoundingMethod.TO_NEAREST_EVEN), factor)
        if d == dt.float16:
            out = lax.convert_element_type(out, d, as_array(out).weak_type)
        return out

    if dt.is_complex(x.dtype):
        return lax.complex(round_real(lax.real(x)), round_real(lax.imag(x)))
    return round_real(x)


around = round


def rint(x: Any) -> Array:
    """Round half to even; integers and bools become the default float."""
    x = _arg("rint", x)
    if not dt.is_inexact(x.dtype):
        return lax.convert_element_type(x, dt.canonicalize(dt.float64))
    if dt.is_complex(x.dtype):
        return lax.complex(rint(lax.real(x)), rint(lax.imag(x)))
    return lax.round(x, lax.RoundingMethod.TO_NEAREST_EVEN)


def square(x: Any) -> Array:
    """``x * x`` (bools become the default int)."""
    return lax.square(_arg("square", x, "numeric"))


def reciprocal(x: Any) -> Array:
    """``1 / x``."""
    return lax.integer_pow(_arg("reciprocal", x, "inexact"), -1)


def isfinite(x: Any) -> Array:
    """Whether each element is finite (always true for integers)."""
    x = _arg("isfinite", x)
    if not dt.is_inexact(x.dtype):
        return _full_bool(x, True)
    if dt.is_complex(x.dtype):
        return lax.bitwise_and(lax.is_finite(lax.real(x)), lax.is_finite(lax.imag(x)))
    return lax.is_finite(x)


def isinf(x: Any) -> Array:
    """Whether each element is +inf or -inf."""
    x = _arg("isinf", x)
    if not dt.is_inexact(x.dtype):
        return _full_bool(x, False)
    if dt.is_complex(x.dtype):
        re, im = lax.real(x), lax.imag(x)
        return lax.bitwise_or(lax.eq(lax.abs(re), _const_like(re, float("inf"))),
                              lax.eq(lax.abs(im), _const_like(im, float("inf"))))
    return lax.eq(lax.abs(x), _const_like(x, float("inf")))


def isnan(x: Any) -> Array:
    """Whether each element is NaN."""
    x = _arg("isnan", x)
    return lax.ne(x, x)


def _full_bool(x: Any, value: bool) -> Array:
    return lax.broadcast_in_dim(Literal(value, ShapedArray((), dt.bool_)), x.shape, ())


def signbit(x: Any) -> Array:
    """Whether the sign bit is set (true for -0.0 and -nan)."""
    x = _arg("signbit", x)
    if dt.is_bool(x.dtype):
        return _full_bool(x, False)
    if dt.is_integer(x.dtype):
        return lax.lt(x, _const_like(x, 0))
    if dt.is_complex(x.dtype):
        raise ValueError(f"signbit: not well defined for {x.dtype}")
    # The top bit of the float's bits, as JAX reads it: -0.0 and -nan have it set.
    bits = {2: dt.int16, 4: dt.int32, 8: dt.int64}[x.dtype.itemsize]
    return lax.lt(lax.bitcast_convert_type(x, bits), lax.full((), 0, bits))


def copysign(x: Any, y: Any) -> Array:
    """The magnitude of ``x`` with the sign of ``y``."""
    check_arraylike("copysign", x, y)
    x, y = promote_to_inexact("copysign", x, y)
    if dt.is_complex(dtype_of(x)):
        raise TypeError("copysign does not support complex-valued inputs")
    ax = lax.abs(x)
    return where(signbit(y), lax.neg(ax), ax)


def where(condition: Any, x: Any = None, y: Any = None) -> Array:
    """Elementwise ``x`` where ``condition`` else ``y`` (three-argument form)."""
    if x is None and y is None:
        raise NotImplementedError(
            "where(condition) (one-argument form) has a data-dependent shape; pass x and y")
    if x is None or y is None:
        raise ValueError("Either both or neither of the x and y arguments should be provided "
                         f"to where, but got {x} and {y}")
    check_arraylike("where", condition, x, y)
    c = _to_bool(condition)
    x, y = promote_dtypes("where", x, y)
    if not shape(c):
        x, y = _broadcast_all(x, y)
    else:
        c, x, y = _broadcast_all(c, x, y)
    return lax.select_n(c, y, x)


def _broadcast_all(*args: Any) -> list[Any]:
    out_shape = broadcast_shapes(*[shape(a) for a in args])
    return [a if shape(a) == out_shape else broadcast_to(a, out_shape) for a in args]


def clip(arr: Any, min: Any = None, max: Any = None) -> Array:
    """Values limited to ``[min, max]`` (either may be ``None``)."""
    check_arraylike("clip", arr)
    if builtins.any(v is not None and dt.is_complex(dtype_of(v)) for v in (arr, min, max)):
        raise ValueError("clip: complex values have no ordering and cannot be clipped")
    if min is not None:
        arr = maximum(min, arr)
    if max is not None:
        arr = minimum(max, arr)
    return as_array(arr)


def real(x: Any) -> Array:
    """The real part."""
    x = _arg("real", x)
    return lax.real(x) if dt.is_complex(x.dtype) else x


def imag(x: Any) -> Array:
    """The imaginary part (zeros for real arrays)."""
    x = _arg("imag", x)
    if dt.is_complex(x.dtype):
        return lax.imag(x)
    zero = scalar_literal(0, x.dtype) if x.weak_type else _const_like(x, 0)
    return lax.broadcast_in_dim(zero, x.shape, ())


def conj(x: Any) -> Array:
    """The complex conjugate."""
    x = _arg("conj", x)
    return lax.conj(x) if dt.is_complex(x.dtype) else x


conjugate = conj

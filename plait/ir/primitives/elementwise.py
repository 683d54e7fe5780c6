"""Elementwise primitives: unary math, binary arithmetic, comparisons, selection, casts.

Names, parameters and dtype rules follow ``jax.lax`` (JAX 0.10.2), so printed
jaxprs read like JAX's: ``sin`` prints no ``accuracy=None``, ``mul`` no
``out_dtype=None``, ``round`` its ``rounding_method``.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from typing import Any

import numpy as np

from plait.ir import dtypes as dt
from plait.ir.avals import ShapedArray, shaped
from plait.ir.params import (
    Derived,
    ParamDef,
    decode_bool,
    decode_dtype,
    decode_enum,
    decode_int,
    decode_none,
    decode_optional_dtype,
)
from plait.ir.primitive import Primitive
from plait.ir.primitives._typing import (
    ANY,
    BOOL_OR_INT,
    COMPLEX,
    FLOAT,
    INEXACT,
    INT,
    NUM,
    ORDERED,
    SIGNED,
    check_dtype,
    check_same_dtypes,
    fail,
    nary,
    unary,
)


class RoundingMethod(enum.IntEnum):
    """How ``round`` breaks ties (printed by value, as JAX prints it)."""

    AWAY_FROM_ZERO = 0
    TO_NEAREST_EVEN = 1


class AccuracyMode(enum.Enum):
    """A requested accuracy of a transcendental op (``lax.AccuracyMode``): ``HIGHEST``
    asks the compiler for its most accurate implementation."""

    HIGHEST = 1
    DEFAULT = 2


class Tolerance:
    """Tolerances a transcendental op's implementation must meet (``lax.Tolerance``): at
    most two of absolute ``atol``, relative ``rtol`` and ``ulps``; compared by identity,
    as JAX's.

    Raises:
      ValueError: a negative tolerance, or none set.
    """

    def __init__(self, atol: float = 0.0, rtol: float = 0.0, ulps: int = 0) -> None:
        if atol < 0.0 or rtol < 0.0 or ulps < 0:
            raise ValueError("Tolerances must be non-negative.")
        if atol == 0.0 and rtol == 0.0 and ulps == 0:
            raise ValueError("At least one of atol, rtol, or ulps must be set.")
        self.atol, self.rtol, self.ulps = atol, rtol, ulps


def _decode_accuracy(value: Any) -> Tolerance | AccuracyMode | None:
    if value is None or isinstance(value, Tolerance | AccuracyMode):
        return value
    if isinstance(value, str) and value.startswith("AccuracyMode."):
        return AccuracyMode[value.removeprefix("AccuracyMode.")]
    raise NotImplementedError(f"Accuracy {value} not supported")


_ACCURACY = ParamDef("accuracy", None, show="nondefault", decode=_decode_accuracy)

# Unary ops without parameters.
neg_p = Primitive("neg", unary(NUM))
sign_p = Primitive("sign", unary(NUM))
floor_p = Primitive("floor", unary(FLOAT))
ceil_p = Primitive("ceil", unary(FLOAT))
is_finite_p = Primitive("is_finite", unary(FLOAT, dt.bool_))
asin_p = Primitive("asin", unary(INEXACT))
acos_p = Primitive("acos", unary(INEXACT))
atan_p = Primitive("atan", unary(INEXACT))
sinh_p = Primitive("sinh", unary(INEXACT))
cosh_p = Primitive("cosh", unary(INEXACT))
asinh_p = Primitive("asinh", unary(INEXACT))
acosh_p = Primitive("acosh", unary(INEXACT))
atanh_p = Primitive("atanh", unary(INEXACT))
not_p = Primitive("not", unary(BOOL_OR_INT))
def _copy_rule(x: ShapedArray) -> tuple[ShapedArray, ...]:
    """A copy of any array, key arrays included (as JAX's ``copy_p``)."""
    return (x,) if dt.is_key(x.dtype) else unary(ANY)(x)


copy_p = Primitive("copy", _copy_rule)


abs_p = Primitive("abs", unary(SIGNED | INEXACT, dt.real_dtype))
real_p = Primitive("real", unary(COMPLEX, dt.real_dtype))
imag_p = Primitive("imag", unary(COMPLEX, dt.real_dtype))
_complex_unary = unary(COMPLEX)


def _conj_rule(x: ShapedArray, *, input_dtype: np.dtype[Any]) -> tuple[ShapedArray, ...]:
    if input_dtype != x.dtype:
        fail(f"expected input_dtype {x.dtype}, the operand's, but got {input_dtype}")
    return _complex_unary(x)


conj_p = Primitive("conj", _conj_rule, (
    ParamDef("input_dtype", Derived(lambda ins, outs: shaped(ins[0]).dtype),
             decode=decode_dtype),))
"""The complex conjugate; ``input_dtype`` is the operand's dtype (printed, as JAX's)."""


def _complex_rule(x: ShapedArray, y: ShapedArray) -> tuple[ShapedArray, ...]:
    out, = nary([FLOAT, FLOAT])(x, y)
    if x.dtype not in (dt.float32, dt.float64):
        fail(f"expected float32 or float64 parts, but got {x.str_short()}")
    d = dt.complex64 if x.dtype == dt.float32 else dt.complex128
    return (ShapedArray(out.shape, d, out.weak_type),)


complex_p = Primitive("complex", _complex_rule)

round_p = Primitive("round", unary(FLOAT), (
    ParamDef("rounding_method", RoundingMethod.AWAY_FROM_ZERO,
             decode=decode_enum(RoundingMethod)),))

# Unary ops with an ``accuracy`` parameter (elided when None).
exp_p = Primitive("exp", unary(INEXACT), (_ACCURACY,))
exp2_p = Primitive("exp2", unary(INEXACT), (_ACCURACY,))
log_p = Primitive("log", unary(INEXACT), (_ACCURACY,))
log1p_p = Primitive("log1p", unary(INEXACT), (_ACCURACY,))
expm1_p = Primitive("expm1", unary(INEXACT), (_ACCURACY,))
tanh_p = Primitive("tanh", unary(INEXACT), (_ACCURACY,))
logistic_p = Primitive("logistic", unary(INEXACT), (_ACCURACY,))
sin_p = Primitive("sin", unary(INEXACT), (_ACCURACY,))
cos_p = Primitive("cos", unary(INEXACT), (_ACCURACY,))
tan_p = Primitive("tan", unary(INEXACT), (_ACCURACY,))
sqrt_p = Primitive("sqrt", unary(INEXACT), (_ACCURACY,))
rsqrt_p = Primitive("rsqrt", unary(INEXACT), (_ACCURACY,))
cbrt_p = Primitive("cbrt", unary(FLOAT), (_ACCURACY,))


def _integer_pow_rule(x: ShapedArray, *, y: int) -> tuple[ShapedArray, ...]:
    check_dtype(x, NUM)
    if y < 0 and x.dtype in INT:
        fail(f"expected a non-negative exponent for integer {x.str_short()}, but got y={y}")
    return (x,)


integer_pow_p = Primitive("integer_pow", _integer_pow_rule, (ParamDef("y", decode=decode_int),))
square_p = Primitive("square", unary(NUM))

# Binary arithmetic.
add_p = Primitive("add", nary([NUM, NUM]))


def _add_any_rule(x: ShapedArray, y: ShapedArray) -> tuple[ShapedArray, ...]:
    if x.shape != y.shape or x.dtype != y.dtype:
        fail(f"expected operands of one type, but got {x.str_short()} and {y.str_short()}")
    check_dtype(x, NUM)
    return (ShapedArray(x.shape, x.dtype, x.weak_type and y.weak_type),)


add_any_p = Primitive("add_any", _add_any_rule)
"""The sum of two cotangents of one type (what reverse mode accumulates with)."""
sub_p = Primitive("sub", nary([NUM, NUM]))
mul_p = Primitive("mul", nary([NUM, NUM]), (
    ParamDef("out_dtype", None, show="nondefault", decode=decode_optional_dtype),))
div_p = Primitive("div", nary([NUM, NUM]))
rem_p = Primitive("rem", nary([INT | FLOAT, INT | FLOAT]))
max_p = Primitive("max", nary([ANY, ANY]))
min_p = Primitive("min", nary([ANY, ANY]))
atan2_p = Primitive("atan2", nary([INEXACT, INEXACT]))
nextafter_p = Primitive("nextafter", nary([FLOAT, FLOAT]))
and_p = Primitive("and", nary([BOOL_OR_INT, BOOL_OR_INT]))
or_p = Primitive("or", nary([BOOL_OR_INT, BOOL_OR_INT]))
xor_p = Primitive("xor", nary([BOOL_OR_INT, BOOL_OR_INT]))

_pow_shapes = nary([INEXACT, INT | INEXACT], same_dtypes=False)


def _pow_rule(x: ShapedArray, y: ShapedArray) -> tuple[ShapedArray, ...]:
    # The exponent may be an integer; two inexact dtypes must match.
    out, = _pow_shapes(x, y)
    if y.dtype not in INT and y.dtype != x.dtype:
        fail(f"expected an integer exponent or one of the base's dtype, but got "
             f"{x.str_short()} and {y.str_short()}")
    return (ShapedArray(out.shape, x.dtype, out.weak_type),)


pow_p = Primitive("pow", _pow_rule)

# Comparisons.
def _equality_rule() -> Callable[..., tuple[ShapedArray, ...]]:
    """``eq``/``ne``: of two operands of any dtype, key arrays (of one implementation)
    included, as JAX's."""
    of_values = nary([ANY, ANY], dt.bool_)

    def rule(*avals: ShapedArray, **params: Any) -> tuple[ShapedArray, ...]:
        if len(avals) == 2 and dt.is_key(avals[0].dtype) and avals[1].dtype == avals[0].dtype:
            # (Keys compare as wholes: the shapes broadcast as bools' would.)
            return of_values(*(ShapedArray(a.shape, dt.bool_) for a in avals), **params)
        return of_values(*avals, **params)
    return rule


eq_p = Primitive("eq", _equality_rule())
ne_p = Primitive("ne", _equality_rule())
lt_p = Primitive("lt", nary([ORDERED, ORDERED], dt.bool_))
le_p = Primitive("le", nary([ORDERED, ORDERED], dt.bool_))
gt_p = Primitive("gt", nary([ORDERED, ORDERED], dt.bool_))
ge_p = Primitive("ge", nary([ORDERED, ORDERED], dt.bool_))


def _select_n_rule(which: ShapedArray, *cases: ShapedArray) -> tuple[ShapedArray, ...]:
    if not cases:
        fail("expected at least one case, but got none")
    check_same_dtypes(cases)
    c0 = cases[0]
    if any(c.shape != c0.shape for c in cases[1:]):
        fail("expected cases of equal shapes, but got " + ", ".join(c.str_short() for c in cases))
    if which.shape and which.shape != c0.shape:
        fail(f"expected a scalar predicate or one of the cases' shape {c0.shape}, "
             f"but got {which.str_short()}")
    if which.dtype == dt.bool_:
        if len(cases) > 2:
            fail(f"expected at most 2 cases for a bool predicate, but got {len(cases)}")
    elif which.dtype not in INT:
        fail(f"expected a bool or integer predicate, but got {which.str_short()}")
    return (ShapedArray(c0.shape, c0.dtype, all(c.weak_type for c in cases)),)


select_n_p = Primitive("select_n", _select_n_rule)


def _clamp_rule(lo: ShapedArray, x: ShapedArray, hi: ShapedArray) -> tuple[ShapedArray, ...]:
    check_same_dtypes([lo, x, hi])
    check_dtype(x, ORDERED)
    for name, b in (("min", lo), ("max", hi)):
        if b.shape and b.shape != x.shape:
            fail(f"expected {name} of shape () or {x.shape}, but got {b.str_short()}")
    return (ShapedArray(x.shape, x.dtype, all(a.weak_type for a in (lo, x, hi))),)


clamp_p = Primitive("clamp", _clamp_rule)


def _convert_rule(x: ShapedArray, *, new_dtype: np.dtype[Any], weak_type: bool,
                  sharding: None) -> tuple[ShapedArray, ...]:
    if not isinstance(new_dtype, np.dtype) or new_dtype not in dt._SHORT:
        fail(f"expected a supported new_dtype, but got {new_dtype!r}")
    if x.dtype == dt.float0 or new_dtype == dt.float0:
        fail(f"expected no float0 conversion, but got {x.str_short()} to {new_dtype}")
    if (dt.is_key(x.dtype) or dt.is_key(new_dtype)) and x.dtype != new_dtype:
        fail(f"expected no conversion to or from PRNG keys (use random.key_data or "
             f"random.wrap_key_data), but got {x.str_short()} to {dt.short_name(new_dtype)}")
    return (ShapedArray(x.shape, new_dtype, weak_type),)


convert_element_type_p = Primitive("convert_element_type", _convert_rule, (
    ParamDef("new_dtype", decode=decode_dtype),
    ParamDef("weak_type", False, decode=decode_bool),
    ParamDef("sharding", None, show="never", decode=decode_none),
))

stop_gradient_p = Primitive("stop_gradient", unary(ANY))
"""The identity, whose derivative is zero."""

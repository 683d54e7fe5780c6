"""Division, remainders and powers, and the other two-operand ufuncs built from
several lax operations (``logaddexp``, ``hypot``, ``heaviside``), with JAX's
handling of integer division by zero and of integer powers."""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from plait.frontend import lax
from plait.frontend.api.custom_derivatives import custom_jvp
from plait.frontend.api.eager_programs import compiled_when_eager
from plait.frontend.core.array_base import Array
from plait.frontend.core.host_values import scalar_literal
from plait.frontend.core.tracing import Tracer
from plait.frontend.numpy._core import (
    as_array,
    broadcast_ranks,
    check_arraylike,
    dtype_of,
    promote_dtypes,
    promote_numeric,
    promote_to_inexact,
)
from plait.frontend.numpy.ufuncs import (
    _arg,
    _broadcast_all,
    _const_like,
    _lax_const,
    _py,
    maximum,
    minimum,
    where,
)
from plait.ir import dtypes as dt

__all__ = ["floor_divide", "remainder", "mod", "fmod", "power", "logaddexp", "hypot",
           "deg2rad", "rad2deg", "heaviside"]


def floor_divide(x: Any, y: Any) -> Array:
    """Division rounded toward negative infinity."""
    check_arraylike("floor_divide", x, y)
    x, y = promote_numeric("floor_divide", x, y)
    d = dtype_of(x)
    if dt.is_unsigned(d):
        return as_array(lax.div(x, y))
    if dt.is_integer(d):
        quotient = lax.div(x, y)
        adjust = lax.bitwise_and(lax.ne(lax.sign(x), lax.sign(y)),
                                 lax.ne(lax.rem(x, y), _py(x, 0)))
        return where(adjust, lax.sub(quotient, _py(quotient, 1)), quotient)
    if dt.is_complex(d):
        raise TypeError("floor_divide does not support complex-valued inputs")
    return _float_divmod(x, y)[0]


def _float_divmod(x: Any, y: Any) -> tuple[Array, Array]:
    mod = lax.rem(x, y)
    x_corrected = where(lax.eq(y, _py(y, 0)), x, lax.sub(x, mod))
    div = lax.div(x_corrected, y)
    ind = lax.bitwise_and(lax.ne(mod, _py(mod, 0)), lax.ne(lax.sign(y), lax.sign(mod)))
    mod = lax.select_n(ind, mod, lax.add(mod, y))
    div = lax.select_n(ind, div, lax.sub(div, _py(div, 1.0)))
    return lax.round(div), mod


def remainder(x: Any, y: Any) -> Array:
    """Remainder with the sign of the divisor (Python's ``%``)."""
    check_arraylike("remainder", x, y)
    x, y = promote_numeric("remainder", x, y)
    zero = _const_like(x, 0)
    if dt.is_integer(dtype_of(y)):
        y = where(lax.eq(y, _py(y, 0)), _ones_like(y), y)
    trunc_mod = lax.rem(x, y)
    nonzero = lax.ne(trunc_mod, zero)
    do_plus = lax.bitwise_and(lax.ne(lax.lt(trunc_mod, zero), lax.lt(y, zero)), nonzero)
    return lax.select_n(do_plus, trunc_mod, lax.add(trunc_mod, y))


mod = remainder


def _ones_like(x: Any) -> Array:
    # A one with x's shape, dtype and weak type (as JAX's ``lax._ones``).
    a = as_array(x)
    one = scalar_literal(1, a.dtype) if a.weak_type else _const_like(a, 1)
    return lax.broadcast_in_dim(one, a.shape, ())


def fmod(x: Any, y: Any) -> Array:
    """Remainder with the sign of the dividend (C's ``fmod``)."""
    check_arraylike("fmod", x, y)
    # (Only integer operands get their zero divisors replaced: bools promoted to
    # integers keep them, and XLA's remainder by zero gives the dividend.)
    integer = dt.is_integer(dtype_of(promote_dtypes("fmod", x, y)[0]))
    x, y = promote_numeric("fmod", x, y)
    if integer:
        y = where(lax.eq(y, _py(y, 0)), _ones_like(y), y)
    return lax.rem(x, y)


def power(x: Any, y: Any) -> Array:
    """``x ** y``; a concrete integer exponent becomes ``integer_pow``."""
    check_arraylike("power", x, y)
    if type(y) is not Tracer and not (isinstance(y, Array) and y.dtype == dt.bool_):
        try:
            k = operator.index(y)
        except TypeError:
            pass
        else:
            x, = promote_numeric("power", x)
            return lax.integer_pow(as_array(x), k)
    xs, ys = broadcast_ranks([x, y])
    xp, yp = promote_numeric("power", xs, ys)
    d = dtype_of(xp)
    if dt.is_integer(d):
        return _pow_int_int(xp, yp)
    if dt.is_inexact(dtype_of(xs)) and dt.is_integer(dtype_of(ys)):
        # (The promoted base: a Python float base would take the exponent's int dtype.)
        return lax.pow(xp, ys)
    return lax.pow(xp, yp)


def _pow_int_int(x: Any, y: Any) -> Array:
    # Binary exponentiation over the low 6 bits of the exponent (any more would
    # overflow for |x| > 1), as JAX does; a negative exponent uses its two's
    # complement bits.
    x, y = _broadcast_all(x, y)
    zero, one = _const_like(y, 0), _const_like(y, 1)
    acc = where(lax.bitwise_and(lax.eq(x, zero), lax.ne(y, zero)), zero, one)
    base = x
    for k in range(6):
        bit = lax.ne(lax.bitwise_and(y, _const_like(y, 1 << k)), zero)
        acc = where(bit, lax.mul(acc, base), acc)
        base = lax.mul(base, base)
    return as_array(acc)


def _logaddexp_of_equal_dtypes(x: Array, y: Array) -> Array:
    amax = lax.max(x, y)
    if dt.is_complex(dtype_of(x)):
        delta = lax.sub(lax.add(x, y), lax.mul(amax, _lax_const(amax, 2)))
        out = lax.add(amax, lax.log1p(lax.exp(delta)))
        im = lax.imag(out)
        # The imaginary part wrapped into [-pi, pi).
        pi, two_pi = _lax_const(im, np.pi), _lax_const(im, 2 * np.pi)
        r = lax.rem(lax.add(im, pi), two_pi)
        r = lax.select_n(lax.lt(r, _lax_const(r, 0)), r, lax.add(r, two_pi))
        return lax.complex(lax.real(out), lax.sub(r, pi))
    delta = lax.sub(x, y)
    is_nan = lax.ne(delta, delta)
    both = lax.add(x, y)  # NaNs, or infinities of one sign (in JAX's order of equations)
    return lax.select_n(is_nan, lax.add(amax, lax.log1p(lax.exp(lax.neg(lax.abs(delta))))),
                        both)


def replace_inf(x: Array) -> Array:
    """``x`` with ``+inf`` (in the real part) replaced by 0: the exponent of a
    ``logaddexp`` derivative, finite where the inputs are."""
    re = lax.real(x) if dt.is_complex(dtype_of(x)) else x
    return lax.select(lax.eq(re, _lax_const(re, np.inf)), lax.full_like(x, 0), x)


def _logaddexp_rule() -> Any:
    # (Named so that the custom_jvp prints as JAX's: ``custom_jvp_call[name=logaddexp]``.)
    def logaddexp(x: Array, y: Array) -> Array:
        return _logaddexp_of_equal_dtypes(x, y)

    f = custom_jvp(logaddexp)

    def jvp_rule(primals: tuple[Any, ...], tangents: tuple[Any, ...]) -> tuple[Any, Any]:
        # As JAX: d/dx = exp(x - out), so equal inputs get 1/2 each.
        (x, y), (tx, ty) = primals, tangents
        out = f(x, y)
        return out, lax.add(lax.mul(tx, lax.exp(lax.sub(replace_inf(x), replace_inf(out)))),
                            lax.mul(ty, lax.exp(lax.sub(replace_inf(y), replace_inf(out)))))

    f.defjvp(jvp_rule)
    return f


_logaddexp = _logaddexp_rule()


@compiled_when_eager(())
def logaddexp(x: Any, y: Any) -> Array:
    """``log(exp(x) + exp(y))``, computed stably (with JAX's derivative: 1/2 each where
    the inputs are equal)."""
    check_arraylike("logaddexp", x, y)
    x, y = promote_to_inexact("logaddexp", x, y)
    out: Array = _logaddexp(x, y)
    return out


@compiled_when_eager(())
def hypot(x: Any, y: Any) -> Array:
    """``sqrt(x**2 + y**2)``, without intermediate overflow."""
    check_arraylike("hypot", x, y)
    x, y = promote_to_inexact("hypot", x, y)
    if dt.is_complex(dtype_of(x)):
        raise ValueError("hypot is not well defined for complex-valued inputs; use abs first")
    x, y = lax.abs(x), lax.abs(y)
    is_inf = lax.bitwise_or(lax.eq(x, _const_like(x, float("inf"))),
                            lax.eq(y, _const_like(y, float("inf"))))
    hi, lo = maximum(x, y), minimum(x, y)
    is_zero = lax.eq(hi, _py(hi, 0))
    safe = where(is_zero, _ones_like(hi), hi)
    r = lax.mul(hi, lax.sqrt(lax.add(_py(hi, 1), lax.integer_pow(lax.div(lo, safe), 2))))
    out = where(is_zero, hi, r)
    return where(is_inf, _lax_const(out, float("inf")), out)


def deg2rad(x: Any) -> Array:
    """Degrees to radians."""
    x = _arg("deg2rad", x, "inexact")
    return lax.mul(x, _lax_const(x, np.pi / 180))


def rad2deg(x: Any) -> Array:
    """Radians to degrees."""
    x = _arg("rad2deg", x, "inexact")
    return lax.mul(x, _lax_const(x, 180 / np.pi))


def heaviside(x: Any, h0: Any) -> Array:
    """0 for negative ``x``, ``h0`` at zero, 1 for positive (NaN stays NaN)."""
    check_arraylike("heaviside", x, h0)
    x, h0 = promote_to_inexact("heaviside", x, h0)
    zero = _lax_const(x, 0)
    return where(lax.lt(x, zero), zero,
                 where(lax.gt(x, zero), _lax_const(x, 1), where(lax.ne(x, x), x, h0)))

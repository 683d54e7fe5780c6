"""Elementwise functions composed of other elementwise operations: ``float_power``,
``divmod``, ``modf``, ``frexp``, ``ldexp``, ``nan_to_num``, ``sinc``, ``logaddexp2``,
``gcd``, ``lcm``, ``isposinf``, ``isneginf``, ``angle``, ``fabs``, ``iscomplex``,
``isreal``."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import ml_dtypes
import numpy as np

from plait.frontend import lax
from plait.frontend.api.autodiff import jvp
from plait.frontend.api.control_flow import while_loop
from plait.frontend.api.custom_derivatives import custom_jvp
from plait.frontend.api.eager_programs import compiled_when_eager
from plait.frontend.core.array_base import Array
from plait.frontend.numpy._core import (
    as_array,
    check_arraylike,
    dtype_of,
    promote_dtypes,
    promote_numeric,
    promote_to_inexact,
)
from plait.frontend.numpy.arithmetic import _float_divmod, floor_divide, remainder, replace_inf
from plait.frontend.numpy.creation import asarray
from plait.frontend.numpy.manipulation import broadcast_arrays
from plait.frontend.numpy.ufuncs import (
    _arg,
    _const_like,
    _full_bool,
    _lax_const,
    abs,
    ceil,
    floor,
    isinf,
    isnan,
    multiply,
    subtract,
    where,
)
from plait.ir import dtypes as dt

__all__ = ["float_power", "divmod", "modf", "frexp", "ldexp", "nan_to_num", "sinc",
           "logaddexp2", "gcd", "lcm", "isposinf", "isneginf", "i0", "angle", "fabs",
           "iscomplex", "isreal"]

# ml_dtypes.finfo (np.finfo extended to bfloat16) is not annotated.
_finfo: Callable[[np.dtype[Any]], Any] = ml_dtypes.finfo


def float_power(x: Any, y: Any, /) -> Array:
    """``x ** y`` computed in an inexact dtype (integers become the default float)."""
    check_arraylike("float_power", x, y)
    return lax.pow(*promote_to_inexact("float_power", x, y))


def divmod(x1: Any, x2: Any, /) -> tuple[Array, Array]:
    """``(floor_divide(x1, x2), remainder(x1, x2))``."""
    check_arraylike("divmod", x1, x2)
    x1, x2 = promote_numeric("divmod", x1, x2)
    if dt.is_integer(dtype_of(x1)):
        return floor_divide(x1, x2), remainder(x1, x2)
    return _float_divmod(x1, x2)


def modf(x: Any, /, out: None = None) -> tuple[Array, Array]:
    """The fractional and integral parts, both with the sign of ``x``."""
    if out is not None:
        raise NotImplementedError("The 'out' argument to modf is not supported.")
    x = _arg("modf", x, "inexact")
    whole = where(lax.ge(x, _lax_const(x, 0)), floor(x), ceil(x))
    return subtract(x, whole), whole


def _scale(x: Array, k: int) -> Array:
    """``x * 2**k`` for a static ``k`` whose power of two the dtype represents."""
    return lax.mul(x, _const_like(x, 2.0 ** k))


def frexp(x: Any, /) -> tuple[Array, Array]:
    """Mantissa in ``[0.5, 1)`` (with the sign of ``x``) and ``int32`` exponent with
    ``x == mantissa * 2**exponent``; zeros, infinities and NaNs have exponent 0.

    Computed exactly by scaling with powers of two (JAX reads the bits instead).  XLA
    on CPU treats ``float32``, ``bfloat16`` and ``float64`` subnormals as zeros in
    arithmetic, so those come back unchanged with exponent 0, eagerly and under
    ``jit`` alike (``float16`` ones are computed in ``float32`` and are exact).

    Raises:
      TypeError: a complex ``x``.
    """
    x = _arg("frexp", x, "inexact")
    if dt.is_complex(x.dtype):
        raise TypeError("frexp does not support complex-valued inputs")
    x = lax.convert_element_type(x, x.dtype)  # (strongly typed, as JAX's result)
    info = _finfo(x.dtype)
    # The largest power-of-two step 2**big whose power and inverse the dtype holds.
    big = 1
    while 2 * big < info.maxexp:
        big *= 2
    steps = [big // 2 ** i for i in range(big.bit_length())]
    # Zeros, infinities, NaNs (and subnormals, see above) are returned as they are.
    small = lax.eq(x, _const_like(x, 0)) if x.dtype == dt.float16 else \
        lax.lt(lax.abs(x), _const_like(x, float(info.tiny)))
    special = lax.bitwise_or(lax.bitwise_or(isinf(x), isnan(x)), small)
    a = where(special, _const_like(x, 1), lax.abs(x))
    e = lax.full(x.shape, 0, dt.int32)
    # Down to [1, 2) from above, ...
    down = [big] * -(-info.maxexp // big) + steps[1:]
    for k in down:
        c = lax.ge(a, _const_like(a, 2.0 ** k))
        a = lax.select_n(c, a, _scale(a, -k))
        e = lax.select_n(c, e, lax.add(e, k))
    # ... and up to [1, 2) from below.
    tiny = (info.nmant if x.dtype == dt.float16 else 0) - info.minexp + 1
    for k in [big] * -(-tiny // big) + steps[1:]:
        c = lax.lt(a, _const_like(a, 2.0 ** (1 - k)))
        a = lax.select_n(c, a, _scale(a, k))
        e = lax.select_n(c, e, lax.sub(e, k))
    a = _scale(a, -1)
    e = lax.add(e, 1)
    m = where(lax.lt(x, _const_like(x, 0)), lax.neg(a), a)
    return where(special, x, m), where(special, np.int32(0), e)


def ldexp(x1: Any, x2: Any, /) -> Array:
    """``x1 * 2**x2`` for an integer ``x2``.

    Raises:
      ValueError: a complex ``x1`` or an inexact ``x2``.
    """
    check_arraylike("ldexp", x1, x2)
    d1, d2 = dtype_of(x1), dtype_of(x2)
    if dt.is_complex(d1) or dt.is_inexact(d2):
        raise ValueError(f"ldexp not supported for input types {(d1, d2)}")
    x1 = _arg("ldexp", x1, "inexact")
    n = lax.convert_element_type(as_array(x2), x1.dtype)
    m, e = frexp(x1)
    ef = lax.convert_element_type(e, x1.dtype)
    ef = ef + n
    # The exponent may overflow by one and still give a finite result.
    pos = ef > 0
    m = where(pos, m * 2, m)
    ef = where(pos, ef - 1, ef)
    out = m * lax.pow(_const_like(ef, 2), ef)
    return where(isinf(x1) | (x1 == 0), x1, out)


def isposinf(x: Any, /, out: None = None) -> Array:
    """Whether each element is ``+inf``."""
    return _isposneginf("isposinf", float("inf"), x, out)


def isneginf(x: Any, /, out: None = None) -> Array:
    """Whether each element is ``-inf``."""
    return _isposneginf("isneginf", float("-inf"), x, out)


def _isposneginf(name: str, infinity: float, x: Any, out: None) -> Array:
    if out is not None:
        raise NotImplementedError(f"The 'out' argument to {name} is not supported.")
    a = _arg(name, x)
    if dt.is_complex(a.dtype):
        raise ValueError("isposinf/isneginf are not well defined for complex types")
    if not dt.is_inexact(a.dtype):
        return _full_bool(a, False)
    return lax.eq(a, _const_like(a, infinity))


def nan_to_num(x: Any, copy: bool = True, nan: Any = 0.0, posinf: Any = None,
               neginf: Any = None) -> Array:
    """NaN replaced by ``nan``, infinities by ``posinf``/``neginf`` (the largest finite
    values by default); integers and bools are returned unchanged."""
    a = _arg("nan_to_num", x)
    if not dt.is_inexact(a.dtype):
        return a
    if dt.is_complex(a.dtype):
        return lax.complex(nan_to_num(lax.real(a), nan=nan, posinf=posinf, neginf=neginf),
                           nan_to_num(lax.imag(a), nan=nan, posinf=posinf, neginf=neginf))
    info = _finfo(a.dtype)
    posinf = info.max if posinf is None else posinf
    neginf = info.min if neginf is None else neginf
    out = where(isnan(a), asarray(nan, dtype=a.dtype), a)
    out = where(isposinf(out), asarray(posinf, dtype=a.dtype), out)
    return where(isneginf(out), asarray(neginf, dtype=a.dtype), out)


def sinc(x: Any, /) -> Array:
    """``sin(pi x) / (pi x)``, 1 at 0 (with the derivatives of the series there)."""
    x = _arg("sinc", x, "inexact")
    eq_zero = lax.eq(x, _lax_const(x, 0))
    pi_x = lax.mul(_lax_const(x, np.pi), x)
    safe_pi_x = where(eq_zero, _lax_const(x, 1), pi_x)
    return where(eq_zero, _sinc_maclaurin()(0, pi_x), lax.div(lax.sin(safe_pi_x), safe_pi_x))


@functools.cache
def _sinc_maclaurin() -> Any:
    """``k, x -> d^k/dx^k sin(x)/x`` at 0, shaped like ``x``, with a custom JVP that
    makes every derivative of :func:`sinc` at 0 right (as JAX's)."""

    def maclaurin(k: int, x: Any) -> Array:
        zero = multiply(x, 0)
        if k % 2:
            return zero
        return lax.add(zero, _lax_const(zero, (-1) ** (k // 2) / (k + 1)))

    f = custom_jvp(maclaurin, nondiff_argnums=(0,))

    def jvp(k: int, primals: tuple[Any, ...], tangents: tuple[Any, ...]) -> tuple[Any, Any]:
        (x,), (t,) = primals, tangents
        return f(k, x), multiply(f(k + 1, x), t)

    f.defjvp(jvp)
    return f


def _logaddexp2_rule() -> Any:
    # (Named so that the custom_jvp prints as JAX's: ``custom_jvp_call[name=logaddexp2]``.)
    def logaddexp2(x: Array, y: Array) -> Array:
        amax = lax.max(x, y)
        invln2 = _lax_const(amax, 1 / np.log(2))
        if dt.is_complex(dtype_of(x)):
            delta = lax.sub(lax.add(x, y), lax.mul(amax, _lax_const(amax, 2)))
            out = lax.add(amax, lax.mul(invln2, lax.log1p(lax.exp2(delta))))
            im = lax.imag(out)
            # The imaginary part wrapped into [-pi/ln 2, pi/ln 2).
            half = _lax_const(im, np.pi / np.log(2))
            period = _lax_const(im, 2 * np.pi / np.log(2))
            r = lax.rem(lax.add(im, half), period)
            r = lax.select_n(lax.lt(r, _lax_const(r, 0)), r, lax.add(r, period))
            return lax.complex(lax.real(out), lax.sub(r, half))
        delta = lax.sub(x, y)
        is_nan = lax.ne(delta, delta)
        both = lax.add(x, y)  # (in JAX's order of equations)
        return lax.select_n(is_nan, lax.add(amax, lax.mul(invln2, lax.log1p(lax.exp2(
            lax.neg(lax.abs(delta)))))), both)

    f = custom_jvp(logaddexp2)

    def jvp_rule(primals: tuple[Any, ...], tangents: tuple[Any, ...]) -> tuple[Any, Any]:
        (x, y), (tx, ty) = primals, tangents
        out = f(x, y)
        return out, lax.add(lax.mul(tx, lax.exp2(lax.sub(replace_inf(x), replace_inf(out)))),
                            lax.mul(ty, lax.exp2(lax.sub(replace_inf(y), replace_inf(out)))))

    f.defjvp(jvp_rule)
    return f


_logaddexp2 = _logaddexp2_rule()


@compiled_when_eager(())
def logaddexp2(x1: Any, x2: Any, /) -> Array:
    """``log2(2**x1 + 2**x2)``, computed stably (with JAX's derivative)."""
    check_arraylike("logaddexp2", x1, x2)
    x, y = promote_to_inexact("logaddexp2", x1, x2)
    out: Array = _logaddexp2(x, y)
    return out


def _integer_pair(name: str, x1: Any, x2: Any) -> tuple[Array, Array]:
    check_arraylike(name, x1, x2)
    a, b = (as_array(v) for v in promote_dtypes(name, x1, x2))
    if not dt.is_integer(a.dtype):
        raise ValueError(f"Arguments to {name} must be integers.")
    return a, b


def gcd(x1: Any, x2: Any) -> Array:
    """Greatest common divisor of ``|x1|`` and ``|x2|`` (Euclid's algorithm in a
    ``while_loop``)."""
    a, b = _integer_pair("gcd", x1, x2)
    a, b = broadcast_arrays(a, b)

    def cond(c: tuple[Array, Array]) -> Array:
        return lax.reduce_or(lax.ne(c[1], _lax_const(c[1], 0)), tuple(range(c[1].ndim)))

    def body(c: tuple[Array, Array]) -> tuple[Array, Array]:
        u, v = c
        nonzero = lax.ne(v, _lax_const(v, 0))
        u, v = (where(nonzero, v, u),
                where(nonzero, lax.rem(u, where(nonzero, v, _lax_const(v, 1))),
                      _lax_const(v, 0)))
        swap = lax.lt(u, v)
        return where(swap, v, u), where(swap, u, v)

    out, _ = while_loop(cond, body, (abs(a), abs(b)))
    return as_array(out)


def lcm(x1: Any, x2: Any) -> Array:
    """Least common multiple of ``|x1|`` and ``|x2|`` (0 if either is 0)."""
    a, b = _integer_pair("lcm", x1, x2)
    a, b = abs(a), abs(b)
    d = gcd(a, b)
    safe = where(lax.eq(d, _lax_const(d, 0)), _lax_const(d, 1), d)
    return where(lax.eq(d, _lax_const(d, 0)), _lax_const(d, 0),
                 multiply(a, floor_divide(b, safe)))


def i0(x: Any, /) -> Array:
    """The modified Bessel function of the first kind of order 0,
    ``exp(|x|) * bessel_i0e(x)`` (its derivative ``sign(x) exp(|x|) bessel_i1e(x)``)."""
    x = _arg("i0", x, "inexact")
    if dt.is_complex(x.dtype):
        raise NotImplementedError("i0 does not support complex-valued inputs, as in JAX")
    out: Array = _i0_custom(x)
    return out


def _i0(x: Any) -> Array:
    ax = lax.abs(x)
    return lax.mul(lax.exp(ax), lax.bessel_i0e(ax))


_i0_custom = custom_jvp(_i0)


@_i0_custom.defjvp
def _i0_jvp(primals: Any, tangents: Any) -> Any:
    # As JAX: the derivative through |x|, but 0 at x = 0 (where |x| has a kink and i0's
    # true derivative is 0).
    out, t = jvp(_i0, primals, tangents)
    return out, lax.select(lax.eq(primals[0], lax.full_like(primals[0], 0)),
                           lax.full_like(t, 0), t)


def angle(z: Any, deg: bool = False) -> Array:
    """The argument (phase) of complex ``z``, in radians (degrees if ``deg``); ``pi``
    for negative reals, 0 otherwise.  Integers, bools and real scalars give the default
    float dtype, as JAX's."""
    check_arraylike("angle", z)
    z = as_array(z)
    re, im = lax.real(z) if dt.is_complex(z.dtype) else z, _imag(z)
    if not dt.is_inexact(re.dtype) or (dt.is_float(z.dtype) and z.ndim == 0):
        default = dt.canonicalize(dt.float64)
        re, im = lax.convert_element_type(re, default), lax.convert_element_type(im, default)
    result = lax.atan2(im, re)
    return lax.mul(result, _lax_const(result, 180 / np.pi)) if deg else result


def _imag(z: Array) -> Array:
    return lax.imag(z) if dt.is_complex(z.dtype) else lax.full_like(z, 0)


def fabs(x: Any, /) -> Array:
    """``|x|`` as a float (integers and bools become the default float).

    Raises:
      TypeError: ``x`` is complex (NumPy's ``fabs`` has no complex loop).
    """
    check_arraylike("fabs", x)
    if dt.is_complex(dtype_of(x)):
        raise TypeError("ufunc 'fabs' does not support complex dtypes")
    return lax.abs(promote_to_inexact("fabs", x)[0])


def iscomplex(x: Any) -> Array:
    """Elementwise: whether the imaginary part is nonzero (false for real dtypes)."""
    check_arraylike("iscomplex", x)
    i = _imag(as_array(x))
    return lax.ne(i, _lax_const(i, 0))


def isreal(x: Any) -> Array:
    """Elementwise: whether the imaginary part is zero (true for real dtypes)."""
    check_arraylike("isreal", x)
    i = _imag(as_array(x))
    return lax.eq(i, _lax_const(i, 0))

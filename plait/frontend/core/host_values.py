"""Host values entering a trace: the type of a value, NumPy data of a canonical dtype,
and the literal of a Python scalar (weakly typed, or cast to a dtype as JAX casts it)."""

from __future__ import annotations

from typing import Any

import numpy as np

from plait.frontend.core.array_likes import canonicalize_handlers
from plait.frontend.core.promotion import python_scalar_dtype
from plait.frontend.core.trace_base import BaseTracer
from plait.ir import config
from plait.ir import dtypes as dt
from plait.ir import primitives as P
from plait.ir.atoms import Literal
from plait.ir.avals import ShapedArray, shaped
from plait.ir.dims import DimExpr
from plait.ir.errors import UnexpectedTracerError

__all__ = ["as_host_array", "scalar_literal", "value_aval"]


def value_aval(x: Any) -> ShapedArray:
    """The type of a value: an Array's or a tracer's own, else that of the host data
    (with its canonical dtype, as a trace hoists it)."""
    aval = getattr(x, "aval", None)
    if isinstance(aval, ShapedArray):
        return aval
    if type(x) is DimExpr:
        return shaped(P.dim_as_value_p.abstract_eval([], {"dim": x})[0])
    arr = as_host_array(x)
    return ShapedArray(arr.shape, arr.dtype)


def as_host_array(x: Any) -> np.ndarray:
    """``x`` (NumPy data or anything np.asarray takes) as a NumPy array of a canonical dtype.

    Raises:
      TypeError: data that is not numeric, or of an unsupported dtype.
    """
    if isinstance(x, np.ndarray | np.generic):
        arr = np.asarray(x)
    else:
        registered = canonicalize_handlers.get(type(x))
        try:
            arr = np.asarray(x if registered is None else registered(x))
        except Exception:
            if isinstance(x, BaseTracer):
                raise UnexpectedTracerError(
                    f"Encountered an unexpected tracer: {x!r} is used where its trace "
                    f"({x._trace!r}) is not the current one; a library's trace must make "
                    "itself current (set_current_trace) for its tracers to be used, or "
                    "give their values to the trace it binds under") from None
            raise TypeError(f"expected an array, a scalar or a traced value, but got "
                            f"{type(x).__name__}: {x!r}") from None
        if arr.dtype == object:
            raise TypeError(f"expected an array, a scalar or a traced value, but got "
                            f"{type(x).__name__}: {x!r}")
    if arr.dtype not in dt._SHORT:
        raise TypeError(f"expected an array of a supported dtype, but got dtype {arr.dtype}")
    target = dt.canonicalize(arr.dtype)
    return arr if target == arr.dtype else arr.astype(target)


# Keyed by (type, x64): a Python float is f32 or f64 depending on enable_x64.
_WEAK_AVALS: dict[tuple[type, bool], ShapedArray] = {}


def scalar_literal(x: bool | int | float | complex, dtype: np.dtype[Any] | None = None) -> Literal:
    """The literal for a Python scalar: weakly typed unless it is a bool.

    With ``dtype``, the literal takes that (weak) dtype, its value converted
    as a cast to that dtype would (``0.1`` in ``f16`` is ``0.0999755859375``).

    Raises:
      OverflowError: an int that does not fit the dtype.
    """
    t = type(x)
    if dtype is None:
        if t is bool:
            return Literal(x, ShapedArray((), dt.bool_))
        key = (t, config.values.enable_x64)
        aval = _WEAK_AVALS.get(key)
        if aval is None:
            aval = _WEAK_AVALS[key] = ShapedArray((), python_scalar_dtype(x), True)
        dtype = aval.dtype
        if type(x) is int:
            info = np.iinfo(dtype)
            if not info.min <= x <= info.max:
                raise OverflowError(f"Python int {x} too large to convert to {dtype}")
        return Literal(x, aval)
    aval = ShapedArray((), dtype, t is not bool)
    return Literal(_cast_scalar(x, dtype), aval)


def numpy_scalar_literal(x: bool | int | float | complex, dtype: np.dtype[Any]) -> Literal:
    """The weak literal a Python scalar becomes as an operand of ``dtype`` in
    ``plait.numpy``: :func:`scalar_literal`, but a float in ``float32`` rounded to it, as
    JAX's numpy converts it with NumPy (``0.1`` is ``0.10000000149011612:f32[]``; lax
    keeps it exact)."""
    lit = scalar_literal(x, dtype)
    if dtype == dt.float32 and type(lit.val) is float:
        return Literal(float(np.float32(lit.val)), lit.aval)
    return lit


def _cast_scalar(x: Any, dtype: np.dtype[Any]) -> Any:
    if dtype == dt.bool_:
        return bool(x)
    if dt.is_integer(dtype):
        if isinstance(x, complex):
            x = x.real
        if isinstance(x, float):
            x = int(x)
        lo, hi = dt.int_range(dtype)
        if not lo <= x <= hi:
            if dtype in dt.NARROW_INTS:  # JAX wraps into 2- and 4-bit ints, as ml_dtypes
                m = 1 << dt.bit_width(dtype)
                w = x % m
                return w - m if dt.is_signed(dtype) and 2 * w >= m else w
            raise OverflowError(f"Python int {x} too large to convert to {dtype}")
        return int(x)
    if dt.is_complex(dtype):
        return complex(np.asarray(x).astype(dtype).item())
    if dtype in (dt.float32, dt.float64) and isinstance(x, int | float):
        return float(x)  # kept exact, as JAX keeps Python floats
    with np.errstate(over="ignore"):
        return float(np.asarray(x.real if isinstance(x, complex) else x).astype(dtype).item())

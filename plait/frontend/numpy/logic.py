"""Logic functions: ``isclose``, ``allclose``, ``array_equal``, ``array_equiv``, ``select``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from plait.frontend import lax
from plait.frontend.core.array_base import Array
from plait.frontend.numpy._core import (
    as_array,
    check_arraylike,
    dtype_of,
    promote,
    promote_dtypes,
    promote_to_inexact,
)
from plait.frontend.numpy.creation import asarray
from plait.frontend.numpy.manipulation import broadcast_arrays, stack
from plait.frontend.numpy.reductions import all, argmax
from plait.frontend.numpy.reductions import any as any_
from plait.frontend.numpy.ufuncs import equal, isfinite, isnan, logical_and, logical_or
from plait.ir import dtypes as dt

__all__ = ["isclose", "allclose", "array_equal", "array_equiv", "select", "choose"]


def isclose(a: Any, b: Any, rtol: Any = 1e-05, atol: Any = 1e-08,
            equal_nan: bool = False) -> Array:
    """Elementwise ``|a - b| <= atol + rtol * |b|`` (equal infinities are close; NaNs
    are close to each other only with ``equal_nan``)."""
    check_arraylike("isclose", a, b)
    a, b = promote("isclose", a, b)
    if dt.is_key(dtype_of(a)):  # (keys are close when equal, as in JAX)
        return lax.eq(as_array(a), as_array(b))
    x, y = (as_array(v) for v in promote_to_inexact("isclose", a, b))
    d = dt.real_dtype(x.dtype)
    rtol_ = lax.convert_element_type(rtol, d)
    atol_ = lax.convert_element_type(atol, d)
    in_range = lax.le(lax.abs(lax.sub(x, y)), lax.add(atol_, lax.mul(rtol_, lax.abs(y))))
    out = logical_or(lax.eq(x, y), logical_and(isfinite(y), in_range))
    if equal_nan:
        out = logical_or(out, logical_and(isnan(x), isnan(y)))
    return out


def allclose(a: Any, b: Any, rtol: Any = 1e-05, atol: Any = 1e-08,
             equal_nan: bool = False) -> Array:
    """Whether every element of ``a`` is close to ``b`` (see :func:`isclose`)."""
    check_arraylike("allclose", a, b)
    return all(isclose(a, b, rtol, atol, equal_nan))


def array_equal(a1: Any, a2: Any, equal_nan: bool = False) -> Array:
    """Whether the arrays have one shape and equal elements (a bool scalar)."""
    x, y = asarray(a1), asarray(a2)
    if x.shape != y.shape:
        return asarray(False, dtype=dt.bool_)
    eq = equal(x, y)
    if equal_nan:
        eq = logical_or(eq, logical_and(isnan(x), isnan(y)))
    return all(eq)


def array_equiv(a1: Any, a2: Any) -> Array:
    """Whether the arrays broadcast together and are equal elementwise (false when
    their shapes do not broadcast)."""
    x, y = asarray(a1), asarray(a2)
    try:
        eq = equal(x, y)
    except ValueError:
        return asarray(False)
    return all(eq)


def select(condlist: Sequence[Any], choicelist: Sequence[Any], default: Any = 0) -> Array:
    """Elementwise, the choice of the first true condition (``default`` where none is).

    Raises:
      ValueError: ``condlist`` and ``choicelist`` differ in length, or are empty.
    """
    if len(condlist) != len(choicelist):
        raise ValueError(f"condlist must have length equal to choicelist ({len(condlist)} vs "
                         f"{len(choicelist)})")
    if not condlist:
        raise ValueError("condlist must be non-empty")
    check_arraylike("select", *condlist, *choicelist, default)
    conds = [asarray(c) for c in condlist]
    # The default goes first, with a false condition: argmax of all-false is 0.
    choices = [as_array(c) for c in promote_dtypes("select", asarray(default),
                                                   *[asarray(c) for c in choicelist])]
    conditions = stack(broadcast_arrays(False, *conds))
    if conditions.dtype != dt.bool_:
        conditions = lax.convert_element_type(conditions, dt.bool_)
    idx = argmax(conditions, axis=0)
    return lax.select_n(*broadcast_arrays(idx, *choices))


def choose(a: Any, choices: Sequence[Any], out: None = None, mode: str = "raise") -> Array:
    """Elementwise, ``choices[a]`` (all broadcast together).

    ``mode`` is ``'raise'`` (outside ``jit``: ``a`` must be concrete and in range),
    ``'wrap'`` or ``'clip'``.

    Raises:
      ValueError: an entry out of range with ``mode='raise'``, or an unknown mode.
      NotImplementedError: ``out`` (arrays are immutable).
    """
    if out is not None:
        raise NotImplementedError("choose: the out argument is not supported (arrays are "
                                  "immutable); use the result")
    if mode not in ("raise", "wrap", "clip"):
        raise ValueError(f"choose: expected mode 'raise', 'wrap' or 'clip', but got {mode!r}")
    check_arraylike("choose", a, *choices)
    index = asarray(a)
    if not dt.is_integer(index.dtype):
        raise TypeError(f"choose: expected integer choices, but got {index.dtype}")
    n = len(choices)
    if mode == "raise":
        # Needs values: under jit, bool() of a tracer raises JAX's concretization error.
        if bool(any_(logical_or(lax.lt(index, lax.full_like(index, 0)),
                                lax.ge(index, lax.full_like(index, n))))):
            raise ValueError(f"choose: invalid entry in choice array: expected values in "
                             f"[0, {n})")
    elif mode == "clip":
        index = lax.clamp(lax.full_like(index, 0), index, lax.full_like(index, n - 1))
    else:
        index = lax.rem(lax.add(lax.rem(index, lax.full_like(index, n)),
                                lax.full_like(index, n)), lax.full_like(index, n))
    options = [as_array(c) for c in promote_dtypes("choose", *[asarray(c) for c in choices])]
    index, *options = broadcast_arrays(index, *options)
    return lax.select_n(lax.convert_element_type(index, dt.int32), *options)


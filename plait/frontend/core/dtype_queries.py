"""Questions about dtypes, as ``jax.dtypes`` answers them: sub-dtype tests that know
``bfloat16`` and PRNG key dtypes, canonical dtypes, and the abstract key dtype classes."""

from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np

from plait.ir import dtypes as dt
from plait.ir.dtypes import extended as extended
from plait.ir.dtypes import prng_key as prng_key

__all__ = ["ExtendedDType", "extended", "prng_key", "supports_inf", "issubdtype",
           "canonicalize_dtype", "finfo", "iinfo", "itemsize_bits", "scalar_type_of"]


_ABSTRACT = (extended, prng_key)


_FINITE_FLOAT8 = frozenset(np.dtype(t) for t in (
    ml_dtypes.float8_e4m3b11fnuz, ml_dtypes.float8_e4m3fn, ml_dtypes.float8_e4m3fnuz,
    ml_dtypes.float8_e5m2fnuz))


class ExtendedDType:
    """The base class of dtypes a library defines for JAX's extended-dtype protocol
    (``type``, ``_rules``, ``name``; flax's fp8 meta dtypes).  plait accepts the class so
    that such libraries import, but its arrays hold NumPy dtypes and its own key dtypes
    only: an operation given an instance raises ``TypeError``."""


def supports_inf(dtype: Any) -> bool:
    """Whether ``dtype`` can hold infinity, as JAX's ``dtypes.supports_inf`` answers: the
    inexact dtypes but four finite-only float8 types.  (JAX's list, so the same answer:
    it leaves out ``float8_e8m0fnu`` and ``float4_e2m1fn``, which have no infinity
    either.)"""
    d = np.dtype(dtype)
    return issubdtype(d, np.inexact) and d not in _FINITE_FLOAT8


def _as_dtype(x: Any) -> np.dtype[Any] | None:
    if isinstance(x, type) and issubclass(x, np.generic) and x in _ABSTRACT:
        return None
    try:
        d: np.dtype[Any] = np.dtype(getattr(x, "dtype", x))
    except TypeError:
        return None
    return d


# Where NumPy's hierarchy would place the ml_dtypes types, were they in it.
_FLOATING_ABOVE = (np.floating, np.inexact, np.number, np.generic)
_ML_DTYPES_ABOVE: dict[np.dtype[Any], tuple[type, ...]] = {
    **{d: _FLOATING_ABOVE for d in (dt.bfloat16, *dt.NARROW_FLOATS)},
    **{d: (np.signedinteger, np.integer, np.number, np.generic) for d in (dt.int2, dt.int4)},
    **{d: (np.unsignedinteger, np.integer, np.number, np.generic)
       for d in (dt.uint2, dt.uint4)},
}


def issubdtype(arg1: Any, arg2: Any) -> bool:
    """Whether ``arg1`` is ``arg2`` or below it in NumPy's hierarchy, knowing that
    ``bfloat16`` and the float8s are floating types, ``int4`` a signed and ``uint4`` an
    unsigned integer type, and key dtypes are ``prng_key`` (and ``extended``)."""
    d1 = _as_dtype(arg1)
    if d1 is not None and dt.is_key(d1):
        if arg2 in _ABSTRACT or arg2 is np.generic:
            return True
        d2 = _as_dtype(arg2)
        return d2 is not None and d2 == d1
    if arg2 in _ABSTRACT or d1 is None:
        return False if d1 is not None else bool(np.issubdtype(arg1, arg2))
    # NumPy places the ml_dtypes types outside its hierarchy (int4 is not an
    # np.integer subclass): their place in it is given here, as JAX gives it.
    above = _ML_DTYPES_ABOVE.get(d1)
    if above is not None:
        if isinstance(arg2, type) and issubclass(arg2, np.generic):
            return arg2 in above
        return bool(_as_dtype(arg2) == d1)
    return bool(np.issubdtype(d1, arg2))


def canonicalize_dtype(dtype: Any, allow_extended_dtype: bool = False) -> np.dtype[Any]:
    """The dtype plait computes in for ``dtype`` (64-bit types narrow unless x64 is on).

    Raises:
      ValueError: a key dtype without ``allow_extended_dtype``.
    """
    d = dt._to_dtype(dtype) if not isinstance(dtype, np.dtype) else dtype
    if dt.is_key(d) and not allow_extended_dtype:
        raise ValueError(f"Internal: canonicalize_dtype called on extended dtype {dtype} with "
                         "allow_extended_dtype=False")
    return dt.canonicalize(d)


def finfo(dtype: Any) -> Any:
    """Machine limits of a floating dtype (``bfloat16`` and the float8s included)."""
    return ml_dtypes.finfo(dtype)  # type: ignore[no-untyped-call]  # ml_dtypes is untyped


def iinfo(dtype: Any) -> Any:
    """Machine limits of an integer dtype (``int4`` included)."""
    return ml_dtypes.iinfo(dtype)  # type: ignore[no-untyped-call]  # ml_dtypes is untyped


def itemsize_bits(dtype: Any) -> int:
    """The number of bits of one element (``bool`` counts 8, ``int4`` 4, ``int2`` 2)."""
    return dt.bit_width(np.dtype(dtype))


def scalar_type_of(x: Any) -> type:
    """The Python scalar type of a value's dtype: ``bool``, ``int``, ``float`` or
    ``complex``."""
    d = np.dtype(getattr(x, "dtype", None) or np.asarray(x).dtype)
    if d == dt.bool_:
        return bool
    if dt.is_integer(d):
        return int
    if dt.is_float(d):
        return float
    if dt.is_complex(d):
        return complex
    raise TypeError(f"expected a value of a numeric or bool dtype, but got {d}")

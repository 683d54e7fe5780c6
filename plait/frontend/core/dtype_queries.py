"""Questions about dtypes, as ``jax.dtypes`` answers them: sub-dtype tests that know
``bfloat16`` and PRNG key dtypes, canonical dtypes, and the abstract key dtype classes."""

from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np

from plait.ir import dtypes as dt

__all__ = ["extended", "prng_key", "issubdtype", "canonicalize_dtype", "finfo", "iinfo",
           "itemsize_bits", "scalar_type_of"]


class extended(np.generic):  # noqa: N801  (JAX's name)
    """The abstract class of dtypes NumPy does not have (PRNG keys): ``issubdtype(d,
    extended)`` is true for those only."""


class prng_key(extended):  # noqa: N801
    """The abstract class of PRNG key dtypes (``key<fry>``)."""


_ABSTRACT = (extended, prng_key)


def _as_dtype(x: Any) -> np.dtype[Any] | None:
    if isinstance(x, type) and issubclass(x, np.generic) and x in _ABSTRACT:
        return None
    try:
        d: np.dtype[Any] = np.dtype(getattr(x, "dtype", x))
    except TypeError:
        return None
    return d


def issubdtype(arg1: Any, arg2: Any) -> bool:
    """Whether ``arg1`` is ``arg2`` or below it in NumPy's hierarchy, knowing that
    ``bfloat16`` is a floating type and key dtypes are ``prng_key`` (and ``extended``)."""
    d1 = _as_dtype(arg1)
    if d1 is not None and dt.is_key(d1):
        if arg2 in _ABSTRACT or arg2 is np.generic:
            return True
        d2 = _as_dtype(arg2)
        return d2 is not None and d2 == d1
    if arg2 in _ABSTRACT or d1 is None:
        return False if d1 is not None else bool(np.issubdtype(arg1, arg2))
    if d1 == dt.bfloat16:
        if isinstance(arg2, type) and issubclass(arg2, np.generic):
            return arg2 in (np.floating, np.inexact, np.number, np.generic)
        return bool(_as_dtype(arg2) == dt.bfloat16)
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
    """Machine limits of a floating dtype (``bfloat16`` included)."""
    return ml_dtypes.finfo(dtype)  # type: ignore[no-untyped-call]  # ml_dtypes is untyped


def iinfo(dtype: Any) -> Any:
    """Machine limits of an integer dtype."""
    return ml_dtypes.iinfo(dtype)  # type: ignore[no-untyped-call]  # ml_dtypes is untyped


def itemsize_bits(dtype: Any) -> int:
    """The number of bits of one element (``bool`` counts 8)."""
    return int(np.dtype(dtype).itemsize * 8)


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

"""Element types of the IR.

plait's dtypes are NumPy dtypes (``bfloat16`` comes from ``ml_dtypes``).  As
in JAX, 64-bit types are canonicalized to their 32-bit counterparts unless
x64 mode is on; ``float0`` is the tangent type of integer and boolean values.
"""

from __future__ import annotations

from typing import Any, Final

import ml_dtypes
import numpy as np

from plait.ir.config import values as _config

__all__ = [
    "bool_", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
    "uint64", "bfloat16", "float16", "float32", "float64", "complex64",
    "complex128", "float0", "canonicalize", "short_name", "from_name",
    "is_float", "is_complex", "is_integer", "is_signed", "is_unsigned", "is_bool",
    "is_inexact", "SUPPORTED", "INEXACT", "key_dtype", "is_key", "key_tag", "key_field",
    "KEY_SHAPE",
]

bool_: Final = np.dtype(np.bool_)
int8: Final = np.dtype(np.int8)
int16: Final = np.dtype(np.int16)
int32: Final = np.dtype(np.int32)
int64: Final = np.dtype(np.int64)
uint8: Final = np.dtype(np.uint8)
uint16: Final = np.dtype(np.uint16)
uint32: Final = np.dtype(np.uint32)
uint64: Final = np.dtype(np.uint64)
bfloat16: Final = np.dtype(ml_dtypes.bfloat16)
float16: Final = np.dtype(np.float16)
float32: Final = np.dtype(np.float32)
float64: Final = np.dtype(np.float64)
complex64: Final = np.dtype(np.complex64)
complex128: Final = np.dtype(np.complex128)
float0: Final = np.dtype([("float0", np.void, 0)])

SUPPORTED: Final[tuple[np.dtype[Any], ...]] = (
    bool_, int8, int16, int32, int64, uint8, uint16, uint32, uint64,
    bfloat16, float16, float32, float64, complex64, complex128,
)

_NAMES: Final[dict[str, np.dtype[Any]]] = {d.name: d for d in SUPPORTED}
_NAMES["float0"] = float0

_SHORT: Final[dict[np.dtype[Any], str]] = {
    d: (d.name.replace("float", "f").replace("uint", "u")
        .replace("int", "i").replace("complex", "c"))
    for d in SUPPORTED
}
_SHORT[float0] = "float0"
_FROM_SHORT: Final[dict[str, np.dtype[Any]]] = {v: k for k, v in _SHORT.items()}

KEY_SHAPE: Final = (2,)
"""The shape of one key's data (two ``uint32`` words for threefry2x32)."""


def key_dtype(tag: str) -> np.dtype[Any]:
    """The dtype of typed PRNG key arrays of the implementation tagged ``tag``
    (``key<fry>`` for threefry2x32).

    A key is a record of its implementation's data words; the record's one field is
    named for the printed type, so each implementation's keys have their own dtype.
    """
    d = np.dtype([(f"key<{tag}>", np.uint32, KEY_SHAPE)])
    name = f"key<{tag}>"
    _SHORT.setdefault(d, name)
    _FROM_SHORT.setdefault(name, d)
    _NAMES.setdefault(name, d)
    return d


def is_key(dtype: np.dtype[Any]) -> bool:
    """True for the dtype of typed PRNG key arrays (:func:`key_dtype`)."""
    names = dtype.names
    return names is not None and names[0].startswith("key<")


def key_field(dtype: np.dtype[Any]) -> str:
    """The name of a key dtype's one field (``"key<fry>"``), which holds the key data."""
    assert dtype.names is not None
    return dtype.names[0]


def key_tag(dtype: np.dtype[Any]) -> str:
    """The implementation tag of a key dtype: ``"fry"`` for ``key<fry>``."""
    return key_field(dtype)[4:-1]


_NARROW: Final[dict[np.dtype[Any], np.dtype[Any]]] = {
    int64: int32, uint64: uint32, float64: float32, complex128: complex64,
}

def canonicalize(dtype: Any) -> np.dtype[Any]:
    """The dtype plait computes in for ``dtype``: 64-bit types narrow unless x64 is on.

    Raises:
      TypeError: ``dtype`` is not a dtype plait supports.
    """
    d = dtype if isinstance(dtype, np.dtype) else _to_dtype(dtype)
    if d in _SHORT:
        return d if _config.enable_x64 else _NARROW.get(d, d)
    raise TypeError(f"expected a dtype plait supports ({', '.join(_NAMES)}), but got {dtype!r}")


def _to_dtype(dtype: Any) -> np.dtype[Any]:
    if isinstance(dtype, str) and dtype in _NAMES:
        return _NAMES[dtype]
    if dtype is float:
        return float64
    if dtype is int:
        return int64
    if dtype is bool:
        return bool_
    if dtype is complex:
        return complex128
    try:
        d: np.dtype[Any] = np.dtype(dtype)
        return d
    except TypeError:
        raise TypeError(f"expected a dtype, but got {dtype!r}") from None


def short_name(dtype: np.dtype[Any]) -> str:
    """The short name used in printed types: ``f32``, ``i32``, ``bool``, ``bf16``."""
    return _SHORT[dtype]


def from_name(name: str) -> np.dtype[Any]:
    """Inverse of :func:`short_name`, also accepting full names such as ``float32``.

    Raises:
      KeyError: ``name`` names no supported dtype.
    """
    d = _FROM_SHORT.get(name)
    if d is None:
        d = _NAMES[name]
    return d


def is_bool(dtype: np.dtype[Any]) -> bool:
    """True for ``bool``."""
    return dtype == bool_


def is_integer(dtype: np.dtype[Any]) -> bool:
    """True for signed and unsigned integer dtypes (not ``bool``)."""
    return dtype.kind in "iu"


def is_signed(dtype: np.dtype[Any]) -> bool:
    """True for signed integer dtypes."""
    return dtype.kind == "i"


def is_unsigned(dtype: np.dtype[Any]) -> bool:
    """True for unsigned integer dtypes."""
    return dtype.kind == "u"


def is_float(dtype: np.dtype[Any]) -> bool:
    """True for real floating dtypes, ``bfloat16`` included."""
    return dtype.kind == "f" or dtype == bfloat16


def is_complex(dtype: np.dtype[Any]) -> bool:
    """True for complex dtypes."""
    return dtype.kind == "c"


INEXACT: Final[frozenset[np.dtype[Any]]] = frozenset(
    d for d in SUPPORTED if d.kind in "fc" or d == bfloat16)
"""The floating and complex dtypes (a set: membership is the fastest test)."""


def is_inexact(dtype: np.dtype[Any]) -> bool:
    """True for floating and complex dtypes."""
    return dtype in INEXACT

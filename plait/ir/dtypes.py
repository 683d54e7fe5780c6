"""Element types of the IR.

plait's dtypes are NumPy dtypes (``bfloat16``, the float8s, ``float4_e2m1fn``
and the 2- and 4-bit integers come from ``ml_dtypes``).  As in JAX, 64-bit
types are canonicalized to their 32-bit counterparts unless x64 mode is on;
``float0`` is the tangent type of integer and boolean values.

NumPy's ``kind`` does not classify the ml_dtypes types (``int4`` has kind
``'V'``, as ``float8_e4m3fn`` has; ``float8_e5m2`` has ``'f'``), so the
predicates below test membership in explicit sets instead.
"""

from __future__ import annotations

from typing import Any, Final

import ml_dtypes
import numpy as np

from plait.ir.config import values as _config

__all__ = [
    "bool_", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
    "uint64", "int2", "int4", "uint2", "uint4", "float8_e4m3fn", "float8_e5m2",
    "float8_e4m3b11fnuz", "float8_e4m3fnuz", "float8_e5m2fnuz", "float8_e3m4", "float8_e4m3",
    "float8_e8m0fnu", "float4_e2m1fn", "FLOAT8", "NARROW_FLOATS", "NARROW_INTS",
    "bfloat16", "float16", "float32", "float64", "complex64",
    "complex128", "float0", "extended", "prng_key", "canonicalize", "short_name", "from_name",
    "is_float", "is_complex", "is_integer", "is_signed", "is_unsigned", "is_bool",
    "is_inexact", "int_range", "bit_width", "max_identity", "min_identity", "SUPPORTED",
    "INEXACT", "key_dtype", "is_key", "key_tag", "key_field", "key_shape", "KEY_SHAPE",
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
int2: Final = np.dtype(ml_dtypes.int2)
int4: Final = np.dtype(ml_dtypes.int4)
uint2: Final = np.dtype(ml_dtypes.uint2)
uint4: Final = np.dtype(ml_dtypes.uint4)
float8_e4m3fn: Final = np.dtype(ml_dtypes.float8_e4m3fn)
float8_e5m2: Final = np.dtype(ml_dtypes.float8_e5m2)
float8_e4m3b11fnuz: Final = np.dtype(ml_dtypes.float8_e4m3b11fnuz)
float8_e4m3fnuz: Final = np.dtype(ml_dtypes.float8_e4m3fnuz)
float8_e5m2fnuz: Final = np.dtype(ml_dtypes.float8_e5m2fnuz)
float8_e3m4: Final = np.dtype(ml_dtypes.float8_e3m4)
float8_e4m3: Final = np.dtype(ml_dtypes.float8_e4m3)
float8_e8m0fnu: Final = np.dtype(ml_dtypes.float8_e8m0fnu)
float4_e2m1fn: Final = np.dtype(ml_dtypes.float4_e2m1fn)
float16: Final = np.dtype(np.float16)
float32: Final = np.dtype(np.float32)
float64: Final = np.dtype(np.float64)
complex64: Final = np.dtype(np.complex64)
complex128: Final = np.dtype(np.complex128)
float0: Final = np.dtype([("float0", np.void, 0)])

FLOAT8: Final[tuple[np.dtype[Any], ...]] = (
    float8_e4m3fn, float8_e5m2, float8_e4m3b11fnuz, float8_e4m3fnuz, float8_e5m2fnuz,
    float8_e3m4, float8_e4m3, float8_e8m0fnu,
)
"""The 8-bit floating dtypes."""

NARROW_FLOATS: Final[tuple[np.dtype[Any], ...]] = (*FLOAT8, float4_e2m1fn)
"""The floating dtypes narrower than 16 bits.  As in JAX, they sit apart in type
promotion: only weak (Python) scalars and ``bool`` promote to them, and they promote
to nothing else."""

NARROW_INTS: Final[tuple[np.dtype[Any], ...]] = (int2, int4, uint2, uint4)
"""The 2- and 4-bit integer dtypes, apart in type promotion as :data:`NARROW_FLOATS`.
(JAX 0.10.2 has no 6-bit floats that run on CPU, so plait has none.)"""

SUPPORTED: Final[tuple[np.dtype[Any], ...]] = (
    bool_, int8, int16, int32, int64, uint8, uint16, uint32, uint64,
    bfloat16, float16, float32, float64, complex64, complex128, *NARROW_FLOATS, *NARROW_INTS,
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
"""The shape of one threefry2x32 key's data (two ``uint32`` words; :func:`key_shape`
gives any key dtype's)."""


class extended(np.generic):  # noqa: N801  (JAX's name)
    """The abstract class of dtypes NumPy does not have (PRNG keys): ``issubdtype(d,
    extended)`` is true for those only."""


# (NumPy's stubs mark np.void final, but a structured dtype may take a subclass as its type)
class prng_key(extended, np.void):  # type: ignore[misc]  # noqa: N801  (JAX's name)
    """The abstract class of PRNG key dtypes, and their scalar type: a key dtype's
    ``.type`` is this class, as JAX's is ``jax.dtypes.prng_key`` (jaxtyping's
    ``Key[Array, ...]`` reads its name)."""


def key_dtype(tag: str, shape: tuple[int, ...] = KEY_SHAPE) -> np.dtype[Any]:
    """The dtype of typed PRNG key arrays of the implementation tagged ``tag``
    (``key<fry>`` for threefry2x32), whose keys hold ``shape`` ``uint32`` words.

    A key is a record of its implementation's data words; the record's one field is
    named for the printed type, so each implementation's keys have their own dtype.
    """
    d = np.dtype((prng_key, [(f"key<{tag}>", np.uint32, shape)]))
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


def key_shape(dtype: np.dtype[Any]) -> tuple[int, ...]:
    """The shape of one key's data for a key dtype: ``(2,)`` for ``key<fry>``."""
    assert dtype.fields is not None
    sub: np.dtype[Any] = dtype.fields[key_field(dtype)][0]
    return sub.shape


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


_SIGNED: Final[frozenset[np.dtype[Any]]] = frozenset({int2, int4, int8, int16, int32, int64})
_UNSIGNED: Final[frozenset[np.dtype[Any]]] = frozenset(
    {uint2, uint4, uint8, uint16, uint32, uint64})
_FLOATS: Final[frozenset[np.dtype[Any]]] = frozenset(
    {bfloat16, float16, float32, float64, *NARROW_FLOATS})


def is_integer(dtype: np.dtype[Any]) -> bool:
    """True for signed and unsigned integer dtypes (not ``bool``), ``int4`` included."""
    return dtype in _SIGNED or dtype in _UNSIGNED


def is_signed(dtype: np.dtype[Any]) -> bool:
    """True for signed integer dtypes."""
    return dtype in _SIGNED


def is_unsigned(dtype: np.dtype[Any]) -> bool:
    """True for unsigned integer dtypes."""
    return dtype in _UNSIGNED


def is_float(dtype: np.dtype[Any]) -> bool:
    """True for real floating dtypes, ``bfloat16`` and the float8s included."""
    return dtype in _FLOATS


def is_complex(dtype: np.dtype[Any]) -> bool:
    """True for complex dtypes."""
    return dtype.kind == "c"


INEXACT: Final[frozenset[np.dtype[Any]]] = _FLOATS | {complex64, complex128}
"""The floating and complex dtypes (a set: membership is the fastest test)."""


def is_inexact(dtype: np.dtype[Any]) -> bool:
    """True for floating and complex dtypes."""
    return dtype in INEXACT


def real_dtype(dtype: np.dtype[Any]) -> np.dtype[Any]:
    """The dtype of a complex dtype's components; any other dtype itself."""
    if dtype == complex64:
        return float32
    return float64 if dtype == complex128 else dtype


def _range(dtype: np.dtype[Any]) -> tuple[int, int]:
    info = ml_dtypes.iinfo(dtype)  # type: ignore[no-untyped-call]  # ml_dtypes is untyped
    return int(info.min), int(info.max)


# A table: literals and scalar conversions ask on the tracing path, and ml_dtypes.iinfo
# costs ~1 us a call.
_INT_RANGES: Final[dict[np.dtype[Any], tuple[int, int]]] = {
    d: _range(d) for d in SUPPORTED if is_integer(d)}


def int_range(dtype: np.dtype[Any]) -> tuple[int, int]:
    """The least and greatest values of an integer dtype, ``int4`` included (NumPy's
    ``iinfo`` knows NumPy's own integer types only)."""
    return _INT_RANGES[dtype]


_SUB_BYTE_BITS: Final[dict[np.dtype[Any], int]] = {
    int2: 2, uint2: 2, int4: 4, uint4: 4, float4_e2m1fn: 4}


def bit_width(dtype: np.dtype[Any]) -> int:
    """The number of bits of one element as XLA counts them: 4 for ``int4`` and
    ``float4_e2m1fn``, 2 for ``int2`` (NumPy stores each in a byte), 8 for ``bool``."""
    return _SUB_BYTE_BITS.get(dtype, dtype.itemsize * 8)


# The floating dtypes without infinities that JAX treats as such (its ``supports_inf``):
# infinity converts to NaN in them.  (float8_e8m0fnu and float4_e2m1fn have none either,
# but JAX keeps -inf and inf for them, which saturate or become NaN as they convert.)
_NO_INF: Final[frozenset[np.dtype[Any]]] = frozenset(
    {float8_e4m3fn, float8_e4m3b11fnuz, float8_e4m3fnuz, float8_e5m2fnuz})


def max_identity(dtype: np.dtype[Any]) -> Any:
    """The identity of ``max`` over ``dtype``, as JAX takes it: ``False``, the least
    integer, ``-inf``, or the least finite value of a float8 without infinities."""
    if dtype == bool_:
        return False
    if is_integer(dtype):
        return int_range(dtype)[0]
    if dtype in _NO_INF:
        return float(ml_dtypes.finfo(dtype).min)  # type: ignore[no-untyped-call]  # untyped
    return -np.inf


def min_identity(dtype: np.dtype[Any]) -> Any:
    """The identity of ``min`` over ``dtype``: ``True``, the greatest integer, ``inf``, or
    the greatest finite value of a float8 without infinities."""
    if dtype == bool_:
        return True
    if is_integer(dtype):
        return int_range(dtype)[1]
    if dtype in _NO_INF:
        return float(ml_dtypes.finfo(dtype).max)  # type: ignore[no-untyped-call]  # untyped
    return np.inf

"""Equation parameters: an immutable mapping, and the declarations primitives make.

Every primitive declares its parameters as :class:`ParamDef`\\ s: the name, a
default, when the printer shows it (as JAX 0.10.2 does: always, only when it
differs from the default, or never because the binder types determine it),
and how the parser turns the printed value back into the typed value.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Final, Literal, NoReturn, TypeAlias

import attrs
import numpy as np

from plait.ir import dtypes
from plait.ir.avals import AbstractValue
from plait.ir.dims import DimExpr, parse_dims

__all__ = [
    "Params", "EMPTY_PARAMS", "ParamDef", "Derived", "REQUIRED", "Show",
    "decode_int", "decode_float", "decode_bool", "decode_ints", "decode_optional_ints",
    "decode_dtype", "decode_optional_dtype", "decode_str", "decode_none",
    "decode_nested_ints", "decode_enum", "decode_optional_choice", "decode_bools", "decode_any",
    "ParsedCall",
]


class Params(dict[str, Any]):
    """The parameters of an equation: an immutable, hashable ``dict``.

    Values are immutable and hashable too (ints, tuples, dtypes, enums,
    nested :class:`~plait.ir.ClosedJaxpr`), so params take part in
    hash-consing and structural equality.
    """

    __slots__ = ("_hash",)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        dict.__init__(self, *args, **kwargs)
        self._hash: int | None = None

    def __hash__(self) -> int:  # type: ignore[override]  # dict is unhashable; Params is not
        h = self._hash
        if h is None:
            h = self._hash = hash(frozenset(dict.items(self)))
        return h

    def replace(self, **changes: Any) -> Params:
        """A copy with ``changes`` applied; ``self`` when nothing changes."""
        if all(k in self and self[k] is v for k, v in changes.items()):
            return self
        new = dict(self)
        new.update(changes)
        return Params(new)

    def _immutable(self, *args: Any, **kwargs: Any) -> NoReturn:
        raise TypeError("Params are immutable; use Params.replace(...) to get a changed copy")

    __setitem__ = _immutable
    __delitem__ = _immutable
    __ior__ = _immutable
    clear = _immutable
    pop = _immutable
    popitem = _immutable
    setdefault = _immutable
    update = _immutable

    def __reduce__(self) -> tuple[Any, ...]:
        return (Params, (dict(self),))

    def __copy__(self) -> Params:
        return self

    def __deepcopy__(self, memo: Any) -> Params:
        return self


EMPTY_PARAMS: Final = Params()


class _Required:
    def __repr__(self) -> str:
        return "REQUIRED"


REQUIRED: Final = _Required()
"""Marks a parameter that has no default and must be given at bind time."""


@attrs.frozen
class Derived:
    """A default computed from an equation's types, used to restore unprinted params.

    ``fn(in_avals, out_avals)`` returns the value; for example
    ``broadcast_in_dim``'s ``shape`` is the shape of its result.
    """

    fn: Callable[[Sequence[AbstractValue], Sequence[AbstractValue]], Any]


@attrs.frozen
class ParsedCall:
    """A parameter printed as a constructor call, ``Name(key=value, ...)``, as the
    parser reads it; the parameter's decoder builds the typed value."""

    name: str
    kwargs: tuple[tuple[str, Any], ...]


Show: TypeAlias = Literal["always", "nondefault", "never"]


def decode_any(value: Any) -> Any:
    """Lists become tuples, recursively; everything else is kept."""
    if isinstance(value, list | tuple):
        return tuple(decode_any(v) for v in value)
    return value


@attrs.frozen
class ParamDef:
    """The declaration of one parameter of a primitive."""

    name: str
    """The keyword used at bind time and in printed jaxprs."""
    default: Any = REQUIRED
    """A constant, :data:`REQUIRED`, or a :class:`Derived` rule."""
    show: Show = "always"
    """When the printer writes it: ``always``; ``nondefault`` (elided when it
    equals the default); ``never`` (the binder types determine it)."""
    decode: Callable[[Any], Any] = decode_any
    """Turns the parser's generic value into the typed value."""
    encode: Callable[[Any], str] = str
    """Turns the typed value into its printed text (JAX prints ``str(value)``)."""
    numpy_scalars: bool = False
    """Whether the parser keeps NumPy scalars printed as ``np.float32(1.5)`` as such
    (otherwise it reads them as their Python value)."""

    def default_for(self, in_avals: Sequence[AbstractValue],
                    out_avals: Sequence[AbstractValue]) -> Any:
        """The default value for an equation with these types."""
        d = self.default
        return d.fn(in_avals, out_avals) if isinstance(d, Derived) else d


def _fail(expected: str, value: Any) -> NoReturn:
    raise ValueError(f"expected {expected}, but got {value!r}")


def decode_int(value: Any) -> int:
    """An int (not a bool)."""
    if type(value) is not int:
        _fail("an int", value)
    return value


def decode_float(value: Any) -> float:
    """A float (an int is taken as one)."""
    if type(value) is int:
        return float(value)
    if type(value) is not float:
        _fail("a float", value)
    return value


def decode_bool(value: Any) -> bool:
    """``True`` or ``False``."""
    if type(value) is not bool:
        _fail("True or False", value)
    return value


def decode_ints(value: Any) -> tuple[int, ...]:
    """A tuple of ints, such as ``(0, 1)``."""
    if not isinstance(value, tuple | list):
        _fail("a tuple of ints", value)
    return tuple(decode_int(v) for v in value)


def decode_dims(value: Any) -> tuple[int, ...]:
    """A shape: a tuple of ints or symbolic dimensions (printed ``(b, 3)``)."""
    if not isinstance(value, tuple | list):
        _fail("a tuple of dimensions", value)
    out = []
    for v in value:
        if isinstance(v, str):
            try:
                (v,) = parse_dims(v)
            except ValueError:
                _fail("a dimension", v)
        elif not isinstance(v, DimExpr):
            v = decode_int(v)
        out.append(v)
    return tuple(out)


def decode_optional_ints(value: Any) -> tuple[int, ...] | None:
    """``None`` or a tuple of ints."""
    return None if value is None else decode_ints(value)


def decode_bools(value: Any) -> tuple[bool, ...]:
    """A tuple of booleans, such as ``(False, True)``."""
    if not isinstance(value, tuple | list):
        _fail("a tuple of booleans", value)
    return tuple(decode_bool(v) for v in value)


def decode_nested_ints(value: Any) -> Any:
    """Nested tuples (or lists) of ints, returned as nested tuples."""
    if isinstance(value, tuple | list):
        return tuple(decode_nested_ints(v) for v in value)
    return decode_int(value)


def decode_dtype(value: Any) -> np.dtype[Any]:
    """A dtype, printed by its full name such as ``float32``."""
    if isinstance(value, np.dtype):
        return value
    if not isinstance(value, str):
        _fail("a dtype name", value)
    try:
        return dtypes.from_name(value)
    except KeyError:
        _fail("a dtype name", value)


def decode_optional_dtype(value: Any) -> np.dtype[Any] | None:
    """``None`` or a dtype."""
    return None if value is None else decode_dtype(value)


def decode_str(value: Any) -> str:
    """A bare word such as ``inner``."""
    if not isinstance(value, str):
        _fail("a name", value)
    return value


def decode_none(value: Any) -> None:
    """Only ``None`` (placeholders kept for JAX's printed form, such as ``sharding``)."""
    if value is not None:
        _fail("None", value)
    return None


def decode_enum(enum_type: type[enum.IntEnum]) -> Callable[[Any], enum.IntEnum]:
    """A decoder for an ``IntEnum`` printed by its integer value, as JAX prints them."""
    def decode(value: Any) -> enum.IntEnum:
        try:
            return enum_type(decode_int(value))
        except ValueError:
            _fail(f"a {enum_type.__name__} value", value)
    return decode


def decode_optional_choice(choices: Sequence[str]) -> Callable[[Any], str | None]:
    """A decoder for ``None`` or one of the words ``choices`` (a callback's
    ``vmap_method``)."""
    def decode(value: Any) -> str | None:
        if value is None or value in choices:
            return value  # type: ignore[no-any-return]  # (checked: None or one of them)
        _fail(f"None or one of {tuple(choices)}", value)
    return decode


def param_table(defs: Iterable[ParamDef]) -> Mapping[str, ParamDef]:
    """Index declarations by name, refusing duplicates."""
    table: dict[str, ParamDef] = {}
    for d in defs:
        if d.name in table:
            raise ValueError(f"parameter {d.name!r} declared twice")
        table[d.name] = d
    return table

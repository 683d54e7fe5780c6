"""Foreign function calls: an equation that runs a native handler registered with XLA.

``ffi_call`` is ``jax.ffi.ffi_call``'s primitive: it names a handler registered with
the CPU platform (``target_name``), the types of its results, and the attributes the
handler reads, and lowers to a ``stablehlo.custom_call`` of that handler.  Its
parameters are JAX 0.10.2's, printed as JAX prints them.

Attributes are ``(name, value)`` pairs sorted by name, where a value is a Python or
NumPy scalar, a string, a NumPy array (held as ``composite``'s
:class:`~plait.ir.primitives.composite.HashableArray`) or a
dictionary of such values (a :class:`FrozenDict`).  They compare with their types:
``3``, ``3.0`` and ``True`` are different attributes, as they are different handler
inputs.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Final

from plait.ir.avals import AbstractValue, ShapedArray
from plait.ir.effects import NO_EFFECTS, Effect
from plait.ir.params import (
    ParamDef,
    Params,
    decode_bool,
    decode_dtype,
    decode_int,
    decode_nested_ints,
    decode_optional_choice,
)
from plait.ir.primitive import Primitive
from plait.ir.primitives._typing import fail
from plait.ir.primitives.callbacks import VMAP_METHODS
from plait.ir.primitives.composite import decode_attribute_leaf

__all__ = ["ffi_call_p", "FFI", "FfiAttributes", "FrozenDict",
           "FFI_VMAP_METHODS", "attribute_key"]

FFI_VMAP_METHODS: Final = (*VMAP_METHODS, "legacy_vectorized")
"""How ``vmap`` applies an ``ffi_call`` (JAX 0.10.2's choices)."""

FFI: Final = Effect("FFI")
"""The effect of an ``ffi_call`` with ``has_side_effect=True``: never removed when unused."""


def attribute_key(value: Any) -> Any:
    """A key equal for equal attribute values only: the value with its type, recursively."""
    if isinstance(value, tuple):
        return (tuple, tuple(attribute_key(v) for v in value))
    return (type(value), value)


class FrozenDict(Mapping[str, Any]):
    """A dictionary given as an ``ffi_call`` attribute (a handler's struct), immutable and
    compared by its items and their types."""

    __slots__ = ("_d", "_key")

    def __init__(self, d: Mapping[str, Any]) -> None:
        self._d = dict(d)
        self._key = tuple(sorted((k, attribute_key(v)) for k, v in self._d.items()))

    def __getitem__(self, key: str) -> Any:
        return self._d[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._d)

    def __len__(self) -> int:
        return len(self._d)

    def __eq__(self, other: object) -> bool:
        return type(other) is FrozenDict and self._key == other._key

    def __hash__(self) -> int:
        return hash(self._key)

    def __repr__(self) -> str:
        return f"FrozenDict({self._d!r})"


class FfiAttributes(tuple[tuple[str, Any], ...]):
    """The attributes of an ``ffi_call``: ``(name, value)`` pairs sorted by name, printed
    as a tuple and compared with the values' types."""

    __slots__ = ()

    def _key(self) -> Any:
        return tuple((k, attribute_key(v)) for k, v in self)

    def __eq__(self, other: object) -> bool:
        return type(other) is FfiAttributes and self._key() == other._key()

    def __ne__(self, other: object) -> bool:
        return not self == other

    def __hash__(self) -> int:
        return hash(self._key())


def _decode_attribute(value: Any) -> Any:
    if isinstance(value, tuple | list):  # (a sequence attribute)
        return tuple(_decode_attribute(v) for v in value)
    return decode_attribute_leaf(value)


def _decode_attributes(value: Any) -> FfiAttributes:
    if isinstance(value, FfiAttributes):
        return value
    if not isinstance(value, tuple | list) or not all(
            isinstance(p, tuple | list) and len(p) == 2 and isinstance(p[0], str) for p in value):
        raise ValueError(f"expected (name, value) pairs, but got {value!r}")
    return FfiAttributes(sorted((k, _decode_attribute(v)) for k, v in value))


def _decode_avals(value: Any) -> tuple[ShapedArray, ...]:
    if isinstance(value, tuple) and all(isinstance(a, ShapedArray) for a in value):
        return value
    # As parsed: ``ShapedArray(float32[3,3])`` is the word and a group (dtype, dims).
    if isinstance(value, tuple) and len(value) % 2 == 0 and all(
            value[i] == "ShapedArray" and isinstance(value[i + 1], tuple) and
            len(value[i + 1]) == 2 for i in range(0, len(value), 2)):
        return tuple(ShapedArray(tuple(decode_nested_ints(value[i + 1][1])),
                                 decode_dtype(value[i + 1][0]))
                     for i in range(0, len(value), 2))
    raise ValueError(f"expected a tuple of ShapedArrays, but got {value!r}")


def _decode_optional_str(value: Any) -> str | None:
    if value is not None and not isinstance(value, str):
        raise ValueError(f"expected None or a string, but got {value!r}")
    return value


def _check_layouts(what: str, layouts: Any, avals: Sequence[AbstractValue]) -> None:
    if not isinstance(layouts, tuple) or len(layouts) != len(avals):
        fail(f"expected {len(avals)} {what} layouts, one per {what}, but got {layouts!r}")
    for i, (layout, aval) in enumerate(zip(layouts, avals)):
        ndim = len(aval.shape) if isinstance(aval, ShapedArray) else 0
        if sorted(layout) != list(range(ndim)):
            fail(f"expected the layout of {what} {i} to order its {ndim} dimensions "
                 f"(a permutation of 0..{ndim - 1}, minor to major), but got {layout!r}")


def _rule(*avals: AbstractValue, attributes: FfiAttributes, custom_call_api_version: int,
          has_side_effect: bool, input_layouts: tuple[tuple[int, ...], ...],
          input_output_aliases: tuple[tuple[int, int], ...],
          legacy_backend_config: str | None, output_layouts: tuple[tuple[int, ...], ...],
          result_avals: tuple[ShapedArray, ...], target_name: str,
          vmap_method: str | None) -> tuple[AbstractValue, ...]:
    if not isinstance(result_avals, tuple) or not all(
            isinstance(a, ShapedArray) for a in result_avals):
        fail(f"expected result_avals, a tuple of ShapedArrays, for ffi_call, but got "
             f"{result_avals!r}")
    _check_layouts("operand", input_layouts, avals)
    _check_layouts("result", output_layouts, result_avals)
    for i, o in input_output_aliases:
        if not (0 <= i < len(avals) and 0 <= o < len(result_avals)):
            fail(f"expected input_output_aliases between operands 0..{len(avals) - 1} and "
                 f"results 0..{len(result_avals) - 1}, but got {i}:{o}")
        a, r = avals[i], result_avals[o]
        if not isinstance(a, ShapedArray) or (a.shape, a.dtype) != (r.shape, r.dtype):
            fail(f"expected aliased operand {i} and result {o} to have one shape and dtype, "
                 f"but got {a} and {r}")
    return result_avals


def _effects(params: Params) -> frozenset[Effect]:
    return frozenset({FFI}) if params["has_side_effect"] else NO_EFFECTS


ffi_call_p = Primitive("ffi_call", _rule, (
    ParamDef("attributes", FfiAttributes(), decode=_decode_attributes, numpy_scalars=True),
    ParamDef("custom_call_api_version", 4, decode=decode_int),
    ParamDef("has_side_effect", False, decode=decode_bool),
    ParamDef("input_layouts", decode=decode_nested_ints),
    ParamDef("input_output_aliases", (), decode=decode_nested_ints),
    ParamDef("legacy_backend_config", None, decode=_decode_optional_str),
    ParamDef("output_layouts", decode=decode_nested_ints),
    ParamDef("result_avals", decode=_decode_avals),
    ParamDef("target_name", decode=lambda v: str(v)),
    ParamDef("vmap_method", None, decode=decode_optional_choice(FFI_VMAP_METHODS)),
), multiple_results=True, effects_rule=_effects)

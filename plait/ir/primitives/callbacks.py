"""Host callbacks: equations that call back into Python while the program runs.

``pure_callback`` computes results from its operands with no side effect (removed when
unused, like any pure equation); ``io_callback`` may have side effects (never removed;
``ordered`` ones run in program order); ``debug_callback`` returns nothing and is never
removed.  The Python function is a :class:`HostCallback` parameter: it receives and
returns flat lists of NumPy arrays; equality is the function's identity.

Printed as JAX 0.10.2 prints them (``callback=_FlatCallback(callback_func=..., ...)``);
the functions are not part of the text, so the parser cannot restore them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from plait.ir.avals import AbstractValue, ShapedArray
from plait.ir.effects import DEBUG, IO, ORDERED_DEBUG, ORDERED_IO, Effect
from plait.ir.params import ParamDef, Params, decode_bool, decode_none, decode_optional_choice
from plait.ir.primitive import Primitive
from plait.ir.primitives._typing import fail

__all__ = ["HostCallback", "pure_callback_p", "io_callback_p", "debug_callback_p",
           "VMAP_METHODS"]

VMAP_METHODS = ("sequential", "sequential_unrolled", "expand_dims", "broadcast_all")
"""How ``vmap`` applies a ``pure_callback`` (JAX 0.10.2's choices)."""


class HostCallback:
    """A Python function called by a running program, on flat lists of NumPy arrays.

    ``fn(*arrays) -> sequence of arrays``; ``name`` is what printed jaxprs show.
    Compared by identity: two callbacks are the same only if they are one object.
    """

    __slots__ = ("fn", "name")

    def __init__(self, fn: Callable[..., Sequence[Any]], name: str) -> None:
        self.fn = fn
        """The flat function."""
        self.name = name
        """Its description in printed jaxprs."""

    def __call__(self, *args: Any) -> Sequence[Any]:
        return self.fn(*args)

    def __str__(self) -> str:
        return self.name

    __repr__ = __str__


def _decode_callback(value: Any) -> HostCallback:
    if not isinstance(value, HostCallback):
        raise ValueError("expected a host callback, but got text: a callback's Python "
                         "function is not part of the printed jaxpr and cannot be parsed back")
    return value


def _decode_avals(value: Any) -> tuple[ShapedArray, ...]:
    if not isinstance(value, tuple) or not all(isinstance(a, ShapedArray) for a in value):
        raise ValueError(f"expected a tuple of ShapedArrays, but got {value!r}")
    return value


def _decode_effect(value: Any) -> Effect:
    if isinstance(value, Effect):
        return value
    for e in (DEBUG, ORDERED_DEBUG):
        if value == e.name:
            return e
    raise ValueError(f"expected the effect Debug or OrderedDebug, but got {value!r}")


def _check_callback(callback: Any, name: str) -> None:
    if not isinstance(callback, HostCallback):
        fail(f"expected a HostCallback for {name}, but got {type(callback).__name__}")


def _results(callback: Any, result_avals: Any, name: str) -> tuple[AbstractValue, ...]:
    _check_callback(callback, name)
    if not isinstance(result_avals, tuple) or not all(
            isinstance(a, ShapedArray) for a in result_avals):
        fail(f"expected result_avals, a tuple of ShapedArrays, for {name}, but got "
             f"{result_avals!r}")
    return result_avals


def _pure_rule(*avals: AbstractValue, callback: HostCallback,
               result_avals: tuple[ShapedArray, ...], sharding: None,
               vmap_method: str | None) -> tuple[AbstractValue, ...]:
    return _results(callback, result_avals, "pure_callback")


pure_callback_p = Primitive("pure_callback", _pure_rule, (
    ParamDef("callback", decode=_decode_callback),
    ParamDef("result_avals", decode=_decode_avals),
    ParamDef("sharding", None, decode=decode_none),
    ParamDef("vmap_method", None, decode=decode_optional_choice(VMAP_METHODS)),
), multiple_results=True)


def _io_rule(*avals: AbstractValue, callback: HostCallback,
             result_avals: tuple[ShapedArray, ...], ordered: bool,
             sharding: None) -> tuple[AbstractValue, ...]:
    return _results(callback, result_avals, "io_callback")


def _io_effects(params: Params) -> frozenset[Effect]:
    return frozenset({ORDERED_IO if params["ordered"] else IO})


io_callback_p = Primitive("io_callback", _io_rule, (
    ParamDef("callback", decode=_decode_callback),
    ParamDef("ordered", decode=decode_bool),
    ParamDef("result_avals", decode=_decode_avals),
    ParamDef("sharding", None, decode=decode_none),
), multiple_results=True, effects_rule=_io_effects)


def _debug_rule(*avals: AbstractValue, callback: HostCallback, effect: Effect,
                partitioned: bool) -> tuple[AbstractValue, ...]:
    _check_callback(callback, "debug_callback")
    if effect not in (DEBUG, ORDERED_DEBUG):
        fail(f"expected the effect Debug or OrderedDebug, but got {effect!r}")
    return ()


def _debug_effects(params: Params) -> frozenset[Effect]:
    return frozenset({params["effect"]})


debug_callback_p = Primitive("debug_callback", _debug_rule, (
    ParamDef("callback", decode=_decode_callback),
    ParamDef("effect", decode=_decode_effect, encode=lambda e: e.name),
    ParamDef("partitioned", False, decode=decode_bool),
), multiple_results=True, effects_rule=_debug_effects)

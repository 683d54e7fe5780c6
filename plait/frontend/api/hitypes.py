"""High-level types (``jax.experimental.hijax``'s ``HiType``, ``MutableHiType`` and
``HiPrimitive``): declared, not yet run.

JAX's hijax lets a library define a type of values that are not arrays (a mutable
box, flax nnx's hijax ``Variable``), made of array leaves ("lo" values), with
primitives on them that lower to ordinary operations.  plait's IR types every
variable as an array, a token or a reference, so a value of a high-level type cannot
be traced yet.  This module holds the declaration interface, so that a library that
declares such types imports and runs its other paths; applying a
:class:`HiPrimitive` raises ``NotImplementedError``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

from plait.ir.avals import AbstractValue
from plait.ir.effects import Effect

__all__ = ["HiPrimitive", "HiType", "MutableHiType", "AvalQDD", "AvalMutableQDD",
           "register_hitype", "aval_method", "aval_property",
           "EffectTypeSet", "control_flow_allowed_effects"]

_NOT_RUN = ("plait does not trace values of high-level (hijax) types yet: their "
            "primitives cannot be applied.  Use the library's array-based mode (for flax "
            "nnx, the default Variables, flax_hijax_variable=False)")


class HiPrimitive:
    """Base class of a primitive on high-level types.  A subclass defines
    ``abstract_eval``, ``to_lojax`` (its implementation in ordinary operations),
    ``jvp`` and ``transpose``; applying it raises ``NotImplementedError``."""

    multiple_results: bool = False
    """Whether the primitive has a list of results."""

    def __init__(self, name: str) -> None:
        self.name = name

    def bind(self, /, *args: Any, **params: Any) -> Any:
        """Apply the primitive: not supported by plait."""
        raise NotImplementedError(f"HiPrimitive {self.name!r}: {_NOT_RUN}")

    def __repr__(self) -> str:
        return self.name


class HiType(AbstractValue):
    """Base class of an immutable high-level type (its values are made of the array
    values of ``lo_ty()``)."""

    __slots__ = ()

    def lo_ty(self) -> list[AbstractValue]:
        """The types of the array values a value of this type is made of."""
        raise NotImplementedError

    def lower_val(self, hi_val: Any) -> list[Any]:
        """The array values ``hi_val`` is made of."""
        raise NotImplementedError

    def raise_val(self, *lo_vals: Any) -> Any:
        """The value made of ``lo_vals``."""
        raise NotImplementedError


class MutableHiType(AbstractValue):
    """Base class of a mutable high-level type, whose array parts may change while
    it is traced (their current types are its :class:`AvalQDD`)."""

    __slots__ = ()
    mutable: bool = True
    """Always ``True``: values of this type may be updated in place."""

    def lo_ty_qdd(self, state: Any, /) -> list[AbstractValue]:
        """The types of the array values a value is made of, in the state ``state``."""
        raise NotImplementedError


class AvalQDD(NamedTuple):
    """A type and its quasi-dynamic data: the current state of a mutable value."""

    aval: AbstractValue
    """The value's type."""
    qdd: Any
    """The state (``None`` for a type without one)."""


class AvalMutableQDD(NamedTuple):
    """A type and a mutable cell holding its quasi-dynamic data."""

    aval: AbstractValue
    """The value's type."""
    mutable_qdd: Any
    """The cell of the state."""


_hitype_constructors: dict[type, Callable[[Any], AbstractValue]] = {}
"""For each registered class of values, the function giving a value's high-level type."""


def register_hitype(val_cls: type, typeof_fn: Callable[[Any], AbstractValue]) -> None:
    """Declare that the values of ``val_cls`` have high-level types, given by
    ``typeof_fn(value)``."""
    if not isinstance(val_cls, type) or not callable(typeof_fn):
        raise TypeError(f"register_hitype: expected a class and a function, but got "
                        f"{val_cls!r} and {typeof_fn!r}")
    _hitype_constructors[val_cls] = typeof_fn


class aval_method(NamedTuple):  # noqa: N801  (JAX's name)
    """A method of a high-level type's values, reachable on their tracers."""

    fun: Callable[..., Any]
    """The method, called with the value first."""


class aval_property(NamedTuple):  # noqa: N801  (JAX's name)
    """A property of a high-level type's values, reachable on their tracers."""

    fget: Callable[[Any], Any]
    """The getter, called with the value."""


class EffectTypeSet:
    """A set of effect classes (``jax._src.effects.EffectTypeSet``): an effect is in it
    when it is an instance of one of them."""

    def __init__(self) -> None:
        self._types: set[type[Effect]] = set()

    def add_type(self, effect_type: type[Effect]) -> None:
        """Add ``effect_type``."""
        if not (isinstance(effect_type, type) and issubclass(effect_type, Effect)):
            raise TypeError(f"add_type: expected a subclass of Effect, but got {effect_type!r}")
        self._types.add(effect_type)

    def contains(self, effect: Effect) -> bool:
        """Whether ``effect`` is an instance of one of the set's classes."""
        return isinstance(effect, tuple(self._types))

    def filter_in(self, effects: Any) -> list[Effect]:
        """The effects of ``effects`` in the set."""
        return [e for e in effects if self.contains(e)]

    def filter_not_in(self, effects: Any) -> list[Effect]:
        """The effects of ``effects`` not in the set."""
        return [e for e in effects if not self.contains(e)]


control_flow_allowed_effects = EffectTypeSet()
"""The effects a library declares allowed inside control flow.  plait's loops and
conditionals allow every effect its IR has, so the set only records the declarations."""

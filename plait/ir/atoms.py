"""Atoms: the operands of equations.

An atom is either a :class:`Var` (bound once, identified by object identity,
unnamed until printed) or a :class:`Literal` (an interned scalar constant).
"""

from __future__ import annotations

from typing import Any, ClassVar, TypeAlias, final

import attrs
import numpy as np

from plait.ir import dtypes
from plait.ir.avals import AbstractValue, ShapedArray
from plait.ir.caches import WeakInternTable

__all__ = ["Var", "Literal", "Atom", "literal_text"]


@final
@attrs.frozen(eq=False, repr=False, slots=True)
class Var:
    """A variable, bound exactly once in a jaxpr.

    Variables have no names: two variables are the same only if they are the
    same object.  The printer gives them names (``a``, ``b``, ...).
    """

    aval: AbstractValue
    """The variable's type."""

    def __repr__(self) -> str:
        return f"Var(id={id(self)}):{self.aval.str_short(short_dtypes=False)}"  # (JAX's)


Scalar: TypeAlias = bool | int | float | complex


def _value_key(value: Scalar) -> Any:
    # Type-tagged, and exact for floats: 1, 1.0 and True differ; so do 0.0
    # and -0.0; nan equals itself.
    if type(value) is float and (value == 0.0 or value != value):
        return (float, value.hex())
    if type(value) is complex:
        return (complex, value.real.hex(), value.imag.hex())
    return (type(value), value)


class _InternedLiteral(type):
    """Metaclass of :class:`Literal`: equal (value, type) pairs give one object."""

    _table: WeakInternTable

    def __call__(cls, value: Any, aval: ShapedArray) -> Any:
        table = cls._table
        tv = type(value)
        # Equal keys would conflate 0.0 with -0.0 (and miss NaN): those, and complex
        # values (whose parts may be either), take the exact key below.
        fast = tv is not complex and (tv is not float or (value != 0.0 and value == value))
        if fast:
            try:  # the hot path: this exact value and type were used recently
                return table.recent[(tv, value, aval)]
            except KeyError:
                pass
            hit = table.get((tv, value, aval))
            if hit is not None:
                return hit
        scalar = _normalize(value, aval)
        key = (_value_key(scalar), aval)
        lit = table.get(key)
        if lit is None:
            lit = super().__call__(scalar, aval)
            table.put(key, lit)
        if type(scalar) is tv and fast:
            table.put((tv, value, aval), lit)
        return lit


def _python_scalar(value: Scalar | np.generic) -> Scalar:
    return value.item() if isinstance(value, np.generic) else value


def _normalize(value: Any, aval: ShapedArray) -> Scalar:
    if not isinstance(aval, ShapedArray) or aval.shape != ():
        raise TypeError(f"expected a scalar ShapedArray for a Literal, but got {aval!r}")
    if isinstance(value, np.ndarray | np.generic):
        if np.shape(value) != ():
            raise TypeError(f"expected a scalar for a Literal, but got shape {np.shape(value)}")
        value = value.item()
    dt = aval.dtype
    if dtypes.is_bool(dt):
        if type(value) is not bool:
            raise TypeError(f"expected a bool for a bool[] Literal, but got {value!r}")
        return value
    if dtypes.is_integer(dt):
        if type(value) is bool or not isinstance(value, int):
            raise TypeError(f"expected an int for a {aval.str_short()} Literal, but got {value!r}")
        lo, hi = dtypes.int_range(dt)
        if not lo <= value <= hi:
            raise TypeError(
                f"expected an int in [{lo}, {hi}] for a {aval.str_short()} "
                f"Literal, but got {value}")
        return int(value)
    if dtypes.is_float(dt):
        if type(value) is bool or not isinstance(value, int | float):
            raise TypeError(f"expected a float for a {aval.str_short()} Literal, but got {value!r}")
        return float(value)
    if dtypes.is_complex(dt):
        if type(value) is bool or not isinstance(value, int | float | complex):
            raise TypeError(f"expected a complex for a {aval.str_short()} Literal, but got "
                            f"{value!r}")
        return complex(value)
    if dt == dtypes.float0:
        # float0 has one value and no data; it lowers as a bool (JAX's representation).
        if value is not False:
            raise TypeError(f"expected False for a float0[] Literal, but got {value!r}")
        return False
    raise TypeError(f"expected a numeric dtype for a Literal, but got {dt}")


@final
@attrs.frozen(eq=False, repr=False, slots=True)
class Literal(metaclass=_InternedLiteral):
    """A scalar constant written inline in an equation, such as ``3.0:f32[]``.

    Literals are interned: equal values of equal types are one object.  The
    value is a Python scalar whose kind matches the dtype (``bool``, ``int``,
    ``float`` or ``complex``); ``1``, ``1.0`` and ``True`` are distinct.
    """

    _table: ClassVar[WeakInternTable] = WeakInternTable("literals")

    # The converter types the constructor as it is called (NumPy scalars too); the
    # metaclass has normalized the value already.
    val: Scalar = attrs.field(converter=_python_scalar)
    """The constant, as a Python scalar (JAX's name)."""
    aval: ShapedArray
    """Its type: always of shape ``()``."""

    @property
    def value(self) -> Scalar:
        """Alias of :attr:`val`, kept for code written against plait's earlier name."""
        return self.val

    def __repr__(self) -> str:
        return f"Literal({literal_text(self)})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (Literal, (self.val, self.aval))

    def __copy__(self) -> Literal:
        return self

    def __deepcopy__(self, memo: Any) -> Literal:
        return self


def literal_text(lit: Literal) -> str:
    """The printed form ``value:type``, as JAX prints it: ``3.0:f32[]``, ``True:bool[]``."""
    return f"{lit.val}:{lit.aval.str_short()}"


Atom: TypeAlias = Var | Literal
"""An operand of an equation or an output of a jaxpr."""

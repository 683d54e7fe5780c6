"""``jit``: a call of a closed sub-jaxpr, staged when a jitted function is traced.

Printed as JAX 0.10.2 prints it: ``jit[name=inner jaxpr={ ... }] a b``, with
the callee's binders named after the operands.
"""

from __future__ import annotations

from collections.abc import Sequence

from plait.ir.avals import AbstractValue, ShapedArray
from plait.ir.jaxpr import ClosedJaxpr
from plait.ir.params import Derived, ParamDef, decode_bool, decode_bools, decode_str
from plait.ir.primitive import Primitive
from plait.ir.primitives._typing import fail
from plait.ir.primitives.control_flow import body_effects


def _same(a: AbstractValue, b: AbstractValue) -> bool:
    if isinstance(a, ShapedArray) and isinstance(b, ShapedArray):
        return a.strip_weak_type() is b.strip_weak_type()
    return a == b


def check_call_operands(name: str, jaxpr: ClosedJaxpr, avals: Sequence[AbstractValue]) -> None:
    """Fail unless ``avals`` match the callee's parameter types (weak types aside)."""
    expected = jaxpr.in_avals
    if len(expected) != len(avals) or not all(map(_same, expected, avals)):
        fail(f"expected operands of types ({', '.join(a.str_short() for a in expected)}) for "
             f"{name}, but got ({', '.join(a.str_short() for a in avals)})")


def _decode_jaxpr(value: object) -> ClosedJaxpr:
    if not isinstance(value, ClosedJaxpr):
        raise ValueError(f"expected a jaxpr, but got {value!r}")
    return value


def _jit_rule(*avals: AbstractValue, name: str, jaxpr: ClosedJaxpr,
              donated_invars: tuple[bool, ...], keep_unused: bool,
              inline: bool) -> tuple[AbstractValue, ...]:
    if not isinstance(jaxpr, ClosedJaxpr) or jaxpr.consts:
        fail(f"expected a closed jaxpr without consts for jit {name!r}, but got "
             f"{type(jaxpr).__name__}")
    check_call_operands(f"jit {name!r}", jaxpr, avals)
    if len(donated_invars) != len(avals):
        fail(f"expected {len(avals)} donated_invars flags, but got {len(donated_invars)}")
    return jaxpr.out_avals


def _not_donated(ins: Sequence[AbstractValue], outs: Sequence[AbstractValue]) -> tuple[bool, ...]:
    return (False,) * len(ins)


jit_p = Primitive("jit", _jit_rule, (
    ParamDef("name", decode=decode_str),
    ParamDef("jaxpr", decode=_decode_jaxpr),
    ParamDef("donated_invars", Derived(_not_donated), show="nondefault", decode=decode_bools),
    ParamDef("keep_unused", False, show="nondefault", decode=decode_bool),
    ParamDef("inline", False, show="never", decode=decode_bool),
), multiple_results=True, call_like=True, print_first=("name",),
   effects_rule=body_effects)

"""``custom_vmap_call``: a function with a user-defined batching rule.

The equation applies ``call`` (a closed jaxpr without consts) to its operands,
the first ``num_consts`` of which are values the function closed over.  Under
``vmap`` its batching rule does not batch ``call``: it asks ``rule`` (a
:class:`VmapRule`) for the batched computation, given the axis size and which
operands are batched.  Every other transformation and the lowering use ``call``.

The rule is Python (the user's function, traced when ``vmap`` asks for it), so
it is a parameter object, as a host callback's function is: it prints as JAX
prints the rule (``rule=<function f_rule at 0x...>``) and is not part of the
text, so a printed ``custom_vmap_call`` cannot be parsed back.  Rules compare
by value (the user's function by identity, and the call's structure), so
tracing the same function twice gives equal jaxprs.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from plait.ir.avals import AbstractValue
from plait.ir.jaxpr import ClosedJaxpr
from plait.ir.params import ParamDef, decode_int
from plait.ir.primitive import Primitive
from plait.ir.primitives._typing import fail
from plait.ir.primitives.control_flow import body_effects, same_types

__all__ = ["VmapRule", "custom_vmap_call_p"]


class VmapRule:
    """How a ``custom_vmap_call`` is batched: a subclass implements :meth:`batch`.

    Subclasses must be immutable and hashable (they are equation params), with an
    equality that says when two rules batch alike.
    """

    __slots__ = ()

    def batch(self, axis_size: int, in_batched: Sequence[bool]
              ) -> tuple[ClosedJaxpr, tuple[bool, ...]]:
        """The batched computation for operands batched as ``in_batched`` (one flag per
        operand, consts included).

        Returns a jaxpr taking every operand, each batched one with a leading axis of
        ``axis_size``, and one flag per output: whether it has that leading axis.  The
        jaxpr's consts are concrete arrays (or tracers of the trace that asked, which
        the batching rule refuses).
        """
        raise NotImplementedError

    def __str__(self) -> str:
        return f"<vmap rule {type(self).__name__}>"

    __repr__ = __str__


def _decode_rule(value: Any) -> VmapRule:
    if not isinstance(value, VmapRule):
        raise ValueError("expected a vmap rule, but got text: a custom_vmap rule's Python "
                         "function is not part of the printed jaxpr and cannot be parsed back")
    return value


def _decode_jaxpr(value: Any) -> ClosedJaxpr:
    if not isinstance(value, ClosedJaxpr):
        raise ValueError(f"expected a jaxpr, but got {value!r}")
    return value


def _types(avals: Any) -> str:
    return "(" + ", ".join(a.str_short() for a in avals) + ")"


def _custom_vmap_rule(*avals: AbstractValue, call: ClosedJaxpr, rule: VmapRule,
                      num_consts: int) -> tuple[AbstractValue, ...]:
    if not isinstance(call, ClosedJaxpr) or call.consts:
        fail("expected a closed call jaxpr without consts")
    if not isinstance(rule, VmapRule):
        fail(f"expected a VmapRule for rule, but got {type(rule).__name__}")
    if not 0 <= num_consts <= len(avals):
        fail(f"expected num_consts between 0 and {len(avals)}, but got {num_consts}")
    if not same_types(call.in_avals, avals):
        fail(f"expected operands {_types(call.in_avals)}, but got {_types(avals)}")
    return call.out_avals


custom_vmap_call_p = Primitive("custom_vmap_call", _custom_vmap_rule, (
    ParamDef("call", decode=_decode_jaxpr),
    ParamDef("rule", decode=_decode_rule),
    ParamDef("num_consts", 0, show="nondefault", decode=decode_int),
), multiple_results=True, effects_rule=body_effects)
"""``call`` maps the operands (``num_consts`` closed-over values, then the function's
flat arguments) to its flat outputs; ``rule`` batches it."""

"""The builder: the one way to make IR.

A :class:`Builder` records equations.  It types each one with its
primitive's typing rule and hash-conses pure equations: emitting an equation
whose ``(primitive, inputs, params)`` was already emitted returns the
existing output variables (common-subexpression elimination at construction),
unless the ``merge_equations`` option is off (or ``debug_key_reuse`` on).  Effectful
equations are always kept.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from plait.ir.atoms import Atom, Var
from plait.ir.avals import AbstractValue
from plait.ir.config import values as _config
from plait.ir.debug_info import DebugInfo, SourceInfo
from plait.ir.effects import NO_EFFECTS, Effect
from plait.ir.errors import JaxprTypeError
from plait.ir.jaxpr import Eqn, Jaxpr
from plait.ir.params import EMPTY_PARAMS
from plait.ir.primitive import Primitive, with_shardings
from plait.ir.sharding import EXPLICIT

__all__ = ["Builder", "new_vars"]


class Builder:
    """Records typed equations and assembles them into a :class:`Jaxpr`."""

    __slots__ = ("eqns", "source_info", "_cse", "_effects")

    def __init__(self, *, cse: bool | None = None) -> None:
        self.eqns: list[Eqn] = []
        """The equations recorded so far, in order."""
        self.source_info: SourceInfo | None = None
        """Given to equations bound without one.  A transformation sets it to the source
        of the equation whose rule is running, so that what the rule emits points at
        the user's line too (and so do errors raised later, e.g. in transpose)."""
        # (Key-reuse checking must see two identical draws from one key as two.)
        merge = (_config.merge_equations and not _config.debug_key_reuse) if cse is None \
            else cse
        self._cse: dict[Any, tuple[Var, ...]] | None = {} if merge else None
        self._effects: set[Effect] = set()

    def bind(self, primitive: Primitive, inputs: tuple[Atom, ...],
             params: Mapping[str, Any] = EMPTY_PARAMS,
             source_info: SourceInfo | None = None) -> tuple[Var, ...]:
        """Emit ``primitive[params] inputs`` and return its output variables.

        Raises:
          JaxprTypeError: the typing rule refuses the inputs or params.
        """
        params = primitive.complete_params(params)
        cse = self._cse
        key = (primitive, inputs, params)
        if cse is not None:
            hit = cse.get(key)
            if hit is not None:
                return hit
        try:
            in_avals = [a.aval for a in inputs]
            out_avals = primitive.typing_rule(*in_avals, **params)
            if EXPLICIT.seen:  # types may be sharded (see Primitive.abstract_eval)
                out_avals = with_shardings(primitive, in_avals, out_avals, params)
        except JaxprTypeError:
            # abstract_eval re-raises the error with the primitive's name.
            out_avals = primitive.abstract_eval([a.aval for a in inputs], params)
        outvars = tuple([Var(a) for a in out_avals])
        effects = NO_EFFECTS if primitive.effects_rule is None else primitive.effects(params)
        if source_info is None:
            source_info = self.source_info
        self.eqns.append(Eqn(primitive, inputs, params, outvars, effects, source_info))
        if effects:
            self._effects.update(effects)
        elif cse is not None:
            cse[key] = outvars
        return outvars

    def bind1(self, primitive: Primitive, *inputs: Atom, **params: Any) -> Var:
        """Emit a single-result equation and return its output variable."""
        outs = self.bind(primitive, inputs, params)
        if len(outs) != 1:
            raise JaxprTypeError(f"{primitive.name}: expected one result, but got {len(outs)}")
        return outs[0]

    def add_eqn(self, eqn: Eqn) -> None:
        """Append an already-typed equation as is (no checking, no merging)."""
        self.eqns.append(eqn)
        if eqn.effects:
            self._effects.update(eqn.effects)

    def build(self, invars: Sequence[Var], outvars: Sequence[Atom],
              constvars: Sequence[Var] = (), debug_info: DebugInfo | None = None) -> Jaxpr:
        """The jaxpr of everything recorded, with these binders and results."""
        return Jaxpr(tuple(constvars), tuple(invars), tuple(self.eqns), tuple(outvars),
                     frozenset(self._effects) if self._effects else NO_EFFECTS, debug_info)


def new_vars(avals: Sequence[AbstractValue]) -> list[Var]:
    """Fresh variables of the given types."""
    return [Var(a) for a in avals]


"""Equations and jaxprs, with structural identity.

Two :class:`Jaxpr`\\ s are equal, and hash alike, when they are the same
program up to the renaming of variables: same types, same equations with the
same params, the same dataflow.  The canonical key behind that is computed
once per jaxpr and cached.  Debug and source information are not part of it.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import attrs
import numpy as np

from plait.ir.atoms import Atom, Literal, Var
from plait.ir.avals import AbstractValue, ShapedArray
from plait.ir.debug_info import DebugInfo, SourceInfo
from plait.ir.effects import NO_EFFECTS, Effect
from plait.ir.params import Params
from plait.ir.primitive import Primitive

__all__ = ["Eqn", "Jaxpr", "ClosedJaxpr", "subjaxprs", "atoms_avals", "convert_constvars",
           "consts_as_invars"]


def _unchanged(obj: object, changes: dict[str, Any]) -> bool:
    # A replace() returns the same object when every change is the value already there.
    return all(getattr(obj, k) is v for k, v in changes.items())


@attrs.frozen(eq=False, repr=False, slots=True)
class Eqn:
    """One equation: ``outvars = primitive[params] invars``."""

    primitive: Primitive
    """The operation applied."""
    invars: tuple[Atom, ...]
    """The operands: variables bound earlier, or literals (JAX's name)."""
    params: Params
    """The primitive's parameters."""
    outvars: tuple[Var, ...]
    """The variables this equation binds."""
    effects: frozenset[Effect] = NO_EFFECTS
    """Effects beyond computing the outputs; empty for pure equations."""
    source_info: SourceInfo | None = None
    """The user line that emitted the equation (not part of structural identity)."""

    @property
    def inputs(self) -> tuple[Atom, ...]:
        """Alias of :attr:`invars`, kept for code written before plait took JAX's name."""
        return self.invars

    def replace(self, **changes: Any) -> Eqn:
        """A copy with fields replaced; ``self`` when nothing changes."""
        return self if _unchanged(self, changes) else attrs.evolve(self, **changes)

    def __repr__(self) -> str:
        from plait.ir.printer import pp_eqn_text
        return pp_eqn_text(self)


@attrs.frozen(eq=False, repr=False, slots=True)
class Jaxpr:
    """A typed, first-order program: ``{ lambda constvars; invars. let eqns in outvars }``.

    Equality and hashing are structural (see the module docstring).
    """

    constvars: tuple[Var, ...]
    """Inputs standing for hoisted constants (their values live in a :class:`ClosedJaxpr`)."""
    invars: tuple[Var, ...]
    """The program's parameters."""
    eqns: tuple[Eqn, ...]
    """The equations, in an order where every variable is bound before use."""
    outvars: tuple[Atom, ...]
    """The results."""
    effects: frozenset[Effect] = NO_EFFECTS
    """The union of the equations' effects."""
    debug_info: DebugInfo | None = None
    """Names of the traced function, its arguments and results (not structural)."""
    _key: tuple[Any, ...] | None = attrs.field(default=None, init=False)
    _hash: int = attrs.field(default=0, init=False)
    _typed_key: tuple[Any, ...] | None = attrs.field(default=None, init=False)

    @property
    def in_avals(self) -> tuple[AbstractValue, ...]:
        """The types of :attr:`invars`."""
        return tuple(v.aval for v in self.invars)

    @property
    def out_avals(self) -> tuple[AbstractValue, ...]:
        """The types of :attr:`outvars`."""
        return tuple(v.aval for v in self.outvars)

    def replace(self, **changes: Any) -> Jaxpr:
        """A copy with fields replaced; ``self`` when nothing changes."""
        return self if _unchanged(self, changes) else attrs.evolve(self, **changes)

    def structural_key(self) -> tuple[Any, ...]:
        """The canonical form behind ``==`` and ``hash`` (computed once).

        Weak types are ignored here, as JAX's printed form (and its
        ``typematch``) ignores them: ``parse(print(j)) == j`` holds even though
        the text does not say which values are weakly typed.
        """
        key = self._key
        if key is None:
            key = _canonical_key(self, weak=False)
            object.__setattr__(self, "_key", key)
            object.__setattr__(self, "_hash", hash(key))
        return key

    def typed_key(self) -> tuple[Any, ...]:
        """Like :meth:`structural_key` but weak-type sensitive: the key of caches
        whose results carry types back to the user (computed once)."""
        key = self._typed_key
        if key is None:
            key = _canonical_key(self, weak=True)
            object.__setattr__(self, "_typed_key", key)
        return key

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if not isinstance(other, Jaxpr):
            return NotImplemented
        if hash(self) != hash(other):
            return False
        return self.structural_key() == other.structural_key()

    def __hash__(self) -> int:
        if self._key is None:
            self.structural_key()
        return self._hash

    def __str__(self) -> str:
        from plait.ir.printer import pp_jaxpr
        return pp_jaxpr(self)

    __repr__ = __str__

    def pretty_print(self, *, width: int = 80, source_info: bool = False) -> str:
        """The text form, formatted for a line ``width``; optionally with source lines."""
        from plait.ir.printer import pp_jaxpr
        return pp_jaxpr(self, width=width, source_info=source_info)


def _strong(aval: AbstractValue) -> AbstractValue:
    return aval.strip_weak_type() if isinstance(aval, ShapedArray) else aval


def _strong_atom(a: Literal) -> Literal:
    return Literal(a.val, a.aval.strip_weak_type())


def _canonical_key(jaxpr: Jaxpr, weak: bool) -> tuple[Any, ...]:
    ty = (lambda a: a) if weak else _strong
    lit = (lambda a: a) if weak else _strong_atom
    index: dict[Var, int] = {}
    n = 0
    for v in jaxpr.constvars:
        index[v] = n
        n += 1
    for v in jaxpr.invars:
        index[v] = n
        n += 1
    parts: list[Any] = [tuple(ty(v.aval) for v in jaxpr.constvars),
                        tuple(ty(v.aval) for v in jaxpr.invars)]
    append = parts.append
    for eqn in jaxpr.eqns:
        # Variables become their binding index; interned literals stand for
        # themselves, so an int index never equals a literal.
        # A free (unbound) variable stands for itself: such a jaxpr is ill-formed, but
        # it can still be hashed and printed, so that check_jaxpr can show it.
        ins = tuple(index.get(a, a) if type(a) is Var else lit(a) for a in eqn.invars)
        outs = eqn.outvars
        append((eqn.primitive, ins, eqn.params, tuple(ty(v.aval) for v in outs), eqn.effects))
        for v in outs:
            index[v] = n
            n += 1
    append(tuple(index.get(a, a) if type(a) is Var else lit(a) for a in jaxpr.outvars))
    return tuple(parts)


def _const_equal(a: Any, b: Any) -> bool:
    if a is b:
        return True
    x, y = np.asarray(a), np.asarray(b)
    return x.shape == y.shape and x.dtype == y.dtype and x.tobytes() == y.tobytes()


@attrs.frozen(eq=False, repr=False, slots=True)
class ClosedJaxpr:
    """A :class:`Jaxpr` together with the values of its constvars."""

    jaxpr: Jaxpr
    """The program."""
    consts: tuple[Any, ...] = ()
    """One array per constvar, in order."""

    def __attrs_post_init__(self) -> None:
        if len(self.consts) != len(self.jaxpr.constvars):
            raise ValueError(
                f"expected {len(self.jaxpr.constvars)} consts for the jaxpr's constvars, "
                f"but got {len(self.consts)}")

    @property
    def literals(self) -> tuple[Any, ...]:
        """Alias of :attr:`consts` (the name used by JAX's tutorial "Writing custom Jaxpr
        interpreters in JAX")."""
        return self.consts

    @property
    def eqns(self) -> tuple[Eqn, ...]:
        """The jaxpr's equations."""
        return self.jaxpr.eqns

    @property
    def constvars(self) -> tuple[Var, ...]:
        """The jaxpr's constvars (bound to :attr:`consts`)."""
        return self.jaxpr.constvars

    @property
    def invars(self) -> tuple[Var, ...]:
        """The jaxpr's invars."""
        return self.jaxpr.invars

    @property
    def outvars(self) -> tuple[Atom, ...]:
        """The jaxpr's outvars."""
        return self.jaxpr.outvars

    @property
    def debug_info(self) -> DebugInfo | None:
        """The jaxpr's debug info."""
        return self.jaxpr.debug_info

    @property
    def in_avals(self) -> tuple[AbstractValue, ...]:
        """The types of the jaxpr's invars."""
        return self.jaxpr.in_avals

    @property
    def out_avals(self) -> tuple[AbstractValue, ...]:
        """The types of the jaxpr's outvars."""
        return self.jaxpr.out_avals

    @property
    def effects(self) -> frozenset[Effect]:
        """The jaxpr's effects."""
        return self.jaxpr.effects

    def replace(self, **changes: Any) -> ClosedJaxpr:
        """A copy with fields replaced; ``self`` when nothing changes."""
        return self if _unchanged(self, changes) else attrs.evolve(self, **changes)

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if not isinstance(other, ClosedJaxpr):
            return NotImplemented
        return (self.jaxpr == other.jaxpr and len(self.consts) == len(other.consts)
                and all(_const_equal(a, b) for a, b in zip(self.consts, other.consts)))

    def __hash__(self) -> int:
        return hash(self.jaxpr)

    def __str__(self) -> str:
        return str(self.jaxpr)

    __repr__ = __str__

    def pretty_print(self, *, width: int = 80, source_info: bool = False) -> str:
        """The text form of the jaxpr (see :meth:`Jaxpr.pretty_print`)."""
        return self.jaxpr.pretty_print(width=width, source_info=source_info)


def subjaxprs(params: Params) -> Iterator[Jaxpr]:
    """The jaxprs held in params (``jaxpr=``, ``branches=(...)``, records such as
    ``custom_linear_solve``'s ``jaxprs``), in sorted param order."""
    for name in sorted(params):
        v = params[name]
        if isinstance(v, ClosedJaxpr):
            yield v.jaxpr
        elif isinstance(v, Jaxpr):
            yield v
        elif isinstance(v, tuple):
            for x in v:
                if isinstance(x, ClosedJaxpr):
                    yield x.jaxpr
                elif isinstance(x, Jaxpr):
                    yield x


def atoms_avals(atoms: Sequence[Atom]) -> tuple[AbstractValue, ...]:
    """The types of a sequence of atoms."""
    return tuple(a.aval for a in atoms)



def convert_constvars(jaxpr: Jaxpr) -> Jaxpr:
    """``jaxpr`` with its constvars turned into leading invars (``jaxpr`` if it has none).

    The debug info is dropped when there are constvars: its argument names
    describe the invars only.
    """
    if not jaxpr.constvars:
        return jaxpr
    return jaxpr.replace(constvars=(), invars=jaxpr.constvars + jaxpr.invars, debug_info=None)


def consts_as_invars(closed: ClosedJaxpr) -> tuple[ClosedJaxpr, tuple[Any, ...]]:
    """``closed`` with its constvars turned into leading invars, and the const values."""
    if not closed.jaxpr.constvars:
        return closed, ()
    return ClosedJaxpr(convert_constvars(closed.jaxpr), ()), closed.consts

"""Transposition of linear jaxprs: the backward pass of reverse mode.

``transpose_jaxpr(jaxpr, linear)`` turns a jaxpr linear in the invars marked
``linear`` into one mapping (the non-linear invars, the output cotangents) to
the cotangents of the linear invars.  Non-linear equations are re-emitted
forward; linear ones are walked backwards, each primitive's rule
(:data:`transpose_rules`) mapping output cotangents to input cotangents.
Cotangents that nothing produces stay symbolic zeros and cost nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, final

from plait.ir.atoms import Atom, Literal, Var
from plait.ir.avals import AbstractValue
from plait.ir.caches import LRUCache
from plait.ir.check import check_jaxpr
from plait.ir.config import values as _config
from plait.ir.errors import JaxprTypeError, missing_rule
from plait.ir.jaxpr import Jaxpr
from plait.ir.notes import note_equation
from plait.ir.primitive import Primitive
from plait.ir.sharding import EXPLICIT
from plait.transforms.emit import Emitter, Zero

__all__ = ["transpose_jaxpr", "transpose_rules", "TransposeRule", "UndefPrimal",
           "backward_pass", "is_undefined", "Cotangent"]


@final
class UndefPrimal:
    """A linear input of a transposed equation: only its type is known."""

    __slots__ = ("aval",)

    def __init__(self, aval: AbstractValue) -> None:
        self.aval = aval

    def __repr__(self) -> str:
        return f"UndefPrimal({self.aval.str_short()})"


def is_undefined(x: object) -> bool:
    """Whether ``x`` is a linear (undefined) input."""
    return type(x) is UndefPrimal


Cotangent = Atom | Zero | None
TransposeRule = Callable[..., Sequence[Cotangent]]
"""``rule(e, cts_out, *inputs, **params) -> cts_in``: ``inputs`` are atoms or
:class:`UndefPrimal`; a cotangent is returned for each undefined input (``None``
or :class:`Zero` for the others)."""

transpose_rules: dict[Primitive, TransposeRule] = {}
_cache: LRUCache[tuple[Any, ...], Jaxpr] = LRUCache("transpose")


def backward_pass(e: Emitter, jaxpr: Jaxpr, consts: Sequence[Atom],
                  args: Sequence[Atom | UndefPrimal], cts_out: Sequence[Atom | Zero]
                  ) -> list[Atom | Zero]:
    """Emit the transpose of ``jaxpr``; returns one cotangent per undefined arg."""
    primal: dict[Var, Atom] = {}
    linear: set[Var] = set()

    def read(a: Atom) -> Atom | UndefPrimal:
        if type(a) is Literal:
            return a
        if a in linear:
            return UndefPrimal(a.aval)
        return primal[a]

    for v, c in zip(jaxpr.constvars, consts, strict=True):
        primal[v] = c
    for v, x in zip(jaxpr.invars, args, strict=True):
        if type(x) is UndefPrimal:
            linear.add(v)
        else:
            primal[v] = x
    linear_eqns = []
    for eqn in jaxpr.eqns:
        if any(type(a) is Var and a in linear for a in eqn.invars):
            linear.update(eqn.outvars)
            linear_eqns.append(eqn)
        else:
            # No input is linear here: each is a literal or a known primal.
            known = tuple(a if type(a) is Literal else primal[a] for a in eqn.invars)
            outs = e.builder.bind(eqn.primitive, known, eqn.params, eqn.source_info)
            for v, x in zip(eqn.outvars, outs):
                primal[v] = x
    ct: dict[Var, Atom] = {}

    def add_ct(v: Atom, c: Cotangent) -> None:
        if c is None or isinstance(c, Zero) or type(v) is not Var or v not in linear:
            return
        if EXPLICIT.seen:
            c = e.like_sharding(c, v.aval)
        prev = ct.get(v)
        ct[v] = c if prev is None else e.add_any(prev, c)

    b = e.builder
    outer_source = b.source_info
    # (An output given twice sums its cotangents: named after the equation that made it.
    # Looked up only then, off the common path.)
    repeated = outer_source is None and len(set(jaxpr.outvars)) < len(jaxpr.outvars)
    made_by = {v: q.source_info for q in linear_eqns for v in q.outvars} if repeated else {}
    for out, ct_out in zip(jaxpr.outvars, cts_out, strict=True):
        src = made_by.get(out) if type(out) is Var else None
        if src is not None and outer_source is None:
            b.source_info = src.transformed("transpose")
        add_ct(out, ct_out)
        b.source_info = outer_source
    for eqn in reversed(linear_eqns):
        cts = [ct.pop(v, None) for v in eqn.outvars]
        if all(c is None for c in cts):
            continue
        b.source_info = None if eqn.source_info is None else \
            eqn.source_info.transformed("transpose")
        try:
            rule = transpose_rules.get(eqn.primitive)
            if rule is None:
                raise missing_rule("Transpose", eqn.primitive.name, eqn.primitive.open_params)
            cts_z: list[Atom | Zero] = [c if c is not None else Zero(o.aval)
                                        for c, o in zip(cts, eqn.outvars)]
            ins = [read(a) for a in eqn.invars]
            cts_in = rule(e, cts_z, *ins, **eqn.params)
            for a, ct_in in zip(eqn.invars, cts_in, strict=True):
                add_ct(a, ct_in)
        except Exception as exc:
            note_equation(exc, jaxpr, eqn, "transposing")
            raise
    b.source_info = outer_source
    return [ct.get(v, Zero(v.aval)) for v, x in zip(jaxpr.invars, args)
            if type(x) is UndefPrimal]


def transpose_jaxpr(jaxpr: Jaxpr, linear: Sequence[bool]) -> Jaxpr:
    """The transpose of ``jaxpr`` with respect to the invars marked ``linear``.

    The result maps ``(constvars; non-linear invars, output cotangents)`` to the
    cotangents of the linear invars (zeros materialized).

    Raises:
      RuleNotImplementedError: a primitive on the linear path has no transpose
        rule (it is not linear, or the rule is missing).
    """
    key = (jaxpr.typed_key(), tuple(linear))
    hit = _cache.get(key)
    if hit is not None:
        return hit
    e = Emitter()
    consts = [Var(v.aval) for v in jaxpr.constvars]
    nonlin = [Var(v.aval) for v, lin in zip(jaxpr.invars, linear) if not lin]
    it = iter(nonlin)
    args: list[Atom | UndefPrimal] = [UndefPrimal(v.aval) if lin else next(it)
                                      for v, lin in zip(jaxpr.invars, linear)]
    cts = [Var(a.aval) for a in jaxpr.outvars]
    out = backward_pass(e, jaxpr, consts, args, cts)
    outs = [e.instantiate(c) for c in out]
    result = e.builder.build(nonlin + cts, outs, consts)
    if _config.check_jaxprs:
        check_jaxpr(result)
    _cache[key] = result
    return result


def check_linear_inputs(name: str, args: Sequence[object], positions: Sequence[int]) -> None:
    """Fail unless the undefined inputs are among ``positions`` (a rule's linear operands)."""
    bad = [i for i, a in enumerate(args) if type(a) is UndefPrimal and i not in positions]
    if bad:
        raise JaxprTypeError(f"{name} is not linear in operand {bad[0]}; it cannot be transposed")

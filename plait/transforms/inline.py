"""Inlining: emitting a jaxpr's equations into a builder, and inlining calls."""

from __future__ import annotations

from collections.abc import Sequence

from plait.ir import primitives as P
from plait.ir.atoms import Atom, Literal, Var
from plait.ir.jaxpr import ClosedJaxpr, Jaxpr
from plait.transforms.emit import Emitter

__all__ = ["inline_jaxpr", "inline_calls"]


def inline_jaxpr(e: Emitter, jaxpr: Jaxpr, consts: Sequence[Atom],
                 args: Sequence[Atom]) -> list[Atom]:
    """Emit ``jaxpr`` applied to ``consts`` and ``args``; returns its outputs."""
    env: dict[Var, Atom] = dict(zip(jaxpr.constvars, consts, strict=True))
    env.update(zip(jaxpr.invars, args, strict=True))

    def read(a: Atom) -> Atom:
        return a if type(a) is Literal else env[a]

    # The equations' name stacks are relative to the call's, which the builder holds when
    # a transformation's rule inlines a callee.
    caller = e.builder.source_info
    scope = caller.name_stack if caller is not None else ""
    for eqn in jaxpr.eqns:
        src = eqn.source_info
        outs = e.builder.bind(eqn.primitive, tuple(read(a) for a in eqn.invars), eqn.params,
                              src.under(scope) if scope and src is not None else src)
        for v, x in zip(eqn.outvars, outs):  # (dict.update of pairs is slower)
            env[v] = x
    return [read(a) for a in jaxpr.outvars]


def inline_calls(jaxpr: Jaxpr) -> Jaxpr:
    """``jaxpr`` with every ``jit`` call replaced by the callee's equations (recursively)."""
    e = Emitter()
    consts = [Var(v.aval) for v in jaxpr.constvars]
    args = [Var(v.aval) for v in jaxpr.invars]
    env: dict[Var, Atom] = dict(zip(jaxpr.constvars, consts))
    env.update(zip(jaxpr.invars, args))

    def read(a: Atom) -> Atom:
        return a if type(a) is Literal else env[a]

    for eqn in jaxpr.eqns:
        ins = [read(a) for a in eqn.invars]
        if eqn.primitive is P.jit_p:
            callee: ClosedJaxpr = eqn.params["jaxpr"]
            e.builder.source_info = eqn.source_info
            outs: Sequence[Atom] = inline_jaxpr(e, inline_calls(callee.jaxpr), (), ins)
            e.builder.source_info = None
        else:
            outs = e.builder.bind(eqn.primitive, tuple(ins), eqn.params, eqn.source_info)
        for v, x in zip(eqn.outvars, outs):  # (dict.update of pairs is slower)
            env[v] = x
    return e.builder.build(args, [read(a) for a in jaxpr.outvars], consts, jaxpr.debug_info)

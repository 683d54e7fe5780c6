"""Which manual mesh axes each value of a ``shard_map`` body may vary over.

This is the analysis behind ``shard_map``'s ``check_vma``: an output whose
``out_specs`` leaves out a mesh axis claims to be equal on every device along it,
and the claim is checked here, not trusted (else the result would silently be
one device's block).  A body input varies over the axes its ``in_specs`` names;
an equation's outputs vary over the union of its inputs' axes, except for the
collectives, which remove (``psum``, ``all_gather``...) or add (``axis_index``,
``psum_scatter``) axes, and the loops and branches, analysed through their bodies.
The analysis is conservative: a value is only said to be replicated when it
provably is.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from plait.ir import primitives as P
from plait.ir.atoms import Var
from plait.ir.jaxpr import ClosedJaxpr, Eqn, Jaxpr
from plait.ir.primitive import Primitive

__all__ = ["varying_axes"]

Axes = frozenset[str]
Rule = Callable[[Eqn, list[Axes]], list[Axes]]
NONE: Axes = frozenset()


def varying_axes(jaxpr: Jaxpr, ins: Sequence[Axes]) -> list[Axes]:
    """Per output of ``jaxpr``, the mesh axes it may vary over, given its inputs'."""
    env: dict[Var, Axes] = dict(zip(jaxpr.invars, ins, strict=True))

    def read(a: Any) -> Axes:
        return env.get(a, NONE) if type(a) is Var else NONE
    for eqn in jaxpr.eqns:
        rule = RULES.get(eqn.primitive)
        args = [read(a) for a in eqn.invars]
        outs = rule(eqn, args) if rule is not None else _union(eqn, args)
        env.update(zip(eqn.outvars, outs))
    return [read(a) for a in jaxpr.outvars]


def _union(eqn: Eqn, ins: list[Axes]) -> list[Axes]:
    every = NONE.union(*ins)
    return [every] * len(eqn.outvars)


def _names(axis_name: Any) -> Axes:
    names = axis_name if isinstance(axis_name, tuple) else (axis_name,)
    return frozenset(n for n in names if isinstance(n, str))


def _removes(param: str) -> Rule:
    # The result is the same on every device of the named axes.
    def rule(eqn: Eqn, ins: list[Axes]) -> list[Axes]:
        gone = _names(eqn.params[param])
        return [a - gone for a in (ins if len(ins) == len(eqn.outvars) else _union(eqn, ins))]
    return rule


def _adds(eqn: Eqn, ins: list[Axes]) -> list[Axes]:
    new = _names(eqn.params["axis_name"])
    return [a | new for a in _union(eqn, ins)]


def _body(jaxpr: Any) -> Jaxpr:
    return jaxpr.jaxpr if isinstance(jaxpr, ClosedJaxpr) else jaxpr


def _call(param: str) -> Rule:
    def rule(eqn: Eqn, ins: list[Axes]) -> list[Axes]:
        body = _body(eqn.params[param])
        if len(body.invars) != len(ins) or len(body.outvars) != len(eqn.outvars):
            return _union(eqn, ins)
        return varying_axes(body, ins)
    return rule


def _fixpoint(step: Callable[[list[Axes]], list[Axes]], carry: list[Axes]) -> list[Axes]:
    # Axes only accumulate, so this ends within (carries x axes) rounds.
    while True:
        new = [a | b for a, b in zip(carry, step(carry))]
        if new == carry:
            return carry
        carry = new


def _scan(eqn: Eqn, ins: list[Axes]) -> list[Axes]:
    p = eqn.params
    nk, nc = p["num_consts"], p["num_carry"]
    body = _body(p["jaxpr"])
    consts, carry, xs = ins[:nk], ins[nk:nk + nc], ins[nk + nc:]
    carry = _fixpoint(lambda c: varying_axes(body, consts + c + xs)[:nc], carry)
    return carry + varying_axes(body, consts + carry + xs)[nc:]


def _while(eqn: Eqn, ins: list[Axes]) -> list[Axes]:
    p = eqn.params
    cn, bn = p["cond_nconsts"], p["body_nconsts"]
    cond, body = _body(p["cond_jaxpr"]), _body(p["body_jaxpr"])
    cconsts, bconsts, carry = ins[:cn], ins[cn:cn + bn], ins[cn + bn:]

    def step(c: list[Axes]) -> list[Axes]:
        # A predicate varying over an axis makes the trip count, so every carry, vary.
        pred = varying_axes(cond, cconsts + c)[0]
        return [a | pred for a in varying_axes(body, bconsts + c)]
    return _fixpoint(step, carry)


def _cond(eqn: Eqn, ins: list[Axes]) -> list[Axes]:
    index, ops = ins[0], ins[1:]
    outs = [index] * len(eqn.outvars)
    for branch in eqn.params["branches"]:
        outs = [a | b for a, b in zip(outs, varying_axes(_body(branch), ops))]
    return outs


RULES: dict[Primitive, Rule] = {
    P.psum_p: _removes("axes"),
    P.pmax_p: _removes("axes"),
    P.pmin_p: _removes("axes"),
    P.all_gather_p: _removes("axis_name"),
    P.pbroadcast_p: _removes("axis_name"),
    P.pvary_p: lambda eqn, ins: [ins[0] | frozenset(eqn.params["axes"])],
    P.reduce_scatter_p: _adds,
    P.axis_index_p: _adds,
    P.all_to_all_p: _adds,
    P.jit_p: _call("jaxpr"),
    P.remat_p: _call("jaxpr"),
    P.custom_jvp_call_p: _call("call_jaxpr"),
    P.custom_vjp_call_p: _call("call_jaxpr"),
    P.scan_p: _scan,
    P.while_p: _while,
    P.cond_p: _cond,
}
"""The equations that do not simply pass on their inputs' axes (a table, as every
transformation's rules)."""

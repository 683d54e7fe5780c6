"""Partial evaluation: split a jaxpr into what is known now and what is known later.

``partial_eval_jaxpr(jaxpr, unknowns)`` gives a *known* jaxpr computing the
known outputs plus residuals from the known inputs, and an *unknown* jaxpr
computing the unknown outputs from the residuals and the unknown inputs
(a program ``(a1, a2) -> (b1, b2)`` becomes ``a1 -> (b1, r)`` and
``(r, a2) -> b2``).  Linearization is partial evaluation of a JVP with the
tangents unknown.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from plait.ir.atoms import Atom, Var
from plait.ir.caches import LRUCache
from plait.ir.check import check_jaxpr
from plait.ir.config import values as _config
from plait.ir.effects import NO_EFFECTS
from plait.ir.errors import JaxprTypeError
from plait.ir.jaxpr import Eqn, Jaxpr
from plait.ir.notes import note_equation
from plait.ir.primitive import Primitive

__all__ = ["partial_eval_jaxpr", "pe_rules", "PeRule", "PartialEvalResult"]

PeRule = Callable[[Eqn, Sequence[bool]],
                  tuple[Eqn | Sequence[Eqn] | None, Eqn | None, list[bool], list[Var]]]
"""``rule(eqn, unknowns_in) -> (known eqn(s), unknown eqn, unknowns_out, residuals)`` for
primitives that split themselves (calls, control flow) instead of going wholly one way.
The known side may be several equations (a scan hoists loop-invariant work out)."""

pe_rules: dict[Primitive, PeRule] = {}

PartialEvalResult = tuple[Jaxpr, Jaxpr, tuple[bool, ...], int]
_cache: LRUCache[tuple[Any, ...], PartialEvalResult] = LRUCache("partial_eval")


def partial_eval_jaxpr(jaxpr: Jaxpr, unknowns: Sequence[bool],
                       instantiate: bool | Sequence[bool] = False) -> PartialEvalResult:
    """Split ``jaxpr`` by which inputs are unknown.

    Args:
      jaxpr: the program; its constvars are known.
      unknowns: per invar, whether its value is unknown.
      instantiate: per output (or for all), whether a known output should
        still be produced by the unknown jaxpr (forwarded as a residual).

    Returns:
      ``(known, unknown, out_unknowns, num_res)``: ``known`` maps
      ``(constvars; known invars)`` to ``known outputs + residuals``;
      ``unknown`` maps ``residuals + unknown invars`` to the unknown outputs.
    """
    inst = tuple(instantiate) if not isinstance(instantiate, bool) else (
        (instantiate,) * len(jaxpr.outvars))
    key = (jaxpr.typed_key(), tuple(unknowns), inst)
    hit = _cache.get(key)
    if hit is None:
        hit = _cache[key] = _partial_eval(jaxpr, tuple(unknowns), inst)
        if _config.check_jaxprs:
            _typecheck(jaxpr, tuple(unknowns), hit)
    return hit


def _partial_eval(jaxpr: Jaxpr, unknowns: tuple[bool, ...],
                  inst: tuple[bool, ...]) -> PartialEvalResult:
    unknown: set[Var] = {v for v, u in zip(jaxpr.invars, unknowns) if u}
    residuals: dict[Var, None] = {}
    known_eqns: list[Eqn] = []
    unknown_eqns: list[Eqn] = []

    def is_unknown(a: Atom) -> bool:
        return type(a) is Var and a in unknown

    def residual(a: Atom) -> None:
        if type(a) is Var and a not in unknown:
            residuals[a] = None

    for eqn in jaxpr.eqns:
        unks = [is_unknown(a) for a in eqn.invars]
        rule = pe_rules.get(eqn.primitive)
        if rule is not None and any(unks):
            try:
                k_eqn, u_eqn, unks_out, res = rule(eqn, unks)
            except Exception as exc:
                note_equation(exc, jaxpr, eqn, "partially evaluating")
                raise
            # A split body may have lost its effects (a callback on the known side
            # only), so each piece's effects are derived from its own params.
            if isinstance(k_eqn, Eqn):
                known_eqns.append(_own_effects(k_eqn))
            elif k_eqn is not None:
                known_eqns.extend(_own_effects(e) for e in k_eqn)
            if u_eqn is not None:
                unknown_eqns.append(_own_effects(u_eqn))
            for r in res:
                residuals[r] = None
            unknown.update(v for v, u in zip(eqn.outvars, unks_out) if u)
        elif any(unks):
            for a in eqn.invars:
                residual(a)
            unknown_eqns.append(eqn)
            unknown.update(eqn.outvars)
        else:
            known_eqns.append(eqn)
    out_unknowns = []
    unknown_outs: list[Atom] = []
    known_outs: list[Atom] = []
    for a, want in zip(jaxpr.outvars, inst):
        if is_unknown(a):
            out_unknowns.append(True)
            unknown_outs.append(a)
        elif want:
            out_unknowns.append(True)
            residual(a)
            unknown_outs.append(a)
        else:
            out_unknowns.append(False)
            known_outs.append(a)
    known_in = [v for v, u in zip(jaxpr.invars, unknowns) if not u]
    # Residuals in the order the known side defines them (inputs first), as JAX's.
    defined = {v: i for i, v in enumerate((*jaxpr.constvars, *known_in))}
    for e in known_eqns:
        for v in e.outvars:
            defined.setdefault(v, len(defined))
    res = sorted(residuals, key=lambda v: defined.get(v, -1))
    unknown_in = [v for v, u in zip(jaxpr.invars, unknowns) if u]
    known = Jaxpr(jaxpr.constvars, tuple(known_in), tuple(known_eqns),
                  tuple(known_outs) + tuple(res), _effects(known_eqns))
    unknown_j = Jaxpr((), tuple(res) + tuple(unknown_in), tuple(unknown_eqns),
                      tuple(unknown_outs), _effects(unknown_eqns))
    return known, unknown_j, tuple(out_unknowns), len(res)


def _own_effects(eqn: Eqn) -> Eqn:
    return eqn.replace(effects=eqn.primitive.effects(eqn.params))


def _effects(eqns: Sequence[Eqn]) -> frozenset[Any]:
    effs: set[Any] = set()
    for e in eqns:
        effs.update(e.effects)
    return frozenset(effs) if effs else NO_EFFECTS


def _typecheck(jaxpr: Jaxpr, unknowns: tuple[bool, ...], result: PartialEvalResult) -> None:
    # Partial evaluation's defining split: (a1, a2) -> (b1, b2) splits into
    # a1 -> (b1, r) and (r, a2) -> b2.
    known, unknown, out_unknowns, num_res = result
    check_jaxpr(known)
    check_jaxpr(unknown)
    a1 = [v.aval for v, u in zip(jaxpr.invars, unknowns) if not u]
    a2 = [v.aval for v, u in zip(jaxpr.invars, unknowns) if u]
    b1 = [a.aval for a, u in zip(jaxpr.outvars, out_unknowns) if not u]
    n_known_out = len(known.outvars) - num_res
    res = [a.aval for a in known.outvars[n_known_out:]]
    if (list(known.in_avals) != a1 or [a.aval for a in known.outvars[:n_known_out]] != b1
            or list(unknown.in_avals) != res + a2):
        raise JaxprTypeError("partial evaluation produced jaxprs of mismatched types")

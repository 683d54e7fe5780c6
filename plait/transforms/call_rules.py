"""Partial evaluation and DCE of ``jit`` calls: split and prune the callee, keep the call."""

from __future__ import annotations

from collections.abc import Sequence

from plait.ir import primitives as P
from plait.ir.atoms import Var
from plait.ir.jaxpr import ClosedJaxpr, Eqn
from plait.transforms.dce import dce_call, dce_rules
from plait.transforms.partial_eval import partial_eval_jaxpr, pe_rules


def _jit_partial_eval(eqn: Eqn, unknowns: Sequence[bool]
                      ) -> tuple[Eqn | None, Eqn | None, list[bool], list[Var]]:
    callee: ClosedJaxpr = eqn.params["jaxpr"]
    known, unknown, out_unk, nres = partial_eval_jaxpr(callee.jaxpr, unknowns)
    name = eqn.params["name"]
    k_in = [a for a, u in zip(eqn.invars, unknowns) if not u]
    u_in = [a for a, u in zip(eqn.invars, unknowns) if u]
    k_out = [v for v, u in zip(eqn.outvars, out_unk) if not u]
    u_out = [v for v, u in zip(eqn.outvars, out_unk) if u]
    residuals = [Var(a.aval) for a in known.outvars[len(known.outvars) - nres:]]
    params = eqn.params
    known_eqn = eqn.replace(
        invars=tuple(k_in), outvars=tuple(k_out + residuals), effects=known.effects,
        params=params.replace(name=name, jaxpr=ClosedJaxpr(known),
                              donated_invars=(False,) * len(k_in)))
    unknown_eqn = eqn.replace(
        invars=tuple(residuals + u_in), outvars=tuple(u_out), effects=unknown.effects,
        params=params.replace(name=name, jaxpr=ClosedJaxpr(unknown),
                              donated_invars=(False,) * (len(residuals) + len(u_in))))
    return known_eqn, unknown_eqn, list(out_unk), residuals


pe_rules[P.jit_p] = _jit_partial_eval
dce_rules[P.jit_p] = dce_call

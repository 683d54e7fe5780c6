"""Partial evaluation and DCE of ``jit`` calls: split and prune the callee, keep the call."""

from __future__ import annotations

from collections.abc import Sequence

from plait.ir import primitives as P
from plait.ir.atoms import Var
from plait.ir.jaxpr import ClosedJaxpr, Eqn
from plait.transforms.ad import split_forwarded
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
    # A residual that is one of the callee's known inputs is passed on from outside,
    # not returned by the call (which would copy it, and hide where it comes from).
    n_known_out = len(known.outvars) - nres
    known, forwarded = split_forwarded(known, n_known_out)
    new_res = iter([Var(r.aval) for r in known.outvars[n_known_out:]])
    outer_res = [k_in[i] if i is not None else next(new_res) for i in forwarded]
    computed = [a for a, i in zip(outer_res, forwarded) if i is None]
    residuals = [a for a in outer_res if type(a) is Var]
    params = eqn.params
    known_eqn = eqn.replace(
        invars=tuple(k_in), outvars=tuple(k_out + computed), effects=known.effects,
        params=params.replace(name=name, jaxpr=ClosedJaxpr(known),
                              donated_invars=(False,) * len(k_in)))
    unknown_eqn = eqn.replace(
        invars=tuple(outer_res + u_in), outvars=tuple(u_out), effects=unknown.effects,
        params=params.replace(name=name, jaxpr=ClosedJaxpr(unknown),
                              donated_invars=(False,) * (len(outer_res) + len(u_in))))
    return known_eqn, unknown_eqn, list(out_unk), residuals


pe_rules[P.jit_p] = _jit_partial_eval
dce_rules[P.jit_p] = dce_call

"""Dead-code elimination: drop equations no used output depends on.

Effectful equations are always kept.  Primitives carrying sub-jaxprs may
register a rule in :data:`dce_rules` to prune their callee as well.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from plait.ir.atoms import Var
from plait.ir.caches import LRUCache
from plait.ir.check import check_jaxpr
from plait.ir.config import values as _config
from plait.ir.effects import NO_EFFECTS
from plait.ir.jaxpr import ClosedJaxpr, Eqn, Jaxpr
from plait.ir.primitive import Primitive

__all__ = ["dce_jaxpr", "dce_rules", "DceRule", "dce_call"]

DceRule = Callable[[Eqn, Sequence[bool]], tuple[Eqn | None, list[bool]]]
"""``rule(eqn, used_outputs) -> (new eqn or None, used_inputs)``."""

dce_rules: dict[Primitive, DceRule] = {}
_cache: LRUCache[tuple[Any, ...], tuple[Jaxpr, tuple[bool, ...]]] = LRUCache("dce")


def dce_jaxpr(jaxpr: Jaxpr, used_outputs: Sequence[bool] | None = None,
              prune_invars: bool = False) -> tuple[Jaxpr, tuple[bool, ...]]:
    """Remove dead equations (and, with ``prune_invars``, unused inputs).

    Args:
      jaxpr: the program.
      used_outputs: which outputs to keep (all by default); dropped outputs
        are removed from the result.
      prune_invars: drop invars nothing uses.

    Returns:
      The pruned jaxpr and, per original invar, whether it is used.
    """
    used = tuple(used_outputs) if used_outputs is not None else (True,) * len(jaxpr.outvars)
    key = (jaxpr.typed_key(), used, prune_invars)
    hit = _cache.get(key)
    if hit is None:
        hit = _cache[key] = _dce(jaxpr, used, prune_invars)
        if _config.check_jaxprs:
            check_jaxpr(hit[0])
    return hit


def dce_call(eqn: Eqn, used_outputs: Sequence[bool]) -> tuple[Eqn | None, list[bool]]:
    """The DCE rule of a call (``jit``, ``remat``): prune the callee ``params['jaxpr']``
    and drop the arguments it no longer uses (and their ``donated_invars`` entries)."""
    if not any(used_outputs) and not eqn.effects:
        return None, [False] * len(eqn.invars)
    pruned, used_in = dce_jaxpr(eqn.params["jaxpr"].jaxpr, used_outputs, prune_invars=True)
    params = eqn.params.replace(jaxpr=ClosedJaxpr(pruned))
    if "donated_invars" in params:
        params = params.replace(donated_invars=tuple(
            d for d, u in zip(params["donated_invars"], used_in) if u))
    new = eqn.replace(invars=tuple(a for a, u in zip(eqn.invars, used_in) if u),
                      outvars=tuple(v for v, u in zip(eqn.outvars, used_outputs) if u),
                      params=params)
    return new, [True] * len(new.invars)


def _dce(jaxpr: Jaxpr, used: tuple[bool, ...], prune: bool) -> tuple[Jaxpr, tuple[bool, ...]]:
    outvars = tuple(a for a, u in zip(jaxpr.outvars, used) if u)
    live: set[Var] = {a for a in outvars if type(a) is Var}
    kept: list[Eqn] = []
    for eqn in reversed(jaxpr.eqns):
        used_out = [v in live for v in eqn.outvars]
        if not any(used_out) and not eqn.effects:
            continue
        rule = dce_rules.get(eqn.primitive)
        if rule is not None:
            new, rule_used = rule(eqn, used_out)
            if new is None:
                continue
            live.update(a for a, u in zip(new.invars, rule_used) if u and type(a) is Var)
            kept.append(new)
        else:
            live.update(a for a in eqn.invars if type(a) is Var)
            kept.append(eqn)
    kept.reverse()
    used_in = tuple(v in live for v in jaxpr.invars)
    invars = tuple(v for v, u in zip(jaxpr.invars, used_in) if u) if prune else jaxpr.invars
    effs: set[Any] = set()
    for e in kept:
        effs.update(e.effects)
    new_jaxpr = jaxpr.replace(invars=invars, eqns=tuple(kept), outvars=outvars,
                              effects=frozenset(effs) if effs else NO_EFFECTS)
    return new_jaxpr, used_in

"""Evaluating a jaxpr by binding each equation's primitive (the frontend interpreter):
outside any trace each operation runs eagerly, inside one it is staged.

A call (``checkpoint``, ``jit``, a custom rule's function) whose body applies a
primitive defined outside plait that has an impl and no lowering cannot be compiled:
run eagerly, its body is evaluated this way instead, as JAX's impls of these calls
evaluate their bodies.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from plait.frontend.core.tracing import current_trace
from plait.ir import primitives as P
from plait.ir.atoms import Atom, Literal, Var
from plait.ir.caches import LRUCache
from plait.ir.jaxpr import Jaxpr
from plait.ir.primitive import Primitive
from plait.lowering.lower import lowering_rules

__all__ = ["eval_jaxpr_bind", "uncompilable_call"]


def eval_jaxpr_bind(jaxpr: Jaxpr, consts: Sequence[Any], args: Sequence[Any]) -> list[Any]:
    """Evaluate ``jaxpr`` by binding each equation's primitive (the frontend interpreter)."""
    env: dict[Var, Any] = dict(zip(jaxpr.constvars, consts, strict=True))
    env.update(zip(jaxpr.invars, args, strict=True))

    def read(a: Atom) -> Any:
        return a if type(a) is Literal else env[a]

    for eqn in jaxpr.eqns:
        # (The primitive's own bind: a user primitive runs its impl.)
        outs = eqn.primitive.bind(*[read(a) for a in eqn.invars], **eqn.params)
        for v, x in zip(eqn.outvars, outs if eqn.primitive.multiple_results else [outs]):
            env[v] = x
    return [read(a) for a in jaxpr.outvars]


_CALLEES: Final = {P.remat_p: "jaxpr", P.jit_p: "jaxpr", P.custom_jvp_call_p: "call_jaxpr",
                   P.custom_vjp_call_p: "call_jaxpr"}
"""The call primitives, by the param holding the function they apply."""


_unlowerable_cache: LRUCache[Jaxpr, bool] = LRUCache("unlowerable calls")


def _unlowerable(jaxpr: Jaxpr) -> bool:
    """Whether ``jaxpr`` (or a call in it) applies a user primitive with no lowering."""
    hit = _unlowerable_cache.get(jaxpr)
    if hit is None:
        hit = _unlowerable_cache[jaxpr] = any(
            (eqn.primitive.open_params and eqn.primitive not in lowering_rules) or (
                eqn.primitive in _CALLEES and _unlowerable(
                    eqn.params[_CALLEES[eqn.primitive]].jaxpr))
            for eqn in jaxpr.eqns)
    return hit


def uncompilable_call(prim: Primitive, params: Any, args: Sequence[Any]) -> list[Any] | None:
    """The results of the call ``prim`` (eagerly, its body evaluated equation by equation)
    if its body holds a user primitive with no lowering; ``None`` for any other equation."""
    callee = _CALLEES.get(prim)
    if callee is None or current_trace() is not None or not _unlowerable(
            params[callee].jaxpr):
        return None
    body = params[callee]
    return eval_jaxpr_bind(body.jaxpr, body.consts, args[len(args) - len(body.jaxpr.invars):])

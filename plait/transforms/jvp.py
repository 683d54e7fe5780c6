"""Forward-mode differentiation as a jaxpr rewrite: ``jvp_jaxpr``.

The rewritten jaxpr takes the primal inputs and one tangent per input marked
nonzero, and returns the primal outputs then the tangents of the outputs.
Each primitive's rule (:data:`jvp_rules`) receives an :class:`Emitter`, the
primal operands and their tangents (symbolic :class:`Zero`\\ s where nothing
flows) and emits the primal and tangent results.  Equations whose operands
all have zero tangents are copied as they are.  Integer and boolean values
have ``float0`` tangents, which are always symbolic zeros.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Final

from plait.ir import dtypes as dt
from plait.ir.atoms import Atom, Literal, Var
from plait.ir.avals import AbstractToken, AbstractValue, ShapedArray, shaped
from plait.ir.caches import LRUCache
from plait.ir.check import check_jaxpr
from plait.ir.config import values as _config
from plait.ir.errors import missing_rule
from plait.ir.jaxpr import Jaxpr
from plait.ir.lists import fill_in
from plait.ir.notes import note_equation
from plait.ir.primitive import Primitive
from plait.transforms.emit import Emitter, Zero

__all__ = ["jvp_jaxpr", "jvp_rules", "JvpRule", "tangent_aval", "zero_tangent", "defjvp",
           "defjvp2", "deflinear", "defjvp_zero", "Tangent", "has_tangent_space"]

Tangent = Atom | Zero
JvpRule = Callable[..., tuple[Sequence[Atom], Sequence[Tangent]]]
"""``rule(e, primals, tangents, **params) -> (primal_outs, tangent_outs)``."""

jvp_rules: dict[Primitive, JvpRule] = {}


_TOKEN_TANGENT: Final = ShapedArray((), dt.float0)


def tangent_aval(aval: AbstractValue) -> ShapedArray:
    """The tangent type: the same for floating and complex values, float0 otherwise (a
    token, which has no tangent space either, has a float0 scalar's)."""
    if type(aval) is AbstractToken:
        return _TOKEN_TANGENT
    aval = shaped(aval)
    if dt.is_inexact(aval.dtype):
        return aval
    return ShapedArray(aval.shape, dt.float0)


def zero_tangent(x: Atom) -> Zero:
    """The symbolic zero tangent of ``x``'s type."""
    return Zero(tangent_aval(x.aval))


def has_tangent_space(aval: AbstractValue) -> bool:
    return isinstance(aval, ShapedArray) and dt.is_inexact(aval.dtype)


def _primal(e: Emitter, prim: Primitive, primals: Sequence[Atom],
            params: dict[str, Any]) -> list[Var]:
    return e.bind(prim, *primals, **params)


def defjvp(prim: Primitive, *partials: Callable[..., Atom] | None) -> None:
    """Define the JVP as a sum of per-operand terms ``partials[i](e, t_i, *primals, **params)``.

    A ``None`` partial means the output does not depend differentiably on that operand.
    """
    def rule(e: Emitter, primals: Sequence[Atom], tangents: Sequence[Tangent],
             **params: Any) -> tuple[list[Var], list[Tangent]]:
        out = _primal(e, prim, primals, params)
        return out, [_sum_terms(e, out[0], [p(e, t, *primals, **params) for p, t in
                                            zip(partials, tangents)
                                            if p is not None and type(t) is not Zero])]
    jvp_rules[prim] = rule


def defjvp2(prim: Primitive, *partials: Callable[..., Atom] | None) -> None:
    """Like :func:`defjvp`, the partials also receiving the primal output:
    ``(e, t, ans, *primals)``."""
    def rule(e: Emitter, primals: Sequence[Atom], tangents: Sequence[Tangent],
             **params: Any) -> tuple[list[Var], list[Tangent]]:
        out = _primal(e, prim, primals, params)
        return out, [_sum_terms(e, out[0], [p(e, t, out[0], *primals, **params) for p, t in
                                            zip(partials, tangents)
                                            if p is not None and type(t) is not Zero])]
    jvp_rules[prim] = rule


def _sum_terms(e: Emitter, ans: Atom, terms: list[Atom]) -> Tangent:
    aval = tangent_aval(ans.aval)
    if not terms or aval.dtype == dt.float0:
        return Zero(aval)
    terms = [e.broadcast_to(t, aval.shape) for t in terms]
    out = terms[0]
    for t in terms[1:]:
        out = e.add_any(out, t)
    return out


def deflinear(prim: Primitive) -> None:
    """The JVP of a primitive linear in all operands: the primitive applied to the tangents."""
    def rule(e: Emitter, primals: Sequence[Atom], tangents: Sequence[Tangent],
             **params: Any) -> tuple[list[Var], list[Tangent]]:
        out = _primal(e, prim, primals, params)
        if all(type(t) is Zero for t in tangents):
            return out, [Zero(tangent_aval(v.aval)) for v in out]
        touts = e.bind(prim, *[e.instantiate(t) for t in tangents], **params)
        return out, list(touts)
    jvp_rules[prim] = rule


def defjvp_zero(prim: Primitive) -> None:
    """The outputs do not depend differentiably on the operands (comparisons, rounding, ...)."""
    def rule(e: Emitter, primals: Sequence[Atom], tangents: Sequence[Tangent],
             **params: Any) -> tuple[list[Var], list[Tangent]]:
        out = _primal(e, prim, primals, params)
        return out, [Zero(tangent_aval(v.aval)) for v in out]
    jvp_rules[prim] = rule


_cache: LRUCache[tuple[Any, ...], tuple[Jaxpr, tuple[bool, ...]]] = LRUCache("jvp")


def jvp_jaxpr(jaxpr: Jaxpr, nonzeros: Sequence[bool],
              instantiate: bool | Sequence[bool] = False) -> tuple[Jaxpr, tuple[bool, ...]]:
    """Forward-mode rewrite of ``jaxpr``.

    Args:
      jaxpr: the program; its constvars stay constvars (with zero tangents).
      nonzeros: per invar, whether a tangent is passed for it.
      instantiate: per output (or for all), whether to return a tangent even
        when it is known to be zero (only for outputs with a tangent space).

    Returns:
      The jaxpr ``(constvars; primals, nonzero tangents) -> (primal outs,
      nonzero tangent outs)`` and, per output, whether its tangent is returned.

    Raises:
      RuleNotImplementedError: a primitive on the differentiated path has no rule.
    """
    inst = tuple(instantiate) if not isinstance(instantiate, bool) else (
        (instantiate,) * len(jaxpr.outvars))
    key = (jaxpr.typed_key(), tuple(nonzeros), inst)
    hit = _cache.get(key)
    if hit is not None:
        return hit
    result = _jvp(jaxpr, tuple(nonzeros), inst)
    if _config.check_jaxprs:
        check_jaxpr(result[0])
    _cache[key] = result
    return result


def jvp_eqns(e: Emitter, jaxpr: Jaxpr, consts: Sequence[Atom], primals: Sequence[Atom],
             tangents: Sequence[Tangent]) -> tuple[list[Atom], list[Tangent]]:
    """Emit the JVP of ``jaxpr`` applied to the given atoms; returns output primals and tangents."""
    penv: dict[Var, Atom] = {}
    tenv: dict[Var, Tangent] = {}

    def read(a: Atom) -> Atom:
        return a if type(a) is Literal else penv[a]

    def read_t(a: Atom) -> Tangent:
        if type(a) is Literal:
            return Zero(tangent_aval(a.aval))
        t = tenv.get(a)
        return t if t is not None else Zero(tangent_aval(a.aval))

    for v, x in zip(jaxpr.constvars, consts, strict=True):
        penv[v] = x
    for v, x, t in zip(jaxpr.invars, primals, tangents, strict=True):
        penv[v] = x
        if type(t) is not Zero:
            tenv[v] = t
    b = e.builder
    outer_source = b.source_info
    for eqn in jaxpr.eqns:
        ps = [read(a) for a in eqn.invars]
        ts = [read_t(a) for a in eqn.invars]
        src = None if eqn.source_info is None else eqn.source_info.transformed("jvp")
        if all(type(t) is Zero for t in ts):
            outs: Sequence[Atom] = b.bind(eqn.primitive, tuple(ps), eqn.params, src)
            touts: Sequence[Tangent] = ()
        else:
            b.source_info = src
            try:
                rule = jvp_rules.get(eqn.primitive)
                if rule is None:
                    raise missing_rule("JVP", eqn.primitive.name, eqn.primitive.open_params)
                outs, touts = rule(e, ps, ts, **eqn.params)
            except Exception as exc:
                note_equation(exc, jaxpr, eqn, "computing the JVP of")
                raise
        for i, v in enumerate(eqn.outvars):
            penv[v] = outs[i]
            if touts and type(touts[i]) is not Zero:
                tenv[v] = touts[i]
    b.source_info = outer_source
    return [read(a) for a in jaxpr.outvars], [read_t(a) for a in jaxpr.outvars]


def _jvp(jaxpr: Jaxpr, nonzeros: tuple[bool, ...],
         inst: tuple[bool, ...]) -> tuple[Jaxpr, tuple[bool, ...]]:
    e = Emitter()
    consts = [Var(v.aval) for v in jaxpr.constvars]
    primals = [Var(v.aval) for v in jaxpr.invars]
    tangent_vars = [Var(tangent_aval(v.aval)) for v, nz in zip(jaxpr.invars, nonzeros) if nz]
    tangents: list[Tangent] = fill_in(nonzeros, tangent_vars, jaxpr.invars, zero_tangent)
    outs, touts = jvp_eqns(e, jaxpr, consts, primals, tangents)
    out_nz = []
    tangent_outs: list[Atom] = []
    for a, t, want in zip(jaxpr.outvars, touts, inst):
        if type(t) is Zero and want and has_tangent_space(a.aval):
            t = e.zeros(t.aval)
        if type(t) is Zero:
            out_nz.append(False)
        else:
            out_nz.append(True)
            tangent_outs.append(t)
    new = e.builder.build(primals + tangent_vars, outs + tangent_outs, consts, jaxpr.debug_info)
    return new.replace(debug_info=None), tuple(out_nz)

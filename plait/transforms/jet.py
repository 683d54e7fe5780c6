"""Taylor-mode differentiation as a jaxpr rewrite: ``jet_jaxpr``.

A value ``x`` with a series ``[x_1, ..., x_K]`` stands for the curve
``x(t) = x + x_1 t + x_2 t^2 + ... + x_K t^K`` (Taylor coefficients).  The
rewritten jaxpr propagates the coefficients of every intermediate value through
the program, one rule per primitive (:data:`jet_rules`), in O(K^2) operations
per primitive where nested forward mode would take O(2^K).

Rules work on Taylor coefficients.  The derivative convention of
``jax.experimental.jet`` (the ``k``-th term is the ``k``-th derivative of the
curve, ``k! x_k``) is applied at the boundary, by :func:`jet_jaxpr`'s
``factorial_scaled``.

A rule receives an :class:`Emitter`, the primal operands and one series per
operand (``None`` where it is zero, as for every integer and boolean operand), and
returns the primal results and their series (``None`` where zero).  At least one
operand has a series.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from plait.ir.atoms import Atom, Literal, Var
from plait.ir.avals import shaped
from plait.ir.caches import LRUCache
from plait.ir.check import check_jaxpr
from plait.ir.config import values as _config
from plait.ir.errors import RuleNotImplementedError
from plait.ir.jaxpr import Jaxpr
from plait.ir.notes import note_equation
from plait.ir.primitive import Primitive
from plait.transforms.emit import Emitter
from plait.transforms.jvp import has_tangent_space

__all__ = ["jet_jaxpr", "jet_eqns", "jet_rules", "JetRule", "Series", "defjet_zero",
           "defjet_linear", "defjet_bilinear", "defjet_composite", "jet_composite",
           "sum_terms", "series_order", "full_series", "JetResult"]

Series = list[Atom]
"""The Taylor coefficients ``[x_1, ..., x_K]`` of one value (its primal is ``x_0``)."""

JetResult = tuple[list[Atom], list[Series | None]]
"""A rule's result: the primal outputs and their series (``None`` where zero)."""

JetRule = Callable[..., tuple[Sequence[Atom], Sequence[Series | None]]]
"""``rule(e, primals, series, **params) -> (primal_outs, series_outs)``; a series is
``None`` where it is zero."""

jet_rules: dict[Primitive, JetRule] = {}


def defjet_zero(prim: Primitive) -> None:
    """The outputs are locally constant in the operands (comparisons, rounding, ...)."""
    def rule(e: Emitter, primals: Sequence[Atom], series: Sequence[Series | None],
             **params: Any) -> tuple[list[Var], list[Series | None]]:
        outs = e.bind(prim, *primals, **params)
        return outs, [None] * len(outs)
    jet_rules[prim] = rule


def series_order(series: Sequence[Series | None]) -> int:
    """The number of terms of the series among ``series`` (0 when there are none)."""
    return next((len(s) for s in series if s is not None), 0)


def sum_terms(e: Emitter, terms: Sequence[Atom]) -> Atom:
    """``terms[0] + terms[1] + ...`` (at least one term)."""
    out = terms[0]
    for t in terms[1:]:
        out = e.add(out, t)
    return out


def full_series(e: Emitter, x: Atom, s: Series | None, order: int) -> Series:
    """``x``'s series, zeros of its type when it has none."""
    return list(s) if s is not None else [e.zeros(shaped(x.aval))] * order


def defjet_linear(prim: Primitive) -> None:
    """The primitive is linear in all its operands: it applies to every coefficient."""
    def rule(e: Emitter, primals: Sequence[Atom], series: Sequence[Series | None],
             **params: Any) -> tuple[list[Var], list[Series | None]]:
        outs = e.bind(prim, *primals, **params)
        order = series_order(series)
        full = [full_series(e, x, s, order) for x, s in zip(primals, series)]
        terms = [e.bind(prim, *[f[k] for f in full], **params) for k in range(order)]
        return outs, [[t[j] for t in terms] for j in range(len(outs))]
    jet_rules[prim] = rule


def defjet_bilinear(prim: Primitive) -> None:
    """The primitive is bilinear in its two operands (``mul``, ``dot_general``, ``conv``):
    the coefficients of a product are the Cauchy products of the operands'."""
    def rule(e: Emitter, primals: Sequence[Atom], series: Sequence[Series | None],
             **params: Any) -> tuple[list[Var], list[Series | None]]:
        x, y = primals
        order = series_order(series)
        none: list[Atom | None] = [None] * order
        u: list[Atom | None] = [x, *(series[0] or none)]
        w: list[Atom | None] = [y, *(series[1] or none)]
        out = e.bind1(prim, x, y, **params)
        terms: Series = []
        for k in range(1, len(u)):
            # (a zero series contributes no products)
            terms.append(sum_terms(e, [e.bind1(prim, a, b, **params) for a, b in
                                       ((u[j], w[k - j]) for j in range(k + 1))
                                       if a is not None and b is not None]))
        return [out], [terms]
    jet_rules[prim] = rule


Composite = Callable[..., Atom]
"""``fn(e, *operands, **params) -> result``: a primitive written with other primitives."""


def jet_composite(e: Emitter, fn: Composite, primals: Sequence[Atom],
                  series: Sequence[Series | None], **params: Any) -> tuple[Atom, Series]:
    """The primal and series of ``fn(*primals)``, propagated through the primitives
    ``fn`` emits (their own rules)."""
    sub = Emitter()
    args = [Var(shaped(x.aval)) for x in primals]
    out = fn(sub, *args, **params)
    jaxpr = sub.builder.build(args, [out])
    outs, souts = jet_eqns(e, jaxpr, (), primals, series)
    return outs[0], full_series(e, outs[0], souts[0], series_order(series))


def defjet_composite(prim: Primitive, fn: Composite) -> None:
    """The series of ``prim`` are those of its expression ``fn`` in other primitives (its
    primal result is its own, not the expression's, which may round differently)."""
    def rule(e: Emitter, primals: Sequence[Atom], series: Sequence[Series | None],
             **params: Any) -> tuple[list[Atom], list[Series | None]]:
        _, s = jet_composite(e, fn, primals, series, **params)
        return [e.bind1(prim, *primals, **params)], [s]
    jet_rules[prim] = rule


def jet_eqns(e: Emitter, jaxpr: Jaxpr, consts: Sequence[Atom], primals: Sequence[Atom],
             series: Sequence[Series | None]) -> tuple[list[Atom], list[Series | None]]:
    """Emit the Taylor propagation of ``jaxpr`` applied to the given atoms; returns the
    output primals and series (``None``: zero)."""
    penv: dict[Var, Atom] = dict(zip(jaxpr.constvars, consts, strict=True))
    senv: dict[Var, Series] = {}
    def read(a: Atom) -> Atom:
        return a if type(a) is Literal else penv[a]

    def read_s(a: Atom) -> Series | None:
        return None if type(a) is Literal else senv.get(a)

    for v, x, s in zip(jaxpr.invars, primals, series, strict=True):
        penv[v] = x
        if s and has_tangent_space(v.aval):  # (no terms at order 0: nothing to propagate)
            senv[v] = s
    b = e.builder
    outer_source = b.source_info
    for eqn in jaxpr.eqns:
        ps = [read(a) for a in eqn.invars]
        ss = [read_s(a) for a in eqn.invars]
        souts: Sequence[Series | None] = ()
        if all(s is None for s in ss):
            outs: Sequence[Atom] = b.bind(eqn.primitive, tuple(ps), eqn.params, eqn.source_info)
        else:
            b.source_info = eqn.source_info
            try:
                rule = jet_rules.get(eqn.primitive)
                if rule is None:
                    raise RuleNotImplementedError("Jet", eqn.primitive.name)
                outs, souts = rule(e, ps, ss, **eqn.params)
            except Exception as exc:
                note_equation(exc, jaxpr, eqn, "computing the Taylor series of")
                raise
        for i, v in enumerate(eqn.outvars):
            penv[v] = outs[i]
            s_out = souts[i] if souts else None
            if s_out and has_tangent_space(v.aval):
                senv[v] = list(s_out)
    b.source_info = outer_source
    return [read(a) for a in jaxpr.outvars], [read_s(a) for a in jaxpr.outvars]


_cache: LRUCache[tuple[Any, ...], Jaxpr] = LRUCache("jet")


def jet_jaxpr(jaxpr: Jaxpr, order: int, nonzeros: Sequence[bool],
              factorial_scaled: bool = False) -> Jaxpr:
    """Taylor-mode rewrite of ``jaxpr`` to ``order`` terms.

    Args:
      jaxpr: the program; its constvars stay constvars (with zero series).
      order: the number of terms of every series.
      nonzeros: per invar, whether its series is passed (only floating and complex
        invars may have one).
      factorial_scaled: whether the terms passed and returned are derivatives of the
        curve (``k! x_k``, ``jax.experimental.jet``'s default) rather than Taylor
        coefficients.

    Returns:
      The jaxpr ``(constvars; primals, the order terms of each nonzero series) ->
      (primal outs, the order terms of each output's series)``; an output whose series
      is zero gets zeros of its own type.

    Raises:
      RuleNotImplementedError: a primitive on the differentiated path has no rule
        ("Jet rule for 'igamma' not implemented").
    """
    key = (jaxpr.typed_key(), order, tuple(nonzeros), factorial_scaled)
    hit = _cache.get(key)
    if hit is not None:
        return hit
    result = _jet(jaxpr, order, tuple(nonzeros), factorial_scaled)
    if _config.check_jaxprs:
        check_jaxpr(result)
    _cache[key] = result
    return result


def _jet(jaxpr: Jaxpr, order: int, nonzeros: tuple[bool, ...],
         factorial_scaled: bool) -> Jaxpr:
    e = Emitter()
    consts = [Var(v.aval) for v in jaxpr.constvars]
    primals = [Var(v.aval) for v in jaxpr.invars]
    term_vars: list[Var] = []
    series: list[Series | None] = []
    for v, nz in zip(jaxpr.invars, nonzeros, strict=True):
        if not nz:
            series.append(None)
            continue
        if not has_tangent_space(v.aval):
            raise TypeError(f"jet: expected a floating or complex input to carry a series, "
                            f"but got {v.aval.str_short()}")
        terms = [Var(v.aval) for _ in range(order)]
        term_vars.extend(terms)
        series.append([_scale(e, t, k, True) for k, t in enumerate(terms, 1)]
                      if factorial_scaled else list(terms))
    outs, souts = jet_eqns(e, jaxpr, consts, primals, series)
    out_terms: list[Atom] = []
    for a, s in zip(outs, souts, strict=True):
        for k in range(1, order + 1):
            t = s[k - 1] if s is not None else e.zeros(shaped(a.aval))
            out_terms.append(_scale(e, t, k, False) if factorial_scaled and s is not None else t)
    new = e.builder.build(primals + term_vars, outs + out_terms, consts, jaxpr.debug_info)
    return new.replace(debug_info=None)


def _scale(e: Emitter, t: Atom, k: int, down: bool) -> Atom:
    """``t / k!`` (``down``) or ``t * k!``: between derivatives and Taylor coefficients."""
    if k < 2:
        return t
    f = e.scalar_like(t, math.factorial(k))
    return e.div(t, f) if down else e.mul(t, f)

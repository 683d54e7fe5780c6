"""The printer: jaxprs in the text syntax of ``jax.make_jaxpr`` (JAX 0.10.2).

``{ lambda c:f32[3]; a:f32[3] b:f32[]. let d:f32[3] = mul a b in (d,) }``

Variables are named ``a``, ``b``, ... in order of first appearance, one name
space across nested jaxprs.  Unused results of top-level equations print as
``_``; a callee's binders are named after the call's operands and results
(so a callee result the caller drops is ``_`` too, but only one per callee:
JAX's text would be ambiguous with two, so plait names the second afresh).

A parameter is printed unless its declaration says the binder types
determine it, or it equals its default and is declared to be elided then.
Nested jaxprs used more than once, or longer than ten equations, are printed
once up front as ``let name = { ... } in``, as JAX does; they are found by
visiting params in declaration order, which should follow JAX's bind order.
"""

from __future__ import annotations

from collections import Counter, deque
from collections.abc import Iterator, Sequence
from typing import Any

from plait.ir import pretty as pp
from plait.ir.atoms import Atom, Var, literal_text
from plait.ir.avals import AbstractValue
from plait.ir.jaxpr import ClosedJaxpr, Eqn, Jaxpr
from plait.ir.params import ParamDef

__all__ = ["pp_jaxpr", "pp_eqn_text", "pp_eqn_in", "var_name"]


def var_name(n: int) -> str:
    """The ``n``-th variable name: ``a`` ... ``z``, ``ba``, ``bb``, ..."""
    s = ""
    while not s or n:
        n, i = divmod(n, 26)
        s = chr(97 + i) + s
    return s


class _Context:
    """Names of variables and shared jaxprs, shared by a whole printout."""

    def __init__(self, names: dict[Var, str] | None = None) -> None:
        self.names: dict[Var, str] = dict(names or {})
        self.shared: dict[Jaxpr, str] = {}
        self.shared_names: set[str] = set()
        self.underscore: dict[int, Var] = {}
        self._next = 0
        self.source_info = False

    def name(self, v: Var) -> str:
        n = self.names.get(v)
        if n is None:
            while True:
                n = var_name(self._next)
                self._next += 1
                if n not in self.shared_names:
                    break
            self.names[v] = n
        return n

    def suggest(self, callee: Jaxpr, for_vars: Sequence[Atom], like_vars: Sequence[Atom]) -> None:
        """Name ``for_vars`` of ``callee`` after ``like_vars`` (the call's operands or results).

        A callee result named after an unused result of the call is ``_``, as
        in JAX, but only one variable per callee: a second ``_`` would make
        the references to them ambiguous, so it gets a fresh name instead.
        """
        if len(for_vars) != len(like_vars):
            return
        used: set[Var] = set()
        for f, like in zip(for_vars, like_vars):
            if (type(like) is Var and like not in used and type(f) is Var
                    and f not in self.names):
                used.add(like)
                name = self.name(like)
                if name != "_" or self.underscore.setdefault(id(callee), f) is f:
                    self.names[f] = name


def _dropvars(jaxpr: Jaxpr) -> dict[Var, str]:
    names: dict[Var, str] = {}
    used = {a for a in jaxpr.outvars if type(a) is Var}
    for eqn in reversed(jaxpr.eqns):
        for v in eqn.outvars:
            if v not in used:
                names[v] = "_"
        used.update(a for a in eqn.invars if type(a) is Var)
    return names


def _atom(a: Atom, ctx: _Context) -> str:
    return ctx.name(a) if type(a) is Var else literal_text(a)


def _vars(vs: Sequence[Atom], ctx: _Context, *, sep: str = "", types: bool = False) -> pp.Doc:
    if types:
        docs = [pp.text(f"{_atom(v, ctx)}:{v.aval.str_short()}") for v in vs]
    else:
        docs = [pp.text(_atom(v, ctx)) for v in vs]
    return pp.nest(2, pp.group(pp.join(pp.text(sep) + pp.group(pp.brk()), docs)))


def _is_jaxpr(v: Any) -> bool:
    return isinstance(v, Jaxpr | ClosedJaxpr)


def _value(v: Any, d: ParamDef | None, ctx: _Context) -> pp.Doc:
    if _is_jaxpr(v):
        return _jaxpr(v.jaxpr if isinstance(v, ClosedJaxpr) else v, ctx)
    if type(v) is tuple and all(_is_jaxpr(j) for j in v):
        inner = [_jaxpr(j.jaxpr if isinstance(j, ClosedJaxpr) else j, ctx) for j in v]
        return pp.group(pp.concat([
            pp.nest(2, pp.concat([pp.text("("), pp.brk(""), pp.join(pp.brk(), inner)])),
            pp.brk(""), pp.text(")")]))
    return pp.text(d.encode(v) if d is not None else str(v))


def _shown_params(eqn: Eqn) -> list[str]:
    prim = eqn.primitive
    defs = prim.params_by_name
    shown = []
    avals: tuple[list[AbstractValue], list[AbstractValue]] | None = None
    for name, value in eqn.params.items():
        d = defs.get(name)
        if d is not None and d.show != "always":
            if d.show == "never":
                continue
            if avals is None:
                avals = [a.aval for a in eqn.invars], [v.aval for v in eqn.outvars]
            if value == d.default_for(*avals):
                continue
        shown.append(name)
    first = [n for n in prim.print_first if n in shown]
    return first + sorted(n for n in shown if n not in first)


def _eqn(eqn: Eqn, ctx: _Context) -> pp.Doc:
    prim = eqn.primitive
    if prim.call_like:
        callee = eqn.params.get("jaxpr")
        if isinstance(callee, ClosedJaxpr) and callee.jaxpr not in ctx.shared:
            ctx.suggest(callee.jaxpr, callee.jaxpr.invars, eqn.invars)
            ctx.suggest(callee.jaxpr, callee.jaxpr.outvars, eqn.outvars)
    lhs = _vars(eqn.outvars, ctx, types=True)
    defs = prim.params_by_name
    kvs = [pp.text(f"{n}=") + _value(eqn.params[n], defs.get(n), ctx) for n in _shown_params(eqn)]
    rhs = [pp.text(prim.name)]
    if kvs:
        rhs.append(pp.group(pp.concat([
            pp.nest(2, pp.concat([pp.text("["), pp.brk(""), pp.join(pp.brk(), kvs)])),
            pp.brk(""), pp.text("]")])))
    rhs.append(pp.text(" ") + _vars(eqn.invars, ctx))
    if ctx.source_info and eqn.source_info is not None:
        rhs.append(pp.text(f"  # {eqn.source_info}"))
    if eqn.outvars:
        return pp.concat([lhs, pp.text(" = "), *rhs])
    return pp.concat(rhs)


def _skeleton(jaxpr: Jaxpr, ctx: _Context) -> pp.Doc:
    constvars = _vars(jaxpr.constvars, ctx, types=True)
    invars = _vars(jaxpr.invars, ctx, types=True)
    eqns = pp.join(pp.brk("; "), [_eqn(e, ctx) for e in jaxpr.eqns])
    outs = pp.concat([pp.text("("), _vars(jaxpr.outvars, ctx, sep=","),
                      pp.text(",)" if len(jaxpr.outvars) == 1 else ")")])
    return pp.group(pp.nest(2, pp.concat([
        pp.text("{ "), pp.text("lambda "), constvars, pp.text("; "), invars,
        pp.text(". "), pp.text("let"), pp.nest(2, pp.brk() + eqns), pp.brk(),
        pp.text("in "), outs])) + pp.text(" }"))


def _jaxpr(jaxpr: Jaxpr, ctx: _Context) -> pp.Doc:
    name = ctx.shared.get(jaxpr)
    if name is not None:
        return pp.text(name)
    return _skeleton(jaxpr, ctx)


def _nested(eqn: Eqn) -> Iterator[Jaxpr]:
    """The jaxprs in ``eqn``'s params, in declaration order (JAX visits them in
    bind order, which decides the order and names of shared jaxprs)."""
    names = [d.name for d in eqn.primitive.param_defs]
    for name in names + [n for n in eqn.params if n not in eqn.primitive.params_by_name]:
        v = eqn.params.get(name)
        for x in v if type(v) is tuple else (v,):
            if isinstance(x, ClosedJaxpr | Jaxpr):
                yield x.jaxpr if isinstance(x, ClosedJaxpr) else x


def _find_shared(top: Jaxpr, ctx: _Context) -> list[tuple[str, Jaxpr]]:
    names: dict[Jaxpr, str] = {}
    counts: Counter[Jaxpr] = Counter()
    queue = deque([top])
    while queue:
        j = queue.popleft()
        counts[j] += 1
        if j is not top and len(j.eqns) > 10:
            counts[j] += 1
        for eqn in j.eqns:
            label = eqn.params.get("name")
            if not isinstance(label, str):
                queue.extend(_nested(eqn))
                continue
            label = label.strip("<>")
            for sub in _nested(eqn):
                queue.append(sub)
                names.setdefault(sub, label)
    name_counts: Counter[str] = Counter()
    shared = []
    for j, c in counts.items():
        if c == 1 or j is top:
            continue
        name = names.get(j, "jaxpr")
        if (count := name_counts[name]) > 0:
            name_counts[name] += 1
            name += str(count)
        name_counts[name] += 1
        ctx.shared_names.add(name)
        ctx.shared[j] = name
        shared.append((name, j))
    return shared


def _toplevel(jaxpr: Jaxpr, source_info: bool = False) -> tuple[pp.Doc, _Context]:
    ctx = _Context(_dropvars(jaxpr))
    ctx.source_info = source_info
    docs = []
    for name, j in _find_shared(jaxpr, ctx):
        docs.append(pp.concat([pp.text("let "), pp.text(name), pp.text(" = "),
                               _skeleton(j, ctx), pp.text(" in"), pp.brk()]))
    docs.append(_jaxpr(jaxpr, ctx))
    return pp.concat(docs), ctx


def pp_jaxpr(jaxpr: Jaxpr, *, width: int = 80, source_info: bool = False) -> str:
    """The text of ``jaxpr``, laid out as JAX lays it out for ``width`` columns."""
    doc, _ = _toplevel(jaxpr, source_info)
    return pp.format_doc(doc, width)


def pp_eqn_in(jaxpr: Jaxpr, eqn: Eqn, *, width: int = 80) -> str:
    """The text of ``eqn`` with variables named as they are in ``print(jaxpr)``."""
    _, ctx = _toplevel(jaxpr)
    return pp.format_doc(_eqn(eqn, ctx), width)


def pp_eqn_text(eqn: Eqn, *, width: int = 80) -> str:
    """The text of a lone equation (variables named in order of appearance)."""
    return pp.format_doc(_eqn(eqn, _Context()), width)

"""Transformation rules of custom-derivative calls and ``remat2``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from plait.ir import dtypes as dt
from plait.ir import primitives as P
from plait.ir.atoms import Atom, Var
from plait.ir.avals import shaped
from plait.ir.builder import Builder
from plait.ir.caches import LRUCache
from plait.ir.errors import JaxprTypeError, TransformError
from plait.ir.jaxpr import ClosedJaxpr, Eqn, Jaxpr
from plait.ir.lists import fill_in, merge_lists, partition_list
from plait.ir.primitives import RematPolicy
from plait.ir.primitives.custom import (
    defer_rule_error,
    deferred_rule_error,
    nonlinear_bwd_error,
)
from plait.transforms.dce import dce_call, dce_jaxpr, dce_rules
from plait.transforms.emit import Emitter, Zero
from plait.transforms.inline import inline_jaxpr
from plait.transforms.jvp import Tangent, jvp_eqns, jvp_jaxpr, jvp_rules, tangent_aval, zero_tangent
from plait.transforms.partial_eval import partial_eval_jaxpr, pe_rules
from plait.transforms.transpose import Cotangent, UndefPrimal, transpose_jaxpr, transpose_rules
from plait.transforms.vmap import (
    Dim,
    batched_aval,
    batched_outputs,
    batching_rules,
    bdim_to_front,
    move_axis,
    vmap_jaxpr,
)


def _check_const_tangents(name: str, what: str, tangents: Sequence[Tangent], n: int) -> None:
    if any(type(t) is not Zero for t in tangents[:n]):
        raise TransformError(
            f"Detected differentiation of a {what} function ({name}) with respect to a "
            f"closed-over value. That isn't supported because the {what} rule only specifies how "
            "to differentiate the function with respect to its explicit arguments; pass the "
            "value as an argument instead.")


def _inexact(a: Atom) -> bool:
    return dt.is_inexact(shaped(a.aval).dtype)


def _custom_jvp_call_jvp(e: Emitter, primals: Sequence[Atom], tangents: Sequence[Tangent], *,
                         name: str, call_jaxpr: ClosedJaxpr, jvp_jaxpr: ClosedJaxpr,
                         num_consts: int, symbolic_zeros: bool,
                         rule_error: str | None) -> tuple[list[Atom], list[Tangent]]:
    if rule_error is not None:
        raise deferred_rule_error(rule_error)
    _check_const_tangents(name, "custom_jvp", tangents, num_consts)
    ts = [e.instantiate(t) for p, t in zip(primals[num_consts:], tangents[num_consts:])
          if _inexact(p)]
    outs = inline_jaxpr(e, jvp_jaxpr.jaxpr, (), [*primals, *ts])
    n_out = len(call_jaxpr.jaxpr.outvars)
    out_avals = call_jaxpr.jaxpr.outvars
    touts: list[Tangent] = fill_in([_inexact(a) for a in out_avals], outs[n_out:], out_avals,
                                   zero_tangent)
    return outs[:n_out], touts


jvp_rules[P.custom_jvp_call_p] = _custom_jvp_call_jvp


def _custom_jvp_call_transpose(e: Emitter, cts: Sequence[Atom | Zero], *ins: Any, name: str,
                               call_jaxpr: ClosedJaxpr, jvp_jaxpr: ClosedJaxpr,
                               num_consts: int, symbolic_zeros: bool,
                               rule_error: str | None) -> Sequence[Cotangent]:
    # A custom_jvp function applied to linear values (a JVP rule may apply it to
    # tangents, as optimistix's does) is transposed through its definition, as in JAX:
    # its rule is for differentiating, not transposing.
    return _transposed_inline(e, call_jaxpr.jaxpr, cts, ins)


def _transposed_inline(e: Emitter, jaxpr: Jaxpr, cts: Sequence[Atom | Zero],
                       ins: Sequence[Any]) -> Sequence[Cotangent]:
    """The transpose of a call of ``jaxpr`` with respect to its undefined inputs, inlined."""
    linear = [type(x) is UndefPrimal for x in ins]
    t = transpose_jaxpr(jaxpr, linear)
    nonlin = [x for x in ins if type(x) is not UndefPrimal]
    outs = inline_jaxpr(e, t, (), [*nonlin, *[e.instantiate(c) for c in cts]])
    return merge_lists(linear, [None] * linear.count(False), outs)


transpose_rules[P.custom_jvp_call_p] = _custom_jvp_call_transpose

_fwd_lin_cache: LRUCache[Any, tuple[ClosedJaxpr | None]] = LRUCache("custom_vjp forward")
"""Keyed by (bwd, number of residuals); the value in a 1-tuple, as ``None`` is a result."""


def _fwd_lin(bwd: ClosedJaxpr, num_res: int) -> ClosedJaxpr | None:
    """The transpose of ``bwd`` in its cotangents, or ``None`` if it is not linear in them."""
    def compute() -> tuple[ClosedJaxpr | None]:
        n_ct = len(bwd.jaxpr.invars) - num_res
        try:
            return (ClosedJaxpr(transpose_jaxpr(bwd.jaxpr, [False] * num_res + [True] * n_ct)),)
        except (JaxprTypeError, NotImplementedError, TransformError):
            # (A bwd that loops a number of times known only at run time, as equinox's
            # checkpointed while loop does, cannot be transposed: no forward mode then.)
            return (None,)
    return _fwd_lin_cache.get_or_compute((bwd.jaxpr.typed_key(), num_res), compute)[0]


def _custom_vjp_call_jvp(e: Emitter, primals: Sequence[Atom], tangents: Sequence[Tangent], *,
                         name: str, call_jaxpr: ClosedJaxpr, fwd_jaxpr: ClosedJaxpr,
                         bwd_jaxpr: ClosedJaxpr, num_consts: int, symbolic_zeros: bool,
                         rule_error: str | None) -> tuple[list[Atom], list[Tangent]]:
    if rule_error is not None:
        raise deferred_rule_error(rule_error)
    _check_const_tangents(name, "custom_vjp", tangents, num_consts)
    outs_res = inline_jaxpr(e, fwd_jaxpr.jaxpr, (), list(primals))
    n_out = len(call_jaxpr.jaxpr.outvars)
    outs, res = outs_res[:n_out], outs_res[n_out:]
    n_bconsts = len(bwd_jaxpr.jaxpr.invars) - len(res) - sum(
        _inexact(a) for a in call_jaxpr.jaxpr.outvars)
    bconsts = list(primals[num_consts - n_bconsts:num_consts])
    ts = [e.instantiate(t) for p, t in zip(primals[num_consts:], tangents[num_consts:])
          if _inexact(p)]
    out_inexact = [_inexact(a) for a in call_jaxpr.jaxpr.outvars]
    if all(type(t) is Zero for t in tangents[num_consts:]):
        return outs, [Zero(tangent_aval(a.aval)) for a in call_jaxpr.jaxpr.outvars]
    num_res = n_bconsts + len(res)
    t_outs = e.bind(P.custom_lin_p, *bconsts, *res, *ts, name=name, num_res=num_res,
                    bwd_jaxpr=bwd_jaxpr, fwd_lin_jaxpr=_fwd_lin(bwd_jaxpr, num_res))
    touts: list[Tangent] = fill_in(out_inexact, t_outs, call_jaxpr.jaxpr.outvars, zero_tangent)
    return outs, touts


jvp_rules[P.custom_vjp_call_p] = _custom_vjp_call_jvp


def _custom_lin_transpose(e: Emitter, cts: Sequence[Atom | Zero], *ins: Any, name: str,
                          num_res: int, bwd_jaxpr: ClosedJaxpr,
                          fwd_lin_jaxpr: ClosedJaxpr | None) -> Sequence[Cotangent]:
    res = ins[:num_res]
    if any(type(r) is UndefPrimal for r in res):
        raise JaxprTypeError(f"custom_lin of {name}: residuals must be known when transposing")
    cts_in = inline_jaxpr(e, bwd_jaxpr.jaxpr, (), [*res, *[e.instantiate(c) for c in cts]])
    return [None] * num_res + list(cts_in)


transpose_rules[P.custom_lin_p] = _custom_lin_transpose


def _custom_lin_jvp(e: Emitter, primals: Sequence[Atom], tangents: Sequence[Tangent], *,
                    name: str, num_res: int, bwd_jaxpr: ClosedJaxpr,
                    fwd_lin_jaxpr: ClosedJaxpr | None) -> tuple[list[Atom], list[Tangent]]:
    if fwd_lin_jaxpr is None:
        raise nonlinear_bwd_error(name)
    outs = e.bind(P.custom_lin_p, *primals, name=name, num_res=num_res, bwd_jaxpr=bwd_jaxpr,
                  fwd_lin_jaxpr=fwd_lin_jaxpr)
    _, touts = jvp_eqns(e, fwd_lin_jaxpr.jaxpr, (), list(primals), list(tangents))
    return list(outs), touts


jvp_rules[P.custom_lin_p] = _custom_lin_jvp


def _all_front(e: Emitter, size: int, vals: Sequence[Atom], dims: Sequence[Dim]) -> list[Atom]:
    return [bdim_to_front(e, x, d, size) for x, d in zip(vals, dims)]


def _front(e: Emitter, vals: Sequence[Atom], dims: Sequence[Dim]) -> tuple[list[Atom],
                                                                            list[bool]]:
    """The batched values with their batch dimension first (the others as they are), and
    which are batched."""
    return ([x if d is None else move_axis(e, x, d, 0) for x, d in zip(vals, dims)],
            [d is not None for d in dims])


def _dims(batched: Sequence[bool]) -> list[Dim]:
    return [0 if b else None for b in batched]


def _vmapped(j: ClosedJaxpr, size: int, in_b: Sequence[bool], out_b: Sequence[bool]
             ) -> ClosedJaxpr:
    return ClosedJaxpr(vmap_jaxpr(j.jaxpr, size, _dims(in_b), _dims(out_b)))


# The calls batch only what depends on batched operands, as JAX's rules do: a library's
# rule may refuse to batch a value (equinox's nonbatchable loop counters).

def _custom_jvp_call_vmap(e: Emitter, size: int, vals: list[Atom], dims: list[Dim], *,
                          name: str, call_jaxpr: ClosedJaxpr, jvp_jaxpr: ClosedJaxpr,
                          num_consts: int, symbolic_zeros: bool,
                          rule_error: str | None) -> tuple[list[Var], list[Dim]]:
    args, in_b = _front(e, vals, dims)
    # A tangent is batched as its primal (jvp_jaxpr takes the inexact inputs' tangents).
    t_b = [b for v, b in zip(vals[num_consts:], in_b[num_consts:]) if _inexact(v)]
    outvars = call_jaxpr.jaxpr.outvars
    n_out = len(outvars)
    jvp_b = batched_outputs(jvp_jaxpr.jaxpr, in_b + t_b)
    tangent_b = iter(jvp_b[n_out:])
    out_b = [c or p or (next(tangent_b) if _inexact(v) else False)
             for c, p, v in zip(batched_outputs(call_jaxpr.jaxpr, in_b), jvp_b[:n_out], outvars)]
    call = _vmapped(call_jaxpr, size, in_b, out_b)
    jvp_v = _vmapped(jvp_jaxpr, size, in_b + t_b,
                     out_b + [b for b, v in zip(out_b, outvars) if _inexact(v)])
    outs = e.bind(P.custom_jvp_call_p, *args, name=name, call_jaxpr=call, jvp_jaxpr=jvp_v,
                  num_consts=num_consts, symbolic_zeros=symbolic_zeros, rule_error=rule_error)
    return outs, _dims(out_b)


batching_rules[P.custom_jvp_call_p] = _custom_jvp_call_vmap


def _summed_bwd(bwd: ClosedJaxpr, size: int, in_b: Sequence[bool], want: Sequence[bool]
                ) -> ClosedJaxpr:
    """``bwd`` batched by ``in_b``, its outputs batched as ``want`` says: a cotangent that
    depends on batched values but belongs to an unbatched input is summed over the batch
    (every element of the batch used that input)."""
    dep = batched_outputs(bwd.jaxpr, in_b)
    batched = vmap_jaxpr(bwd.jaxpr, size, _dims(in_b), _dims([d or w for d, w in zip(dep, want)]))
    if all(w or not d for d, w in zip(dep, want)):
        return ClosedJaxpr(batched)
    e = Emitter()
    invars = [Var(v.aval) for v in batched.invars]
    outs = inline_jaxpr(e, batched, [], invars)
    outs = [e.reduce_sum(o, (0,)) if d and not w else o for o, d, w in zip(outs, dep, want)]
    return ClosedJaxpr(e.builder.build(invars, outs))


def _placeholder_bwd(bwd: ClosedJaxpr, size: int, in_b: Sequence[bool], want: Sequence[bool]
                     ) -> ClosedJaxpr:
    """A bwd of the batched types that gives zeros: it stands where a ``rule_error``
    param is set, which is raised before any bwd runs."""
    e = Emitter()
    invars = [Var(batched_aval(v.aval, 0 if b else None, size))
              for v, b in zip(bwd.jaxpr.invars, in_b)]
    outs = [e.zeros(batched_aval(v.aval, 0 if w else None, size))
            for v, w in zip(bwd.jaxpr.outvars, want)]
    return ClosedJaxpr(e.builder.build(invars, outs))


def _custom_vjp_call_vmap(e: Emitter, size: int, vals: list[Atom], dims: list[Dim], *,
                          name: str, call_jaxpr: ClosedJaxpr, fwd_jaxpr: ClosedJaxpr,
                          bwd_jaxpr: ClosedJaxpr, num_consts: int, symbolic_zeros: bool,
                          rule_error: str | None) -> tuple[list[Var], list[Dim]]:
    args, in_b = _front(e, vals, dims)
    outvars = call_jaxpr.jaxpr.outvars
    n_out = len(outvars)
    fwd_b = batched_outputs(fwd_jaxpr.jaxpr, in_b)
    out_b = [c or f for c, f in zip(batched_outputs(call_jaxpr.jaxpr, in_b), fwd_b[:n_out])]
    res_b = fwd_b[n_out:]
    call = _vmapped(call_jaxpr, size, in_b, out_b)
    fwd = _vmapped(fwd_jaxpr, size, in_b, out_b + res_b)
    # bwd takes bwd's consts (the last of the call's consts), the residuals and the
    # cotangents of the inexact outputs, and gives those of the inexact inputs.
    ct_b = [b for b, v in zip(out_b, outvars) if _inexact(v)]
    n_bconsts = len(bwd_jaxpr.jaxpr.invars) - len(res_b) - len(ct_b)
    bconst_b = in_b[num_consts - n_bconsts:num_consts]
    want = [b for v, b in zip(vals[num_consts:], in_b[num_consts:]) if _inexact(v)]
    bwd_in_b = bconst_b + res_b + ct_b
    try:
        bwd = _summed_bwd(bwd_jaxpr, size, bwd_in_b, want)
    except Exception as exc:  # (a library's batching rule refusing)
        # JAX batches bwd only when the batched call is differentiated; plait batches it
        # now, so a refusal (equinox's nonbatchable loop counters, batched here by
        # dependence) is deferred to differentiation, as a rule's own error is.
        rule_error = rule_error or defer_rule_error(exc, f"batching the custom_vjp bwd of {name}")
        bwd = _placeholder_bwd(bwd_jaxpr, size, bwd_in_b, want)
    outs = e.bind(P.custom_vjp_call_p, *args, name=name, call_jaxpr=call, fwd_jaxpr=fwd,
                  bwd_jaxpr=bwd, num_consts=num_consts, symbolic_zeros=symbolic_zeros,
                  rule_error=rule_error)
    return outs, _dims(out_b)


batching_rules[P.custom_vjp_call_p] = _custom_vjp_call_vmap


def _custom_lin_vmap(e: Emitter, size: int, vals: list[Atom], dims: list[Dim], *, name: str,
                     num_res: int, bwd_jaxpr: ClosedJaxpr,
                     fwd_lin_jaxpr: ClosedJaxpr | None) -> tuple[list[Var], list[Dim]]:
    args = _all_front(e, size, vals, dims)
    bwd = ClosedJaxpr(vmap_jaxpr(bwd_jaxpr.jaxpr, size, [0] * len(bwd_jaxpr.jaxpr.invars),
                                 [0] * len(bwd_jaxpr.jaxpr.outvars)))
    fl = None if fwd_lin_jaxpr is None else ClosedJaxpr(vmap_jaxpr(
        fwd_lin_jaxpr.jaxpr, size, [0] * len(fwd_lin_jaxpr.jaxpr.invars),
        [0] * len(fwd_lin_jaxpr.jaxpr.outvars)))
    outs = e.bind(P.custom_lin_p, *args, name=name, num_res=num_res, bwd_jaxpr=bwd,
                  fwd_lin_jaxpr=fl)
    return outs, [0] * len(outs)


batching_rules[P.custom_lin_p] = _custom_lin_vmap


# -- remat -------------------------------------------------------------------

def _name_jvp(e: Emitter, primals: Sequence[Atom], tangents: Sequence[Tangent], *,
              name: str) -> tuple[list[Atom], list[Tangent]]:
    # The label is for the primal value only (checkpoint's policies save primals).
    return [e.bind1(P.name_p, primals[0], name=name)], [tangents[0]]


def _name_vmap(e: Emitter, size: int, vals: list[Atom], dims: list[Dim], *,
               name: str) -> tuple[list[Var], list[Dim]]:
    return [e.bind1(P.name_p, vals[0], name=name)], dims


jvp_rules[P.name_p] = _name_jvp
batching_rules[P.name_p] = _name_vmap


def _remat_jvp(e: Emitter, primals: Sequence[Atom], tangents: Sequence[Tangent], *,
               jaxpr: ClosedJaxpr, prevent_cse: bool, differentiated: bool,
               policy: RematPolicy | None) -> tuple[list[Atom], list[Tangent]]:
    nz = [type(t) is not Zero for t in tangents]
    jj, out_nz = jvp_jaxpr(jaxpr.jaxpr, nz)
    ts = [t for t in tangents if not isinstance(t, Zero)]
    outs: list[Atom] = list(e.bind(P.remat_p, *primals, *ts, jaxpr=ClosedJaxpr(jj),
                                   prevent_cse=prevent_cse, differentiated=True, policy=policy))
    n = len(jaxpr.jaxpr.outvars)
    touts: list[Tangent] = fill_in(out_nz, outs[n:], jaxpr.jaxpr.outvars, zero_tangent)
    return outs[:n], touts


jvp_rules[P.remat_p] = _remat_jvp


def _recompute_plan(known: Jaxpr, res: Sequence[Atom], policy: RematPolicy | None
                    ) -> tuple[list[Eqn], list[Var]]:
    """How the unknown side of a ``remat2`` gets the residuals ``res`` of ``known``.

    Walking back from the residuals, an equation whose outputs the policy lets
    save is a cut: those outputs are saved.  Every other equation on the way is
    recomputed, back to the inputs (always available).  Returns the equations to
    recompute, in order, and the saved intermediate values.
    """
    invars = set(known.invars)
    live = {r for r in res if type(r) is Var and r not in invars}
    cut: set[Var] = set()
    todo: list[Eqn] = []
    for eqn in reversed(known.eqns):
        outs = [v for v in eqn.outvars if v in live]
        if not outs:
            continue
        if policy is not None and policy.saveable(eqn):
            cut.update(outs)
            continue
        todo.append(eqn)
        live.update(a for a in eqn.invars if type(a) is Var)
    saved = [v for eqn in known.eqns for v in eqn.outvars if v in cut]
    return todo[::-1], saved


def _remat_partial_eval(eqn: Eqn, unknowns: Sequence[bool]
                        ) -> tuple[Eqn | None, Eqn | None, list[bool], list[Var]]:
    params = eqn.params
    inner: ClosedJaxpr = params["jaxpr"]
    known, unknown, out_unk, nres = partial_eval_jaxpr(inner.jaxpr, unknowns)
    n_known_out = len(known.outvars) - nres
    res = known.outvars[n_known_out:]
    todo, saved = _recompute_plan(known, res, params["policy"])
    # The known inputs the unknown side reads: by recomputing, or as residuals.
    read = {a for e in todo for a in e.invars if type(a) is Var} | set(res)
    need = [v in read for v in known.invars]
    # The unknown side: recompute what was not saved, then the linear part.
    recompute = known.replace(invars=tuple(_pick(known.invars, need)) + tuple(saved),
                              eqns=tuple(todo), outvars=tuple(res), debug_info=None)
    b = Builder()
    e = Emitter(b)
    u_in = [Var(v.aval) for v in recompute.invars]
    u_unk = [Var(v.aval) for v in unknown.invars[nres:]]
    res_vals = inline_jaxpr(e, recompute, (), u_in)
    new_unknown = b.build([*u_in, *u_unk], inline_jaxpr(e, unknown, (), [*res_vals, *u_unk]))
    # The known side returns the saved values.
    known_saved, _ = dce_jaxpr(known.replace(outvars=known.outvars[:n_known_out] + tuple(saved)))
    ins_known = [a for a, u in zip(eqn.invars, unknowns) if not u]
    ins_unknown = [a for a, u in zip(eqn.invars, unknowns) if u]
    k_out = [v for v, u in zip(eqn.outvars, out_unk) if not u]
    u_out = [v for v, u in zip(eqn.outvars, out_unk) if u]
    saved_vars = [Var(v.aval) for v in saved]
    needed_ins = _pick(ins_known, need)
    known_eqn = eqn.replace(invars=tuple(ins_known), outvars=tuple(k_out + saved_vars),
                            params=params.replace(jaxpr=ClosedJaxpr(known_saved)))
    unknown_eqn = eqn.replace(
        invars=tuple(needed_ins + saved_vars + ins_unknown), outvars=tuple(u_out),
        params=params.replace(jaxpr=ClosedJaxpr(new_unknown), differentiated=True))
    residuals = [a for a in needed_ins if type(a) is Var] + saved_vars
    return known_eqn, unknown_eqn, list(out_unk), residuals


def _pick(xs: Sequence[Any], mask: Sequence[bool]) -> list[Any]:
    return partition_list(mask, xs)[1]


pe_rules[P.remat_p] = _remat_partial_eval


def _remat_transpose(e: Emitter, cts: Sequence[Atom | Zero], *ins: Any, jaxpr: ClosedJaxpr,
                     prevent_cse: bool, differentiated: bool,
                     policy: RematPolicy | None) -> Sequence[Cotangent]:
    return _transposed_inline(e, jaxpr.jaxpr, cts, ins)


transpose_rules[P.remat_p] = _remat_transpose


def _remat_vmap(e: Emitter, size: int, vals: list[Atom], dims: list[Dim], *, jaxpr: ClosedJaxpr,
                prevent_cse: bool, differentiated: bool,
                policy: RematPolicy | None) -> tuple[list[Var], list[Dim]]:
    out_dims: list[Dim] = [0] * len(jaxpr.jaxpr.outvars)
    batched = vmap_jaxpr(jaxpr.jaxpr, size, dims, out_dims)
    outs = e.bind(P.remat_p, *vals, jaxpr=ClosedJaxpr(batched), prevent_cse=prevent_cse,
                  differentiated=differentiated, policy=policy)
    return outs, out_dims


batching_rules[P.remat_p] = _remat_vmap


dce_rules[P.remat_p] = dce_call

"""Transformation rules of ``cond``, ``while`` and ``scan``.

Loops find their carries' tangent (or batch, or unknown) status as a fixed
point: a carry is nonzero (batched, unknown) if its initial value is, or if
one iteration makes it so.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from plait.ir import dtypes as dt
from plait.ir import primitives as P
from plait.ir.atoms import Atom, Var
from plait.ir.avals import shaped, shaped_avals
from plait.ir.errors import JaxprTypeError, TransformError
from plait.ir.jaxpr import ClosedJaxpr, Eqn, Jaxpr
from plait.ir.lists import carry_fixpoint, fill_in, merge_lists, partition_list, split_list
from plait.ir.primitives.control_flow import Platforms
from plait.ir.primitives.random import impl_of
from plait.transforms.dce import dce_jaxpr, dce_rules
from plait.transforms.emit import Emitter, Zero
from plait.transforms.inline import inline_jaxpr
from plait.transforms.jvp import Tangent, jvp_jaxpr, jvp_rules, tangent_aval, zero_tangent
from plait.transforms.partial_eval import partial_eval_jaxpr, pe_rules
from plait.transforms.transpose import Cotangent, UndefPrimal, transpose_jaxpr, transpose_rules
from plait.transforms.vmap import (
    Dim,
    batched_outputs,
    batching_rules,
    bdim_to_front,
    move_axis,
    vmap_jaxpr,
)


def _or(a: Sequence[bool], b: Sequence[bool]) -> list[bool]:
    return [x or y for x, y in zip(a, b)]


def _pick(xs: Sequence[Any], mask: Sequence[bool]) -> list[Any]:
    return partition_list(mask, xs)[1]


def _closed(j: Jaxpr) -> ClosedJaxpr:
    return ClosedJaxpr(j.replace(debug_info=None))


# -- cond ----------------------------------------------------------------------

def _cond_jvp(e: Emitter, primals: Sequence[Atom], tangents: Sequence[Tangent], *,
              branches: tuple[ClosedJaxpr, ...],
              branches_platforms: Platforms | None) -> tuple[list[Atom], list[Tangent]]:
    index, *ops = primals
    ts = list(tangents[1:])
    nz = [type(t) is not Zero for t in ts]
    out_nz = [False] * len(branches[0].jaxpr.outvars)
    for b in branches:
        out_nz = _or(out_nz, jvp_jaxpr(b.jaxpr, nz)[1])
    new = [_closed(jvp_jaxpr(b.jaxpr, nz, instantiate=out_nz)[0]) for b in branches]
    outs = e.bind(P.cond_p, index, *ops, *[t for t in ts if not isinstance(t, Zero)],
                  branches=tuple(new), branches_platforms=branches_platforms)
    n = len(out_nz)
    return list[Atom](outs[:n]), fill_in(out_nz, outs[n:], outs[:n], zero_tangent)


jvp_rules[P.cond_p] = _cond_jvp


def _cond_vmap(e: Emitter, size: int, vals: list[Atom], dims: list[Dim], *,
               branches: tuple[ClosedJaxpr, ...],
               branches_platforms: Platforms | None) -> tuple[list[Atom], list[Dim]]:
    index, *ops = vals
    di, *dops = dims
    n_out = len(branches[0].jaxpr.outvars)
    if di is None:
        # An output no branch maps stays unmapped (as in JAX: a loop counter a branch
        # passes on must not become a batch of counters).
        mapped = [False] * n_out
        for b in branches:
            mapped = _or(mapped, batched_outputs(b.jaxpr, [d is not None for d in dops]))
        out_dims: list[Dim] = [0 if m else None for m in mapped]
        new = tuple(_closed(vmap_jaxpr(b.jaxpr, size, dops, out_dims)) for b in branches)
        return list[Atom](e.bind(P.cond_p, index, *ops, branches=new,
                                 branches_platforms=branches_platforms)), out_dims
    # A mapped predicate: every branch runs, and each lane selects its result.
    idx = bdim_to_front(e, index, di, size)
    # An index out of range runs the last branch (XLA's case), it is not clamped.
    ia = shaped(idx.aval)
    in_range = e.bind1(P.and_p, e.bind1(P.ge_p, idx, e.literal(0, ia.dtype)),
                       e.bind1(P.lt_p, idx, e.literal(len(branches), ia.dtype)))
    idx = e.select_n(in_range, e.full(ia, len(branches) - 1), idx)
    results = [inline_jaxpr(e, vmap_jaxpr(b.jaxpr, size, dops, [0] * n_out), (), ops)
               for b in branches]
    outs: list[Atom] = []
    for k in range(n_out):
        shape = shaped(results[0][k].aval).shape
        which = e.broadcast_in_dim(idx, shape, [0]) if len(shape) > 1 else idx
        outs.append(e.select_n(which, *[r[k] for r in results]))
    return outs, [0] * n_out


batching_rules[P.cond_p] = _cond_vmap


def _cond_partial_eval(eqn: Eqn, unknowns: Sequence[bool]
                       ) -> tuple[Eqn | None, Eqn | None, list[bool], list[Var]]:
    branches: tuple[ClosedJaxpr, ...] = eqn.params["branches"]
    n_out = len(eqn.outvars)
    if unknowns[0]:
        known_ins = [a for a, u in zip(eqn.invars, unknowns) if not u and type(a) is Var]
        return None, eqn, [True] * n_out, known_ins
    ops_unk = list(unknowns[1:])
    out_unk = [False] * n_out
    for b in branches:
        out_unk = _or(out_unk, partial_eval_jaxpr(b.jaxpr, ops_unk)[2])
    splits = [partial_eval_jaxpr(b.jaxpr, ops_unk, out_unk) for b in branches]
    index, ops = eqn.invars[0], eqn.invars[1:]
    known_ops = _pick(ops, [not u for u in ops_unk])
    plans = [_cond_residual_plan(known, nres) for known, _, _, nres in splits]
    slot_avals = _merged_slots([[a for a, f in plan if f is None] for plan in plans])
    fwd = sorted({f for plan in plans for _, f in plan if f is not None})
    known_bs, unknown_bs = [], []
    for (known, unknown, _, nres), plan in zip(splits, plans):
        e = Emitter()
        ins = [Var(v.aval) for v in known.invars]
        outs = inline_jaxpr(e, known, (), ins)
        where = _slot_positions([a for a, f in plan if f is None], slot_avals)
        filled = dict(zip(where, [r for r, (_, f) in zip(outs[len(outs) - nres:], plan)
                                  if f is None]))
        slots = [filled[i] if i in filled else e.zeros(a) for i, a in enumerate(slot_avals)]
        known_bs.append(_closed(e.builder.build(ins, [*outs[:len(outs) - nres], *slots])))
        e = Emitter()
        slot_in = [Var(a) for a in slot_avals]
        fwd_in = [Var(known_ops[j].aval) for j in fwd]
        u_in = [Var(v.aval) for v in unknown.invars[nres:]]
        it = iter(where)
        res_in = [slot_in[next(it)] if f is None else fwd_in[fwd.index(f)] for _, f in plan]
        outs = inline_jaxpr(e, unknown, (), [*res_in, *u_in])
        unknown_bs.append(_closed(e.builder.build([*slot_in, *fwd_in, *u_in], outs)))
    res_vars = [Var(a) for a in slot_avals]
    fwd_ops = [known_ops[j] for j in fwd]
    k_outs = [v for v, u in zip(eqn.outvars, out_unk) if not u]
    u_outs = [v for v, u in zip(eqn.outvars, out_unk) if u]
    known_eqn = eqn.replace(invars=(index, *known_ops), outvars=tuple(k_outs + res_vars),
                            params=eqn.params.replace(branches=tuple(known_bs)))
    unknown_eqn = eqn.replace(invars=(index, *res_vars, *fwd_ops, *_pick(ops, ops_unk)),
                              outvars=tuple(u_outs),
                              params=eqn.params.replace(branches=tuple(unknown_bs)))
    residuals = [a for a in [index, *res_vars, *fwd_ops] if type(a) is Var]
    return known_eqn, unknown_eqn, out_unk, residuals


def _cond_residual_plan(known: Jaxpr, nres: int) -> list[tuple[Any, int | None]]:
    """Per residual of a branch: its type, and the position of the known operand it
    merely forwards (passed to the unknown cond directly, not copied out), or None."""
    pos = {v: i for i, v in enumerate(known.invars)}
    return [(r.aval, pos.get(r) if type(r) is Var else None)
            for r in known.outvars[len(known.outvars) - nres:]]


def _merged_slots(per_branch: Sequence[Sequence[Any]]) -> list[Any]:
    """Residual slots shared by the branches: as in JAX, residuals of the same type
    in different branches use one slot, so the known cond returns fewer zeros."""
    slots: list[Any] = []
    for avals in per_branch:
        free = list(slots)
        for a in avals:
            if a in free:
                free.remove(a)
            else:
                slots.append(a)
    return slots


def _slot_positions(avals: Sequence[Any], slots: Sequence[Any]) -> list[int]:
    """Where each of a branch's residuals goes among the shared ``slots``."""
    taken: set[int] = set()
    where = []
    for a in avals:
        i = next(i for i, s in enumerate(slots) if s == a and i not in taken)
        taken.add(i)
        where.append(i)
    return where


pe_rules[P.cond_p] = _cond_partial_eval


def _cond_transpose(e: Emitter, cts: Sequence[Atom | Zero], index: Any, *ops: Any,
                    branches: tuple[ClosedJaxpr, ...],
                    branches_platforms: Platforms | None) -> Sequence[Cotangent]:
    if type(index) is UndefPrimal:
        raise JaxprTypeError("cond is not linear in its branch index")
    linear = [type(x) is UndefPrimal for x in ops]
    new = tuple(_closed(transpose_jaxpr(b.jaxpr, linear)) for b in branches)
    nonlin = [x for x in ops if type(x) is not UndefPrimal]
    outs = e.bind(P.cond_p, index, *nonlin, *[e.instantiate(c) for c in cts], branches=new,
                  branches_platforms=branches_platforms)
    return [None, *merge_lists(linear, [None] * linear.count(False), outs)]


transpose_rules[P.cond_p] = _cond_transpose


def _cond_dce(eqn: Eqn, used: Sequence[bool]) -> tuple[Eqn | None, list[bool]]:
    if not any(used) and not eqn.effects:
        return None, [False] * len(eqn.invars)
    branches: tuple[ClosedJaxpr, ...] = eqn.params["branches"]
    pruned = [dce_jaxpr(b.jaxpr, used)[0] for b in branches]
    used_ops = [False] * (len(eqn.invars) - 1)
    for p in pruned:
        used_ops = _or(used_ops, _used_invars(p))
    new_bs = tuple(_closed(p.replace(invars=tuple(_pick(p.invars, used_ops)))) for p in pruned)
    new = eqn.replace(invars=(eqn.invars[0], *_pick(eqn.invars[1:], used_ops)),
                      outvars=tuple(_pick(eqn.outvars, used)),
                      params=eqn.params.replace(branches=new_bs))
    return new, [True] * len(new.invars)


def _used_invars(j: Jaxpr) -> list[bool]:
    live = {a for a in j.outvars if type(a) is Var}
    for eqn in j.eqns:
        live.update(a for a in eqn.invars if type(a) is Var)
    return [v in live for v in j.invars]


dce_rules[P.cond_p] = _cond_dce


# -- while ---------------------------------------------------------------------

def _add_invars(j: ClosedJaxpr, avals: Sequence[Any]) -> ClosedJaxpr:
    return _closed(j.jaxpr.replace(invars=j.jaxpr.invars + tuple(Var(a) for a in avals)))


def _while_jvp(e: Emitter, primals: Sequence[Atom], tangents: Sequence[Tangent], *,
               cond_jaxpr: ClosedJaxpr, body_jaxpr: ClosedJaxpr, cond_nconsts: int,
               body_nconsts: int) -> tuple[list[Atom], list[Tangent]]:
    cconsts, bconsts, carry = split_list(primals, cond_nconsts, body_nconsts)
    _, bt, ct = split_list(tangents, cond_nconsts, body_nconsts)
    b_nz = [type(t) is not Zero for t in bt]
    c_nz = [type(t) is not Zero for t in ct]
    c_nz = carry_fixpoint(c_nz, lambda c: jvp_jaxpr(body_jaxpr.jaxpr, b_nz + c, instantiate=c)[1])
    jj, _ = jvp_jaxpr(body_jaxpr.jaxpr, b_nz + c_nz, instantiate=c_nz)
    inv = jj.invars
    nb, nc = len(bconsts), len(carry)
    nbt = sum(b_nz)
    # jvp order (bconsts, carry, bconst tangents, carry tangents) -> while order
    # (body consts then their tangents, carry then its tangents).
    body = jj.replace(invars=inv[:nb] + inv[nb + nc:nb + nc + nbt] + inv[nb:nb + nc]
                      + inv[nb + nc + nbt:], debug_info=None)
    t_avals = [tangent_aval(c.aval) for c, z in zip(carry, c_nz) if z]
    cond = _add_invars(cond_jaxpr, t_avals)
    ct_in = [e.instantiate(t) for t, z in zip(ct, c_nz) if z]
    outs = e.bind(P.while_p, *cconsts, *bconsts, *[t for t in bt if not isinstance(t, Zero)],
                  *carry, *ct_in, cond_jaxpr=cond, body_jaxpr=_closed(body),
                  cond_nconsts=cond_nconsts, body_nconsts=nb + nbt)
    return list[Atom](outs[:nc]), fill_in(c_nz, outs[nc:], carry, zero_tangent)


jvp_rules[P.while_p] = _while_jvp


def _while_transpose(*_: Any, **__: Any) -> Sequence[Cotangent]:
    raise TransformError(
        "Reverse-mode differentiation does not work for lax.while_loop or lax.fori_loop with "
        "dynamic start/stop values. Try using lax.scan, or using fori_loop with static "
        "start/stop.")


transpose_rules[P.while_p] = _while_transpose


def _while_partial_eval(eqn: Eqn, unknowns: Sequence[bool]
                        ) -> tuple[Eqn | None, Eqn | None, list[bool], list[Var]]:
    """Known carries run in a loop of their own; the unknown loop recomputes everything.

    The unknown loop is not transposable (its trip count is only known at run time),
    so reverse mode over it fails with the message of ``_while_transpose``; forward
    mode and ``linearize`` of the known part still work.
    """
    p = eqn.params
    cn, bn = p["cond_nconsts"], p["body_nconsts"]
    uk_c, uk_b, uc = split_list(unknowns, cn, bn)
    body = p["body_jaxpr"].jaxpr
    uc = carry_fixpoint(uc, lambda c: partial_eval_jaxpr(body, uk_b + c, [False] * len(c))[2])
    cond_uses = _used_invars(p["cond_jaxpr"].jaxpr)[cn:]
    if any(uk_c) or any(u and used for u, used in zip(uc, cond_uses)) or all(uc):
        res = [a for a, u in zip(eqn.invars, unknowns) if not u and type(a) is Var]
        return None, eqn, [True] * len(uc), res
    known_c = [not u for u in uc]
    kbody, used = dce_jaxpr(body, known_c)
    known_b = [not u for u in uk_b]
    # The known loop takes the known body consts only (the unknown ones, a tangent say,
    # are unused once the unknown carries are gone).
    kbody = kbody.replace(invars=tuple(_pick(kbody.invars, known_b + known_c)))
    kcond = p["cond_jaxpr"].jaxpr
    kcond = kcond.replace(invars=kcond.invars[:cn] + tuple(_pick(kcond.invars[cn:], known_c)))
    ins_cc, ins_bc, ins_c = split_list(eqn.invars, cn, bn)
    if any(u and x for u, x in zip(uk_b, used[:bn])):
        res = [a for a, u in zip(eqn.invars, unknowns) if not u and type(a) is Var]
        return None, eqn, [True] * len(uc), res
    known_eqn = eqn.replace(invars=tuple(ins_cc + _pick(ins_bc, known_b) + _pick(ins_c, known_c)),
                            outvars=tuple(_pick(eqn.outvars, known_c)),
                            params=p.replace(cond_jaxpr=_closed(kcond), body_jaxpr=_closed(kbody),
                                             body_nconsts=known_b.count(True)))
    # The unknown loop binds fresh variables for the carries the known loop produces.
    unknown_eqn = eqn.replace(outvars=tuple(v if u else Var(v.aval)
                                            for v, u in zip(eqn.outvars, uc)))
    res = [a for a, u in zip(eqn.invars, unknowns) if not u and type(a) is Var]
    return known_eqn, unknown_eqn, list(uc), res


pe_rules[P.while_p] = _while_partial_eval


def _keep_finished(b: Emitter, pred: Atom, old: Var, new: Atom) -> Atom:
    """``new`` where the lane's loop runs, else ``old``.  A key carry is selected as
    its data, then wrapped again: keeping a finished lane's key is no use of the key
    (to key-reuse checking, :mod:`plait.transforms.key_reuse`), as in JAX, whose
    batched loop selects inside its lowering."""
    aval = shaped(old.aval)
    if not dt.is_key(aval.dtype):
        which = b.broadcast_in_dim(pred, aval.shape, [0]) if len(aval.shape) > 1 else pred
        return b.select_n(which, old, new)
    data_old = b.bind1(P.random_unwrap_p, old)
    data_new = b.bind1(P.random_unwrap_p, new)
    which = b.broadcast_in_dim(pred, shaped(data_old.aval).shape, [0])
    return b.bind1(P.random_wrap_p, b.select_n(which, data_old, data_new),
                   impl=impl_of(aval.dtype))


def _while_vmap(e: Emitter, size: int, vals: list[Atom], dims: list[Dim], *,
                cond_jaxpr: ClosedJaxpr, body_jaxpr: ClosedJaxpr, cond_nconsts: int,
                body_nconsts: int) -> tuple[list[Atom], list[Dim]]:
    cconsts, bconsts, carry = split_list(vals, cond_nconsts, body_nconsts)
    dc, db, dcar = split_list(dims, cond_nconsts, body_nconsts)
    bb = [d is not None for d in db]
    cb = [d is not None for d in dcar]
    cb = carry_fixpoint(cb, lambda c: batched_outputs(body_jaxpr.jaxpr, bb + c))
    pred_b = batched_outputs(cond_jaxpr.jaxpr, [d is not None for d in dc] + cb)[0]
    if pred_b:
        cb = [True] * len(carry)  # lanes finish at different times: every carry diverges

    def front(xs: Sequence[Atom], ds: Sequence[Dim]) -> list[Atom]:
        return [bdim_to_front(e, x, d, size) if d is not None else x for x, d in zip(xs, ds)]
    cconsts, bconsts = front(cconsts, dc), front(bconsts, db)
    carry = [bdim_to_front(e, x, d, size) if b else x for x, d, b in zip(carry, dcar, cb)]
    dc0 = [0 if d is not None else None for d in dc]
    db0 = [0 if d is not None else None for d in db]
    car0 = [0 if b else None for b in cb]
    body = vmap_jaxpr(body_jaxpr.jaxpr, size, db0 + car0, car0)
    cond = vmap_jaxpr(cond_jaxpr.jaxpr, size, dc0 + car0, [0 if pred_b else None])
    if not pred_b:
        outs = e.bind(P.while_p, *cconsts, *bconsts, *carry, cond_jaxpr=_closed(cond),
                      body_jaxpr=_closed(body), cond_nconsts=cond_nconsts,
                      body_nconsts=body_nconsts)
        return list[Atom](outs), car0
    # Keep iterating while any lane runs; finished lanes keep their carry.
    b = Emitter()
    cv = [Var(shaped(x.aval)) for x in cconsts]
    bv = [Var(shaped(x.aval)) for x in bconsts]
    carv = [Var(shaped(x.aval)) for x in carry]
    pred, = inline_jaxpr(b, cond, (), [*cv, *carv])
    stepped = inline_jaxpr(b, body, (), [*bv, *carv])
    kept = [_keep_finished(b, pred, old, new_v) for old, new_v in zip(carv, stepped)]
    new_body = b.builder.build([*cv, *bv, *carv], kept)
    c = Emitter()
    cv2 = [Var(shaped(x.aval)) for x in cconsts]
    carv2 = [Var(shaped(x.aval)) for x in carry]
    p2, = inline_jaxpr(c, cond, (), [*cv2, *carv2])
    any_p = c.bind1(P.reduce_or_p, p2, axes=(0,))
    new_cond = c.builder.build([*cv2, *carv2], [any_p])
    outs = e.bind(P.while_p, *cconsts, *cconsts, *bconsts, *carry, cond_jaxpr=_closed(new_cond),
                  body_jaxpr=_closed(new_body), cond_nconsts=cond_nconsts,
                  body_nconsts=cond_nconsts + body_nconsts)
    return list[Atom](outs), car0


batching_rules[P.while_p] = _while_vmap


# -- scan ----------------------------------------------------------------------

def _scan_jvp(e: Emitter, primals: Sequence[Atom], tangents: Sequence[Tangent], *,
              jaxpr: ClosedJaxpr, length: int, reverse: bool, num_consts: int, num_carry: int,
              unroll: Any) -> tuple[list[Atom], list[Tangent]]:
    consts, carry, xs = split_list(primals, num_consts, num_carry)
    tc, tcar, txs = split_list(tangents, num_consts, num_carry)
    k_nz = [type(t) is not Zero for t in tc]
    c_nz = [type(t) is not Zero for t in tcar]
    x_nz = [type(t) is not Zero for t in txs]
    n_ys = len(jaxpr.jaxpr.outvars) - num_carry
    c_nz = carry_fixpoint(c_nz, lambda c: jvp_jaxpr(jaxpr.jaxpr, k_nz + c + x_nz,
                                                    c + [False] * n_ys)[1][:num_carry])
    jj, out_nz = jvp_jaxpr(jaxpr.jaxpr, k_nz + c_nz + x_nz, c_nz + [False] * n_ys)
    y_nz = out_nz[num_carry:]
    nk, nc, nx = len(consts), len(carry), len(xs)
    nkt, nct = sum(k_nz), sum(c_nz)
    i = jj.invars
    p_k, p_c, p_x = i[:nk], i[nk:nk + nc], i[nk + nc:nk + nc + nx]
    rest = i[nk + nc + nx:]
    t_k, t_c, t_x = rest[:nkt], rest[nkt:nkt + nct], rest[nkt + nct:]
    o = jj.outvars
    o_c, o_y = o[:nc], o[nc:nc + n_ys]
    o_ct, o_yt = o[nc + n_ys:nc + n_ys + nct], o[nc + n_ys + nct:]
    body = jj.replace(invars=p_k + t_k + p_c + t_c + p_x + t_x, outvars=o_c + o_ct + o_y + o_yt,
                      debug_info=None)
    outs = e.bind(P.scan_p, *consts, *[t for t in tc if not isinstance(t, Zero)],
                  *carry, *[e.instantiate(t) for t, z in zip(tcar, c_nz) if z],
                  *xs, *[t for t in txs if type(t) is not Zero],
                  jaxpr=_closed(body), length=length, reverse=reverse, num_consts=nk + nkt,
                  num_carry=nc + nct, unroll=unroll)
    carry_out, ct_out, ys, yt = split_list(outs, nc, nct, n_ys)
    touts: list[Tangent] = fill_in(c_nz, ct_out, carry_out, zero_tangent)
    touts += fill_in(y_nz, yt, ys, zero_tangent)
    return list[Atom](carry_out + ys), touts


jvp_rules[P.scan_p] = _scan_jvp


def _scan_vmap(e: Emitter, size: int, vals: list[Atom], dims: list[Dim], *, jaxpr: ClosedJaxpr,
               length: int, reverse: bool, num_consts: int, num_carry: int,
               unroll: Any) -> tuple[list[Atom], list[Dim]]:
    consts, carry, xs = split_list(vals, num_consts, num_carry)
    dk, dc, dx = split_list(dims, num_consts, num_carry)
    kb, cb, xb = ([d is not None for d in ds] for ds in (dk, dc, dx))
    cb = carry_fixpoint(cb, lambda c: batched_outputs(jaxpr.jaxpr, kb + c + xb)[:num_carry])
    yb = batched_outputs(jaxpr.jaxpr, kb + cb + xb)[num_carry:]
    consts = [bdim_to_front(e, x, d, size) if d is not None else x for x, d in zip(consts, dk)]
    carry = [bdim_to_front(e, x, d, size) if b else x for x, d, b in zip(carry, dc, cb)]
    # Scanned operands keep the scanned axis first; the batch axis goes second.
    xs = [move_axis(e, x, d, 1) if d is not None else x for x, d in zip(xs, dx)]
    k0 = [0 if b else None for b in kb]
    c0 = [0 if b else None for b in cb]
    x0 = [0 if b else None for b in xb]
    y0 = [0 if b else None for b in yb]
    body = vmap_jaxpr(jaxpr.jaxpr, size, k0 + c0 + x0, c0 + y0)
    outs = e.bind(P.scan_p, *consts, *carry, *xs, jaxpr=_closed(body), length=length,
                  reverse=reverse, num_consts=num_consts, num_carry=num_carry, unroll=unroll)
    return list[Atom](outs), c0 + [1 if b else None for b in yb]


batching_rules[P.scan_p] = _scan_vmap


def _scan_partial_eval(eqn: Eqn, unknowns: Sequence[bool]
                       ) -> tuple[list[Eqn], Eqn | None, list[bool], list[Var]]:
    """Split a scan into a known scan and an unknown scan fed by residuals.

    As in JAX, residuals are not all stacked per iteration: a loop-invariant one
    (computed from known consts only, such as a weight matrix) is computed once
    outside the loop and passed to the unknown scan as a const, and a residual
    that is a known scanned input is passed on as that input, not copied.
    """
    p = eqn.params
    body: ClosedJaxpr = p["jaxpr"]
    nk, nc = p["num_consts"], p["num_carry"]
    uk, uc, ux = split_list(unknowns, nk, nc)
    uc_in = list(uc)
    n_ys = len(body.jaxpr.outvars) - nc
    uc = carry_fixpoint(uc, lambda c: partial_eval_jaxpr(body.jaxpr, uk + c + ux,
                                                         c + [False] * n_ys)[2][:nc])
    known, unknown, out_unk, nres = partial_eval_jaxpr(body.jaxpr, uk + uc + ux,
                                                        uc + [False] * n_ys)
    ins_k, ins_c, ins_x = split_list(eqn.invars, nk, nc)
    outs_c, outs_y = eqn.outvars[:nc], eqn.outvars[nc:]
    y_unk = out_unk[nc:]
    known_xs = _pick(ins_x, [not u for u in ux])
    hoisted, consts, loop, invariant = _hoist_invariants(
        known, _pick(ins_k, [not u for u in uk]), len(known.outvars) - nres)
    # The loop's outputs: known carries and ys, then the residuals that vary.
    n_kout = len(loop.outvars) - invariant.count(None)
    varying = list(loop.outvars[n_kout:])
    x_invars = loop.invars[len(loop.invars) - len(known_xs):]
    from_xs = [known_xs[x_invars.index(r)] if r in x_invars else None for r in varying]
    stacked = [Var(shaped(r.aval).update(shape=(p["length"],) + shaped(r.aval).shape))
               for r, x in zip(varying, from_xs) if x is None]
    loop = loop.replace(outvars=loop.outvars[:n_kout] + tuple(
        r for r, x in zip(varying, from_xs) if x is None))
    known_eqn = eqn.replace(
        invars=tuple(consts + _pick(ins_c, [not u for u in uc]) + known_xs),
        outvars=tuple(_pick(outs_c, [not u for u in uc]) + _pick(outs_y, [not u for u in y_unk])
                      + stacked),
        params=p.replace(jaxpr=_closed(loop), num_consts=len(consts),
                         num_carry=uc.count(False)))
    it = iter(stacked)
    varying_ins = [next(it) if x is None else x for x in from_xs]
    invariant_ins = [a for a in invariant if a is not None]
    # The unknown scan takes invariant residuals as consts, varying ones as scanned inputs.
    ui = unknown.invars
    nuk, nuc = uk.count(True), uc.count(True)
    u_res, u_k, u_c, u_x = split_list(ui, nres, nuk, nuc)
    is_inv = [a is not None for a in invariant]
    u_var, u_inv = partition_list(is_inv, u_res)
    unknown_j = unknown.replace(invars=tuple(u_k + u_inv + u_c + u_var + u_x))
    unknown_eqn = eqn.replace(
        invars=tuple(_pick(ins_k, uk) + invariant_ins + _pick(ins_c, uc) + varying_ins
                     + _pick(ins_x, ux)),
        outvars=tuple(_pick(outs_c, uc) + _pick(outs_y, y_unk)),
        params=p.replace(jaxpr=_closed(unknown_j), num_consts=nuk + len(invariant_ins),
                         num_carry=nuc))
    # A known initial carry that the loop makes unknown is an input of the unknown
    # scan: a residual of the enclosing split too.
    forwarded = [a for a, was, now in zip(ins_c, uc_in, uc) if now and not was]
    res = [a for a in [*invariant_ins, *varying_ins, *forwarded] if type(a) is Var]
    return [*hoisted, known_eqn], unknown_eqn, list(uc) + list(y_unk), res


def _hoist_invariants(known: Jaxpr, consts: list[Atom], n_out: int
                      ) -> tuple[list[Eqn], list[Atom], Jaxpr, list[Atom | None]]:
    """Move what a known scan body computes from its consts alone out of the loop.

    ``known`` maps ``consts + carries + xs`` to ``n_out`` outputs and then
    residuals.  Returns the hoisted equations (over the outer ``consts``), the
    loop's new consts, the loop body (outputs, then the residuals that vary), and
    per residual its loop-invariant value or None.
    """
    nres = len(known.outvars) - n_out
    if known.effects:
        return [], consts, known, [None] * nres
    n_loop = len(known.invars) - len(consts)
    once, loop, loop_out, nres2 = partial_eval_jaxpr(
        known, [False] * len(consts) + [True] * n_loop, [True] * n_out + [False] * nres)
    e = Emitter()
    outs = inline_jaxpr(e, once, (), consts)
    values, new_consts = outs[:len(outs) - nres2], outs[len(outs) - nres2:]
    it = iter(values)
    invariant = [None if u else next(it) for u in loop_out[n_out:]]
    return e.builder.eqns, new_consts, loop, invariant


pe_rules[P.scan_p] = _scan_partial_eval


def _scan_transpose(e: Emitter, cts: Sequence[Atom | Zero], *ins: Any, jaxpr: ClosedJaxpr,
                    length: int, reverse: bool, num_consts: int, num_carry: int,
                    unroll: Any) -> Sequence[Cotangent]:
    consts, carry, xs = split_list(ins, num_consts, num_carry)
    # Every carry is transposed as linear: a known initial carry (a tangent that starts
    # as a known zero and becomes unknown in the loop) is linear too, its cotangent
    # is simply not wanted.
    k_lin = [type(c) is UndefPrimal for c in consts]
    x_lin = [type(x) is UndefPrimal for x in xs]
    ct_carry, ct_ys = cts[:num_carry], cts[num_carry:]
    t = transpose_jaxpr(jaxpr.jaxpr, k_lin + [True] * num_carry + x_lin)
    res_k = [c for c in consts if type(c) is not UndefPrimal]
    res_x = [x for x in xs if type(x) is not UndefPrimal]
    lin_k_avals = [c.aval for c in consts if type(c) is UndefPrimal]
    b = Emitter()
    v_rk = [Var(shaped(r.aval)) for r in res_k]
    v_acc = [Var(a) for a in lin_k_avals]
    v_ct = [Var(c.aval) for c in carry]
    v_rx = [Var(shaped(r.aval).update(shape=shaped(r.aval).shape[1:])) for r in res_x]
    v_cy = [Var(a.update(shape=a.shape[1:])) for a in shaped_avals([c.aval for c in ct_ys])]
    outs = inline_jaxpr(b, t, (), [*v_rk, *v_rx, *v_ct, *v_cy])
    ct_k, ct_c, ct_x = split_list(outs, len(v_acc), num_carry)
    acc = [b.add_any(a, c) for a, c in zip(v_acc, ct_k)]
    body = b.builder.build([*v_rk, *v_acc, *v_ct, *v_rx, *v_cy], [*acc, *ct_c, *ct_x])
    zeros_k = [e.zeros(a) for a in lin_k_avals]
    outs_t = e.bind(P.scan_p, *res_k, *zeros_k, *[e.instantiate(c) for c in ct_carry], *res_x,
                    *[e.instantiate(c) for c in ct_ys], jaxpr=_closed(body), length=length,
                    reverse=not reverse, num_consts=len(res_k),
                    num_carry=len(zeros_k) + num_carry, unroll=unroll)
    k_out, c_out, x_out = split_list(outs_t, len(zeros_k), num_carry)
    return (merge_lists(k_lin, [None] * k_lin.count(False), k_out) + list(c_out)
            + merge_lists(x_lin, [None] * x_lin.count(False), x_out))


transpose_rules[P.scan_p] = _scan_transpose


def _scan_dce(eqn: Eqn, used: Sequence[bool]) -> tuple[Eqn | None, list[bool]]:
    if not any(used) and not eqn.effects:
        return None, [False] * len(eqn.invars)
    p = eqn.params
    nk, nc = p["num_consts"], p["num_carry"]
    body = p["jaxpr"].jaxpr
    # A carry stays if its final value is used or a kept output reads it on the way: a
    # fixed point, since keeping one carry can make the body read another.  (Tangent
    # carries, for one, go when only the primal results are wanted.)  With effects,
    # every carry stays: the body's order must be replayed whole.
    keep_carry = [True] * nc if eqn.effects else list(used[:nc])
    while True:
        _, reads = dce_jaxpr(body, keep_carry + list(used[nc:]))
        grown = [k or r for k, r in zip(keep_carry, reads[nk:nk + nc])]
        if grown == keep_carry:
            break
        keep_carry = grown
    keep_out = keep_carry + list(used[nc:])
    pruned, reads = dce_jaxpr(body, keep_out)
    keep_in = list(reads[:nk]) + keep_carry + list(reads[nk + nc:])
    pruned = pruned.replace(invars=tuple(_pick(pruned.invars, keep_in)))
    new = eqn.replace(invars=tuple(_pick(eqn.invars, keep_in)),
                      outvars=tuple(_pick(eqn.outvars, keep_out)),
                      params=p.replace(jaxpr=_closed(pruned), num_consts=sum(reads[:nk]),
                                       num_carry=sum(keep_carry)))
    return new, [True] * len(new.invars)


dce_rules[P.scan_p] = _scan_dce

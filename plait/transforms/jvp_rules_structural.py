"""JVP rules of reductions, data movement, contraction, sorting and calls."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from plait.ir import primitives as P
from plait.ir.atoms import Atom, Var
from plait.ir.avals import shaped
from plait.ir.jaxpr import ClosedJaxpr
from plait.ir.lists import fill_in
from plait.transforms.emit import Emitter, Zero
from plait.transforms.jvp import (
    Tangent,
    defjvp,
    deflinear,
    jvp_jaxpr,
    jvp_rules,
    tangent_aval,
    zero_tangent,
)

_I32 = np.dtype(np.int32)

for _p in (P.reduce_sum_p, P.broadcast_in_dim_p, P.reshape_p, P.transpose_p, P.squeeze_p,
           P.concatenate_p, P.pad_p, P.slice_p, P.rev_p, P.cumsum_p):
    deflinear(_p)


def _operand_only(prim: Any) -> Any:
    # Linear in the first operand; the others (indices) have no tangent.
    def rule(e: Emitter, primals: Sequence[Atom], tangents: Sequence[Tangent],
             **params: Any) -> tuple[list[Var], list[Tangent]]:
        out = e.bind(prim, *primals, **params)
        t = tangents[0]
        if isinstance(t, Zero):
            return out, [Zero(tangent_aval(out[0].aval))]
        touts: list[Tangent] = list(e.bind(prim, t, *primals[1:], **params))
        return out, touts
    return rule


jvp_rules[P.dynamic_slice_p] = _operand_only(P.dynamic_slice_p)


def _dynamic_update_slice_jvp(e: Emitter, primals: Sequence[Atom], tangents: Sequence[Tangent],
                              **params: Any) -> tuple[list[Var], list[Tangent]]:
    out = e.bind(P.dynamic_update_slice_p, *primals)
    t_op, t_up = tangents[:2]
    if isinstance(t_op, Zero) and isinstance(t_up, Zero):
        return out, [Zero(tangent_aval(out[0].aval))]
    touts: list[Tangent] = list(e.bind(P.dynamic_update_slice_p, e.instantiate(t_op),
                                       e.instantiate(t_up), *primals[2:]))
    return out, touts


jvp_rules[P.dynamic_update_slice_p] = _dynamic_update_slice_jvp

defjvp(P.dot_general_p,
       lambda e, t, x, y, **params: e.bind1(P.dot_general_p, t, y, **params),
       lambda e, t, x, y, **params: e.bind1(P.dot_general_p, x, t, **params))


def _reduce_chooser_jvp(prim: Any) -> Any:
    # The tangent at the extremal positions, averaged over ties.
    def rule(e: Emitter, primals: Sequence[Atom], tangents: Sequence[Tangent],
             **params: Any) -> tuple[list[Var], list[Tangent]]:
        x, = primals
        t, = tangents
        out = e.bind(prim, x, **params)
        if isinstance(t, Zero):
            return out, [Zero(tangent_aval(out[0].aval))]
        xa = shaped(x.aval)
        axes = params["axes"]
        kept = [i for i in range(xa.ndim) if i not in axes]
        ans = e.broadcast_in_dim(out[0], xa.shape, kept)
        where = e.convert(e.bind1(P.eq_p, x, ans), xa.dtype)
        counts = e.reduce_sum(where, axes)
        picked = e.reduce_sum(e.mul(t, where), axes)
        return out, [e.div(picked, counts)]
    return rule


jvp_rules[P.reduce_max_p] = _reduce_chooser_jvp(P.reduce_max_p)
jvp_rules[P.reduce_min_p] = _reduce_chooser_jvp(P.reduce_min_p)


def _move_axes_last(e: Emitter, x: Atom, axes: Sequence[int]) -> Atom:
    xa = shaped(x.aval)
    kept = [i for i in range(xa.ndim) if i not in axes]
    moved = e.transpose(x, kept + list(axes))
    n = 1
    for a in axes:
        n *= xa.shape[a]
    return e.reshape(moved, [xa.shape[i] for i in kept] + [n])


def _exclusive_products(e: Emitter, x: Atom) -> Atom:
    """For each position along the last axis, the product of all other elements."""
    xa = shaped(x.aval)
    axis = xa.ndim - 1
    n = xa.shape[axis]
    one = e.scalar_like(x, 1)
    before = e.bind1(P.cumprod_p, x, axis=axis, reverse=False)
    after = e.bind1(P.cumprod_p, x, axis=axis, reverse=True)
    # Shift by one: the product strictly before (after) each position.
    cfg_r = [(0, 0, 0)] * axis + [(1, -1, 0)]
    cfg_l = [(0, 0, 0)] * axis + [(-1, 1, 0)]
    left = e.bind1(P.pad_p, before, one, padding_config=tuple(cfg_r)) if n else before
    right = e.bind1(P.pad_p, after, one, padding_config=tuple(cfg_l)) if n else after
    return e.mul(left, right)


def _reduce_prod_jvp(e: Emitter, primals: Sequence[Atom], tangents: Sequence[Tangent],
                     **params: Any) -> tuple[list[Var], list[Tangent]]:
    x, = primals
    t, = tangents
    out = e.bind(P.reduce_prod_p, x, **params)
    if isinstance(t, Zero):
        return out, [Zero(tangent_aval(out[0].aval))]
    axes = params["axes"]
    xs = _move_axes_last(e, x, axes)
    ts = _move_axes_last(e, t, axes)
    others = _exclusive_products(e, xs)
    last = shaped(xs.aval).ndim - 1
    return out, [e.reduce_sum(e.mul(ts, others), [last])]


jvp_rules[P.reduce_prod_p] = _reduce_prod_jvp


def _cumprod_jvp(e: Emitter, primals: Sequence[Atom], tangents: Sequence[Tangent],
                 **params: Any) -> tuple[list[Var], list[Tangent]]:
    # y_k = prod_{j<=k} x_j, so dy_k = sum_{i<=k} t_i prod_{j<=k, j!=i} x_j.  Computed as a
    # triangular contraction, exact at zeros (no division).
    x, = primals
    t, = tangents
    out = e.bind(P.cumprod_p, x, **params)
    if isinstance(t, Zero):
        return out, [Zero(tangent_aval(out[0].aval))]
    axis, reverse = params["axis"], params["reverse"]
    xa = shaped(x.aval)
    n = xa.shape[axis]
    perm = [i for i in range(xa.ndim) if i != axis] + [axis]
    xl = e.transpose(x, perm)
    tl = e.transpose(t, perm)
    if reverse:
        xl = e.bind1(P.rev_p, xl, dimensions=(xa.ndim - 1,))
        tl = e.bind1(P.rev_p, tl, dimensions=(xa.ndim - 1,))
    lead = list(shaped(xl.aval).shape[:-1])
    shape = lead + [n, n]   # [..., k, i]
    nd = len(shape)
    k = e.bind1(P.iota_p, dtype=_I32, shape=tuple(shape), dimension=nd - 2, sharding=None)
    i = e.bind1(P.iota_p, dtype=_I32, shape=tuple(shape), dimension=nd - 1, sharding=None)
    xj = e.broadcast_in_dim(xl, shape, list(range(nd - 2)) + [nd - 1])
    one = e.broadcast_to(e.scalar_like(x, 1), shape)
    # Row k holds x_j for j <= k (1 beyond); the product of a row without entry i is
    # the coefficient of t_i in dy_k.
    mask_le = e.bind1(P.le_p, i, k)
    coef_rows = e.select_n(mask_le, one, xj)
    excl = _exclusive_products(e, coef_rows)           # [..., k, i]
    tb = e.broadcast_in_dim(tl, shape, list(range(nd - 2)) + [nd - 1])
    contrib = e.select_n(mask_le, e.zeros(shaped(tb.aval)), e.mul(tb, excl))
    dy = e.reduce_sum(contrib, [nd - 1])
    if reverse:
        dy = e.bind1(P.rev_p, dy, dimensions=(xa.ndim - 1,))
    inv = [0] * xa.ndim
    for pos, d in enumerate(perm):
        inv[d] = pos
    return out, [e.transpose(dy, inv)]


jvp_rules[P.cumprod_p] = _cumprod_jvp


def _cum_chooser_jvp(prim: Any) -> Any:
    # The tangent of the running extremum is the tangent at the position where it
    # was (last) attained: found with a running maximum over matching indices.
    def rule(e: Emitter, primals: Sequence[Atom], tangents: Sequence[Tangent],
             **params: Any) -> tuple[list[Var], list[Tangent]]:
        x, = primals
        t, = tangents
        out = e.bind(prim, x, **params)
        if isinstance(t, Zero):
            return out, [Zero(tangent_aval(out[0].aval))]
        axis, reverse = params["axis"], params["reverse"]
        xa = shaped(x.aval)
        idx = e.bind1(P.iota_p, dtype=_I32, shape=xa.shape, dimension=axis, sharding=None)
        if reverse:
            idx = e.neg(idx)
        hit = e.bind1(P.eq_p, x, out[0])
        lowest = e.broadcast_to(e.literal(-(2 ** 31) + 1, _I32), xa.shape)
        marks = e.select_n(hit, lowest, idx)
        src = e.bind1(P.cummax_p, marks, axis=axis, reverse=reverse)
        if reverse:
            src = e.neg(src)
        # Gather t at src along axis via a one-hot contraction.
        n = xa.shape[axis]
        nd = xa.ndim
        shape = list(xa.shape) + [n]
        onehot = e.bind1(P.eq_p, e.broadcast_in_dim(src, shape, list(range(nd))),
                         e.bind1(P.iota_p, dtype=_I32, shape=tuple(shape), dimension=nd,
                                 sharding=None))
        tt = e.transpose(t, [d for d in range(nd) if d != axis] + [axis])
        t_exp = e.broadcast_in_dim(tt, shape, [d for d in range(nd + 1) if d != axis])
        picked = e.mul(e.convert(onehot, shaped(t.aval).dtype), t_exp)
        return out, [e.reduce_sum(picked, [nd])]
    return rule


jvp_rules[P.cummax_p] = _cum_chooser_jvp(P.cummax_p)
jvp_rules[P.cummin_p] = _cum_chooser_jvp(P.cummin_p)


def _sort_jvp(e: Emitter, primals: Sequence[Atom], tangents: Sequence[Tangent], *,
              dimension: int, is_stable: bool, num_keys: int) -> tuple[list[Var], list[Tangent]]:
    # The primal outputs come from the primals alone, so that partial evaluation keeps
    # them known.  The tangents are permuted like their operands: they ride as the
    # payloads of a sort by the same keys, which is linear in them.
    params = dict(dimension=dimension, is_stable=is_stable, num_keys=num_keys)
    outs = e.bind(P.sort_p, *primals, **params)
    touts: list[Tangent] = [Zero(tangent_aval(v.aval)) for v in outs]
    nz = [(i, t) for i, t in enumerate(tangents) if not isinstance(t, Zero)]
    if nz:
        moved = e.bind(P.sort_p, *primals[:num_keys], *[t for _, t in nz], **params)
        for j, (i, _) in enumerate(nz):
            touts[i] = moved[num_keys + j]
    return outs, touts


jvp_rules[P.sort_p] = _sort_jvp


def _jit_jvp(e: Emitter, primals: Sequence[Atom], tangents: Sequence[Tangent], *, name: str,
             jaxpr: ClosedJaxpr, donated_invars: tuple[bool, ...], keep_unused: bool,
             inline: bool) -> tuple[list[Var], list[Tangent]]:
    nonzeros = [not isinstance(t, Zero) for t in tangents]
    new, out_nz = jvp_jaxpr(jaxpr.jaxpr, nonzeros)
    nz_tangents = [t for t in tangents if not isinstance(t, Zero)]
    # The call keeps its name, as in JAX's printed jaxprs.
    outs = e.bind(P.jit_p, *primals, *nz_tangents, name=name,
                  jaxpr=ClosedJaxpr(new),
                  donated_invars=(False,) * (len(primals) + len(nz_tangents)),
                  keep_unused=keep_unused, inline=inline)
    n = len(jaxpr.jaxpr.outvars)
    touts: list[Tangent] = fill_in(out_nz, outs[n:], outs[:n], zero_tangent)
    return outs[:n], touts


jvp_rules[P.jit_p] = _jit_jvp

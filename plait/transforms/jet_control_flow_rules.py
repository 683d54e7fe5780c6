"""Taylor-mode (``jet``) rules of ``cond``, ``scan`` and ``while``: the body is rewritten by
:func:`~plait.transforms.jet.jet_jaxpr` and the loop carries the series along.  Also
``cumprod`` and ``reduce_prod``, whose series are those of a running product in a ``scan``.

Every floating carry carries a series (zeros where none flows in): a carry's series
may become nonzero after any iteration, and zeros cost only their arithmetic.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from plait.ir import primitives as P
from plait.ir.atoms import Atom, Var
from plait.ir.avals import ShapedArray, shaped
from plait.ir.jaxpr import ClosedJaxpr, Jaxpr
from plait.ir.lists import split_list
from plait.ir.primitives.control_flow import Platforms
from plait.transforms.emit import Emitter
from plait.transforms.jet import (
    JetResult,
    Series,
    defjet_composite,
    full_series,
    jet_jaxpr,
    jet_rules,
    series_order,
)
from plait.transforms.jvp import has_tangent_space


def _grouped(jj: Jaxpr, order: int, in_groups: Sequence[Sequence[bool]],
             out_groups: Sequence[Sequence[bool]]) -> Jaxpr:
    """``jj`` (from :func:`jet_jaxpr`: primals then the terms of the flagged inputs; primal
    outputs then the terms of every output) with inputs and outputs grouped as the loop
    primitives want them: per group, its primals, then the terms of its flagged members."""
    n_in = sum(len(g) for g in in_groups)
    terms = iter(jj.invars[n_in:])
    in_terms = [[next(terms) for _ in range(order)] if f else []
                for g in in_groups for f in g]
    n_out = sum(len(g) for g in out_groups)
    out_terms = [jj.outvars[n_out + j * order:n_out + (j + 1) * order] for j in range(n_out)]
    invars: list[Var] = []
    outvars: list[Atom] = []
    pos = 0
    for g in in_groups:
        invars += jj.invars[pos:pos + len(g)]
        invars += [t for j in range(pos, pos + len(g)) for t in in_terms[j]]
        pos += len(g)
    pos = 0
    for g in out_groups:
        outvars += jj.outvars[pos:pos + len(g)]
        outvars += [t for j, keep in zip(range(pos, pos + len(g)), g) if keep
                    for t in out_terms[j]]
        pos += len(g)
    return jj.replace(invars=tuple(invars), outvars=tuple(outvars), debug_info=None)


def _flat(series: Sequence[Series | None]) -> list[Atom]:
    return [t for s in series if s is not None for t in s]


def _unflatten(outs: Sequence[Atom], order: int, groups: Sequence[Sequence[bool]]
               ) -> tuple[list[Atom], list[Series | None]]:
    """The primal outputs and their series from a loop's outputs grouped as :func:`_grouped`."""
    primals: list[Atom] = []
    series: list[Series | None] = []
    it = iter(outs)
    for g in groups:
        primals += [next(it) for _ in g]
        series += [[next(it) for _ in range(order)] if keep else None for keep in g]
    return primals, series


def _cond(e: Emitter, primals: Sequence[Atom], series: Sequence[Series | None], *,
          branches: tuple[ClosedJaxpr, ...], branches_platforms: Platforms | None) -> JetResult:
    index, *ops = primals
    ss = series[1:]
    order = series_order(ss)
    nz = [s is not None for s in ss]
    out = [[has_tangent_space(v.aval) for v in branches[0].jaxpr.outvars]]
    new = tuple(ClosedJaxpr(_grouped(jet_jaxpr(b.jaxpr, order, nz), order, [nz], out),
                            b.consts) for b in branches)
    outs = e.bind(P.cond_p, index, *ops, *_flat(ss), branches=new,
                  branches_platforms=branches_platforms)
    return _unflatten(outs, order, out)


def _carry_series(e: Emitter, carry: Sequence[Atom], series: Sequence[Series | None],
                  order: int) -> tuple[list[bool], list[Series | None]]:
    c_nz = [has_tangent_space(c.aval) for c in carry]
    return c_nz, [full_series(e, c, s, order) if z else None
                  for c, s, z in zip(carry, series, c_nz)]


def _scan(e: Emitter, primals: Sequence[Atom], series: Sequence[Series | None], *,
          jaxpr: ClosedJaxpr, length: int, reverse: bool, num_consts: int, num_carry: int,
          unroll: Any) -> JetResult:
    order = series_order(series)
    consts, carry, xs = split_list(primals, num_consts, num_carry)
    sk, sc, sx = split_list(series, num_consts, num_carry)
    c_nz, sc = _carry_series(e, carry, sc, order)
    k_nz, x_nz = [s is not None for s in sk], [s is not None for s in sx]
    out = [c_nz, [has_tangent_space(v.aval) for v in jaxpr.jaxpr.outvars[num_carry:]]]
    body = _grouped(jet_jaxpr(jaxpr.jaxpr, order, k_nz + c_nz + x_nz), order,
                    [k_nz, c_nz, x_nz], out)
    outs = e.bind(P.scan_p, *consts, *_flat(sk), *carry, *_flat(sc), *xs, *_flat(sx),
                  jaxpr=ClosedJaxpr(body, jaxpr.consts), length=length, reverse=reverse,
                  num_consts=num_consts + sum(k_nz) * order,
                  num_carry=num_carry + sum(c_nz) * order, unroll=unroll)
    return _unflatten(outs, order, out)


def _while(e: Emitter, primals: Sequence[Atom], series: Sequence[Series | None], *,
           cond_jaxpr: ClosedJaxpr, body_jaxpr: ClosedJaxpr, cond_nconsts: int,
           body_nconsts: int) -> JetResult:
    order = series_order(series)
    cconsts, bconsts, carry = split_list(primals, cond_nconsts, body_nconsts)
    _, sb, sc = split_list(series, cond_nconsts, body_nconsts)
    c_nz, sc = _carry_series(e, carry, sc, order)
    b_nz = [s is not None for s in sb]
    body = _grouped(jet_jaxpr(body_jaxpr.jaxpr, order, b_nz + c_nz), order, [b_nz, c_nz],
                    [c_nz])
    # The predicate reads the primal carry only; it takes the terms and ignores them.
    cj = cond_jaxpr.jaxpr
    extra = [Var(c.aval) for c, z in zip(carry, c_nz) if z for _ in range(order)]
    cond = ClosedJaxpr(cj.replace(invars=cj.invars + tuple(extra), debug_info=None),
                       cond_jaxpr.consts)
    outs = e.bind(P.while_p, *cconsts, *bconsts, *_flat(sb), *carry, *_flat(sc),
                  cond_jaxpr=cond, body_jaxpr=ClosedJaxpr(body, body_jaxpr.consts),
                  cond_nconsts=cond_nconsts, body_nconsts=body_nconsts + sum(b_nz) * order)
    return _unflatten(outs, order, [c_nz])


jet_rules[P.cond_p] = _cond
jet_rules[P.scan_p] = _scan
jet_rules[P.while_p] = _while


def _running_product(e: Emitter, x: Atom, reverse: bool) -> tuple[Atom, Atom]:
    """The products of the leading-axis slices of ``x``, running and total, by a ``scan``
    (whose rule propagates series; the products of a series do not fit a linear map)."""
    a = shaped(x.aval)
    elem = ShapedArray(a.shape[1:], a.dtype)
    sub = Emitter()
    c, v = Var(elem), Var(elem)
    p = sub.mul(c, v)
    body = sub.builder.build([c, v], [p, p])
    total, running = e.bind(P.scan_p, e.full(elem, 1), x, jaxpr=ClosedJaxpr(body),
                            length=a.shape[0], reverse=reverse, num_consts=0, num_carry=1,
                            unroll=1)
    return running, total


def _cumprod(e: Emitter, x: Atom, *, axis: int, reverse: bool) -> Atom:
    nd = shaped(x.aval).ndim
    perm = [axis] + [d for d in range(nd) if d != axis]
    running, _ = _running_product(e, e.transpose(x, perm), reverse)
    return e.transpose(running, [perm.index(d) for d in range(nd)])


def _reduce_prod(e: Emitter, x: Atom, *, axes: tuple[int, ...]) -> Atom:
    a = shaped(x.aval)
    kept = [d for d in range(a.ndim) if d not in axes]
    n = 1
    for d in axes:
        n *= a.shape[d]
    lead = e.reshape(e.transpose(x, [*axes, *kept]), (n, *[a.shape[d] for d in kept]))
    return _running_product(e, lead, False)[1]


defjet_composite(P.cumprod_p, _cumprod)
defjet_composite(P.reduce_prod_p, _reduce_prod)

"""JVP, transposition, batching, partial evaluation and DCE of ``shard_map`` and the
collectives, as JAX 0.10.2 defines them for ``check_vma=False``.

The collectives that are linear (``psum``, ``all_gather``, ``reduce_scatter``,
``ppermute``, ``all_to_all``, ``pbroadcast``) differentiate to themselves;
``psum`` transposes to ``psum``, ``all_gather`` and ``reduce_scatter`` to each
other, ``ppermute`` to the inverse permutation, ``all_to_all`` to the one with
split and concatenated dimensions swapped.  Transposing a ``shard_map`` divides
the cotangent of a result by the number of devices its ``out_specs`` leave it
replicated over, and sums the cotangent of an argument over the devices its
``in_specs`` replicate it over: the two sides of "one value, many copies".

Under ``vmap(axis_name=...)`` a collective over the vmapped axis becomes array
code over the batch dimension (``psum`` names the dimension, as in JAX).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from plait.ir import axis_env
from plait.ir import dtypes as dt
from plait.ir import primitives as P
from plait.ir.atoms import Atom, Var
from plait.ir.avals import ShapedArray, shaped
from plait.ir.jaxpr import ClosedJaxpr, Eqn
from plait.ir.primitives.parallel import global_aval, manual_axes_sizes, named_axes
from plait.ir.sharding import Mesh, NamedSharding, PartitionSpec
from plait.transforms.dce import dce_jaxpr, dce_rules
from plait.transforms.emit import Emitter, Zero, target_sharding
from plait.transforms.inline import inline_jaxpr
from plait.transforms.jvp import (
    Tangent,
    defjvp_zero,
    deflinear,
    jvp_jaxpr,
    jvp_rules,
    zero_tangent,
)
from plait.transforms.partial_eval import partial_eval_jaxpr, pe_rules
from plait.transforms.transpose import Cotangent, UndefPrimal, transpose_jaxpr, transpose_rules
from plait.transforms.transpose_rules import deflinear_transpose
from plait.transforms.vmap import (
    Dim,
    SpmdAxis,
    batching_rules,
    collective_axes,
    move_axis,
    vmap_jaxpr,
    vmapped_axis,
    vmapped_spmd_axis,
    vmapping,
)

__all__: list[str] = []


# -- JVP --------------------------------------------------------------------------------

for _p in (P.psum_p, P.all_gather_p, P.reduce_scatter_p, P.ppermute_p, P.all_to_all_p,
           P.pbroadcast_p, P.pvary_p, P.sharding_constraint_p, P.reshard_p):
    deflinear(_p)


def _extremum_jvp(prim: Any) -> Any:
    # As reduce_max's: the tangent of the devices holding the extremum, averaged over ties.
    def rule(e: Emitter, primals: Sequence[Atom], tangents: Sequence[Tangent], *,
             axes: tuple[Any, ...], axis_index_groups: None
             ) -> tuple[list[Var], list[Tangent]]:
        outs = e.bind(prim, *primals, axes=axes, axis_index_groups=None)
        touts: list[Tangent] = []
        for x, t, y in zip(primals, tangents, outs):
            if type(t) is Zero:
                touts.append(zero_tangent(y))
                continue
            a = shaped(x.aval)
            dims = [d for d in axes if isinstance(d, int)]
            kept = [i for i in range(a.ndim) if i not in dims]
            yb = e.broadcast_in_dim(y, a.shape, kept) if dims else y
            hit = e.convert(e.bind1(P.eq_p, x, yb), a.dtype)
            # (Two psums: one linear in the tangent, one of primal values only.)
            num = e.bind(P.psum_p, e.mul(e.instantiate(t), hit), axes=axes,
                         axis_index_groups=None)[0]
            den = e.bind(P.psum_p, hit, axes=axes, axis_index_groups=None)[0]
            touts.append(e.div(num, den))
        return outs, touts
    return rule


jvp_rules[P.pmax_p] = _extremum_jvp(P.pmax_p)
jvp_rules[P.pmin_p] = _extremum_jvp(P.pmin_p)
defjvp_zero(P.axis_index_p)


def _fill(nonzero: Sequence[bool], values: Sequence[Any], like: Sequence[Atom]) -> list[Tangent]:
    it = iter(values)
    return [next(it) if nz else zero_tangent(x) for nz, x in zip(nonzero, like)]


def _shard_map_jvp(e: Emitter, primals: Sequence[Atom], tangents: Sequence[Tangent], *,
                   jaxpr: ClosedJaxpr, mesh: Mesh, in_specs: tuple[PartitionSpec, ...],
                   out_specs: tuple[PartitionSpec, ...], check_vma: bool,
                   newly_manual_axes: frozenset[str]) -> tuple[list[Var], list[Tangent]]:
    nonzeros = [type(t) is not Zero for t in tangents]
    params = dict(mesh=mesh, check_vma=check_vma, newly_manual_axes=newly_manual_axes)
    with axis_env.frame(manual_axes_sizes(params)):
        body, out_nz = jvp_jaxpr(jaxpr.jaxpr, nonzeros)
    nz_t = [t for t in tangents if type(t) is not Zero]
    n = len(out_specs)
    specs_t = tuple(s for s, nz in zip(in_specs, nonzeros) if nz)
    outs = e.bind(P.shard_map_p, *primals, *nz_t, jaxpr=ClosedJaxpr(body),
                  in_specs=in_specs + specs_t,
                  out_specs=out_specs + tuple(s for s, nz in zip(out_specs, out_nz) if nz),
                  **params)
    return outs[:n], _fill(out_nz, outs[n:], outs[:n])


jvp_rules[P.shard_map_p] = _shard_map_jvp


# -- transposition -----------------------------------------------------------------------

def _psum_t(e: Emitter, cts: Sequence[Atom | Zero], *xs: Any, axes: tuple[Any, ...],
            axis_index_groups: None) -> list[Cotangent]:
    names = named_axes(axes)
    dims = [a for a in axes if isinstance(a, int)]
    outs: list[Cotangent] = []
    for ct, x in zip(cts, xs):
        if type(x) is not UndefPrimal:
            outs.append(None)
            continue
        c = e.instantiate(ct)
        if names:
            c = e.bind(P.psum_p, c, axes=names, axis_index_groups=None)[0]
        if dims:
            a = shaped(x.aval)
            kept = [i for i in range(a.ndim) if i not in dims]
            c = e.broadcast_in_dim(c, a.shape, kept)
        outs.append(c)
    return outs


transpose_rules[P.psum_p] = _psum_t
# (Not psum, as in JAX: shard_map's transpose sums the cotangent of a replicated input
# over the devices, and psum transposes to psum; pvary only marks.)
deflinear_transpose(P.pvary_p, lambda e, ct, x, *, axes: [ct])


def _all_gather_t(e: Emitter, ct: Atom, x: Any, *, all_gather_dimension: int,
                  axis_index_groups: None, axis_name: Any, axis_size: int,
                  tiled: bool) -> list[Cotangent]:
    return [e.bind1(P.reduce_scatter_p, ct, axis_index_groups=None, axis_name=axis_name,
                    axis_size=axis_size, scatter_dimension=all_gather_dimension, tiled=tiled)]


def _reduce_scatter_t(e: Emitter, ct: Atom, x: Any, *, axis_index_groups: None,
                      axis_name: Any, axis_size: int, scatter_dimension: int,
                      tiled: bool) -> list[Cotangent]:
    return [e.bind1(P.all_gather_p, ct, all_gather_dimension=scatter_dimension,
                    axis_index_groups=None, axis_name=axis_name, axis_size=axis_size,
                    tiled=tiled)]


def _ppermute_t(e: Emitter, ct: Atom, x: Any, *, axis_name: Any,
                perm: tuple[tuple[int, int], ...]) -> list[Cotangent]:
    return [e.bind1(P.ppermute_p, ct, axis_name=axis_name,
                    perm=tuple((d, s) for s, d in perm))]


def _all_to_all_t(e: Emitter, ct: Atom, x: Any, *, axis_index_groups: None, axis_name: Any,
                  axis_size: int, concat_axis: int, split_axis: int,
                  tiled: bool) -> list[Cotangent]:
    return [e.bind1(P.all_to_all_p, ct, axis_index_groups=None, axis_name=axis_name,
                    axis_size=axis_size, concat_axis=split_axis, split_axis=concat_axis,
                    tiled=tiled)]


def _pbroadcast_t(e: Emitter, ct: Atom, x: Any, *, axis_name: Any,
                  source: int) -> list[Cotangent]:
    # Every device's cotangent flows back to the source: sum them there, zeros elsewhere.
    total = e.bind(P.psum_p, ct, axes=named_axes(axis_name), axis_index_groups=None)[0]
    index = e.bind1(P.axis_index_p, axis_name=named_axes(axis_name)[0])
    is_src = e.bind1(P.eq_p, index, e.literal(source, np.dtype(np.int32)))
    a = shaped(ct.aval)
    pred = e.broadcast_in_dim(is_src, a.shape, ())
    return [e.select_n(pred, e.zeros(a), total)]


def _sharding_constraint_t(e: Emitter, ct: Atom, x: Any, **params: Any) -> list[Cotangent]:
    return [e.bind1(P.sharding_constraint_p, ct, **params)]


deflinear_transpose(P.all_gather_p, _all_gather_t)
deflinear_transpose(P.reduce_scatter_p, _reduce_scatter_t)
deflinear_transpose(P.ppermute_p, _ppermute_t)
deflinear_transpose(P.all_to_all_p, _all_to_all_t)
deflinear_transpose(P.pbroadcast_p, _pbroadcast_t)
deflinear_transpose(P.sharding_constraint_p, _sharding_constraint_t)


def _reshard_t(e: Emitter, ct: Atom, x: Any, *, dst_sharding: NamedSharding) -> list[Cotangent]:
    # Back to the operand's sharding (replicated over the same mesh if it had none).
    a = shaped(x.aval)
    back = target_sharding(a, ct.aval) or NamedSharding(dst_sharding.mesh, PartitionSpec())
    return [e.bind1(P.reshard_p, ct, dst_sharding=back)]


deflinear_transpose(P.reshard_p, _reshard_t)


def _unmentioned(spec: PartitionSpec, manual: frozenset[str], mesh: Mesh) -> tuple[str, ...]:
    used = set(spec.axis_names())
    return tuple(n for n in mesh.axis_names if n in manual and n not in used)


def _shard_map_t(e: Emitter, cts: Sequence[Atom | Zero], *ins: Any, jaxpr: ClosedJaxpr,
                 mesh: Mesh, in_specs: tuple[PartitionSpec, ...],
                 out_specs: tuple[PartitionSpec, ...], check_vma: bool,
                 newly_manual_axes: frozenset[str]) -> Sequence[Cotangent]:
    params = dict(mesh=mesh, check_vma=check_vma, newly_manual_axes=newly_manual_axes)
    linear = [type(x) is UndefPrimal for x in ins]
    nonlin = [x for x in ins if type(x) is not UndefPrimal]
    cts_in = []
    for ct, spec in zip(cts, out_specs):
        c = e.instantiate(ct)
        n = mesh.axis_size(_unmentioned(spec, newly_manual_axes, mesh))
        a = shaped(c.aval)
        if n > 1 and dt.is_inexact(a.dtype):  # one value, held n times: 1/n per copy
            c = e.div(c, e.literal(n, a.dtype, weak=True))
        cts_in.append(c)
    with axis_env.frame(manual_axes_sizes(params)):
        body = transpose_jaxpr(jaxpr.jaxpr, linear)
        body = _sum_replicated(body, [s for s, lin in zip(in_specs, linear) if lin],
                               newly_manual_axes, mesh)
    lin_specs = tuple(s for s, lin in zip(in_specs, linear) if lin)
    outs = e.bind(P.shard_map_p, *nonlin, *cts_in, jaxpr=ClosedJaxpr(body),
                  in_specs=tuple(s for s, lin in zip(in_specs, linear) if not lin) + out_specs,
                  out_specs=lin_specs, **params)
    it = iter(outs)
    return [next(it) if lin else None for lin in linear]


def _sum_replicated(body: Any, specs: Sequence[PartitionSpec], manual: frozenset[str],
                    mesh: Mesh) -> Any:
    """``body`` with each result summed over the devices its spec replicates it over."""
    axes = [_unmentioned(s, manual, mesh) for s in specs]
    if not any(axes):
        return body
    e = Emitter()
    ins = [Var(v.aval) for v in body.invars]
    outs = inline_jaxpr(e, body, [], ins)
    outs = [e.bind(P.psum_p, o, axes=a, axis_index_groups=None)[0] if a else o
            for o, a in zip(outs, axes)]
    return e.builder.build(ins, outs, [])


transpose_rules[P.shard_map_p] = _shard_map_t


# -- batching ----------------------------------------------------------------------------

def _reduce_batch(prim: Any) -> Any:
    def rule(e: Emitter, size: int, vals: list[Atom], dims: list[Dim], *,
             axes: tuple[Any, ...], axis_index_groups: None) -> tuple[list[Atom], list[Dim]]:
        name = vmapped_axis()
        outs: list[Atom] = []
        out_dims: list[Dim] = []
        for x, d in zip(vals, dims):
            if name is not None and name in axes:
                rest = tuple(a if not isinstance(a, int) or d is None or a < d else a + 1
                             for a in axes if a != name)
                if d is None:  # the same value on every element: a sum is a product
                    y = e.bind(prim, x, axes=rest, axis_index_groups=None)[0] if rest else x
                    if prim is P.psum_p:
                        y = e.mul(y, e.literal(size, shaped(y.aval).dtype, weak=True))
                    outs.append(y)
                else:
                    outs.append(e.bind(prim, x, axes=(d, *rest), axis_index_groups=None)[0])
                out_dims.append(None)
            else:
                shifted = tuple(a if not isinstance(a, int) or d is None or a < d else a + 1
                                for a in axes)
                ints = [a for a in shifted if isinstance(a, int)]
                y = e.bind(prim, x, axes=shifted, axis_index_groups=None)[0]
                outs.append(y)
                out_dims.append(None if d is None else d - sum(1 for a in ints if a < d))
        return outs, out_dims
    return rule


batching_rules[P.psum_p] = _reduce_batch(P.psum_p)
batching_rules[P.pmax_p] = _reduce_batch(P.pmax_p)
batching_rules[P.pmin_p] = _reduce_batch(P.pmin_p)


def _over_vmapped(names: tuple[str, ...], what: str) -> bool:
    name = vmapped_axis()
    if name is None or name not in names:
        return False
    if len(names) > 1:
        raise NotImplementedError(f"{what} over the vmapped axis {name!r} together with other "
                                  f"axes {names}")
    return True


def _front(e: Emitter, x: Atom, d: Dim, size: int) -> Atom:
    if d is None:
        a = shaped(x.aval)
        return e.broadcast_in_dim(x, (size,) + a.shape, range(1, a.ndim + 1))
    return move_axis(e, x, d, 0)


def _all_gather_batch(e: Emitter, size: int, vals: list[Atom], dims: list[Dim], *,
                      all_gather_dimension: int, axis_index_groups: None, axis_name: Any,
                      axis_size: int, tiled: bool) -> tuple[list[Atom], list[Dim]]:
    (x,), (d,) = vals, dims
    if _over_vmapped(named_axes(axis_name), "all_gather"):
        # Every element gets the whole batch: the batch, moved to the gathered position.
        xb = _front(e, x, d, size)
        a = shaped(xb.aval)
        g = move_axis(e, xb, 0, all_gather_dimension)
        if tiled:
            shape = list(a.shape[1:])
            shape[all_gather_dimension] *= size
            g = e.reshape(g, shape)
        ga = shaped(g.aval)
        return [e.broadcast_in_dim(g, (size,) + ga.shape, range(1, ga.ndim + 1))], [0]
    xb = _front(e, x, d, size)
    out = e.bind1(P.all_gather_p, xb, all_gather_dimension=all_gather_dimension + 1,
                  axis_index_groups=None, axis_name=axis_name, axis_size=axis_size, tiled=tiled)
    return [out], [0]


def _reduce_scatter_batch(e: Emitter, size: int, vals: list[Atom], dims: list[Dim], *,
                          axis_index_groups: None, axis_name: Any, axis_size: int,
                          scatter_dimension: int, tiled: bool) -> tuple[list[Atom], list[Dim]]:
    (x,), (d,) = vals, dims
    xb = _front(e, x, d, size)
    if _over_vmapped(named_axes(axis_name), "psum_scatter"):
        total = e.reduce_sum(xb, [0])  # then element i keeps part i
        a = shaped(total.aval)
        sd = scatter_dimension
        shape = list(a.shape)
        parts = shape[:sd] + [size, shape[sd] // size] + shape[sd + 1:]
        split = e.reshape(total, parts)
        moved = move_axis(e, split, sd, 0)
        if not tiled:
            m = shaped(moved.aval)
            moved = e.reshape(moved, m.shape[:sd + 1] + m.shape[sd + 2:])
        return [moved], [0]
    out = e.bind1(P.reduce_scatter_p, xb, axis_index_groups=None, axis_name=axis_name,
                  axis_size=axis_size, scatter_dimension=scatter_dimension + 1, tiled=tiled)
    return [out], [0]


def _ppermute_batch(e: Emitter, size: int, vals: list[Atom], dims: list[Dim], *,
                    axis_name: Any, perm: tuple[tuple[int, int], ...]
                    ) -> tuple[list[Atom], list[Dim]]:
    (x,), (d,) = vals, dims
    xb = _front(e, x, d, size)
    if _over_vmapped(named_axes(axis_name), "ppermute"):
        # Element dst takes element src's value; elements nobody sends to get zeros.
        a = shaped(xb.aval)
        zero = e.zeros(ShapedArray((1,) + a.shape[1:], a.dtype))
        padded = e.bind1(P.concatenate_p, xb, zero, dimension=0)
        source = [size] * size
        for s, t in perm:
            source[t] = s
        parts = [e.bind1(P.slice_p, padded, start_indices=(i,) + (0,) * (a.ndim - 1),
                         limit_indices=(i + 1,) + a.shape[1:], strides=None) for i in source]
        return [e.bind1(P.concatenate_p, *parts, dimension=0)], [0]
    return [e.bind1(P.ppermute_p, xb, axis_name=axis_name, perm=perm)], [0]


def _axis_index_batch(e: Emitter, size: int, vals: list[Atom], dims: list[Dim], *,
                      axis_name: Any) -> tuple[list[Atom], list[Dim]]:
    if _over_vmapped(named_axes(axis_name), "axis_index"):
        return [e.bind1(P.iota_p, dtype=np.dtype(np.int32), shape=(size,), dimension=0,
                        sharding=None)], [0]
    return [e.bind1(P.axis_index_p, axis_name=axis_name)], [None]


def _all_to_all_vmapped(e: Emitter, xb: Atom, size: int, split: int, concat: int,
                        tiled: bool) -> Atom:
    """All-to-all among the elements of ``xb``'s leading (batch) dimension."""
    if not tiled:  # exchange along the split dimension, then move it to concat
        y = _all_to_all_vmapped(e, xb, size, split, split, True)
        return move_axis(e, y, split + 1, concat + 1)
    shape = list(shaped(xb.aval).shape)
    s = split + 1
    # (sender i, ..., part j, rest, ...) -> (receiver j, ..., sender i, rest, ...)
    y = e.reshape(xb, shape[:s] + [size, shape[s] // size] + shape[s + 1:])
    perm = list(range(len(shape) + 1))
    perm[0], perm[s] = perm[s], perm[0]
    y = e.transpose(y, perm)
    pos = concat + 1 if concat < split else (s + 1 if concat == split else concat + 2)
    target = pos if pos < s else pos - 1
    y = move_axis(e, y, s, target)  # the senders, just before the concatenated dimension
    ys = list(shaped(y.aval).shape)
    return e.reshape(y, ys[:target] + [ys[target] * ys[target + 1]] + ys[target + 2:])


def _all_to_all_batch(e: Emitter, size: int, vals: list[Atom], dims: list[Dim], *,
                      axis_index_groups: None, axis_name: Any, axis_size: int,
                      concat_axis: int, split_axis: int,
                      tiled: bool) -> tuple[list[Atom], list[Dim]]:
    (x,), (d,) = vals, dims
    xb = _front(e, x, d, size)
    if _over_vmapped(named_axes(axis_name), "all_to_all"):
        return [_all_to_all_vmapped(e, xb, size, split_axis, concat_axis, tiled)], [0]
    return [e.bind1(P.all_to_all_p, xb, axis_index_groups=None, axis_name=axis_name,
                    axis_size=axis_size, concat_axis=concat_axis + 1,
                    split_axis=split_axis + 1, tiled=tiled)], [0]


def _pbroadcast_batch(e: Emitter, size: int, vals: list[Atom], dims: list[Dim], *,
                      axis_name: Any, source: int) -> tuple[list[Atom], list[Dim]]:
    (x,), (d,) = vals, dims
    xb = _front(e, x, d, size)
    if _over_vmapped(named_axes(axis_name), "pbroadcast"):
        a = shaped(xb.aval)
        one = e.bind1(P.slice_p, xb, start_indices=(source,) + (0,) * (a.ndim - 1),
                      limit_indices=(source + 1,) + a.shape[1:], strides=None)
        return [e.broadcast_in_dim(e.reshape(one, a.shape[1:]), a.shape,
                                   range(1, a.ndim))], [0]
    return [e.bind1(P.pbroadcast_p, xb, axis_name=axis_name, source=source)], [0]


def _sharding_constraint_batch(e: Emitter, size: int, vals: list[Atom], dims: list[Dim], *,
                               sharding: NamedSharding, unconstrained_dims: frozenset[int],
                               **params: Any) -> tuple[list[Atom], list[Dim]]:
    # The batch dimension is split by the vmap's spmd_axis_name (whole without one).
    d = dims[0]
    assert d is not None
    spec = _insert_none(sharding.spec, shaped(vals[0].aval).ndim - 1, d, vmapped_spmd_axis())
    return [e.bind1(P.sharding_constraint_p, vals[0],
                    sharding=NamedSharding(sharding.mesh, spec, sharding.memory_kind),
                    unconstrained_dims=frozenset(u + (u >= d) for u in unconstrained_dims),
                    **params)], [d]


for _p, _key in ((P.psum_p, "axes"), (P.pmax_p, "axes"), (P.pmin_p, "axes"),
                 (P.all_gather_p, "axis_name"), (P.reduce_scatter_p, "axis_name"),
                 (P.ppermute_p, "axis_name"), (P.axis_index_p, "axis_name"),
                 (P.all_to_all_p, "axis_name"), (P.pbroadcast_p, "axis_name")):
    collective_axes[_p] = (lambda k: lambda params: named_axes(params[k]))(_key)

batching_rules[P.all_gather_p] = _all_gather_batch
batching_rules[P.reduce_scatter_p] = _reduce_scatter_batch
batching_rules[P.ppermute_p] = _ppermute_batch
batching_rules[P.axis_index_p] = _axis_index_batch
batching_rules[P.all_to_all_p] = _all_to_all_batch
batching_rules[P.sharding_constraint_p] = _sharding_constraint_batch


def _reshard_batch(e: Emitter, size: int, vals: list[Atom], dims: list[Dim], *,
                   dst_sharding: NamedSharding) -> tuple[list[Atom], list[Dim]]:
    # The batch dimension is whole; the others are split as asked.
    d = dims[0]
    assert d is not None
    spec = _insert_none(dst_sharding.spec, shaped(vals[0].aval).ndim - 1, d, vmapped_spmd_axis())
    return [e.bind1(P.reshard_p, vals[0], dst_sharding=NamedSharding(dst_sharding.mesh, spec))], [d]


batching_rules[P.reshard_p] = _reshard_batch
batching_rules[P.pbroadcast_p] = _pbroadcast_batch
batching_rules[P.pvary_p] = lambda e, size, vals, dims, *, axes: (
    [e.bind1(P.pvary_p, vals[0], axes=axes)], dims)


def _insert_none(spec: PartitionSpec, ndim: int, d: int, axis: SpmdAxis = None) -> PartitionSpec:
    """``spec`` (of an ``ndim``-dimensional value) with a new dimension ``d`` split over
    ``axis`` (whole if ``None``)."""
    parts = list(spec.padded(ndim))
    parts.insert(d, axis)
    return PartitionSpec(*parts)


def _shard_map_batch(e: Emitter, size: int, vals: list[Atom], dims: list[Dim], *,
                     jaxpr: ClosedJaxpr, mesh: Mesh, in_specs: tuple[PartitionSpec, ...],
                     out_specs: tuple[PartitionSpec, ...], check_vma: bool,
                     newly_manual_axes: frozenset[str]) -> tuple[list[Atom], list[Dim]]:
    params = dict(mesh=mesh, check_vma=check_vma, newly_manual_axes=newly_manual_axes)
    new_in = tuple(s if d is None else _insert_none(s, shaped(v.aval).ndim - 1, d)
                   for s, d, v in zip(in_specs, dims, vals))
    body_outs = jaxpr.jaxpr.outvars
    new_out = tuple(_insert_none(s, shaped(o.aval).ndim, 0) for s, o in zip(out_specs, body_outs))
    with axis_env.frame(manual_axes_sizes(params)), vmapping(None):
        body = vmap_jaxpr(jaxpr.jaxpr, size, dims, [0] * len(body_outs))
    outs = e.bind(P.shard_map_p, *vals, jaxpr=ClosedJaxpr(body), in_specs=new_in,
                  out_specs=new_out, **params)
    return list(outs), [0] * len(outs)


batching_rules[P.shard_map_p] = _shard_map_batch


# -- partial evaluation and DCE -----------------------------------------------------------

def _shard_map_pe(eqn: Eqn, unknowns: Sequence[bool]
                  ) -> tuple[Eqn | None, Eqn | None, list[bool], list[Var]]:
    p = eqn.params
    mesh: Mesh = p["mesh"]
    manual: frozenset[str] = p["newly_manual_axes"]
    with axis_env.frame(manual_axes_sizes(p)):
        known, unknown, out_unk, nres = partial_eval_jaxpr(p["jaxpr"].jaxpr, unknowns)
        known, unknown = _stacked_residuals(known, unknown, nres)
    all_axes = tuple(n for n in mesh.axis_names if n in manual)
    res_spec = PartitionSpec(all_axes[0] if len(all_axes) == 1 else all_axes)
    res_avals = [v.aval for v in known.outvars[len(known.outvars) - nres:]]
    residuals = [Var(global_aval(mesh, res_spec, shaped(a), manual)) for a in res_avals]
    in_specs, out_specs = p["in_specs"], p["out_specs"]
    k_in = [a for a, u in zip(eqn.invars, unknowns) if not u]
    u_in = [a for a, u in zip(eqn.invars, unknowns) if u]
    k_out = [v for v, u in zip(eqn.outvars, out_unk) if not u]
    u_out = [v for v, u in zip(eqn.outvars, out_unk) if u]
    known_eqn = eqn.replace(
        invars=tuple(k_in), outvars=tuple(k_out + residuals), effects=known.effects,
        params=p.replace(jaxpr=ClosedJaxpr(known),
                         in_specs=tuple(s for s, u in zip(in_specs, unknowns) if not u),
                         out_specs=tuple(s for s, u in zip(out_specs, out_unk) if not u)
                         + (res_spec,) * nres))
    unknown_eqn = eqn.replace(
        invars=tuple(residuals + u_in), outvars=tuple(u_out), effects=unknown.effects,
        params=p.replace(jaxpr=ClosedJaxpr(unknown),
                         in_specs=(res_spec,) * nres
                         + tuple(s for s, u in zip(in_specs, unknowns) if u),
                         out_specs=tuple(s for s, u in zip(out_specs, out_unk) if u)))
    return known_eqn, unknown_eqn, list(out_unk), residuals


def _stacked_residuals(known: Any, unknown: Any, nres: int) -> tuple[Any, Any]:
    """Per-device residuals gain a leading dimension of 1 (the devices stack them along
    it); the unknown side drops it again."""
    if nres == 0:
        return known, unknown
    e = Emitter()
    ins = [Var(v.aval) for v in known.invars]
    consts = [Var(v.aval) for v in known.constvars]
    outs = inline_jaxpr(e, known, consts, ins)
    n = len(outs) - nres
    outs = outs[:n] + [e.reshape(r, (1,) + shaped(r.aval).shape) for r in outs[n:]]
    known = e.builder.build(ins, outs, consts)
    e = Emitter()
    res = [Var(shaped(v.aval).update(shape=(1,) + shaped(v.aval).shape))
           for v in unknown.invars[:nres]]
    rest = [Var(v.aval) for v in unknown.invars[nres:]]
    consts = [Var(v.aval) for v in unknown.constvars]
    inner: list[Atom] = [e.reshape(r, shaped(r.aval).shape[1:]) for r in res]
    outs = inline_jaxpr(e, unknown, consts, [*inner, *rest])
    return known, e.builder.build(res + rest, outs, consts)


def _shard_map_dce(eqn: Eqn, used_outputs: Sequence[bool]) -> tuple[Eqn | None, list[bool]]:
    if not any(used_outputs) and not eqn.effects:
        return None, [False] * len(eqn.invars)
    p = eqn.params
    pruned, used_in = dce_jaxpr(p["jaxpr"].jaxpr, used_outputs, prune_invars=True)
    params = p.replace(jaxpr=ClosedJaxpr(pruned),
                       in_specs=tuple(s for s, u in zip(p["in_specs"], used_in) if u),
                       out_specs=tuple(s for s, u in zip(p["out_specs"], used_outputs) if u))
    new = eqn.replace(invars=tuple(a for a, u in zip(eqn.invars, used_in) if u),
                      outvars=tuple(v for v, u in zip(eqn.outvars, used_outputs) if u),
                      params=params)
    return new, [True] * len(new.invars)


pe_rules[P.shard_map_p] = _shard_map_pe
dce_rules[P.shard_map_p] = _shard_map_dce

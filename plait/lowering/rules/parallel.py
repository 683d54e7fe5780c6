"""Lowering of ``shard_map``, the collectives and ``sharding_constraint`` to StableHLO
with Shardy's ops, as JAX 0.10.2 lowers them: ``sdy.manual_computation`` for a
per-device body, ``stablehlo.all_reduce``/``all_gather``/``reduce_scatter``/
``collective_permute``/``all_to_all`` with replica groups of mesh positions, and
``stablehlo.partition_id`` arithmetic for ``axis_index``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from plait.ir import dtypes as dt
from plait.ir import primitives as P
from plait.ir.avals import ShapedArray, shaped
from plait.ir.jaxpr import ClosedJaxpr
from plait.ir.primitives.parallel import named_axes
from plait.ir.sharding import AbstractMesh, Mesh, NamedSharding, PartitionSpec
from plait.lowering.emitter import Value, tensor_type
from plait.lowering.lower import LoweringContext, lower_body, lowering_rules
from plait.lowering.rules._util import reduce_region, register
from plait.lowering.rules.structural import MONOIDS
from plait.lowering.shardy import sharding_attr

__all__: list[str] = []


def _mesh(ctx: LoweringContext, what: str) -> Mesh:
    mesh: Mesh | None = ctx.module.mesh
    if mesh is None:
        raise NotImplementedError(f"{what} outside shard_map: its axes are not bound to devices")
    return mesh


def _groups(mesh: Mesh, names: Sequence[str]) -> np.ndarray:
    """The replica groups (device positions) of a collective over ``names``: one group
    per combination of the other axes; inside a group, ``names`` row-major."""
    idx = [mesh.axis_names.index(n) for n in names]
    rest = [i for i in range(len(mesh.axis_names)) if i not in idx]
    pos = mesh.positions().transpose(rest + idx)
    size = int(np.prod([mesh.axis_sizes[i] for i in idx], dtype=np.int64))
    return pos.reshape(-1, size)


def _dense_i64(a: np.ndarray) -> str:
    rows = ", ".join("[" + ", ".join(str(int(v)) for v in row) + "]" for row in a)
    return f"dense<[{rows}]> : tensor<{a.shape[0]}x{a.shape[1]}xi64>"


# (JAX 0.10.2 gives every collective of a module this handle.)
_CHANNEL = "channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>"


def _all_reduce(ctx: LoweringContext, x: Value, aval: ShapedArray, names: Sequence[str],
                op: str) -> Value:
    fn = ctx.fn
    groups = _groups(_mesh(ctx, "a collective"), names)
    region = reduce_region(fn, op, aval.dtype)
    return fn.op1("stablehlo.all_reduce", [x], tensor_type(aval),
                  f"{_CHANNEL}, replica_groups = {_dense_i64(groups)}, "
                  "use_global_device_ids", regions=[region])


def _reduction(prim: Any) -> Any:
    op = {P.psum_p: "stablehlo.add", P.pmax_p: "stablehlo.maximum",
          P.pmin_p: "stablehlo.minimum"}[prim]
    local = {P.psum_p: P.reduce_sum_p, P.pmax_p: P.reduce_max_p, P.pmin_p: P.reduce_min_p}[prim]

    def rule(ctx: LoweringContext, *xs: Value, axes: tuple[Any, ...],
             axis_index_groups: None) -> list[Value]:
        dims = tuple(a for a in axes if isinstance(a, int))
        names = named_axes(axes)
        outs = []
        for x, a_in, a_out in zip(xs, ctx.avals_in, ctx.avals_out):
            if dims:  # dimensions of a vmapped axis: a local reduction
                x = _local_reduce(ctx, local, x, shaped(a_in), shaped(a_out), dims)
            outs.append(_all_reduce(ctx, x, shaped(a_out), names, op) if names else x)
        return outs
    return rule


def _local_reduce(ctx: LoweringContext, prim: Any, x: Value, a_in: ShapedArray,
                  a_out: ShapedArray, dims: tuple[int, ...]) -> Value:
    fn = ctx.fn
    op, identity = MONOIDS[prim]
    init = fn.constant(np.asarray(identity(a_in.dtype), a_in.dtype), ShapedArray((), a_in.dtype))
    region = reduce_region(fn, op, a_in.dtype)
    return fn.op1("stablehlo.reduce", [x, init], tensor_type(a_out),
                  f"dimensions = array<i64: {', '.join(map(str, dims))}>", regions=[region])


for _p in (P.psum_p, P.pmax_p, P.pmin_p):
    lowering_rules[_p] = _reduction(_p)


def _reshape(ctx: LoweringContext, x: Value, shape: Sequence[int], dtype: Any) -> Value:
    return ctx.fn.op1("stablehlo.reshape", [x], tensor_type((tuple(shape), dtype)))


@register(P.all_gather_p)
def _all_gather(ctx: LoweringContext, x: Value, *, all_gather_dimension: int,
                axis_index_groups: None, axis_name: Any, axis_size: int,
                tiled: bool) -> list[Value]:
    a, out = shaped(ctx.avals_in[0]), shaped(ctx.avals_out[0])
    d = all_gather_dimension
    if not tiled:  # gather along a new dimension of size 1
        shape = list(a.shape)
        shape.insert(d, 1)
        x = _reshape(ctx, x, shape, a.dtype)
    groups = _groups(_mesh(ctx, "all_gather"), named_axes(axis_name))
    return [ctx.fn.op1("stablehlo.all_gather", [x], tensor_type(out),
                       f"all_gather_dim = {d} : i64, {_CHANNEL}, "
                       f"replica_groups = {_dense_i64(groups)}, use_global_device_ids")]


@register(P.reduce_scatter_p)
def _reduce_scatter(ctx: LoweringContext, x: Value, *, axis_index_groups: None,
                    axis_name: Any, axis_size: int, scatter_dimension: int,
                    tiled: bool) -> list[Value]:
    a, out = shaped(ctx.avals_in[0]), shaped(ctx.avals_out[0])
    d = scatter_dimension
    shape = list(a.shape)
    shape[d] //= axis_size
    groups = _groups(_mesh(ctx, "psum_scatter"), named_axes(axis_name))
    region = reduce_region(ctx.fn, "stablehlo.add", a.dtype)
    r = ctx.fn.op1("stablehlo.reduce_scatter", [x], tensor_type((tuple(shape), a.dtype)),
                   f"{_CHANNEL}, replica_groups = {_dense_i64(groups)}, "
                   f"scatter_dimension = {d} : i64, use_global_device_ids", regions=[region])
    return [r if tiled else _reshape(ctx, r, out.shape, a.dtype)]


def _global_pairs(mesh: Mesh, names: Sequence[str],
                  perm: Sequence[tuple[int, int]]) -> np.ndarray:
    groups = _groups(mesh, names)
    pairs = [(g[s], g[d]) for g in groups for s, d in perm]
    return np.asarray(pairs, dtype=np.int64).reshape(-1, 2)


@register(P.ppermute_p)
def _ppermute(ctx: LoweringContext, x: Value, *, axis_name: Any,
              perm: tuple[tuple[int, int], ...]) -> list[Value]:
    pairs = _global_pairs(_mesh(ctx, "ppermute"), named_axes(axis_name), perm)
    return [ctx.fn.op1("stablehlo.collective_permute", [x], tensor_type(ctx.avals_out[0]),
                       f"{_CHANNEL}, source_target_pairs = {_dense_i64(pairs)}")]


def _axis_index_value(ctx: LoweringContext, name: str) -> Value:
    fn = ctx.fn
    mesh = _mesh(ctx, "axis_index")
    i = mesh.axis_names.index(name)
    stride = int(np.prod(mesh.axis_sizes[i + 1:], dtype=np.int64))
    u32 = ShapedArray((), dt.uint32)
    c_stride = fn.constant(np.asarray(stride, np.uint32), u32)
    c_size = fn.constant(np.asarray(mesh.axis_sizes[i], np.uint32), u32)
    pid = fn.op1("stablehlo.partition_id", [], "tensor<ui32>")
    q = fn.op1("stablehlo.divide", [pid, c_stride], "tensor<ui32>")
    r = fn.op1("stablehlo.remainder", [q, c_size], "tensor<ui32>")
    return fn.op1("stablehlo.convert", [r], "tensor<i32>")


@register(P.axis_index_p)
def _axis_index(ctx: LoweringContext, *, axis_name: Any) -> list[Value]:
    return [_axis_index_value(ctx, n) for n in named_axes(axis_name)][:1]


@register(P.pvary_p)
def _pvary(ctx: LoweringContext, x: Value, *, axes: tuple[str, ...]) -> list[Value]:
    return [x]  # (a type-level mark; JAX lowers it to nothing too)


@register(P.pbroadcast_p)
def _pbroadcast(ctx: LoweringContext, x: Value, *, axis_name: Any, source: int) -> list[Value]:
    # (JAX has no lowering of it): keep the source's value, zeros elsewhere, and sum.
    fn = ctx.fn
    a = shaped(ctx.avals_in[0])
    names = named_axes(axis_name)
    index = _axis_index_value(ctx, names[0])
    i32 = ShapedArray((), dt.int32)
    is_src = fn.op1("stablehlo.compare", [index, fn.constant(np.asarray(source, np.int32), i32)],
                    "tensor<i1>", "comparison_direction = #stablehlo<comparison_direction EQ>, "
                    "compare_type = #stablehlo<comparison_type SIGNED>")
    pred = fn.op1("stablehlo.broadcast_in_dim", [is_src], tensor_type((a.shape, dt.bool_)),
                  "broadcast_dimensions = array<i64>")
    zero = fn.constant(np.zeros(a.shape, a.dtype), a)
    kept = fn.op1("stablehlo.select", [pred, x, zero], tensor_type(a))
    op = "stablehlo.or" if a.dtype == dt.bool_ else "stablehlo.add"
    return [_all_reduce(ctx, kept, a, names, op)]


@register(P.all_to_all_p)
def _all_to_all(ctx: LoweringContext, x: Value, *, axis_index_groups: None, axis_name: Any,
                axis_size: int, concat_axis: int, split_axis: int,
                tiled: bool) -> list[Value]:
    fn = ctx.fn
    a, out = shaped(ctx.avals_in[0]), shaped(ctx.avals_out[0])
    names = named_axes(axis_name)
    groups = _groups(_mesh(ctx, "all_to_all"), names)
    n = groups.shape[1]
    concat = concat_axis if tiled else split_axis
    shape = list(a.shape)
    shape[split_axis] //= n
    shape[concat] *= n
    r = fn.op1("stablehlo.all_to_all", [x], tensor_type((tuple(shape), a.dtype)),
               f"{_CHANNEL}, concat_dimension = {concat} : i64, "
               f"replica_groups = {_dense_i64(groups)}, split_count = {n} : i64, "
               f"split_dimension = {split_axis} : i64")
    if tiled or split_axis == concat_axis:
        return [r]
    # Untiled: the dimension of the devices' parts moves from split_axis to concat_axis.
    perm = [i for i in range(a.ndim) if i != split_axis]
    perm.insert(concat_axis, split_axis)
    return [fn.op1("stablehlo.transpose", [r], tensor_type(out),
                   f"permutation = array<i64: {', '.join(map(str, perm))}>")]


@register(P.shard_map_p)
def _shard_map(ctx: LoweringContext, *args: Value, jaxpr: ClosedJaxpr, mesh: Mesh,
               in_specs: tuple[PartitionSpec, ...], out_specs: tuple[PartitionSpec, ...],
               check_vma: bool, newly_manual_axes: frozenset[str]) -> list[Value]:
    module, fn = ctx.module, ctx.fn
    if module.mesh is None or module.mesh != mesh:
        raise NotImplementedError(f"shard_map over {mesh} in a program over {module.mesh}")
    if module.manual:
        raise NotImplementedError("shard_map (or pmap) nested inside shard_map")
    body = jaxpr.jaxpr
    region = fn.region([tensor_type(v.aval) for v in body.invars])
    module.manual = newly_manual_axes
    try:
        consts = [fn.constant(c, shaped(v.aval)) for v, c in zip(body.constvars, jaxpr.consts)]
        outs = lower_body(module, fn, body, consts, region.args)
    finally:
        module.manual = frozenset()
    fn.close(region)
    ins = ", ".join(sharding_attr(s, shaped(a).ndim) for s, a in zip(in_specs, ctx.avals_in))
    outs_attr = ", ".join(sharding_attr(s, shaped(a).ndim)
                          for s, a in zip(out_specs, ctx.avals_out))
    manual = ", ".join(f'"{n}"' for n in mesh.axis_names if n in newly_manual_axes)
    attrs = (f"in_shardings = #sdy.sharding_per_value<[{ins}]>, "
             f"manual_axes = #sdy<manual_axes{{{manual}}}>, "
             f"out_shardings = #sdy.sharding_per_value<[{outs_attr}]>")
    return fn.op("sdy.manual_computation", list(args),
                 [tensor_type(a) for a in ctx.avals_out], attrs,
                 regions=[region.text(outs, terminator="sdy.return")])


@register(P.sharding_constraint_p)
def _sharding_constraint(ctx: LoweringContext, x: Value, *, sharding: NamedSharding,
                         layout: None, unconstrained_dims: frozenset[int],
                         context_mesh: object) -> list[Value]:
    module = ctx.module
    if module.manual:  # (inside a per-device body the layout is the body's own)
        return [x]
    if module.mesh is None or module.mesh != sharding.mesh:
        raise NotImplementedError(f"a sharding constraint over {sharding.mesh} in a program "
                                  f"over {module.mesh}")
    ndim = shaped(ctx.avals_in[0]).ndim
    return [ctx.fn.op1("sdy.sharding_constraint", [x], tensor_type(ctx.avals_out[0]),
                       f"sharding = #sdy.sharding{sharding_attr(sharding.spec, ndim)}")]


@register(P.reshard_p)
def _reshard(ctx: LoweringContext, x: Value, *, dst_sharding: NamedSharding) -> list[Value]:
    # The value is unchanged.  A sharded result is held to its type's sharding by the
    # constraint every sharded result gets; a replicated one needs its own.
    # A reshard to a mesh with other than Explicit axes only changes the type (the
    # casts of auto_axes and explicit_axes): the partitioner keeps its layout.
    out = shaped(ctx.avals_out[0])
    mesh = dst_sharding.mesh
    cast = isinstance(mesh, AbstractMesh) and len(mesh.explicit_axes) < len(mesh.axis_names)
    if ctx.module.mesh is None or ctx.module.manual or out.explicit_sharding is not None or cast:
        return [x]
    return [ctx.fn.op1("sdy.sharding_constraint", [x], tensor_type(out),
                       f"sharding = #sdy.sharding{sharding_attr(PartitionSpec(), out.ndim)}")]

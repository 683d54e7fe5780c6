"""Lowering of ``gather`` (``stablehlo.gather``) and the scatters (``stablehlo.scatter``
with the update computation as its region), with JAX's out-of-bounds handling:
a ``FILL_OR_DROP`` gather masks its result, a ``CLIP`` scatter clamps its indices."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from plait.ir import dtypes as dt
from plait.ir import primitives as P
from plait.ir.avals import ShapedArray, shaped
from plait.ir.jaxpr import Jaxpr
from plait.ir.primitives.indexing import (
    GatherDimensionNumbers,
    GatherScatterMode,
    ScatterDimensionNumbers,
    default_fill_value,
    window_sizes,
)
from plait.lowering.emitter import FuncEmitter, Value, i64_array, tensor_type
from plait.lowering.lower import LoweringContext, lower_body
from plait.lowering.rules._util import broadcast_to, compare, register, scalar_type


def _dims(**fields: Sequence[int] | int) -> str:
    # StableHLO omits empty dimension lists from the attribute.
    parts = [f"{k} = {v}" if isinstance(v, int) else f"{k} = [{', '.join(map(str, v))}]"
             for k, v in fields.items() if isinstance(v, int) or v]
    return ", ".join(parts)


def _bool(b: bool) -> str:
    return "true" if b else "false"


def _upper_bounds(fn: FuncEmitter, operand: ShapedArray, sizes: Sequence[int],
                  index_map: Sequence[int], indices: ShapedArray) -> Value:
    """The largest in-bounds start of each index vector entry, broadcast like the indices
    (saturated to the index dtype, whose values can then never exceed it)."""
    top = dt.int_range(indices.dtype)[1]
    bounds = np.array([min(operand.shape[d] - sizes[d], top) for d in index_map],
                      indices.dtype)
    const = fn.constant(bounds, ShapedArray(bounds.shape, indices.dtype))
    return fn.op1("stablehlo.broadcast_in_dim", [const], tensor_type(indices),
                  f"broadcast_dimensions = {i64_array([indices.ndim - 1])}")


def _zero_like(fn: FuncEmitter, aval: ShapedArray) -> Value:
    return broadcast_to(fn, fn.constant(0, ShapedArray((), aval.dtype)),
                        ShapedArray((), aval.dtype), aval.shape)


@register(P.gather_p)
def _gather(ctx: LoweringContext, operand: Value, indices: Value, *,
            dimension_numbers: GatherDimensionNumbers, slice_sizes: tuple[int, ...],
            indices_are_sorted: bool, unique_indices: bool, mode: GatherScatterMode,
            fill_value: Any) -> Sequence[Value]:
    fn = ctx.fn
    xa, ia = shaped(ctx.avals_in[0]), shaped(ctx.avals_in[1])
    out = shaped(ctx.avals_out[0])
    if out.size == 0:
        return [_zero_like(fn, out)]
    dn = dimension_numbers
    attrs = ("dimension_numbers = #stablehlo.gather<" + _dims(
        offset_dims=dn.offset_dims, collapsed_slice_dims=dn.collapsed_slice_dims,
        operand_batching_dims=dn.operand_batching_dims,
        start_indices_batching_dims=dn.start_indices_batching_dims,
        start_index_map=dn.start_index_map, index_vector_dim=ia.ndim - 1) + ">, "
        f"indices_are_sorted = {_bool(indices_are_sorted)}, "
        f"slice_sizes = {i64_array(slice_sizes)}")
    got = fn.op1("stablehlo.gather", [operand, indices], tensor_type(out), attrs)
    if mode != GatherScatterMode.FILL_OR_DROP:
        return [got]  # XLA clamps out-of-bounds starts itself
    # The whole window is filled when any start is out of bounds.
    lo = compare(fn, "GE", indices, _zero_like(fn, ia), ia.dtype, ia.shape)
    hi = compare(fn, "LE", indices, _upper_bounds(fn, xa, slice_sizes, dn.start_index_map, ia),
                 ia.dtype, ia.shape)
    ok = fn.op1("stablehlo.and", [lo, hi], tensor_type((ia.shape, dt.bool_)))
    init = fn.constant(True, ShapedArray((), dt.bool_))
    region = fn.region([scalar_type(dt.bool_)] * 2)
    r = fn.op1("stablehlo.and", region.args, scalar_type(dt.bool_))
    fn.close(region)
    ok = fn.op1("stablehlo.reduce", [ok, init], tensor_type((ia.shape[:-1], dt.bool_)),
                f"dimensions = {i64_array([ia.ndim - 1])}", [region.text([r])])
    batch_pos = [d for d in range(out.ndim) if d not in dn.offset_dims]
    mask = fn.op1("stablehlo.broadcast_in_dim", [ok], tensor_type((out.shape, dt.bool_)),
                  f"broadcast_dimensions = {i64_array(batch_pos)}")
    if fill_value is None:
        fill_value = default_fill_value(out.dtype)
    fill = broadcast_to(fn, fn.constant(fill_value, ShapedArray((), out.dtype)),
                        ShapedArray((), out.dtype), out.shape)
    return [fn.op1("stablehlo.select", [mask, got, fill], tensor_type(out))]


def _region(ctx: LoweringContext, update_jaxpr: Jaxpr | None, dtype: np.dtype[Any]) -> str:
    fn = ctx.fn
    region = fn.region([scalar_type(dtype)] * 2)
    if update_jaxpr is None:  # a plain scatter overwrites
        outs = [region.args[1]]
    else:
        outs = lower_body(ctx.module, fn, update_jaxpr, [], region.args)
    fn.close(region)
    return region.text(outs)


def _scatter(ctx: LoweringContext, operand: Value, indices: Value, updates: Value, *,
             dimension_numbers: ScatterDimensionNumbers, indices_are_sorted: bool,
             unique_indices: bool, mode: GatherScatterMode, update_jaxpr: Jaxpr | None,
             update_consts: tuple[()]) -> Sequence[Value]:
    fn = ctx.fn
    xa, ia, ua = (shaped(a) for a in ctx.avals_in)
    dn = dimension_numbers
    if mode == GatherScatterMode.CLIP:
        sizes = window_sizes(dn, xa.ndim, ua.shape)
        upper = _upper_bounds(fn, xa, sizes, dn.scatter_dims_to_operand_dims, ia)
        indices = fn.op1("stablehlo.clamp", [_zero_like(fn, ia), indices, upper],
                         tensor_type(ia))
    attrs = ("scatter_dimension_numbers = #stablehlo.scatter<" + _dims(
        update_window_dims=dn.update_window_dims, inserted_window_dims=dn.inserted_window_dims,
        input_batching_dims=dn.operand_batching_dims,
        scatter_indices_batching_dims=dn.scatter_indices_batching_dims,
        scatter_dims_to_operand_dims=dn.scatter_dims_to_operand_dims,
        index_vector_dim=ia.ndim - 1) + ">, "
        f"indices_are_sorted = {_bool(indices_are_sorted)}, "
        f"unique_indices = {_bool(unique_indices)}")
    region = _region(ctx, update_jaxpr, xa.dtype)
    return [fn.op1("stablehlo.scatter", [operand, indices, updates], tensor_type(xa), attrs,
                   [region])]


for _p in P.SCATTERS:
    register(_p)(_scatter)

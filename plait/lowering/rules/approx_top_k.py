"""Lowering of ``approx_top_k``, as JAX 0.10.2 lowers it off TPU: XLA's ``ApproxTopK``
custom call marked as a fallback, which XLA's CPU compiler turns into an exact sort,
with a comparison function the call names."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from plait.ir import dtypes as dt
from plait.ir import primitives as P
from plait.ir.avals import ShapedArray, shaped
from plait.lowering.emitter import FuncEmitter, Value, element_type, tensor_type
from plait.lowering.lower import LoweringContext, private_function, symbol
from plait.lowering.rules._util import compare, register


def _comparator(ctx: LoweringContext, dtype: np.dtype[Any], is_max_k: bool) -> str:
    direction = "GT" if is_max_k else "LT"
    scalar, index = ShapedArray((), dtype), ShapedArray((), dt.int32)

    def body(fn: FuncEmitter, args: list[Value]) -> Sequence[Value]:
        return [compare(fn, direction, args[0], args[1], dtype, ())]
    return private_function(ctx.module, f"top_k_{direction.lower()}_{element_type(dtype)}_"
                            "comparator", ("approx_top_k", dtype, is_max_k),
                            [scalar, scalar, index, index], [ShapedArray((), dt.bool_)], body)


@register(P.approx_top_k_p)
def _approx_top_k(ctx: LoweringContext, x: Value, *, k: int, reduction_dimension: int,
                  recall_target: float, is_max_k: bool, reduction_input_size_override: int,
                  aggregate_to_topk: bool) -> Sequence[Value]:
    fn = ctx.fn
    xa = shaped(ctx.avals_in[0])
    dim = reduction_dimension % xa.ndim
    comparator = _comparator(ctx, xa.dtype, is_max_k)
    iota = fn.op1("stablehlo.iota", [], tensor_type((xa.shape, dt.int32)),
                  f"iota_dimension = {dim} : i64")
    init = fn.constant(np.array(-np.inf if is_max_k else np.inf, xa.dtype),
                       ShapedArray((), xa.dtype))
    init_index = fn.constant(np.array(-1, np.int32), ShapedArray((), dt.int32))
    recall = float(np.float32(recall_target))
    props = ('api_version = 1 : i32, backend_config = "", call_target_name = "ApproxTopK", '
             f"called_computations = [{symbol(comparator)}], has_side_effect = false")
    config = (f"aggregate_to_topk = {str(aggregate_to_topk).lower()}, is_fallback = true, "
              f"recall_target = {recall!r} : f32, reduction_dim = {dim} : i64, "
              f"reduction_input_size_override = {reduction_input_size_override} : i64, "
              f"top_k = {k} : i64")
    return fn.op("stablehlo.custom_call", [x, iota, init, init_index],
                 [tensor_type(a) for a in ctx.avals_out], props,
                 discardable=f"mhlo.backend_config = {{{config}}}")

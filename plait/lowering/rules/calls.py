"""Lowering of ``jit``: a private function and a ``func.call``, as JAX lowers it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from plait.ir import primitives as P
from plait.ir.jaxpr import ClosedJaxpr
from plait.lowering.emitter import Value, tensor_type
from plait.lowering.lower import LoweringContext, lower_body, lower_sub_jaxpr, symbol
from plait.lowering.rules._util import register


@register(P.jit_p)
def _jit(ctx: LoweringContext, *args: Value, name: str, jaxpr: ClosedJaxpr,
         **_: Any) -> Sequence[Value]:
    if ctx.fn.dims is not None or any(e.ordered for e in jaxpr.effects):
        # Inlined where the dimension values (shape-polymorphic lowering) or the ordered
        # effects' tokens are at hand.
        return lower_body(ctx.module, ctx.fn, jaxpr.jaxpr, [], list(args))
    callee = lower_sub_jaxpr(ctx.module, name, jaxpr)
    return ctx.fn.op("func.call", list(args), [tensor_type(a) for a in ctx.avals_out],
                     f"callee = {symbol(callee)}")

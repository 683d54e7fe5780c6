"""Lowering of the primitives that have a decomposition (:mod:`plait.ir.decompositions`):
the decomposing jaxpr becomes a private function that the equation calls."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from plait.ir import primitives as P
from plait.ir.avals import shaped
from plait.ir.decompositions import decomposition
from plait.ir.primitive import Primitive
from plait.ir.primitives.special import DECOMPOSED
from plait.lowering.emitter import Value, tensor_type
from plait.lowering.lower import LoweringContext, lower_sub_jaxpr, lowering_rules, symbol


def _decomposed(prim: Primitive) -> Any:
    def rule(ctx: LoweringContext, *args: Value, **params: Any) -> Sequence[Value]:
        closed = decomposition(prim, [shaped(a) for a in ctx.avals_in], params)
        callee = lower_sub_jaxpr(ctx.module, prim.name, closed)
        return ctx.fn.op("func.call", list(args), [tensor_type(a) for a in ctx.avals_out],
                         f"callee = {symbol(callee)}")
    return rule


for _prim in (*DECOMPOSED, P.threefry2x32_p):
    lowering_rules[_prim] = _decomposed(_prim)

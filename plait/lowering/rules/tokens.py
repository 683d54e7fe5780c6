"""Lowering of ``create_token`` (``stablehlo.create_token``) and ``after_all``
(``stablehlo.after_all``), as JAX 0.10.2 lowers them."""

from __future__ import annotations

from collections.abc import Sequence

from plait.ir import primitives as P
from plait.lowering.emitter import TOKEN_TYPE, Value
from plait.lowering.lower import LoweringContext
from plait.lowering.rules._util import register


@register(P.create_token_p)
def _create_token(ctx: LoweringContext) -> Sequence[Value]:
    return [ctx.fn.op1("stablehlo.create_token", [], TOKEN_TYPE)]


@register(P.after_all_p)
def _after_all(ctx: LoweringContext, *tokens: Value) -> Sequence[Value]:
    return [ctx.fn.op1("stablehlo.after_all", list(tokens), TOKEN_TYPE)]

"""Lowering of ``composite``: a ``stablehlo.composite`` op naming its decomposition, a
private function, as JAX lowers it.  The attributes become MLIR attributes the way JAX
converts Python values: ``float`` to ``f64``, ``int`` to ``i64``, ``bool`` to ``i1``,
NumPy scalars to their own type, strings, dtypes (type attributes), arrays (dense
elements), tuples and lists (arrays of attributes) and dicts (dictionaries)."""

from __future__ import annotations

import re
from collections.abc import Sequence

from plait.ir.jaxpr import ClosedJaxpr
from plait.ir.primitives import composite_p
from plait.ir.primitives.composite import Attribute, attribute_value
from plait.lowering.attributes import mlir_attribute, mlir_key, mlir_string
from plait.lowering.emitter import Value, tensor_type
from plait.lowering.lower import LoweringContext, lower_body, private_function, symbol
from plait.lowering.rules._util import register

_NAMESPACED = re.compile(r"^[a-zA-Z][a-zA-Z0-9_]*([.][a-zA-Z0-9_$]+)+$")


@register(composite_p)
def _composite(ctx: LoweringContext, *args: Value, name: str,
               attributes: tuple[Attribute, ...], jaxpr: ClosedJaxpr,
               version: int) -> Sequence[Value]:
    if not _NAMESPACED.fullmatch(name):
        # (MLIR's verifier refuses the op; JAX reports it when lowering, as here.)
        raise ValueError(
            "Cannot lower jaxpr with verifier errors:\n\tname must be a valid namespaced op "
            "name, i.e. it must match the following regular expression: "
            f"{_NAMESPACED.pattern} e.g. \"my_namespace.my_op\"")
    # One function per composite equation, as JAX emits them (not shared by equal ones).
    closed, module = jaxpr, ctx.module
    callee = private_function(
        module, name, object(), closed.in_avals, closed.out_avals,
        lambda fn, xs: lower_body(module, fn, closed.jaxpr, [], xs))
    attrs = []
    for attribute in attributes:
        value = attribute_value(attribute)
        if value is not None:  # as in JAX, None means "no attribute"
            attrs.append(f"{mlir_key(attribute[0])} = {mlir_attribute(value)}")
    text = (f"composite_attributes = {{{', '.join(attrs)}}}, decomposition = {symbol(callee)}, "
            f"name = {mlir_string(name)}, version = {int(version)} : i32")
    return ctx.fn.op("stablehlo.composite", list(args), [tensor_type(a) for a in ctx.avals_out],
                     text)

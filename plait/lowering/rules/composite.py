"""Lowering of ``composite``: a ``stablehlo.composite`` op naming its decomposition, a
private function, as JAX lowers it.  The attributes become MLIR attributes the way JAX
converts Python values: ``float`` to ``f64``, ``int`` to ``i64``, ``bool`` to ``i1``,
NumPy scalars to their own type, strings, dtypes (type attributes), arrays (dense
elements), tuples and lists (arrays of attributes) and dicts (dictionaries)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import numpy as np

from plait.ir import dtypes as dt
from plait.ir.avals import ShapedArray
from plait.ir.jaxpr import ClosedJaxpr
from plait.ir.primitives import composite_p
from plait.ir.primitives.composite import Attribute, attribute_value
from plait.lowering.emitter import Value, dense_attr, element_type, tensor_type
from plait.lowering.lower import LoweringContext, lower_body, private_function, symbol
from plait.lowering.rules._util import register

_NAMESPACED = re.compile(r"^[a-zA-Z][a-zA-Z0-9_]*([.][a-zA-Z0-9_$]+)+$")


def _scalar(x: Any, dtype: np.dtype[Any]) -> str:
    """An integer or float attribute of type ``dtype``."""
    if dtype == dt.bool_:
        return "true" if x else "false"
    if dt.is_integer(dtype):
        return f"{int(x)} : {element_type(dtype)}"
    if dt.is_float(dtype):
        bits = np.asarray(x, dtype).view(f"u{dtype.itemsize}").item()
        return f"0x{bits:0{dtype.itemsize * 2}X} : {element_type(dtype)}"
    raise TypeError(f"Unsupported scalar attribute type: {dtype}")


def _string(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _key(k: str) -> str:
    # A dictionary key: bare when MLIR reads it so, quoted otherwise.
    bare = k and (k[0].isalpha() or k[0] == "_") and all(c.isalnum() or c in "_$." for c in k)
    return k if bare else _string(k)


def mlir_attribute(v: Any) -> str:
    """The MLIR attribute text of a Python attribute value.

    Raises:
      TypeError: a value MLIR has no attribute for (JAX's message).
    """
    if isinstance(v, bool | np.bool_):
        return _scalar(v, np.dtype(bool))
    if isinstance(v, int):
        return _scalar(v, np.dtype(np.int64))
    if isinstance(v, float):
        return _scalar(v, np.dtype(np.float64))
    if isinstance(v, np.generic):
        return _scalar(v, np.dtype(v.dtype))
    if isinstance(v, str):
        return _string(v)
    if isinstance(v, np.dtype):
        return element_type(v)
    if isinstance(v, np.ndarray):  # (0-d too: a dense tensor, as in JAX)
        return dense_attr(v, ShapedArray(v.shape, v.dtype))
    if isinstance(v, tuple | list):
        return "[" + ", ".join(mlir_attribute(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{_key(k)} = {mlir_attribute(x)}"
                               for k, x in sorted(v.items())) + "}"
    raise TypeError(f"No attribute handler defined for type: {type(v)}")


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
            attrs.append(f"{_key(attribute[0])} = {mlir_attribute(value)}")
    text = (f"composite_attributes = {{{', '.join(attrs)}}}, decomposition = {symbol(callee)}, "
            f"name = {_string(name)}, version = {int(version)} : i32")
    return ctx.fn.op("stablehlo.composite", list(args), [tensor_type(a) for a in ctx.avals_out],
                     text)

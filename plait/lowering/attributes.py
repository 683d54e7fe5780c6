"""MLIR attributes from Python values, as JAX's ``mlir.ir_attribute`` makes them.

A ``bool`` is an ``i1``, an ``int`` an ``i64``, a ``float`` an ``f64``; a NumPy scalar
keeps its type; a string (or bytes) is a string, a dtype a type attribute, an array a
dense elements attribute, a tuple or list an array of attributes, a mapping a
dictionary.  ``composite``'s attributes and ``ffi_call``'s are written this way.  A
custom call's layouts and operand aliases have their own attribute forms.
Floats are written by their bits, so that no decimal rounding can change them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from plait.ir import dtypes as dt
from plait.ir.avals import ShapedArray
from plait.ir.primitives.composite import HashableArray
from plait.lowering.emitter import dense_attr, element_type

__all__ = ["mlir_attribute", "mlir_string", "mlir_key", "layouts_attr", "aliases_attr"]

_BARE = re.compile(r"[A-Za-z_][A-Za-z0-9_$.]*\Z")


def mlir_string(s: str | bytes) -> str:
    """A string attribute: printable ASCII as it is, any other byte as ``\\XX``."""
    data = s.encode() if isinstance(s, str) else s
    return '"' + "".join(chr(b) if 32 <= b < 127 and b not in (34, 92) else f"\\{b:02X}"
                         for b in data) + '"'


def mlir_key(k: str) -> str:
    """A dictionary key: bare when MLIR reads it so, quoted otherwise."""
    return k if _BARE.match(k) else mlir_string(k)


def _scalar(x: Any, dtype: np.dtype[Any]) -> str:
    if dtype == dt.bool_:
        return "true" if x else "false"
    if dt.is_integer(dtype):
        return f"{int(x)} : {element_type(dtype)}"
    if dt.is_float(dtype):
        bits = np.asarray(x, dtype).view(f"u{dtype.itemsize}").item()
        return f"0x{bits:0{dtype.itemsize * 2}X} : {element_type(dtype)}"
    raise TypeError(f"Unsupported scalar attribute type: {dtype}")


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
    if isinstance(v, str | bytes):
        return mlir_string(v)
    if isinstance(v, np.dtype):
        return element_type(v)
    if isinstance(v, HashableArray):
        v = v.val
    if isinstance(v, np.ndarray):  # (0-d too: a dense tensor, as in JAX)
        return dense_attr(v, ShapedArray(v.shape, v.dtype))
    if isinstance(v, tuple | list):
        return "[" + ", ".join(mlir_attribute(x) for x in v) + "]"
    if isinstance(v, Mapping):
        return "{" + ", ".join(f"{mlir_key(k)} = {mlir_attribute(x)}"
                               for k, x in sorted(v.items())) + "}"
    raise TypeError(f"No attribute handler defined for type: {type(v)}")


def layouts_attr(layouts: Sequence[Sequence[int]]) -> str:
    """A custom call's ``operand_layouts``/``result_layouts``: one minor-to-major order
    of dimensions per value."""
    return "[" + ", ".join(f"dense<{list(lay)}> : tensor<{len(lay)}xindex>" if lay else
                           "dense<> : tensor<0xindex>" for lay in layouts) + "]"


def aliases_attr(aliases: Iterable[tuple[int, int]], single_result: bool) -> str:
    """A custom call's ``output_operand_aliases``: ``(operand, result)`` pairs, each
    result reusing its operand's buffer (a single result is not indexed)."""
    return "[" + ", ".join(
        f"#stablehlo.output_operand_alias<output_tuple_indices = "
        f"{'[]' if single_result else [result]}, operand_index = {operand}, "
        f"operand_tuple_indices = []>" for operand, result in aliases) + "]"

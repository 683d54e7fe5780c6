"""``sort``: a multi-operand sort along one dimension, keyed by the first operands."""

from __future__ import annotations

from plait.ir.avals import ShapedArray
from plait.ir.params import ParamDef, decode_bool, decode_int
from plait.ir.primitive import Primitive
from plait.ir.primitives._typing import ANY, check_axes, check_dtype, fail


def _sort_rule(*xs: ShapedArray, dimension: int, is_stable: bool,
               num_keys: int) -> tuple[ShapedArray, ...]:
    if not xs:
        fail("expected at least one operand, but got none")
    if any(x.shape != xs[0].shape for x in xs):
        fail("expected operands of equal shapes, but got " + ", ".join(x.str_short() for x in xs))
    if not 1 <= num_keys <= len(xs):
        fail(f"expected num_keys in [1, {len(xs)}], but got {num_keys}")
    for k in xs[:num_keys]:
        check_dtype(k, ANY, "sort key")  # complex keys sort by (real, imag), as in JAX
    check_axes((dimension,), xs[0].ndim, "dimension")
    return xs


sort_p = Primitive("sort", _sort_rule, (
    ParamDef("dimension", decode=decode_int),
    ParamDef("is_stable", True, decode=decode_bool),
    ParamDef("num_keys", 1, decode=decode_int),
), multiple_results=True)

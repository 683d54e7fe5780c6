"""``sort``: a multi-operand sort along one dimension, keyed by the first operands."""

from __future__ import annotations

from plait.ir import dtypes as dt
from plait.ir.avals import ShapedArray
from plait.ir.params import ParamDef, decode_bool, decode_float, decode_int
from plait.ir.primitive import Primitive
from plait.ir.primitives._typing import ANY, ORDERED, check_axes, check_dtype, fail


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


def _top_k_rule(x: ShapedArray, *, k: int, axis: int) -> tuple[ShapedArray, ...]:
    check_dtype(x, ORDERED, "top_k operand")
    if x.ndim == 0:
        fail(f"expected an operand of rank at least 1, but got {x.str_short()}")
    check_axes((axis,), x.ndim, "axis")
    if type(k) is not int or not 0 <= k <= x.shape[axis]:
        fail(f"expected k in [0, {x.shape[axis]}] (the size of axis {axis} of "
             f"{x.str_short()}), but got {k!r}")
    shape = x.shape[:axis] + (k,) + x.shape[axis + 1:]
    # (The indices are weak when the operand is: JAX's typing, kept for equal jaxprs.)
    return (ShapedArray(shape, x.dtype, x.weak_type), ShapedArray(shape, dt.int32, x.weak_type))


top_k_p = Primitive("top_k", _top_k_rule, (
    ParamDef("k", decode=decode_int),
    ParamDef("axis", decode=decode_int),
), multiple_results=True)
"""The ``k`` largest entries along ``axis`` (NaN first, ties by index) and their
indices."""


def _approx_top_k_rule(x: ShapedArray, *, k: int, reduction_dimension: int,
                       recall_target: float, is_max_k: bool,
                       reduction_input_size_override: int,
                       aggregate_to_topk: bool) -> tuple[ShapedArray, ...]:
    if not dt.is_float(x.dtype):
        fail(f"expected a floating-point operand, but got {x.str_short()}")
    if x.ndim == 0:
        fail(f"expected an operand of rank at least 1, but got {x.str_short()}")
    if not -x.ndim <= reduction_dimension < x.ndim:
        fail(f"expected reduction_dimension in [{-x.ndim}, {x.ndim}), but got "
             f"{reduction_dimension}")
    d = reduction_dimension % x.ndim
    if type(k) is not int or not 0 < k <= x.shape[d]:
        fail(f"expected k in [1, {x.shape[d]}] (the size of dimension {d} of "
             f"{x.str_short()}), but got {k!r}")
    if not aggregate_to_topk:
        fail("expected aggregate_to_topk=True: plait does not implement the approximate "
             "(TPU) reduction size")
    shape = x.shape[:d] + (k,) + x.shape[d + 1:]
    return (ShapedArray(shape, x.dtype, x.weak_type), ShapedArray(shape, dt.int32, x.weak_type))


approx_top_k_p = Primitive("approx_top_k", _approx_top_k_rule, (
    ParamDef("k", decode=decode_int),
    ParamDef("reduction_dimension", -1, decode=decode_int),
    ParamDef("recall_target", 0.95, decode=decode_float),
    ParamDef("is_max_k", True, decode=decode_bool),
    ParamDef("reduction_input_size_override", -1, decode=decode_int),
    ParamDef("aggregate_to_topk", True, decode=decode_bool),
), multiple_results=True)
"""The ``k`` largest (``is_max_k``) or smallest entries along ``reduction_dimension`` and
their indices.  On CPU the result is exact (XLA sorts), as in JAX: the largest with
NaN first, the smallest with NaN last, ties in index order."""

"""``dot_general``: contraction with batch dimensions, and :class:`Precision`, the
``precision`` of ``dot_general`` and ``conv_general_dilated`` (one per operand)."""

from __future__ import annotations

import enum
from typing import Any

import numpy as np

from plait.ir.avals import ShapedArray
from plait.ir.params import ParamDef, decode_nested_ints, decode_none, decode_optional_dtype
from plait.ir.primitive import Primitive
from plait.ir.primitives._typing import ANY, check_axes, check_dtype, check_same_dtypes, fail


class Precision(enum.IntEnum):
    """XLA's operand precision for contractions (JAX's ``lax.Precision``): how many
    bfloat16 passes accelerators spend; on CPU every one computes in full precision."""

    DEFAULT = 0
    HIGH = 1
    HIGHEST = 2

    def __repr__(self) -> str:  # as params print it: (Precision.HIGHEST, Precision.HIGHEST)
        return f"Precision.{self.name}"

    def __str__(self) -> str:
        return self.name


PrecisionPair = tuple[Precision, Precision] | None
"""``None`` (the default for both operands) or one precision per operand."""


def decode_precision(value: Any) -> PrecisionPair:
    """``None``, or two :class:`Precision` values (or their printed names)."""
    if value is None:
        return None
    if isinstance(value, tuple | list) and len(value) == 2:
        out = []
        for v in value:
            name = v[len("Precision."):] if isinstance(v, str) and v.startswith(
                "Precision.") else v
            if isinstance(v, Precision):
                out.append(v)
            elif isinstance(name, str) and name in Precision.__members__:
                out.append(Precision[name])
            else:
                break
        else:
            return (out[0], out[1])
    raise ValueError(f"expected None or two Precision values, but got {value!r}")


DimensionNumbers = tuple[tuple[tuple[int, ...], tuple[int, ...]],
                         tuple[tuple[int, ...], tuple[int, ...]]]


def _encode_dimension_numbers(dn: DimensionNumbers) -> str:
    # JAX prints the four index tuples as lists, which is shorter.
    (lc, rc), (lb, rb) = dn
    return str(((list(lc), list(rc)), (list(lb), list(rb))))


def _dot_general_rule(lhs: ShapedArray, rhs: ShapedArray, *, dimension_numbers: DimensionNumbers,
                      precision: PrecisionPair, preferred_element_type: np.dtype[Any] | None,
                      out_sharding: None) -> tuple[ShapedArray, ...]:
    check_dtype(lhs, ANY, "lhs")  # bool too, as JAX: or of ands
    check_dtype(rhs, ANY, "rhs")
    check_same_dtypes([lhs, rhs])
    try:
        (lc, rc), (lb, rb) = dimension_numbers
    except (TypeError, ValueError):
        fail(f"expected dimension_numbers ((lhs_contract, rhs_contract), (lhs_batch, rhs_batch)), "
             f"but got {dimension_numbers!r}")
    if len(lc) != len(rc) or len(lb) != len(rb):
        fail(f"expected contracting and batch dimensions in pairs, but got {dimension_numbers}")
    check_axes(tuple(lc) + tuple(lb), lhs.ndim, "lhs contracting and batch dimensions")
    check_axes(tuple(rc) + tuple(rb), rhs.ndim, "rhs contracting and batch dimensions")
    for kind, ls, rs in (("contracting", lc, rc), ("batch", lb, rb)):
        for a, b in zip(ls, rs):
            if lhs.shape[a] != rhs.shape[b]:
                fail(f"expected equal sizes for {kind} dimensions, but got lhs dimension {a} of "
                     f"{lhs.str_short()} and rhs dimension {b} of {rhs.str_short()}")
    batch = tuple(lhs.shape[a] for a in lb)
    lfree = tuple(d for i, d in enumerate(lhs.shape) if i not in lc and i not in lb)
    rfree = tuple(d for i, d in enumerate(rhs.shape) if i not in rc and i not in rb)
    dtype = lhs.dtype if preferred_element_type is None else preferred_element_type
    weak = lhs.weak_type and rhs.weak_type and preferred_element_type is None
    return (ShapedArray(batch + lfree + rfree, dtype, weak),)


dot_general_p = Primitive("dot_general", _dot_general_rule, (
    ParamDef("dimension_numbers", decode=decode_nested_ints, encode=_encode_dimension_numbers),
    ParamDef("precision", None, show="nondefault", decode=decode_precision),
    ParamDef("preferred_element_type", None, show="nondefault", decode=decode_optional_dtype),
    ParamDef("out_sharding", None, show="never", decode=decode_none),
))

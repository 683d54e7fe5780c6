"""Bit-level conversions, as JAX 0.10.2's primitives:

- ``bitcast_convert_type`` reinterprets the bits of its operand as ``new_dtype``.
  To a narrower dtype, a trailing dimension of size ``old_bits // new_bits`` is
  added; to a wider one, the trailing dimension (which must hold exactly
  ``new_bits // old_bits`` elements) is removed.  ``bool`` and complex values
  only "convert" to their own dtype.  The result is never weakly typed.
- ``reduce_precision`` rounds a float to ``exponent_bits`` and ``mantissa_bits``
  (XLA's ``ReducePrecision``: round to nearest even, overflow to infinity,
  results below the reduced normal range flushed to zero, NaNs kept).
- ``mulhi`` is the high half of the double-width product of two integers.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from plait.ir import dtypes as dt
from plait.ir.avals import ShapedArray
from plait.ir.params import ParamDef, decode_dtype, decode_int
from plait.ir.primitive import Primitive
from plait.ir.primitives._typing import BOOL, COMPLEX, FLOAT, INT, check_dtype, fail, nary

__all__ = ["bitcast_convert_type_p", "reduce_precision_p", "mulhi_p", "bitcast_shape"]


def bitcast_shape(shape: tuple[int, ...], old: np.dtype[Any],
                  new: np.dtype[Any]) -> tuple[int, ...]:
    """The result shape of bitcasting an array of ``shape`` from ``old`` to ``new``.

    Raises:
      JaxprTypeError: a widening cast whose trailing dimension has the wrong size.
    """
    old_bits, new_bits = dt.bit_width(old), dt.bit_width(new)  # int4 counts 4, not 8
    if old_bits == new_bits:
        return shape
    if old_bits > new_bits:
        return (*shape, old_bits // new_bits)
    last = shape[-1] if shape else 1
    if last * old_bits != new_bits:
        fail(f"expected a trailing dimension of {new_bits // old_bits} to bitcast "
             f"{ShapedArray(shape, old).str_short()} to {new.name}, but got "
             f"{'a scalar' if not shape else f'one of {last}'}")
    return shape[:-1]


def _bitcast_rule(x: ShapedArray, *, new_dtype: np.dtype[Any]) -> tuple[ShapedArray, ...]:
    if not isinstance(new_dtype, np.dtype) or new_dtype not in dt.SUPPORTED:
        fail(f"expected a supported new_dtype, but got {new_dtype!r}")
    check_dtype(x, BOOL | INT | FLOAT | COMPLEX)
    special = BOOL | COMPLEX
    if (x.dtype in special or new_dtype in special) and x.dtype != new_dtype:
        fail(f"expected bool or complex operands to be bitcast to their own dtype, but got "
             f"{x.str_short()} to {new_dtype.name}")
    return (ShapedArray(bitcast_shape(x.shape, x.dtype, new_dtype), new_dtype),)


bitcast_convert_type_p = Primitive("bitcast_convert_type", _bitcast_rule, (
    ParamDef("new_dtype", decode=decode_dtype),))


def _reduce_precision_rule(x: ShapedArray, *, exponent_bits: int,
                           mantissa_bits: int) -> tuple[ShapedArray, ...]:
    check_dtype(x, FLOAT)
    if type(exponent_bits) is not int or exponent_bits < 1:
        fail(f"expected a positive int exponent_bits, but got {exponent_bits!r}")
    if type(mantissa_bits) is not int or mantissa_bits < 0:
        fail(f"expected a non-negative int mantissa_bits, but got {mantissa_bits!r}")
    return (x,)


reduce_precision_p = Primitive("reduce_precision", _reduce_precision_rule, (
    ParamDef("exponent_bits", decode=decode_int),
    ParamDef("mantissa_bits", decode=decode_int)))

mulhi_p = Primitive("mulhi", nary([INT, INT]))
"""The upper half of the double-width product (signed for signed integers)."""

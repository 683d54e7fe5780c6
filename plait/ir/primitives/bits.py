"""Bit operations on integers: shifts (``shift_left``, ``shift_right_arithmetic``,
``shift_right_logical``), ``population_count`` and ``clz`` (JAX's names; XLA's
semantics: a shift by the bit width or more gives 0, or the sign, for arithmetic
right shifts)."""

from __future__ import annotations

from plait.ir.primitive import Primitive
from plait.ir.primitives._typing import INT, nary, unary

__all__ = ["shift_left_p", "shift_right_arithmetic_p", "shift_right_logical_p",
           "population_count_p", "clz_p"]

shift_left_p = Primitive("shift_left", nary([INT, INT]))
shift_right_arithmetic_p = Primitive("shift_right_arithmetic", nary([INT, INT]))
shift_right_logical_p = Primitive("shift_right_logical", nary([INT, INT]))
population_count_p = Primitive("population_count", unary(INT))
"""The number of set bits."""
clz_p = Primitive("clz", unary(INT))
"""The number of leading zero bits."""

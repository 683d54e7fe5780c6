"""``optimization_barrier``: the identity on any number of operands, which the
compiler may not move operations across, fuse through, or deduplicate (JAX
0.10.2's primitive, lowered to ``stablehlo.optimization_barrier``)."""

from __future__ import annotations

from plait.ir.avals import AbstractValue
from plait.ir.primitive import Primitive

__all__ = ["optimization_barrier_p"]


def _barrier_rule(*xs: AbstractValue) -> tuple[AbstractValue, ...]:
    return xs


optimization_barrier_p = Primitive("optimization_barrier", _barrier_rule,
                                   multiple_results=True)

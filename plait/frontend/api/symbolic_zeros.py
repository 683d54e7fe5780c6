"""The values custom rules see when defined with ``symbolic_zeros=True``, as JAX's
``jax.custom_derivatives``: a ``custom_vjp`` fwd receives each primal leaf as a
:class:`CustomVJPPrimal`, and a ``custom_jvp`` rule a :class:`SymbolicZero` as the
tangent of an input that cannot carry one.

plait traces the rules when the call is traced, so "perturbed" and "cannot carry a
tangent" are read from the program traced so far
(:func:`~plait.frontend.core.trace_queries.perturbed`, with ``ever``): they hold for any
later differentiation of that program.  Zero cotangents reach a bwd rule as arrays of
zeros, never as :class:`SymbolicZero` (rules that test for one take their general path,
with the same result).
"""

from __future__ import annotations

from typing import Any

import attrs
import numpy as np

from plait.frontend import lax
from plait.frontend.core.host_values import value_aval
from plait.frontend.core.tree_util import tree_map
from plait.ir import dtypes as dt
from plait.ir.avals import ShapedArray

__all__ = ["CustomVJPPrimal", "SymbolicZero", "zero_from_primal"]


@attrs.frozen(repr=False)
class CustomVJPPrimal:
    """A primal input of a ``custom_vjp`` fwd rule defined with ``symbolic_zeros=True``."""

    value: Any
    """The input."""
    perturbed: bool
    """Whether its derivative may be nonzero (see the module)."""

    def __repr__(self) -> str:
        return f"CustomVJPPrimal(value={self.value!r}, perturbed={self.perturbed})"


@attrs.frozen(repr=False)
class SymbolicZero:
    """A tangent or cotangent known to be zero, without an array (passed to rules
    defined with ``symbolic_zeros=True``; see the module)."""

    aval: ShapedArray
    """The type of the zero."""

    @property
    def shape(self) -> tuple[int, ...]:
        """The zero's shape."""
        return tuple(self.aval.shape)

    @property
    def dtype(self) -> Any:
        """The zero's dtype."""
        return self.aval.dtype

    def __repr__(self) -> str:
        return "SymbolicZero"

    @classmethod
    def from_primal_value(cls, value: Any) -> SymbolicZero:
        """The symbolic zero tangent of ``value`` (of its tangent type: ``float0`` for
        integers and booleans)."""
        return cls(value_aval(value).to_tangent_aval())


def zero_from_primal(val: Any, symbolic_zeros: bool = False) -> Any:
    """Zero tangents like ``val``, a pytree: :class:`SymbolicZero`\\ s, or arrays of
    zeros (host ``float0`` zeros for integers and booleans), as JAX's."""
    def zero(x: Any) -> Any:
        if symbolic_zeros:
            return SymbolicZero.from_primal_value(x)
        t = value_aval(x).to_tangent_aval()
        if t.dtype == dt.float0:
            return np.zeros(t.shape, dt.float0)
        return lax.full_like(x, 0)
    return tree_map(zero, val)

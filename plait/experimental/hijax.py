"""``plait.experimental.hijax``: operations with their own derivative rules, written as
classes (:class:`VJPHiPrimitive`), as ``jax.experimental.hijax``.  See
``docs/custom_derivatives.md``."""

# ``name as name`` marks a re-export for mypy --strict users.
from plait.frontend.api.hijax import GradAccum as GradAccum
from plait.frontend.api.hijax import NullAccum as NullAccum
from plait.frontend.api.hijax import ValAccum as ValAccum
from plait.frontend.api.hijax import VJPHiPrimitive as VJPHiPrimitive
from plait.frontend.api.hijax import Zero as Zero
from plait.frontend.api.hijax import instantiate_zeros as instantiate_zeros
from plait.ir.avals import ShapedArray as ShapedArray

__all__ = ["GradAccum", "NullAccum", "ShapedArray", "VJPHiPrimitive", "ValAccum", "Zero",
           "instantiate_zeros"]

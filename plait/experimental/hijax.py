"""``plait.experimental.hijax``: operations with their own derivative rules, written as
classes (:class:`VJPHiPrimitive`), as ``jax.experimental.hijax``.  See
``docs/custom_derivatives.md``.  The high-level types (:class:`HiType`,
:class:`MutableHiType`, :class:`HiPrimitive`) can be declared but not yet traced (see
:mod:`plait.frontend.api.hitypes`)."""

# ``name as name`` marks a re-export for mypy --strict users.
from plait.frontend.api.hijax import GradAccum as GradAccum
from plait.frontend.api.hijax import NullAccum as NullAccum
from plait.frontend.api.hijax import ValAccum as ValAccum
from plait.frontend.api.hijax import VJPHiPrimitive as VJPHiPrimitive
from plait.frontend.api.hijax import Zero as Zero
from plait.frontend.api.hijax import instantiate_zeros as instantiate_zeros
from plait.frontend.api.hitypes import AvalMutableQDD as AvalMutableQDD
from plait.frontend.api.hitypes import AvalQDD as AvalQDD
from plait.frontend.api.hitypes import HiPrimitive as HiPrimitive
from plait.frontend.api.hitypes import HiType as HiType
from plait.frontend.api.hitypes import MutableHiType as MutableHiType
from plait.frontend.api.hitypes import aval_method as aval_method
from plait.frontend.api.hitypes import aval_property as aval_property
from plait.frontend.api.hitypes import control_flow_allowed_effects as control_flow_allowed_effects
from plait.frontend.api.hitypes import register_hitype as register_hitype
from plait.frontend.api.user_primitives import is_undefined_primal as is_undefined_primal
from plait.frontend.core.refs import AbstractRef as AbstractRef
from plait.ir.avals import AbstractValue as AbstractValue
from plait.ir.avals import ShapedArray as ShapedArray

__all__ = ["AbstractRef", "AbstractValue", "AvalMutableQDD", "AvalQDD", "GradAccum",
           "HiPrimitive", "HiType", "MutableHiType", "NullAccum", "ShapedArray",
           "VJPHiPrimitive", "ValAccum", "Zero", "aval_method", "aval_property",
           "control_flow_allowed_effects", "instantiate_zeros", "is_undefined_primal",
           "register_hitype"]

"""``plait.interpreters.ad``: differentiation rules of user primitives, as
``jax.interpreters.ad``."""

# ``name as name`` marks a re-export for mypy --strict users.
from plait.frontend.api.hijax import Zero as Zero
from plait.frontend.api.hijax import instantiate_zeros as instantiate_zeros
from plait.frontend.api.user_primitives import UndefinedPrimal as UndefinedPrimal
from plait.frontend.api.user_primitives import defjvp as defjvp
from plait.frontend.api.user_primitives import deflinear as deflinear
from plait.frontend.api.user_primitives import is_undefined_primal as is_undefined_primal
from plait.frontend.api.user_primitives import primitive_jvps as primitive_jvps
from plait.frontend.api.user_primitives import primitive_transposes as primitive_transposes
from plait.frontend.core.trace_queries import JVPTracer as JVPTracer

__all__ = ["JVPTracer", "UndefinedPrimal", "Zero", "defjvp", "deflinear", "instantiate_zeros",
           "is_undefined_primal", "primitive_jvps", "primitive_transposes"]

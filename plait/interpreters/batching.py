"""``plait.interpreters.batching``: batching rules of user primitives, as
``jax.interpreters.batching``."""

# ``name as name`` marks a re-export for mypy --strict users.
from plait.frontend.api.user_primitives import axis_primitive_batchers as axis_primitive_batchers
from plait.frontend.api.user_primitives import bdim_at_front as bdim_at_front
from plait.frontend.api.user_primitives import broadcast as broadcast
from plait.frontend.api.user_primitives import defvectorized as defvectorized
from plait.frontend.api.user_primitives import primitive_batchers as primitive_batchers

__all__ = ["axis_primitive_batchers", "bdim_at_front", "broadcast", "defvectorized",
           "primitive_batchers"]

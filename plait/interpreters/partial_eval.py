"""``plait.interpreters.partial_eval``: tracing a function with some inputs known, as
``jax.interpreters.partial_eval``.  See ``docs/compat.md``."""

# ``name as name`` marks a re-export for mypy --strict users.
from plait.frontend.api.partial_eval import PartialVal as PartialVal
from plait.frontend.api.partial_eval import trace_to_jaxpr_dynamic as trace_to_jaxpr_dynamic
from plait.frontend.api.partial_eval import trace_to_jaxpr_nounits as trace_to_jaxpr_nounits

__all__ = ["PartialVal", "trace_to_jaxpr_dynamic", "trace_to_jaxpr_nounits"]

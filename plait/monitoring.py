"""``plait.monitoring``: listeners for what plait does, as ``jax.monitoring`` (see
:mod:`plait.ir.monitoring`).  plait reports, under JAX's event names, how long tracing
(``/jax/core/compile/jaxpr_trace_duration``), lowering
(``/jax/core/compile/jaxpr_to_mlir_module_duration``) and compiling
(``/jax/core/compile/backend_compile_duration``) each program took."""

# ``name as name`` marks a re-export for mypy --strict users.
from plait.ir.monitoring import clear_event_listeners as clear_event_listeners
from plait.ir.monitoring import record_event as record_event
from plait.ir.monitoring import record_event_duration_secs as record_event_duration_secs
from plait.ir.monitoring import record_event_time_span as record_event_time_span
from plait.ir.monitoring import record_scalar as record_scalar
from plait.ir.monitoring import (
    register_event_duration_secs_listener as register_event_duration_secs_listener,
)
from plait.ir.monitoring import register_event_listener as register_event_listener
from plait.ir.monitoring import (
    register_event_time_span_listener as register_event_time_span_listener,
)
from plait.ir.monitoring import register_scalar_listener as register_scalar_listener
from plait.ir.monitoring import (
    unregister_event_duration_listener as unregister_event_duration_listener,
)
from plait.ir.monitoring import unregister_event_listener as unregister_event_listener
from plait.ir.monitoring import (
    unregister_event_time_span_listener as unregister_event_time_span_listener,
)
from plait.ir.monitoring import unregister_scalar_listener as unregister_scalar_listener

__all__ = ["clear_event_listeners", "record_event", "record_event_duration_secs",
           "record_event_time_span", "record_scalar", "register_event_duration_secs_listener",
           "register_event_listener", "register_event_time_span_listener",
           "register_scalar_listener", "unregister_event_duration_listener",
           "unregister_event_listener", "unregister_event_time_span_listener",
           "unregister_scalar_listener"]

"""``plait.debug``: look at values while a program runs, as ``jax.debug``."""

# ``name as name`` marks a re-export for mypy --strict users.
from plait.frontend.api.callbacks import debug_callback as callback
from plait.frontend.api.callbacks import debug_log as log
from plait.frontend.api.callbacks import debug_print as print  # noqa: A004  (JAX's name)
from plait.frontend.api.debugger import breakpoint as breakpoint  # noqa: A004  (JAX's name)
from plait.frontend.api.visualize import visualize_array_sharding as visualize_array_sharding
from plait.frontend.api.visualize import visualize_sharding as visualize_sharding
from plait.ir.effects import DebugEffect as DebugEffect
from plait.ir.effects import OrderedDebugEffect as OrderedDebugEffect

__all__ = ["breakpoint", "callback", "print", "log", "visualize_array_sharding",
           "visualize_sharding", "DebugEffect", "OrderedDebugEffect"]

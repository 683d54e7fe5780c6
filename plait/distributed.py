"""``plait.distributed``: one run over several processes, as ``jax.distributed``."""

# ``name as name`` marks a re-export for mypy --strict users.
from plait.frontend.api.devices import initialize as initialize
from plait.frontend.api.devices import is_initialized as is_initialized
from plait.frontend.api.devices import shutdown as shutdown

__all__ = ["initialize", "is_initialized", "shutdown"]

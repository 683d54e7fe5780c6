"""``plait.experimental``: ``io_callback``, as ``jax.experimental``."""

# ``name as name`` marks a re-export for mypy --strict users.
from plait.frontend.api.callbacks import io_callback as io_callback

__all__ = ["io_callback"]

"""``plait.experimental``: ``io_callback`` and ``multihost_utils``, as ``jax.experimental``."""

# ``name as name`` marks a re-export for mypy --strict users.
from plait.experimental import multihost_utils as multihost_utils
from plait.frontend.api.callbacks import io_callback as io_callback

__all__ = ["io_callback", "multihost_utils"]

"""``plait.experimental``: ``io_callback``, ``checkify``, ``multihost_utils``,
``compilation_cache`` and ``hijax``, as ``jax.experimental``."""

# ``name as name`` marks a re-export for mypy --strict users.
from plait.experimental import checkify as checkify
from plait.experimental import compilation_cache as compilation_cache
from plait.experimental import hijax as hijax
from plait.experimental import multihost_utils as multihost_utils
from plait.frontend.api.callbacks import io_callback as io_callback

__all__ = ["checkify", "compilation_cache", "hijax", "io_callback", "multihost_utils"]

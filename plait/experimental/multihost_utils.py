"""``plait.experimental.multihost_utils``: gathering values from every process and
waiting for all of them, as ``jax.experimental.multihost_utils``."""

# ``name as name`` marks a re-export for mypy --strict users.
from plait.frontend.api.devices import process_allgather as process_allgather
from plait.frontend.api.devices import sync_global_devices as sync_global_devices

__all__ = ["process_allgather", "sync_global_devices"]

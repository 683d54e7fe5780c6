"""``plait.experimental.multihost_utils``: gathering values from every process, waiting
for all of them, broadcasting from one, and moving between process-local and global
arrays, as ``jax.experimental.multihost_utils``."""

# ``name as name`` marks a re-export for mypy --strict users.
from plait.frontend.api.devices import process_allgather as process_allgather
from plait.frontend.api.devices import sync_global_devices as sync_global_devices
from plait.frontend.api.multihost import ProcessFailureError as ProcessFailureError
from plait.frontend.api.multihost import assert_equal as assert_equal
from plait.frontend.api.multihost import broadcast_one_to_all as broadcast_one_to_all
from plait.frontend.api.multihost import (
    global_array_to_host_local_array as global_array_to_host_local_array,
)
from plait.frontend.api.multihost import (
    host_local_array_to_global_array as host_local_array_to_global_array,
)
from plait.frontend.api.multihost import live_devices as live_devices
from plait.frontend.api.multihost import (
    reached_preemption_sync_point as reached_preemption_sync_point,
)

__all__ = ["process_allgather", "sync_global_devices", "broadcast_one_to_all", "assert_equal",
           "host_local_array_to_global_array", "global_array_to_host_local_array",
           "reached_preemption_sync_point", "live_devices", "ProcessFailureError"]

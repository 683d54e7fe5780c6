"""``plait.experimental.array_serialization.serialization``: arrays written to and read
from TensorStore checkpoints in JAX's format (``GlobalAsyncCheckpointManager``,
``get_tensorstore_spec``), and the manager interface orbax tests its checkpointers
against, as ``jax.experimental.array_serialization.serialization``.  See
``docs/compat.md``."""

# ``name as name`` marks a re-export for mypy --strict users.
from plait.frontend.api.tensorstore_checkpoints import (
    GlobalAsyncCheckpointManager as GlobalAsyncCheckpointManager,
)
from plait.frontend.api.tensorstore_checkpoints import (
    GlobalAsyncCheckpointManagerBase as GlobalAsyncCheckpointManagerBase,
)
from plait.frontend.api.tensorstore_checkpoints import (
    get_tensorstore_spec as get_tensorstore_spec,
)

__all__ = ["GlobalAsyncCheckpointManager", "GlobalAsyncCheckpointManagerBase",
           "get_tensorstore_spec"]

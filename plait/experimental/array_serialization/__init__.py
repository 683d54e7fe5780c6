"""``plait.experimental.array_serialization``: the interface of JAX's asynchronous array
checkpointing (``jax.experimental.array_serialization``).  Checkpointing libraries
(orbax) bring their own serialization; plait serves the base class they name."""

# ``name as name`` marks a re-export for mypy --strict users.
from plait.experimental.array_serialization import serialization as serialization

__all__ = ["serialization"]

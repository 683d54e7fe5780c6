"""``plait.experimental.shard_alike``, as ``jax.experimental.shard_alike``: two values
sharded the same way (see :func:`shard_alike`)."""

from plait.frontend.api.partitioning import shard_alike as shard_alike

__all__ = ["shard_alike"]

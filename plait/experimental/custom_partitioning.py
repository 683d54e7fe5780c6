"""``plait.experimental.custom_partitioning``, as ``jax.experimental.custom_partitioning``:
a function with its own partitioning rules (see :class:`custom_partitioning`)."""

from plait.frontend.api.partitioning import custom_partitioning as custom_partitioning

__all__ = ["custom_partitioning"]

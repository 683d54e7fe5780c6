"""``plait.experimental.serialize_executable``: a compiled function as bytes and back,
as ``jax.experimental.serialize_executable``.  See ``docs/export.md``."""

# ``name as name`` marks a re-export for mypy --strict users.
from plait.frontend.api.serialize_executable import deserialize_and_load as deserialize_and_load
from plait.frontend.api.serialize_executable import serialize as serialize

__all__ = ["deserialize_and_load", "serialize"]

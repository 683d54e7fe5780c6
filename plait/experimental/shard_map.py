"""``plait.experimental.shard_map``: ``shard_map`` in its first form, as
``jax.experimental.shard_map`` (``shard_map(f, mesh, in_specs, out_specs, check_rep)``);
reading it warns that it is deprecated, as in JAX: new code uses
:func:`plait.shard_map`."""

from plait.frontend.api.shard_map import experimental_shard_map as _shard_map
from plait.frontend.core.deprecations import deprecated_getattr

__all__: list[str] = []  # (as in JAX: read through __getattr__, with a warning)

__getattr__ = deprecated_getattr(__name__, {"shard_map": (
    "jax.experimental.shard_map is deprecated in v0.8.0. Used jax.shard_map instead.",
    _shard_map)})

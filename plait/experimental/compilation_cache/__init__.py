"""``plait.experimental.compilation_cache``: the persistent compilation cache's older
entry point, as ``jax.experimental.compilation_cache`` (see
:mod:`plait.experimental.compilation_cache.compilation_cache`)."""

from plait.experimental.compilation_cache import compilation_cache as compilation_cache

__all__ = ["compilation_cache"]

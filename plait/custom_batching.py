"""``plait.custom_batching``: functions with a user-defined ``vmap`` (see
:mod:`plait.frontend.api.custom_batching`), as ``jax.custom_batching``."""

from plait.frontend.api.custom_batching import custom_vmap as custom_vmap
from plait.frontend.api.custom_batching import sequential_vmap as sequential_vmap

__all__ = ["custom_vmap", "sequential_vmap"]

"""``plait.experimental.sparse.random``: random sparse arrays, as JAX 0.10.2's
``jax.experimental.sparse.random``."""

# ``name as name`` marks a re-export for mypy --strict users.
from plait.frontend.sparse.operations import random_bcoo as random_bcoo

__all__ = ["random_bcoo"]

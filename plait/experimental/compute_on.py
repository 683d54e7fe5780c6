"""``plait.experimental.compute_on``: where computations run, as
``jax.experimental.compute_on`` (on the CPU, every compute type is the one device).
See ``docs/jit.md``."""

# ``name as name`` marks a re-export for mypy --strict users.
from plait.frontend.api.compute_on import compute_on as compute_on

__all__ = ["compute_on"]

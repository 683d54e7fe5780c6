"""``plait.experimental.sparse.transform``: ``sparsify``, as JAX 0.10.2's
``jax.experimental.sparse.transform`` serves it (its tracer classes are JAX internals,
not served)."""

# ``name as name`` marks a re-export for mypy --strict users.
from plait.frontend.sparse.bcoo import BCOO as BCOO
from plait.frontend.sparse.bcoo import sparsify as sparsify

__all__ = ["BCOO", "sparsify"]

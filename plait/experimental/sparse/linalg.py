"""``plait.experimental.sparse.linalg``: sparse linear algebra, as JAX 0.10.2's
``jax.experimental.sparse.linalg`` (see :mod:`plait.frontend.sparse.linalg`)."""

# ``name as name`` marks a re-export for mypy --strict users.
from plait.frontend.sparse.linalg import lobpcg_standard as lobpcg_standard
from plait.frontend.sparse.linalg import spsolve as spsolve

__all__ = ["lobpcg_standard", "spsolve"]

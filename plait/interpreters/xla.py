"""``plait.interpreters.xla``: how plait reads the data of an array-like type a library
registers, as ``jax.interpreters.xla``."""

# ``name as name`` marks a re-export for mypy --strict users.
from plait.frontend.core.array_likes import canonicalize_handlers as canonicalize_dtype_handlers

__all__ = ["canonicalize_dtype_handlers"]

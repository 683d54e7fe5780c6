"""``plait.interpreters``: where JAX code registers the rules of its own primitives
(``ad``, ``batching``, ``mlir``), as ``jax.interpreters``.  See ``docs/extend.md``."""

from plait.interpreters import ad as ad
from plait.interpreters import batching as batching
from plait.interpreters import mlir as mlir

__all__ = ["ad", "batching", "mlir"]

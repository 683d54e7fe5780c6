"""``plait.extend``: what JAX code that extends JAX imports from ``jax.extend``: ``core``
(primitives, jaxprs) and ``mlir`` (the MLIR bindings lowering rules build with).
See ``docs/extend.md``."""

from plait.extend import core as core

__all__ = ["core"]

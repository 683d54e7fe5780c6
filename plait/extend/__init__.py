"""``plait.extend``: what JAX code that extends JAX imports from ``jax.extend``: ``core``
(primitives, jaxprs), ``linear_util`` (wrapped functions) and ``mlir`` (the MLIR bindings
lowering rules build with).
See ``docs/extend.md``."""

from plait.extend import core as core
from plait.extend import linear_util as linear_util

__all__ = ["core", "linear_util"]

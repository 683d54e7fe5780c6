"""``plait.interpreters``: where JAX code registers the rules of its own primitives
(``ad``, ``batching``, ``mlir``), as ``jax.interpreters``; ``partial_eval``, tracing
with some inputs known; ``xla``, the data of registered array-like types; and ``pxla``,
which serves none of JAX's SPMD internals (for code that imports it).  See
``docs/extend.md``."""

from plait.interpreters import ad as ad
from plait.interpreters import batching as batching
from plait.interpreters import mlir as mlir
from plait.interpreters import partial_eval as partial_eval
from plait.interpreters import pxla as pxla
from plait.interpreters import xla as xla

__all__ = ["ad", "batching", "mlir", "partial_eval", "pxla", "xla"]

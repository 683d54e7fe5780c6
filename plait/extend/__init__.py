"""``plait.extend``: what JAX code that extends JAX imports from ``jax.extend``: ``core``
(primitives, jaxprs), ``linear_util`` (wrapped functions), ``mlir`` (the MLIR bindings
lowering rules build with), ``source_info_util`` (which code counts as the user's) and
``backend`` (the PJRT client) and ``ifrt_programs`` (jaxlib's IFRT program builders).
See ``docs/extend.md``."""

from plait.extend import backend as backend
from plait.extend import core as core
from plait.extend import ifrt_programs as ifrt_programs
from plait.extend import linear_util as linear_util
from plait.extend import source_info_util as source_info_util

__all__ = ["backend", "core", "ifrt_programs", "linear_util", "source_info_util"]

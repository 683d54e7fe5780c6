"""``plait.profiler``: traces for TensorBoard and Perfetto, annotations, device memory
profiles, as ``jax.profiler`` (see :mod:`plait.frontend.api.profiler`)."""

from plait.frontend.api.profiler import *  # noqa: F401,F403
from plait.frontend.api.profiler import __all__ as __all__

"""``plait.ops``: reductions within segments of an array, as ``jax.ops``
(see :mod:`plait.frontend.numpy.segments`)."""

from plait.frontend.numpy.segments import *  # noqa: F401,F403
from plait.frontend.numpy.segments import __all__ as __all__

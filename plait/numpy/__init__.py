"""``plait.numpy``: the NumPy-compatible array namespace (see :mod:`plait.frontend.numpy`)."""

from plait.frontend.numpy import *  # noqa: F401,F403
from plait.frontend.numpy import __all__ as __all__
from plait.numpy import fft as fft  # submodules, as numpy.fft and numpy.linalg
from plait.numpy import linalg as linalg

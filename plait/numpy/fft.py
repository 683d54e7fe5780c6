"""``plait.numpy.fft``: discrete Fourier transforms (see :mod:`plait.frontend.numpy.fft`)."""

from plait.frontend.numpy.fft import *  # noqa: F401,F403
from plait.frontend.numpy.fft import __all__ as __all__

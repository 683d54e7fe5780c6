"""``plait.numpy.linalg``: linear algebra (see :mod:`plait.frontend.numpy.linalg`)."""

from plait.frontend.numpy.linalg import *  # noqa: F401,F403
from plait.frontend.numpy.linalg import __all__ as __all__

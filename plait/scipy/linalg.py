"""``plait.scipy.linalg``: dense linear algebra (see :mod:`plait.frontend.scipy.linalg`)."""

from plait.frontend.scipy.linalg import *  # noqa: F401,F403
from plait.frontend.scipy.linalg import __all__ as __all__

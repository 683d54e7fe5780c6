"""``plait.scipy.stats.vonmises`` (see :mod:`plait.frontend.scipy.stats.vonmises`)."""

from plait.frontend.scipy.stats.vonmises import *  # noqa: F401,F403
from plait.frontend.scipy.stats.vonmises import __all__ as __all__

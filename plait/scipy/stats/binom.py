"""``plait.scipy.stats.binom`` (see :mod:`plait.frontend.scipy.stats.binom`)."""

from plait.frontend.scipy.stats.binom import *  # noqa: F401,F403
from plait.frontend.scipy.stats.binom import __all__ as __all__

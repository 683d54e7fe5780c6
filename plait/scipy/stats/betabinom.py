"""``plait.scipy.stats.betabinom`` (see :mod:`plait.frontend.scipy.stats.betabinom`)."""

from plait.frontend.scipy.stats.betabinom import *  # noqa: F401,F403
from plait.frontend.scipy.stats.betabinom import __all__ as __all__

"""``plait.scipy.stats.gamma`` (see :mod:`plait.frontend.scipy.stats.gamma`)."""

from plait.frontend.scipy.stats.gamma import *  # noqa: F401,F403
from plait.frontend.scipy.stats.gamma import __all__ as __all__

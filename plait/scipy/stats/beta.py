"""``plait.scipy.stats.beta`` (see :mod:`plait.frontend.scipy.stats.beta`)."""

from plait.frontend.scipy.stats.beta import *  # noqa: F401,F403
from plait.frontend.scipy.stats.beta import __all__ as __all__

"""``plait.scipy.stats.logistic`` (see :mod:`plait.frontend.scipy.stats.logistic`)."""

from plait.frontend.scipy.stats.logistic import *  # noqa: F401,F403
from plait.frontend.scipy.stats.logistic import __all__ as __all__

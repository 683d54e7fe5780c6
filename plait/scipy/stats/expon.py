"""``plait.scipy.stats.expon`` (see :mod:`plait.frontend.scipy.stats.expon`)."""

from plait.frontend.scipy.stats.expon import *  # noqa: F401,F403
from plait.frontend.scipy.stats.expon import __all__ as __all__

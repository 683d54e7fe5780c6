"""``plait.scipy.stats.wrapcauchy`` (see :mod:`plait.frontend.scipy.stats.wrapcauchy`)."""

from plait.frontend.scipy.stats.wrapcauchy import *  # noqa: F401,F403
from plait.frontend.scipy.stats.wrapcauchy import __all__ as __all__

"""``plait.scipy.stats.geom`` (see :mod:`plait.frontend.scipy.stats.geom`)."""

from plait.frontend.scipy.stats.geom import *  # noqa: F401,F403
from plait.frontend.scipy.stats.geom import __all__ as __all__

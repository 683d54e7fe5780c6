"""``plait.scipy.stats.poisson`` (see :mod:`plait.frontend.scipy.stats.poisson`)."""

from plait.frontend.scipy.stats.poisson import *  # noqa: F401,F403
from plait.frontend.scipy.stats.poisson import __all__ as __all__

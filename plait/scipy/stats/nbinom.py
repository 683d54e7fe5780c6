"""``plait.scipy.stats.nbinom`` (see :mod:`plait.frontend.scipy.stats.nbinom`)."""

from plait.frontend.scipy.stats.nbinom import *  # noqa: F401,F403
from plait.frontend.scipy.stats.nbinom import __all__ as __all__

"""``plait.scipy.stats.chi2`` (see :mod:`plait.frontend.scipy.stats.chi2`)."""

from plait.frontend.scipy.stats.chi2 import *  # noqa: F401,F403
from plait.frontend.scipy.stats.chi2 import __all__ as __all__

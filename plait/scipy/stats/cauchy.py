"""``plait.scipy.stats.cauchy`` (see :mod:`plait.frontend.scipy.stats.cauchy`)."""

from plait.frontend.scipy.stats.cauchy import *  # noqa: F401,F403
from plait.frontend.scipy.stats.cauchy import __all__ as __all__

"""``plait.scipy.stats.uniform`` (see :mod:`plait.frontend.scipy.stats.uniform`)."""

from plait.frontend.scipy.stats.uniform import *  # noqa: F401,F403
from plait.frontend.scipy.stats.uniform import __all__ as __all__

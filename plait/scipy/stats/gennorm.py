"""``plait.scipy.stats.gennorm`` (see :mod:`plait.frontend.scipy.stats.gennorm`)."""

from plait.frontend.scipy.stats.gennorm import *  # noqa: F401,F403
from plait.frontend.scipy.stats.gennorm import __all__ as __all__

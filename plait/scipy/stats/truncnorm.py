"""``plait.scipy.stats.truncnorm`` (see :mod:`plait.frontend.scipy.stats.truncnorm`)."""

from plait.frontend.scipy.stats.truncnorm import *  # noqa: F401,F403
from plait.frontend.scipy.stats.truncnorm import __all__ as __all__

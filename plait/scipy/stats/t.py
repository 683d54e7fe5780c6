"""``plait.scipy.stats.t`` (see :mod:`plait.frontend.scipy.stats.t`)."""

from plait.frontend.scipy.stats.t import *  # noqa: F401,F403
from plait.frontend.scipy.stats.t import __all__ as __all__

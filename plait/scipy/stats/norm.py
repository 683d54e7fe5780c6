"""``plait.scipy.stats.norm`` (see :mod:`plait.frontend.scipy.stats.norm`)."""

from plait.frontend.scipy.stats.norm import *  # noqa: F401,F403
from plait.frontend.scipy.stats.norm import __all__ as __all__

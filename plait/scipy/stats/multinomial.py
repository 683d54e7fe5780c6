"""``plait.scipy.stats.multinomial`` (see :mod:`plait.frontend.scipy.stats.multinomial`)."""

from plait.frontend.scipy.stats.multinomial import *  # noqa: F401,F403
from plait.frontend.scipy.stats.multinomial import __all__ as __all__

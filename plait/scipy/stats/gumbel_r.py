"""``plait.scipy.stats.gumbel_r`` (see :mod:`plait.frontend.scipy.stats.gumbel_r`)."""

from plait.frontend.scipy.stats.gumbel_r import *  # noqa: F401,F403
from plait.frontend.scipy.stats.gumbel_r import __all__ as __all__

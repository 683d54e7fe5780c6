"""``plait.scipy.stats.gumbel_l`` (see :mod:`plait.frontend.scipy.stats.gumbel_l`)."""

from plait.frontend.scipy.stats.gumbel_l import *  # noqa: F401,F403
from plait.frontend.scipy.stats.gumbel_l import __all__ as __all__

"""``plait.scipy.stats.pareto`` (see :mod:`plait.frontend.scipy.stats.pareto`)."""

from plait.frontend.scipy.stats.pareto import *  # noqa: F401,F403
from plait.frontend.scipy.stats.pareto import __all__ as __all__

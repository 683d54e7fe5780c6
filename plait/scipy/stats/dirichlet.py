"""``plait.scipy.stats.dirichlet`` (see :mod:`plait.frontend.scipy.stats.dirichlet`)."""

from plait.frontend.scipy.stats.dirichlet import *  # noqa: F401,F403
from plait.frontend.scipy.stats.dirichlet import __all__ as __all__

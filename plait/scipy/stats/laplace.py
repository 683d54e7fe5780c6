"""``plait.scipy.stats.laplace`` (see :mod:`plait.frontend.scipy.stats.laplace`)."""

from plait.frontend.scipy.stats.laplace import *  # noqa: F401,F403
from plait.frontend.scipy.stats.laplace import __all__ as __all__

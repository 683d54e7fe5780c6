"""``plait.scipy.stats.multivariate_normal`` (see
:mod:`plait.frontend.scipy.stats.multivariate_normal`)."""

from plait.frontend.scipy.stats.multivariate_normal import *  # noqa: F401,F403
from plait.frontend.scipy.stats.multivariate_normal import __all__ as __all__

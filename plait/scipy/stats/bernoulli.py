"""``plait.scipy.stats.bernoulli`` (see :mod:`plait.frontend.scipy.stats.bernoulli`)."""

from plait.frontend.scipy.stats.bernoulli import *  # noqa: F401,F403
from plait.frontend.scipy.stats.bernoulli import __all__ as __all__

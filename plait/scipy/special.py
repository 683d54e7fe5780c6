"""``plait.scipy.special``: special functions (see :mod:`plait.frontend.scipy.special`)."""

from plait.frontend.scipy.special import *  # noqa: F401,F403
from plait.frontend.scipy.special import __all__ as __all__

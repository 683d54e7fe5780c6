"""``plait.tree_util``: pytree utilities (see :mod:`plait.frontend.core.tree_util`)."""

from plait.frontend.core.tree_util import *  # noqa: F401,F403
from plait.frontend.core.tree_util import __all__ as __all__

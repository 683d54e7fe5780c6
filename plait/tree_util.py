"""``plait.tree_util``: pytree utilities (see :mod:`plait.frontend.core.tree_util` and
:mod:`plait.frontend.core.tree_nodes`)."""

from plait.frontend.core.tree_nodes import Partial as Partial
from plait.frontend.core.tree_nodes import register_dataclass as register_dataclass
from plait.frontend.core.tree_nodes import register_static as register_static
from plait.frontend.core.tree_util import *  # noqa: F401,F403
from plait.frontend.core.tree_util import __all__ as _core_all

__all__ = [*_core_all, "Partial", "register_dataclass", "register_static"]

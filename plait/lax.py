"""``plait.lax``: primitive-level operations and the primitives (``sin_p``, ...)."""

from plait.frontend.lax import *  # noqa: F401,F403
from plait.frontend.lax import __all__ as _lax_all
from plait.ir.primitives import *  # noqa: F401,F403
from plait.ir.primitives import __all__ as _prim_all

__all__ = list(_lax_all) + [n for n in _prim_all if n not in _lax_all]

"""``plait.lax``: primitive-level operations, structured control flow, and the primitives."""

from plait.frontend.api.control_flow import cond, fori_loop, map, scan, switch, while_loop  # noqa: F401  (re-exported: see __all__)
from plait.frontend.lax import *  # noqa: F401,F403
from plait.frontend.lax import __all__ as _lax_all
from plait.ir.primitives import *  # noqa: F401,F403
from plait.ir.primitives import __all__ as _prim_all

_control = ["cond", "fori_loop", "map", "scan", "switch", "while_loop"]
__all__ = list(_lax_all) + _control + [n for n in _prim_all if n not in _lax_all]

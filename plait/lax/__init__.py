"""``plait.lax``: primitive-level operations, structured control flow, and the primitives."""

# ``name as name`` marks a re-export for mypy --strict users.
from plait.frontend.api.control_flow import cond as cond
from plait.frontend.api.control_flow import fori_loop as fori_loop
from plait.frontend.api.control_flow import map as map
from plait.frontend.api.control_flow import platform_dependent as platform_dependent
from plait.frontend.api.control_flow import scan as scan
from plait.frontend.api.control_flow import switch as switch
from plait.frontend.api.control_flow import while_loop as while_loop
from plait.frontend.api.incomplete_special import random_gamma_grad as random_gamma_grad
from plait.frontend.api.solves import custom_linear_solve as custom_linear_solve
from plait.frontend.api.solves import custom_root as custom_root
from plait.frontend.lax import *  # noqa: F401,F403
from plait.frontend.lax.associative import __all__ as _assoc_all
from plait.frontend.lax.composite import __all__ as _composite_all
from plait.frontend.lax.conversions import __all__ as _conversions_all
from plait.frontend.lax.convolution import __all__ as _conv_all
from plait.frontend.lax.fft import __all__ as _fft_all
from plait.frontend.lax.names import __all__ as _names_all
from plait.frontend.lax.ops import __all__ as _ops_all
from plait.frontend.lax.parallel import __all__ as _parallel_all
from plait.frontend.lax.ragged import __all__ as _ragged_all
from plait.frontend.lax.scaled_dot import __all__ as _scaled_all
from plait.frontend.lax.slicing import __all__ as _slicing_all
from plait.frontend.lax.tokens import __all__ as _tokens_all
from plait.frontend.lax.windowed import __all__ as _windowed_all
from plait.ir.primitives import *  # noqa: F401,F403
from plait.ir.primitives import __all__ as _prim_all

# (The star import may have bound the frontend's ``linalg`` module, which an import of
# the name would return; the public ``plait.lax.linalg`` adds the updates built on jit.)
globals().pop("linalg", None)
from plait.lax import linalg as linalg  # noqa: E402

_lax_all = (_ops_all + _slicing_all + _conv_all + _windowed_all + _assoc_all
            + _conversions_all + _fft_all + _composite_all + _parallel_all + _ragged_all
            + _tokens_all + _names_all + _scaled_all)
_control = ["cond", "fori_loop", "map", "scan", "switch", "while_loop", "random_gamma_grad",
            "custom_linear_solve", "custom_root", "platform_dependent"]
__all__ = list(_lax_all) + _control + [n for n in _prim_all if n not in _lax_all]

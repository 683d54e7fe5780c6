"""``plait.extend.core.primitives``: plait's primitives (``add_p``, ``scan_p`` ...), as
``jax.extend.core.primitives``; they are the primitives of ``plait.ir.primitives``."""

from plait.ir.primitives import *  # noqa: F401,F403
from plait.ir.primitives import __all__ as __all__

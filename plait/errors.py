"""Every exception plait raises on purpose.

The classes live in :mod:`plait.ir.errors`, in the bottom layer, so that every
layer may raise them; this is their public name.  ``JaxRuntimeError`` is jaxlib's (a
computation that fails at run time raises it), the same class as JAX's.
"""

from jaxlib._jax import JaxRuntimeError as JaxRuntimeError

from plait.ir.errors import *  # noqa: F401,F403
from plait.ir.errors import __all__ as _ir_errors

# JaxRuntimeError is jaxlib's class (what a failing computation raises), as JAX's is.
__all__ = [*_ir_errors, "JaxRuntimeError"]

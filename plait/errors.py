"""Every exception plait raises on purpose.

The classes live in :mod:`plait.ir.errors`, in the bottom layer, so that every
layer may raise them; this is their public name.
"""

from plait.ir.errors import *  # noqa: F401,F403
from plait.ir.errors import __all__ as __all__

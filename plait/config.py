"""Global configuration: ``plait.config.update(name, value)``.

The options live in :mod:`plait.ir.config`, in the bottom layer, so that every
layer may read them; this is their public name.
"""

from plait.ir.config import *  # noqa: F401,F403
from plait.ir.config import __all__ as __all__
from plait.ir.config import values as values

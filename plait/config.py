"""Global configuration: ``plait.config.update(name, value)``.

The options live in :mod:`plait.ir.config`, in the bottom layer, so that every
layer may read them; this is their public name.
"""

from typing import Any

from plait.ir.config import *  # noqa: F401,F403
from plait.ir.config import __all__ as __all__
from plait.ir.config import read as read
from plait.ir.config import values as values


def __getattr__(name: str) -> Any:
    """An option's value read as an attribute (``plait.config.jax_enable_x64``), and
    JAX's ``x64_enabled`` (whether 64-bit types are on)."""
    if name == "x64_enabled":
        return read("jax_enable_x64")
    try:
        return read(name)
    except KeyError:
        raise AttributeError(f"module 'plait.config' has no attribute {name!r}") from None

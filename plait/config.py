"""Global configuration: ``plait.config.update(name, value)``.

The options live in :mod:`plait.ir.config`, in the bottom layer, so that every
layer may read them; this is their public name.
"""

import sys
from typing import Any

from plait.ir.config import *  # noqa: F401,F403
from plait.ir.config import __all__ as __all__
from plait.ir.config import read as read
from plait.ir.config import update as update
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


def parse_flags_with_absl() -> None:
    """Set the options given on the command line before any ``--``, as JAX's:
    ``--jax_enable_x64``, ``--jax_enable_x64=false``, ``--nojax_enable_x64``
    (``plait_`` for ``jax_`` too).  Options plait does not have are left alone.

    Raises:
      ValueError: a value the option does not take.
    """
    for arg in sys.argv[1:]:
        if arg == "--":
            break
        name, eq, text = arg.removeprefix("--").partition("=")
        negated = name.startswith("no") and not eq
        name = name[2:] if negated else name
        if not name.startswith(("jax_", "plait_")):
            continue
        try:
            current = read(name)
        except KeyError:
            continue
        update(name, False if negated else _flag_value(name, current, text if eq else "true"))


config_with_absl = parse_flags_with_absl


def _flag_value(name: str, current: Any, text: str) -> Any:
    """``text`` as a value of the option's type (judged by its current value)."""
    if isinstance(current, bool):
        if text.lower() not in ("true", "false", "1", "0"):
            raise ValueError(f"--{name}: expected true or false, but got {text!r}")
        return text.lower() in ("true", "1")
    if isinstance(current, int):
        return int(text)
    if isinstance(current, float):
        return float(text)
    return text

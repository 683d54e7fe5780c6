"""Effects: what an equation does besides computing its outputs.

Pure equations have no effects; the builder may merge duplicates of them and
DCE may drop them.  An effectful equation is kept and never merged.  Host
callbacks (a later issue) define the concrete effects.
"""

from __future__ import annotations

from typing import Final

import attrs

__all__ = ["Effect", "NO_EFFECTS"]


@attrs.frozen
class Effect:
    """An effect, named for printing and compared by value."""

    name: str
    """A short description, such as ``"IO"`` or ``"OrderedIO"``."""
    ordered: bool = False
    """Whether executions must keep their program order (threaded with tokens)."""


NO_EFFECTS: Final[frozenset[Effect]] = frozenset()

"""Effects: what an equation does besides computing its outputs.

Pure equations have no effects; the builder may merge duplicates of them and
DCE may drop them.  An effectful equation is kept and never merged.  Host
callbacks have the concrete effects: :data:`IO` and :data:`ORDERED_IO`
(``io_callback``), :data:`DEBUG` and :data:`ORDERED_DEBUG` (``debug.callback``,
``debug.print``).
"""

from __future__ import annotations

from typing import Final

import attrs

__all__ = ["Effect", "NO_EFFECTS", "IO", "ORDERED_IO", "DEBUG", "ORDERED_DEBUG", "DebugEffect",
           "OrderedDebugEffect"]


@attrs.frozen
class Effect:
    """An effect, named for printing and compared by value.  A library may subclass it
    for effects of its own, as JAX's ``Effect`` (``class MyEffect(Effect): ...``);
    an instance of such a subclass is named after it."""

    name: str = attrs.field(default=attrs.Factory(lambda self: type(self).__name__,
                                                  takes_self=True))
    """A short description, such as ``"IO"`` or ``"OrderedIO"`` (by default the class's
    name)."""
    ordered: bool = False
    """Whether executions must keep their program order (threaded with tokens)."""


NO_EFFECTS: Final[frozenset[Effect]] = frozenset()

IO: Final = Effect("IO")
"""An unordered ``io_callback``: it runs, in any order relative to other callbacks."""
ORDERED_IO: Final = Effect("OrderedIO", ordered=True)
"""An ordered ``io_callback``: it runs in program order."""


@attrs.frozen
class DebugEffect(Effect):
    """The effect of ``debug.callback``/``debug.print`` (``jax.debug.DebugEffect``)."""

    name: str = "Debug"


@attrs.frozen
class OrderedDebugEffect(Effect):
    """The effect of an ordered ``debug.callback``/``debug.print``
    (``jax.debug.OrderedDebugEffect``)."""

    name: str = "OrderedDebug"
    ordered: bool = True


DEBUG: Final = DebugEffect()
"""A ``debug.callback`` or ``debug.print``: never removed, in any order."""
ORDERED_DEBUG: Final = OrderedDebugEffect()
"""A ``debug.callback``/``debug.print`` with ``ordered=True``: in program order."""

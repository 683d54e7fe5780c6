"""``plait.experimental.layout``: memory layouts, as ``jax.experimental.layout``.  plait
compiles with XLA's default layouts only.  See ``docs/compat.md``."""

# ``name as name`` marks a re-export for mypy --strict users.
from plait.frontend.core.layouts import Format as Format
from plait.frontend.core.layouts import Layout as Layout
from plait.frontend.core.layouts import with_layout_constraint as with_layout_constraint

__all__ = ["Format", "Layout", "with_layout_constraint"]

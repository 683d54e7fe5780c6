"""Exception notes that say which equation was being processed, and from which user line.

Every skeleton that applies per-primitive rules (reference evaluation, jvp,
transpose, vmap, partial evaluation, lowering, eager application) wraps its loop
over equations so that an exception escaping a rule carries a note, in the
spirit of torch.fx's "While executing": the equation as ``print(jaxpr)`` shows
it, and the line of the user's function that emitted it.  The note is added
once, by the innermost skeleton: when a rule for a ``cond`` or ``scan``
transforms its body, the body's failing equation is the informative one, and
outer skeletons leave the exception alone.
"""

from __future__ import annotations

import textwrap

from plait.ir.jaxpr import Eqn, Jaxpr
from plait.ir.printer import pp_eqn_in

__all__ = ["note_equation", "EQUATION_NOTE_ATTR"]

EQUATION_NOTE_ATTR = "plait_equation"
"""Attribute set on a noted exception: the :class:`Eqn` it was raised for."""


def note_equation(exc: BaseException, jaxpr: Jaxpr, eqn: Eqn, action: str) -> None:
    """Add a note to ``exc`` naming ``eqn`` of ``jaxpr``, unless an inner skeleton did.

    ``action`` completes "While ...", e.g. ``"computing the JVP of"``.  The
    equation is printed with its variables named as in ``print(jaxpr)``; its
    ``source_info``, when known, gives the user's file, line and function.
    """
    if getattr(exc, EQUATION_NOTE_ATTR, None) is not None:
        return
    setattr(exc, EQUATION_NOTE_ATTR, eqn)
    lines = [f"While {action} the equation", textwrap.indent(pp_eqn_in(jaxpr, eqn), "  ")]
    if eqn.source_info is not None:
        lines.append(f"which was traced from {eqn.source_info}")
    exc.add_note("\n".join(lines))

"""Checking that no tracer outlives its trace (the ``check_tracer_leaks`` option, JAX's
``jax.checking_leaks``).

A tracer that escapes its function (stored in a global, an attribute, a closure) is
reported by default only when it is used again (``UnexpectedTracerError``).  With the
option on, every trace ends with a search of the live objects for its tracers: any
left, other than the function's results, is a leak, reported at once with what holds it.
The search (a garbage collection and a walk of the heap) is slow, which is why it is
an option.
"""

from __future__ import annotations

import gc
import types
from collections.abc import Callable
from typing import Any

from plait.ir.errors import UnexpectedTracerError

__all__ = ["check_leaks"]


def _holder(obj: Any) -> str:
    """What kind of object ``obj`` is, for the message."""
    if isinstance(obj, types.CellType):
        return "a closure cell"
    if isinstance(obj, types.FrameType):
        return f"the frame of {obj.f_code.co_name}"
    if isinstance(obj, dict):
        return "a dict (an object's attributes, a module's globals, or a dict)"
    return f"a {type(obj).__name__}"


def check_leaks(owner: object, leaked_tracer: Callable[[object], bool], fn: str,
                purpose: str) -> None:
    """Raise if a live object referring to ``owner`` (the ended trace of ``fn`` for
    ``purpose``) is a tracer that leaked out of it (``leaked_tracer`` says which: the
    tracing module knows its tracers; this one, imported by it, does not import it).

    Every tracer refers to its trace, so the search asks the collector for the trace's
    referrers (a walk of the heap in C) rather than testing every live object in Python.

    Raises:
      UnexpectedTracerError: a tracer leaked; the message lists each with what holds it.
    """
    gc.collect()
    leaked: list[Any] = [o for o in gc.get_referrers(owner) if leaked_tracer(o)]
    if not leaked:
        return
    lines = []
    for t in leaked:
        holders = [_holder(h) for h in gc.get_referrers(t) if h is not leaked]
        lines.append(f"  a traced value of type {t.aval.str_short(short_dtypes=False)}, held "
                     f"by {', '.join(holders) or 'nothing found'}")
    del leaked
    raise UnexpectedTracerError(
        f"Leaked trace of {fn} for {purpose}: tracer(s) outlived it (found by the "
        "check_tracer_leaks option):\n" + "\n".join(lines) + "\nA traced value escaped its "
        "function (through a global, an attribute, or a closure called later). Return it "
        "from the function instead.")

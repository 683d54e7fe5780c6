"""Where an equation comes from: the user's line that staged it, and the active scopes.

``named_scope`` pushes names onto :data:`scopes`; :func:`user_frame_info` gives the
innermost stack frame outside plait, with the scopes active there, as the
:class:`~plait.ir.SourceInfo` an equation keeps (and errors print).
"""

from __future__ import annotations

import itertools
import sys
import threading
from types import CodeType, FrameType

from plait.frontend.core.traceback_util import is_plait_code, on_exclusion
from plait.ir.caches import BoundedDict
from plait.ir.debug_info import SourceInfo

__all__ = ["scopes", "user_frame_info"]


class _Scopes(threading.local):
    def __init__(self) -> None:
        self.name_stack = ""
        """The active ``named_scope``\\ s, joined by ``/``, relative to the innermost
        trace (each trace starts from an empty stack)."""


scopes = _Scopes()
"""This thread's active scopes."""

# Keyed by the code object's id, not the code object: hashing a code object hashes its
# bytecode and constants (~0.5 us), and every staged equation walks up to ~100 frames of
# plait's own code (its SciPy and ODE layers) to the user's.  Each entry keeps its code
# object, so the id cannot be reused while the entry lives.
_internal_code: BoundedDict[int, tuple[CodeType, bool]] = BoundedDict("internal code objects")
_source_cache: BoundedDict[tuple[int, int, str], tuple[CodeType, SourceInfo]] = BoundedDict(
    "source lines")
on_exclusion(_internal_code.clear)


def _source_info(code: CodeType, f: FrameType, name_stack: str) -> SourceInfo:
    # The line and column of the instruction running (as JAX reports them), and the
    # function's qualified name.
    positions = next(itertools.islice(code.co_positions(), f.f_lasti // 2, None), None)
    line = f.f_lineno if positions is None or positions[0] is None else positions[0]
    column = -1 if positions is None or positions[2] is None else positions[2]
    return SourceInfo(code.co_filename, line, code.co_qualname, name_stack, column)


def user_frame_info() -> SourceInfo | None:
    """The innermost stack frame outside plait, as a :class:`SourceInfo`."""
    f: FrameType | None = sys._getframe(1)
    internal = _internal_code.data
    while f is not None:
        code = f.f_code
        hit = internal.get(id(code))
        if hit is None or hit[0] is not code:
            hit = _internal_code[id(code)] = (code, is_plait_code(code.co_filename))
        if not hit[1]:
            key = (id(code), f.f_lasti, scopes.name_stack)
            entry = _source_cache.data.get(key)
            if entry is None or entry[0] is not code:
                entry = _source_cache[key] = (code, _source_info(code, f, key[2]))
            return entry[1]
        f = f.f_back
    return None

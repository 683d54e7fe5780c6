"""Tracebacks of user-facing errors without plait's internal frames.

Public entry points are wrapped with :func:`api_boundary`; when an error
escapes one, frames inside the ``plait`` package are removed from its
traceback (set ``PLAIT_TRACEBACK_FILTERING=off`` or
``plait.config.update('traceback_filtering', 'off')`` to keep them).
"""

from __future__ import annotations

import functools
import os
import types
from collections.abc import Callable, MutableSequence
from typing import Any, ParamSpec, TypeVar

from plait.ir import config

__all__ = ["api_boundary", "excluded_paths", "filter_traceback", "hide_plait_frames", "PLAIT_DIR",
           "include_frame", "is_plait_code", "register_exclusion"]

# This module is plait/frontend/core/traceback_util.py: the package is two levels up.
PLAIT_DIR = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                                          "..")) + os.sep
"""The directory of the plait package (with a trailing separator): code there is internal."""


_on_exclusion: list[Callable[[], None]] = []
"""Functions called when the excluded paths change: caches of :func:`is_plait_code`'s
answers."""


class _Paths(MutableSequence[str]):
    """A list that tells :data:`_on_exclusion` of every change (libraries edit JAX's
    ``_exclude_paths`` directly: flax's ``show_flax_in_tracebacks`` removes its own).
    Every mutation (``append``, ``remove``, ``extend`` ...) goes through the three below."""

    def __init__(self) -> None:
        self._items: list[str] = []

    def __getitem__(self, index: Any) -> Any:
        return self._items[index]

    def __len__(self) -> int:
        return len(self._items)

    def __setitem__(self, index: Any, value: Any) -> None:
        self._items[index] = value
        self._changed()

    def __delitem__(self, index: Any) -> None:
        del self._items[index]
        self._changed()

    def insert(self, index: int, value: str) -> None:
        self._items.insert(index, value)
        self._changed()

    def _changed(self) -> None:
        for forget in _on_exclusion:
            forget()

    def __repr__(self) -> str:
        return repr(self._items)


excluded_paths: MutableSequence[str] = _Paths()
"""Path prefixes of libraries' code treated as plait's own (JAX's ``_exclude_paths``):
hidden from tracebacks and never taken as the user's line of an equation."""


def is_plait_code(filename: str) -> bool:
    """Whether code from ``filename`` is plait's own, or a library's registered with
    :func:`register_exclusion` (not the user's)."""
    return filename.startswith(PLAIT_DIR) or any(filename.startswith(p)
                                                 for p in excluded_paths)


def include_frame(frame: types.FrameType) -> bool:
    """Whether ``frame`` is the user's code (shown in filtered tracebacks), as JAX's
    ``traceback_util.include_frame``."""
    return not is_plait_code(frame.f_code.co_filename)


def register_exclusion(path: str) -> None:
    """Treat code under ``path`` (a file or directory prefix) as internal, as plait's own:
    a library built on plait hides its frames from tracebacks and from equations' source
    lines this way (JAX's ``traceback_util.register_exclusion``)."""
    if not isinstance(path, str):
        raise TypeError(f"register_exclusion: expected a path (str), but got {path!r}")
    if path not in excluded_paths:
        excluded_paths.append(path)


def on_exclusion(forget: Callable[[], None]) -> None:
    """Call ``forget`` whenever the excluded paths change."""
    _on_exclusion.append(forget)
P = ParamSpec("P")
R = TypeVar("R")


def _internal(tb: types.TracebackType) -> bool:
    return is_plait_code(tb.tb_frame.f_code.co_filename)


def filter_traceback(tb: types.TracebackType | None) -> types.TracebackType | None:
    """``tb`` without the frames whose code lives in the plait package."""
    frames = []
    while tb is not None:
        if not _internal(tb):
            frames.append(tb)
        tb = tb.tb_next
    out = None
    for f in reversed(frames):
        out = types.TracebackType(out, f.tb_frame, f.tb_lasti, f.tb_lineno)
    return out


def hide_plait_frames(e: BaseException) -> None:
    """Drop plait's frames from ``e``'s traceback (unless filtering is off).

    Call it in an ``except`` block followed by a bare ``raise``: a bare re-raise
    does not add the current frame to the traceback, so no plait frame is left.
    """
    if config.values.traceback_filtering == "off":
        return
    e.__traceback__ = filter_traceback(e.__traceback__)
    if _NOTE not in getattr(e, "__notes__", ()):
        e.add_note(_NOTE)


_NOTE = ("(plait removed its internal frames from this traceback; set "
         "PLAIT_TRACEBACK_FILTERING=off to see them)")


def api_boundary(fun: Callable[P, R]) -> Callable[P, R]:
    """Wrap a public function so errors escaping it hide plait's frames."""
    @functools.wraps(fun)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return fun(*args, **kwargs)
        except Exception as e:
            hide_plait_frames(e)
            raise
    return wrapper

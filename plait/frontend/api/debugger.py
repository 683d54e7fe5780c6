"""``debug.breakpoint``: stop a running program and look around, as
``jax.debug.breakpoint`` with JAX's command-line debugger (``jdb``).

When traced, the breakpoint records the Python frames that called it (plait's own
left out) with their local variables; the traced arrays among those become the
operands of a ``debug_callback`` equation.  When the program runs and reaches it,
the callback puts the computed values back in the frames' variables and opens the
debugger on them: ``p``/``pp`` print an expression, ``u``/``d`` move between frames,
``l`` lists the source, ``w`` prints the stack, ``c`` continues, ``q`` exits.
"""

from __future__ import annotations

import cmd
import inspect
import pprint
import sys
import threading
import traceback
from collections.abc import Sequence
from typing import IO, Any

import attrs

from plait.frontend.api.callbacks import debug_callback
from plait.frontend.core.traceback_util import is_plait_code
from plait.frontend.core.tracing import Tracer
from plait.frontend.core.tree_util import tree_flatten, tree_unflatten

__all__ = ["breakpoint"]

_lock = threading.Lock()


@attrs.frozen
class Frame:
    """One Python frame as the debugger shows it."""

    filename: str
    lineno: int
    locals: dict[str, Any]
    source: list[str]
    """The lines of the frame's function (empty when unknown)."""
    offset: int | None
    """The index of the current line in ``source``."""


def _capture(info: inspect.FrameInfo) -> Frame:
    try:
        lines, start = inspect.getsourcelines(info.frame)
        # (Split as JAX's debugger does: the line after the last newline is shown too.)
        source = "".join(lines).split("\n")
        offset: int | None = info.lineno - max(start, 1)
        if offset is None or not 0 <= offset < len(source):
            source, offset = [], None
    except (OSError, TypeError):
        source, offset = [], None
    return Frame(info.filename, info.lineno, dict(info.frame.f_locals), source, offset)


def _leaves(value: Any) -> tuple[list[Any], Any] | None:
    """A local variable's leaves and structure, or ``None`` if it is not a pytree of
    which some leaf is traced (then it is kept as it is)."""
    try:
        leaves, tree = tree_flatten(value)
    except Exception:  # noqa: BLE001  (any object may be a local variable)
        return None
    return (leaves, tree) if any(isinstance(x, Tracer) for x in leaves) else None


class Jdb(cmd.Cmd):
    """The command-line debugger, on frames innermost first."""

    prompt = "(jdb) "
    intro = "Entering jdb:"

    def __init__(self, frames: Sequence[Frame], stdin: IO[str] | None = None,
                 stdout: IO[str] | None = None) -> None:
        super().__init__(stdin=stdin, stdout=stdout)
        self.use_rawinput = stdin is None
        self.frames = list(frames)
        self.index = 0

    def _say(self, text: str) -> None:
        print(text, file=self.stdout)

    def _error(self) -> None:
        kind, value = sys.exc_info()[:2]
        assert kind is not None
        self._say("*** " + traceback.format_exception_only(kind, value)[-1].strip())

    def _evaluate(self, expr: str) -> Any:
        frame = self.frames[self.index]
        return eval(expr, {}, dict(frame.locals))

    def default(self, line: str) -> None:
        """Evaluate ``line`` and print its value."""
        self.do_p(line)

    def do_p(self, arg: str) -> None:
        """p expression: print the value of an expression."""
        try:
            self._say(repr(self._evaluate(arg)))
        except Exception:  # noqa: BLE001  (any error of the user's expression)
            self._error()

    def do_pp(self, arg: str) -> None:
        """pp expression: pretty-print the value of an expression."""
        try:
            self._say(pprint.pformat(self._evaluate(arg)))
        except Exception:  # noqa: BLE001
            self._error()

    def _context(self, around: int = 2) -> None:
        f = self.frames[self.index]
        lines = [f"> {f.filename}({f.lineno})"]
        if f.offset is not None:
            for i, text in enumerate(f.source):
                if f.offset - 1 - around <= i <= f.offset + around:
                    lines.append(("->  " if i == f.offset else "    ") + text)
        self._say("\n".join(lines))

    def do_up(self, arg: str) -> None:
        """u(p): move to the caller's frame."""
        if self.index == len(self.frames) - 1:
            self._say("At topmost frame.")
        else:
            self.index += 1
        self._context()

    def do_down(self, arg: str) -> None:
        """d(own): move to the callee's frame."""
        if self.index == 0:
            self._say("At bottommost frame.")
        else:
            self.index -= 1
        self._context()

    def do_list(self, arg: str) -> None:
        """l(ist): the source around the current line."""
        self._context(around=5)

    def do_where(self, arg: str) -> None:
        """w(here): the stack, the innermost frame last ('bt' too)."""
        lines = ["Traceback:"]
        for f in reversed(self.frames):
            lines.append(f'  File "{f.filename}", line {f.lineno}')
            lines.append("    <no source>" if f.offset is None else
                         f"    {f.source[f.offset].strip()}")
        self._say("\n".join(lines))

    def do_continue(self, arg: str) -> bool:
        """c(ont(inue)): let the program go on."""
        return True

    def do_quit(self, arg: str) -> None:
        """q(uit) (exit): end the program."""
        sys.exit(0)

    do_u, do_d, do_l, do_w, do_bt = do_up, do_down, do_list, do_where, do_where
    do_c = do_cont = do_continue
    do_q = do_exit = do_EOF = do_quit


def breakpoint(*, backend: str | None = None, filter_frames: bool = True,  # noqa: A001
               num_frames: int | None = None, ordered: bool = False,
               token: Any = None, **kwargs: Any) -> Any:
    """Stop here when the program runs and open the debugger (``jdb``) on the calling
    frames, their traced variables holding the values computed (see the module doc).
    ``num_frames`` limits the frames shown; ``filter_frames=False`` shows plait's own
    too.  With ``token``, the breakpoint runs once ``token`` is computed, and
    ``token`` is returned.

    Raises:
      ValueError: both ``ordered`` and ``token``, or a ``backend`` other than
        ``'cli'``.
    """
    if token is not None and ordered:
        raise ValueError("breakpoint: expected ordered or token, but got both")
    if backend not in (None, "cli"):
        raise ValueError(f"breakpoint: expected backend None or 'cli' (plait has the "
                         f"command-line debugger only), but got {backend!r}")
    infos = inspect.stack()[1:]
    if filter_frames:
        infos = [i for i in infos if not is_plait_code(i.filename)]
    frames = [_capture(i) for i in infos[:num_frames]]
    del infos
    # The traced leaves of the locals become the callback's operands; the other leaves
    # stay as they are.
    operands: list[Any] = []
    slots: list[tuple[int, str, Any, list[Any]]] = []
    for fi, frame in enumerate(frames):
        for name, value in frame.locals.items():
            flat = _leaves(value)
            if flat is not None:
                slots.append((fi, name, flat[1], flat[0]))
                operands.extend(x for x in flat[0] if isinstance(x, Tracer))

    def stop(values: Sequence[Any], _token: Any) -> None:
        shown = [Frame(f.filename, f.lineno, dict(f.locals), f.source, f.offset)
                 for f in frames]
        rest = iter(values)
        for fi, name, tree, leaves in slots:
            shown[fi].locals[name] = tree_unflatten(
                tree, [next(rest) if isinstance(x, Tracer) else x for x in leaves])
        with _lock:
            Jdb(shown, stdin=kwargs.get("stdin"), stdout=kwargs.get("stdout")).cmdloop()

    debug_callback(stop, operands, token, ordered=ordered)
    return token

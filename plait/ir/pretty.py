"""A small Wadler-style document algebra, laid out like JAX's pretty printer.

A document is text, breaks, concatenation, nesting (indentation) and groups.
A group is laid out flat (its breaks print as their text) when the group
alone fits in the rest of the line, and broken (its breaks print as newlines
at the current indentation) otherwise.  This is the layout rule of
``jax._src.pretty_printer`` (width 80), which plait must reproduce so that
printed jaxprs match JAX's character for character.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final, cast, final

__all__ = ["Doc", "text", "brk", "concat", "nest", "group", "join", "NIL", "format_doc"]


class Doc:
    """A document; build it with the functions of this module."""

    __slots__ = ()

    def __add__(self, other: Doc) -> Doc:
        return _Concat((self, other))


@final
class _Text(Doc):
    __slots__ = ("s",)

    def __init__(self, s: str) -> None:
        self.s = s


@final
class _Break(Doc):
    __slots__ = ("s",)

    def __init__(self, s: str) -> None:
        self.s = s


@final
class _Concat(Doc):
    __slots__ = ("children",)

    def __init__(self, children: tuple[Doc, ...]) -> None:
        self.children = children


@final
class _Nest(Doc):
    __slots__ = ("n", "child")

    def __init__(self, n: int, child: Doc) -> None:
        self.n = n
        self.child = child


@final
class _Group(Doc):
    __slots__ = ("child",)

    def __init__(self, child: Doc) -> None:
        self.child = child


NIL: Final[Doc] = _Concat(())


def text(s: str) -> Doc:
    """Literal text (no newlines)."""
    return _Text(s)


def brk(s: str = " ") -> Doc:
    """A break: ``s`` when its group is flat, a newline when broken."""
    return _Break(s)


def concat(docs: Sequence[Doc]) -> Doc:
    """The documents one after the other."""
    return _Concat(tuple(docs))


def nest(n: int, doc: Doc) -> Doc:
    """``doc`` with ``n`` more columns of indentation after its newlines."""
    return _Nest(n, doc)


def group(doc: Doc) -> Doc:
    """A layout unit: flat if it fits, else broken."""
    return _Group(doc)


def join(sep: Doc, docs: Sequence[Doc]) -> Doc:
    """``docs`` separated by ``sep``."""
    if not docs:
        return NIL
    out: list[Doc] = [docs[0]]
    for d in docs[1:]:
        out.append(sep)
        out.append(d)
    return _Concat(tuple(out))


def _fits(doc: Doc, width: int) -> bool:
    stack = [doc]
    while width >= 0 and stack:
        d = stack.pop()
        if type(d) is _Text or type(d) is _Break:
            width -= len(d.s)
        elif type(d) is _Concat:
            stack.extend(reversed(d.children))
        else:
            # The kinds left, _Nest and _Group, both have a child.
            stack.append(cast("_Nest | _Group", d).child)
    return width >= 0


_FLAT, _BREAK = 0, 1


def format_doc(doc: Doc, width: int = 80) -> str:
    """Lay ``doc`` out in lines of (at most, where possible) ``width`` columns."""
    agenda: list[tuple[int, int, Doc]] = [(0, _BREAK, doc)]
    lines: list[str] = []
    line: list[str] = []
    k = 0
    while agenda:
        indent, mode, d = agenda.pop()
        if type(d) is _Text:
            s = d.s
            line.append(s)
            k += len(s)
        elif type(d) is _Concat:
            for c in reversed(d.children):
                agenda.append((indent, mode, c))
        elif type(d) is _Break:
            if mode == _BREAK:
                lines.append("".join(line))
                line = [" " * indent]
                k = indent
            else:
                s = d.s
                line.append(s)
                k += len(s)
        elif type(d) is _Group:
            agenda.append((indent, _FLAT if _fits(d, width - k) else _BREAK, d.child))
        else:
            n = cast(_Nest, d)  # the one kind left
            agenda.append((indent + n.n, mode, n.child))
    lines.append("".join(line))
    return "\n".join(lines)

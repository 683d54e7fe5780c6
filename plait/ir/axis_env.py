"""The named axes in scope: the mesh axes of an enclosing ``shard_map`` (or ``pmap``)
and the axis of an enclosing ``vmap(axis_name=...)``.

Collectives (``psum``, ``all_to_all`` ...) name the axes they communicate over;
typing, tracing and the transformations read the axis sizes from here.  A
primitive whose body binds axes (``shard_map``) registers the frame its body
is checked in (:data:`body_axes`).
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

__all__ = ["frame", "axis_size", "bound_axes", "body_axes", "unbound_error"]

body_axes: dict[Any, Callable[[Mapping[str, Any]], Mapping[str, int]]] = {}
"""Per primitive (keyed by the primitive object), the axes its nested jaxprs see bound,
computed from the equation's params."""


class _Env(threading.local):
    def __init__(self) -> None:
        self.frames: list[Mapping[str, int]] = []


_env = _Env()


@contextlib.contextmanager
def frame(sizes: Mapping[str, int]) -> Iterator[None]:
    """Bind the axes ``sizes`` (name to size) inside the ``with`` block."""
    _env.frames.append(sizes)
    try:
        yield
    finally:
        _env.frames.pop()


def bound_axes() -> dict[str, int]:
    """Every axis in scope, innermost binding first."""
    out: dict[str, int] = {}
    for f in reversed(_env.frames):
        for n, s in f.items():
            out.setdefault(n, s)
    return out


def unbound_error(name: object) -> NameError:
    """The error for a collective naming an axis no enclosing map binds."""
    return NameError(f"unbound axis name: {name}. The following axis names (e.g. defined "
                     f"by pmap) are available to collective operations: "
                     f"{list(bound_axes())}")


def axis_size(names: str | Sequence[str]) -> int:
    """The number of devices (or elements) along ``names``.

    Raises:
      NameError: an axis is not bound.
    """
    names = (names,) if isinstance(names, str) else tuple(names)
    env = bound_axes()
    n = 1
    for name in names:
        if name not in env:
            raise unbound_error(name)
        n *= env[name]
    return n

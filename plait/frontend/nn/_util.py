"""What the modules of plait.nn share: jitting a function under JAX's name for it."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, ParamSpec, TypeVar

from plait.frontend.api.jit import Jitted, jit

__all__ = ["jit_as", "static_axis"]

P = ParamSpec("P")
R = TypeVar("R")


def jit_as(name: str, fun: Callable[P, R], static_argnames: Sequence[str] = ()) -> Jitted[P, R]:
    """``jit(fun)``, traced as ``jit[name=<name>]`` as JAX's function of that name is.

    Callers pass the static arguments by keyword: plait's jit does not find a
    ``static_argnames`` argument given by position."""
    fun.__name__ = fun.__qualname__ = name
    return jit(fun, static_argnames=tuple(static_argnames))


def static_axis(axis: Any) -> Any:
    """An ``axis`` argument as a hashable static value (a list becomes a tuple)."""
    return tuple(axis) if isinstance(axis, list) else axis

"""Composite NumPy functions that run, outside a trace, as one compiled program.

JAX compiles many of its ``jax.numpy`` functions (``mean``, ``var``, ``hypot``,
``linspace``...) with ``jit``, so even an eager call runs them as a single XLA
program.  XLA then rewrites them: a division by a constant becomes a multiplication
by its reciprocal, and a multiplication feeding an addition becomes one fused
multiply-add.  Run op by op, the same function rounds differently in the last
digit, and programs written for JAX drift from JAX's numbers.  The functions
wrapped here therefore run as JAX's do: compiled when called eagerly, and inlined
(as plain equations) when called while tracing.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from typing import Any, ParamSpec, TypeVar

import numpy as np

from plait.frontend.api.jit import jit
from plait.frontend.core.arguments import wraps
from plait.frontend.core.array_base import Array
from plait.frontend.core.tracing import _state

__all__ = ["compiled_when_eager"]

P = ParamSpec("P")
R = TypeVar("R")

# What a call may pass for the program to be compiled: arrays and scalars as traced
# arguments, hashable settings as static ones.  Anything else (a list, a string where
# an array belongs, a user's object) runs the function directly, whose checks then
# name the bad argument.
_TRACEABLE = (Array, np.ndarray, np.generic, bool, int, float, complex, type(None))
_SETTING = (bool, int, float, complex, str, np.dtype, type, type(None))


def _setting(value: Any) -> bool:
    if isinstance(value, tuple):
        return all(isinstance(v, _SETTING) for v in value)
    return isinstance(value, _SETTING)


def compiled_when_eager(static_argnames: Sequence[str]) -> Callable[[Callable[P, R]],
                                                                    Callable[P, R]]:
    """Decorate a composite function to run as one compiled program when called
    eagerly, with ``static_argnames`` as the settings that select a program (all
    other arguments are traced); called while tracing, its equations inline."""
    def decorate(fun: Callable[P, R]) -> Callable[P, R]:
        static = frozenset(static_argnames)
        program = jit(fun, static_argnames=tuple(static), inline=True)
        # Which positional arguments are settings; a ``*args`` parameter is traced.
        kinds: list[bool] = []
        var_positional = False
        for param in inspect.signature(fun).parameters.values():
            if param.kind is param.VAR_POSITIONAL:
                var_positional = True
                break
            if param.kind in (param.POSITIONAL_ONLY, param.POSITIONAL_OR_KEYWORD):
                kinds.append(param.name in static)

        def plain(args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
            if len(args) > len(kinds) and not var_positional:
                return False
            for i, a in enumerate(args):
                if not (_setting(a) if i < len(kinds) and kinds[i] else
                        isinstance(a, _TRACEABLE)):
                    return False
            return all(_setting(v) if k in static else isinstance(v, _TRACEABLE)
                       for k, v in kwargs.items())

        @wraps(fun)
        def call(*args: P.args, **kwargs: P.kwargs) -> R:
            # While tracing, the function runs directly: its equations inline, and
            # the tracing path pays nothing for jit's dispatch.  (Under a library's
            # trace too: the trace sees the function's primitives.)
            if not _state.stack and _state.user is None and plain(args, kwargs):
                return program(*args, **kwargs)
            return fun(*args, **kwargs)
        return call
    return decorate

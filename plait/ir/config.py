"""Global configuration (``plait.config.update(name, value)``; public as :mod:`plait.config`).

It lives in the bottom layer and imports nothing from plait, so that every layer
may read it.  Options:

``enable_x64`` (bool, env ``PLAIT_ENABLE_X64``)
    Keep 64-bit dtypes instead of narrowing them to 32 bits.
``numpy_dtype_promotion`` (``'standard'`` or ``'strict'``)
    ``'strict'`` refuses implicit promotion between different dtypes.
``explain_cache_misses`` (bool)
    Log why a trace, compile or eager-op cache missed.
``traceback_filtering`` (``'on'`` or ``'off'``, env ``PLAIT_TRACEBACK_FILTERING``)
    Hide plait's own frames from tracebacks of user-facing errors.
``source_info`` (bool)
    Record the user source line of every traced equation.
``check_jaxprs`` (bool)
    Type-check every jaxpr a transformation produces (slow; tests turn it on).
``disable_jit`` (bool)
    ``jit`` calls the Python function instead of compiling it, and control flow with
    concrete predicates and bounds runs as Python (``plait.disable_jit``).
``eager_constant_folding`` (bool)
    While tracing, an operation none of whose operands is traced is computed at once
    instead of staged (``plait.ensure_compile_time_eval``).
``platform_name``, ``platforms`` (str)
    The platform to run on: plait has only ``'cpu'`` (the empty string means the
    default); accepted so that programs which pin JAX to the CPU run unchanged.

Options read as attributes too: ``plait.config.jax_enable_x64``.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any, Final

__all__ = ["update", "read", "values", "enable_x64", "numpy_dtype_promotion", "on_update"]


def _env_bool(name: str, default: bool) -> bool:
    v = os.environ.get(name)
    return default if v is None else v.lower() in ("1", "true", "yes", "on")


class _Values:
    """Current option values, as attributes (cheap to read on hot paths)."""

    def __init__(self) -> None:
        self.enable_x64 = _env_bool("PLAIT_ENABLE_X64", False)
        self.numpy_dtype_promotion = "standard"
        self.explain_cache_misses = False
        self.traceback_filtering = os.environ.get("PLAIT_TRACEBACK_FILTERING", "on")
        self.source_info = True
        self.check_jaxprs = False
        self.disable_jit = False
        self.eager_constant_folding = False
        self.platform_name = ""
        self.platforms = ""
        self.trace_context: tuple[Any, ...] = ()
        self._refresh()

    def _refresh(self) -> None:
        # The options that change what tracing produces for the same argument types:
        # trace caches include this tuple in their keys.
        self.trace_context = (self.enable_x64, self.numpy_dtype_promotion, self.disable_jit,
                              self.eager_constant_folding)
        for listener in _listeners:
            listener()


_listeners: list[Callable[[], None]] = []

values: Final = _Values()


def on_update(listener: Callable[[], None]) -> None:
    """Call ``listener()`` after every change of an option (for state kept outside
    Python that mirrors the options, such as jit's C++ dispatch keys)."""
    _listeners.append(listener)


_CHECKS: Final[dict[str, Callable[[Any], bool]]] = {
    "enable_x64": lambda v: isinstance(v, bool),
    "numpy_dtype_promotion": lambda v: v in ("standard", "strict"),
    "explain_cache_misses": lambda v: isinstance(v, bool),
    "traceback_filtering": lambda v: v in ("on", "off"),
    "source_info": lambda v: isinstance(v, bool),
    "check_jaxprs": lambda v: isinstance(v, bool),
    "disable_jit": lambda v: isinstance(v, bool),
    "eager_constant_folding": lambda v: isinstance(v, bool),
    "platform_name": lambda v: v in ("", "cpu"),
    "platforms": lambda v: v in ("", "cpu"),
}


def _option(name: str) -> str:
    for prefix in ("jax_", "plait_"):
        if name.startswith(prefix):
            name = name[len(prefix):]
    if name not in _CHECKS:
        raise KeyError(f"expected a config option among {sorted(_CHECKS)}, but got {name!r}")
    return name


def update(name: str, value: Any) -> None:
    """Set option ``name`` (a leading ``jax_``/``plait_`` is accepted and ignored).

    Raises:
      KeyError: no such option.
      ValueError: the value is not allowed for the option.
    """
    name = _option(name)
    if not _CHECKS[name](value):
        if name.startswith("platform"):
            raise ValueError(f"invalid value {value!r} for config option {name!r}: plait "
                             "runs on 'cpu' only")
        raise ValueError(f"invalid value {value!r} for config option {name!r}")
    setattr(values, name, value)
    values._refresh()


def read(name: str) -> Any:
    """The current value of option ``name`` (a leading ``jax_``/``plait_`` is ignored).

    Raises:
      KeyError: no such option.
    """
    return getattr(values, _option(name))


def enable_x64() -> bool:
    """Whether x64 mode is on."""
    return values.enable_x64


def numpy_dtype_promotion() -> str:
    """The current promotion mode: ``'standard'`` or ``'strict'``."""
    return values.numpy_dtype_promotion

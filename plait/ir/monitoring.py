"""Events for monitoring (``plait.monitoring``, as ``jax.monitoring``): plait reports what
it does (how long tracing, lowering and compiling each program took) to the listeners a
program registers, under JAX's event names.

Recording an event with no listener costs a loop over an empty list; plait records only
on the paths that compile, never on a cached call.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, Final

__all__ = ["record_event", "record_event_duration_secs", "record_event_time_span",
           "record_scalar", "register_event_listener", "register_event_duration_secs_listener",
           "register_event_time_span_listener", "register_scalar_listener",
           "unregister_event_listener", "unregister_event_duration_listener",
           "unregister_event_time_span_listener", "unregister_scalar_listener",
           "clear_event_listeners", "record_phase", "TRACE", "LOWER", "COMPILE"]

EventListener = Callable[..., None]
"""``listener(event, **kwargs)``."""
DurationListener = Callable[..., None]
"""``listener(event, duration_secs, **kwargs)``."""
TimeSpanListener = Callable[..., None]
"""``listener(event, start_time, end_time, **kwargs)``."""
ScalarListener = Callable[..., None]
"""``listener(event, value, **kwargs)``."""

_events: list[EventListener] = []
_durations: list[DurationListener] = []
_spans: list[TimeSpanListener] = []
_scalars: list[ScalarListener] = []

TRACE: Final = "/jax/core/compile/jaxpr_trace_duration"
"""Tracing a function to a jaxpr (``fun_name``: the function's name)."""
LOWER: Final = "/jax/core/compile/jaxpr_to_mlir_module_duration"
"""Lowering a jaxpr to StableHLO (``fun_name``: ``jit(name)``)."""
COMPILE: Final = "/jax/core/compile/backend_compile_duration"
"""XLA compiling the StableHLO (``fun_name``: ``jit(name)``)."""


def record_event(event: str, **kwargs: str | int) -> None:
    """Tell every event listener that ``event`` happened."""
    for listener in list(_events):
        listener(event, **kwargs)


def record_event_duration_secs(event: str, duration: float, **kwargs: str | int) -> None:
    """Tell every duration listener that ``event`` took ``duration`` seconds."""
    for listener in list(_durations):
        listener(event, duration, **kwargs)


def record_event_time_span(event: str, start_time: float, end_time: float,
                           **kwargs: str | int) -> None:
    """Tell every time-span listener that ``event`` ran from ``start_time`` to
    ``end_time`` (seconds, on ``time.time``'s clock)."""
    for listener in list(_spans):
        listener(event, start_time, end_time, **kwargs)


def record_scalar(event: str, value: float | int, **kwargs: str | int) -> None:
    """Tell every scalar listener the value of ``event``."""
    for listener in list(_scalars):
        listener(event, value, **kwargs)


def record_phase(event: str, start: float, end: float, **kwargs: str | int) -> None:
    """A phase of plait's work from ``start`` to ``end`` (``time.perf_counter`` values):
    recorded as a scalar, a duration and a time span, as JAX records its phases."""
    if not (_scalars or _durations or _spans):
        return
    took = end - start
    record_scalar(event, took, **kwargs)
    record_event_duration_secs(event, took, **kwargs)
    now = time.time()
    record_event_time_span(event, now - took, now, **kwargs)


def register_event_listener(listener: EventListener) -> None:
    """Call ``listener(event, **kwargs)`` on every event."""
    _events.append(listener)


def register_event_duration_secs_listener(listener: DurationListener) -> None:
    """Call ``listener(event, duration_secs, **kwargs)`` on every duration."""
    _durations.append(listener)


def register_event_time_span_listener(listener: TimeSpanListener) -> None:
    """Call ``listener(event, start_time, end_time, **kwargs)`` on every time span."""
    _spans.append(listener)


def register_scalar_listener(listener: ScalarListener) -> None:
    """Call ``listener(event, value, **kwargs)`` on every scalar."""
    _scalars.append(listener)


def _unregister(listeners: list[Any], listener: Any, kind: str) -> None:
    if listener not in listeners:
        raise AssertionError(f"expected a registered {kind} listener, but got {listener!r}")
    listeners.remove(listener)


def unregister_event_listener(listener: EventListener) -> None:
    """Stop calling ``listener`` on events."""
    _unregister(_events, listener, "event")


def unregister_event_duration_listener(listener: DurationListener) -> None:
    """Stop calling ``listener`` on durations."""
    _unregister(_durations, listener, "event duration")


def unregister_event_time_span_listener(listener: TimeSpanListener) -> None:
    """Stop calling ``listener`` on time spans."""
    _unregister(_spans, listener, "event time span")


def unregister_scalar_listener(listener: ScalarListener) -> None:
    """Stop calling ``listener`` on scalars."""
    _unregister(_scalars, listener, "scalar")


def clear_event_listeners() -> None:
    """Forget every listener."""
    for listeners in (_events, _durations, _spans, _scalars):
        listeners.clear()

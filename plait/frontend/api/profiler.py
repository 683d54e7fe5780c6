"""Profiling (``plait.profiler``, as ``jax.profiler``), over jaxlib's profiler: traces of
what the host and the devices do, written for TensorBoard (and Perfetto), annotations of
regions of a program, and device memory profiles.
"""

from __future__ import annotations

import functools
import gzip
import json
import os
import pathlib
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

import jaxlib._profiler as _profiler

from plait.lowering import runtime

__all__ = ["ProfileOptions", "TraceAnnotation", "StepTraceAnnotation", "annotate_function",
           "start_trace", "stop_trace", "trace", "start_server", "stop_server",
           "device_memory_profile", "save_device_memory_profile"]

F = TypeVar("F", bound=Callable[..., Any])

ProfileOptions = _profiler.ProfileOptions
"""What a trace records (``host_tracer_level``, ``python_tracer_level``, ...)."""


class TraceAnnotation(_profiler.TraceMe):  # type: ignore[misc]  # jaxlib has no stubs for it
    """A context manager marking a region: while a trace is being taken, the region shows
    as an event named ``name`` (with ``kwargs`` as its arguments) on the host timeline."""


class StepTraceAnnotation(TraceAnnotation):
    """A :class:`TraceAnnotation` marking one step of a loop (pass ``step_num=``), which
    the profiler's tools analyse step by step."""

    def __init__(self, name: str, **kwargs: Any) -> None:
        super().__init__(name, _r=1, **kwargs)


def annotate_function(func: F, name: str | None = None, **decorator_kwargs: Any) -> F:
    """``func`` with each call a :class:`TraceAnnotation` named ``name`` (by default
    ``func``'s name); as a decorator, with ``functools.partial`` for the arguments."""
    label = name or getattr(func, "__qualname__", None) or getattr(func, "__name__", "function")

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        with TraceAnnotation(label, **decorator_kwargs):
            return func(*args, **kwargs)
    return wrapper  # type: ignore[return-value]  # (functools.wraps keeps func's signature)


class _Session:
    """The one trace being taken, if any."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.session: Any = None
        self.log_dir = ""
        self.perfetto = False


_state = _Session()


def start_trace(log_dir: os.PathLike[str] | str, create_perfetto_link: bool = False,
                create_perfetto_trace: bool = False,
                profiler_options: Any = None) -> None:
    """Start taking a trace, written to ``log_dir`` by :func:`stop_trace` in TensorBoard's
    layout (``plugins/profile/<run>/``); with ``create_perfetto_trace`` also as
    ``perfetto_trace.json.gz`` there.

    Raises:
      RuntimeError: a trace is being taken already (one at a time).
      NotImplementedError: ``create_perfetto_link`` (serving the trace to Perfetto's web
        page); write the file with ``create_perfetto_trace`` and open it there.
    """
    if create_perfetto_link:
        raise NotImplementedError("start_trace: create_perfetto_link (serving the trace to "
                                  "ui.perfetto.dev) is not implemented by plait; pass "
                                  "create_perfetto_trace=True and open the file there")
    with _state.lock:
        if _state.session is not None:
            raise RuntimeError("Profile has already been started. Only one profile may be "
                               "run at a time.")
        runtime.client()  # (the devices' tracers register when the client starts)
        options = profiler_options if profiler_options is not None else ProfileOptions()
        _state.session = _profiler.ProfilerSession(options)
        _state.log_dir, _state.perfetto = str(log_dir), create_perfetto_trace


def stop_trace() -> None:
    """Stop the trace :func:`start_trace` started and write it out.

    Raises:
      RuntimeError: no trace is being taken.
    """
    with _state.lock:
        if _state.session is None:
            raise RuntimeError("No profile started")
        session, log_dir, perfetto = _state.session, _state.log_dir, _state.perfetto
        _state.session = None
        session.stop_and_export(log_dir)
        if perfetto:
            _write_perfetto_trace(log_dir)


def _write_perfetto_trace(log_dir: str) -> pathlib.Path:
    """The newest run's Chrome trace, without its metadata, as Perfetto reads it."""
    runs = (pathlib.Path(log_dir).absolute() / "plugins" / "profile").iterdir()
    newest = max(runs, key=os.path.getmtime)
    found = list(newest.glob("*.trace.json.gz"))
    if len(found) != 1:
        raise ValueError(f"expected one *.trace.json.gz in {newest}, but got {len(found)}")
    with gzip.open(found[0], "rb") as f:
        events = json.load(f)
    events.pop("metadata", None)
    out = newest / "perfetto_trace.json.gz"
    with gzip.open(out, "wb") as f:
        f.write(json.dumps(events).encode("utf-8"))
    return out


@contextmanager
def trace(log_dir: os.PathLike[str] | str, create_perfetto_link: bool = False,
          create_perfetto_trace: bool = False, profiler_options: Any = None) -> Iterator[None]:
    """A trace of the enclosed code (:func:`start_trace` on entry, :func:`stop_trace` on
    exit)."""
    start_trace(log_dir, create_perfetto_link, create_perfetto_trace, profiler_options)
    try:
        yield
    finally:
        stop_trace()


_server: list[Any] = []


def start_server(port: int) -> Any:
    """Serve traces on ``port`` to a profiler client (TensorBoard's capture button).

    Raises:
      ValueError: a server is running already.
    """
    if _server:
        raise ValueError("Only one profiler server can be active at a time.")
    runtime.client()
    _server.append(_profiler.start_server(port))
    return _server[0]


def stop_server() -> None:
    """Stop the server :func:`start_server` started.

    Raises:
      ValueError: no server is running.
    """
    if not _server:
        raise ValueError("No active profiler server.")
    _server.pop()


def device_memory_profile(backend: str | None = None) -> bytes:
    """What the devices hold now, as a gzipped ``pprof`` profile (``pprof`` reads it)."""
    return gzip.compress(runtime.client().heap_profile())


def save_device_memory_profile(filename: os.PathLike[str] | str,
                               backend: str | None = None) -> None:
    """Write :func:`device_memory_profile` to ``filename``."""
    pathlib.Path(filename).write_bytes(device_memory_profile(backend))

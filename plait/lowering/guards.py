"""Transfer guards and the other guards jaxlib keeps: the runtime side of the options
``transfer_guard_*``, ``array_garbage_collection_guard`` and ``thread_guard``.

jaxlib checks every transfer it makes against a guard state (one for the process, one
per thread), as it does for JAX: a NumPy array or Python scalar put on a device
(``batched_device_put``, jit's C++ dispatcher), a value copied to the host.  plait
mirrors its options into the process-wide state, so those checks, their messages and
their WARNING log lines are JAX's.  Three things plait does otherwise than JAX need
help here:

* plait's explicit transfers (``device_put``, ``device_get``, the arguments a host
  callback receives) say so to jaxlib (:func:`explicit_put`, :func:`explicit_get`), as
  JAX's do;
* plait moves an array to another device or layout through the host, which jaxlib
  would see as two transfers of other kinds: :func:`device_to_device` applies the
  device-to-device guard to the move itself and lets its host legs through;
* a refusal names the guard to change (:func:`advised`).
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator
from typing import Any, Final

from jaxlib._jax import JaxRuntimeError
from jaxlib._jax import guard_lib as _gl

from plait.ir.config import guard, on_update
from plait.ir.config import values as _config

__all__ = ["explicit_put", "explicit_get", "device_to_device", "unguarded", "advised",
           "logger"]

logger: Final = logging.getLogger("plait.transfer_guard")
"""Where a device-to-device move is logged (WARNING) under the ``'log'`` levels; the
other transfers are logged by jaxlib itself, at WARNING level on stderr, as JAX's are."""

_T = _gl.TransferGuardLevel
_LEVELS: Final = {None: None, "allow": _T.ALLOW, "log": _T.LOG, "disallow": _T.DISALLOW,
                  "log_explicit": _T.LOG_EXPLICIT, "disallow_explicit": _T.DISALLOW_EXPLICIT}
_G = _gl.GarbageCollectionGuardLevel
_GC_LEVELS: Final = {None: None, "allow": _G.ALLOW, "log": _G.LOG, "fatal": _G.FATAL}
_DIRECTIONS: Final = ("host_to_device", "device_to_host", "device_to_device")

# What plait last wrote to jaxlib's process-wide state: an option is written only when
# it changes, so a value JAX's own options set there (JAX loaded too) stays otherwise.
_mirrored: dict[str, Any] = {}


def _mirror() -> None:
    state = _gl.global_state()
    for d in _DIRECTIONS:
        level = getattr(_config, "transfer_guard_" + d)
        if _mirrored.get(d, None) != level:
            setattr(state, d, _LEVELS[level])
            _mirrored[d] = level
    gc_level = _config.array_garbage_collection_guard
    if _mirrored.get("gc", None) != gc_level:
        state.garbage_collect_array = _GC_LEVELS[gc_level]
        _mirrored["gc"] = gc_level


on_update(_mirror)


def _set_thread_guard(value: Any) -> None:
    # On every update, from the updating thread: jaxlib records it as the one that
    # computations may start from, and refuses a second thread setting it meanwhile.
    _gl.update_thread_guard_global_state(bool(value))


guard("thread_guard", _set_thread_guard)


@contextlib.contextmanager
def explicit_put() -> Iterator[None]:
    """Within the block, host-to-device and device-to-device transfers are explicit."""
    state = _gl.thread_local_state()
    previous = state.explicit_device_put
    state.explicit_device_put = True
    try:
        yield
    finally:
        state.explicit_device_put = previous


@contextlib.contextmanager
def explicit_get() -> Iterator[None]:
    """Within the block, device-to-host transfers are explicit."""
    state = _gl.thread_local_state()
    previous = state.explicit_device_get
    state.explicit_device_get = True
    try:
        yield
    finally:
        state.explicit_device_get = previous


def _level(direction: str) -> Any:
    """The level in force for ``direction`` on this thread (jaxlib's rule: the thread's
    own, else the process's, else allow)."""
    level = getattr(_gl.thread_local_state(), direction)
    if level is None:
        level = getattr(_gl.global_state(), direction)
    return _T.ALLOW if level is None else level


@contextlib.contextmanager
def device_to_device(aval: Any, src: Any, dst: Any) -> Iterator[None]:
    """Around a move of an array of type ``aval`` laid out as ``src`` to ``dst`` (another
    device or layout) that goes through the host: the move is checked as a
    device-to-device transfer (explicit within :func:`explicit_put`), and its host legs
    are not checked again.

    Raises:
      JaxRuntimeError: the device-to-device guard refuses the move.
    """
    _check_move(aval, src, dst)
    with unguarded():
        yield


@contextlib.contextmanager
def unguarded() -> Iterator[None]:
    """Within the block, plait's copies are not checked: the host legs of a move
    between devices, and copies that are no transfer in JAX (an array assembled from
    arrays on their devices already)."""
    state = _gl.thread_local_state()
    saved = [getattr(state, d) for d in _DIRECTIONS]
    for d in _DIRECTIONS:
        setattr(state, d, _T.ALLOW)
    try:
        yield
    finally:
        for d, level in zip(_DIRECTIONS, saved):
            setattr(state, d, level)


def _check_move(aval: Any, src: Any, dst: Any) -> None:
    level = _level("device_to_device")
    explicit = _gl.thread_local_state().explicit_device_put
    what = f"device-to-device transfer: aval={aval!r}, sharding={src!r}, dst_sharding={dst!r}"
    if level in (_T.LOG_EXPLICIT, _T.LOG if not explicit else None):
        logger.warning("%s", what)
    elif level in (_T.DISALLOW_EXPLICIT, _T.DISALLOW if not explicit else None):
        raise JaxRuntimeError(f"INVALID_ARGUMENT: Disallowed {what}; "
                              + _advice("device_to_device", level))


def _advice(direction: str, level: Any) -> str:
    name = f"plait.transfer_guard_{direction}"
    if level == _T.DISALLOW_EXPLICIT:
        return (f"{name} is 'disallow_explicit' here, which refuses explicit transfers "
                f"too: allow them with {name}('disallow') (implicit ones stay refused) or "
                f"{name}('allow')")
    explicit = "plait.device_get" if direction == "device_to_host" else "plait.device_put"
    return (f"{name} is 'disallow' here, which refuses implicit transfers: transfer "
            f"explicitly with {explicit}, or allow it with {name}('allow')")


def advised(error: JaxRuntimeError) -> JaxRuntimeError:
    """jaxlib's error ``error``, with what to do added if it is a transfer guard's
    refusal (it names the transfer and the array type already)."""
    text = str(error)
    for d in _DIRECTIONS:
        if f"Disallowed {d.replace('_', '-')} transfer" in text:
            return JaxRuntimeError(f"{text}; {_advice(d, _level(d))}")
    return error

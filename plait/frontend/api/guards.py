"""Guards, as JAX's: ``transfer_guard`` and its three directions, ``no_tracing``,
``no_execution``, ``array_garbage_collection_guard`` and ``thread_guard``.

Each sets the option of its name (:mod:`plait.ir.config`) for the duration of a block.
The transfer guards are checked where data moves (:mod:`plait.lowering.guards`):
host to device (a NumPy array or Python scalar given to a computation, ``pnp.asarray``
of host data; ``plait.device_put`` explicitly), device to host (on the CPU only the
sub-byte dtypes are copied; ``plait.device_get`` explicitly), device to device (an array
moved to the device or layout a computation needs; ``plait.device_put`` explicitly).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from plait.frontend.api.contexts import _option
from plait.ir import config as _config

__all__ = ["transfer_guard", "transfer_guard_host_to_device", "transfer_guard_device_to_host",
           "transfer_guard_device_to_device", "no_tracing", "no_execution",
           "array_garbage_collection_guard", "thread_guard"]

_DIRECTIONS = ("transfer_guard_host_to_device", "transfer_guard_device_to_host",
               "transfer_guard_device_to_device")


def transfer_guard(level: str | None) -> contextlib.AbstractContextManager[None]:
    """Within the block, every transfer between host and device or between devices is
    treated by ``level``: ``'allow'`` (``None``: as outside), ``'log'`` (implicit ones are
    logged at WARNING level), ``'disallow'`` (implicit ones raise ``JaxRuntimeError``),
    ``'log_explicit'`` / ``'disallow_explicit'`` (explicit ones, ``plait.device_put`` and
    ``plait.device_get``, too).

    Raises:
      ValueError: ``level`` is not one of these.
    """
    _config.check("transfer_guard", level)
    return _all_directions(level)


@contextlib.contextmanager
def _all_directions(level: str | None) -> Iterator[None]:
    # (The three directions are restored one by one: they may have differed before.)
    names = ("transfer_guard", *_DIRECTIONS)
    previous = [_config.read(n) for n in names]
    _config.update("transfer_guard", level)
    try:
        yield
    finally:
        for name, value in zip(names, previous):
            _config.update(name, value)


def transfer_guard_host_to_device(level: str | None) -> contextlib.AbstractContextManager[None]:
    """:func:`transfer_guard` for transfers from the host to a device only: NumPy arrays
    and Python scalars given to jitted functions and operations, ``pnp.asarray`` of host
    data (implicit); ``plait.device_put`` of them (explicit).

    Raises:
      ValueError: ``level`` is not a transfer guard level.
    """
    return _option("transfer_guard_host_to_device", level)


def transfer_guard_device_to_host(level: str | None) -> contextlib.AbstractContextManager[None]:
    """:func:`transfer_guard` for copies of arrays to the host only: ``np.asarray(x)``,
    ``x.item()``, printing (implicit); ``plait.device_get`` (explicit).  As in JAX on
    the CPU, the host reads most arrays in place, which is no transfer; arrays of the
    sub-byte dtypes (``int4``, ``uint4``, ``int2``, ``uint2``, ``float4_e2m1fn``) are
    copied.

    Raises:
      ValueError: ``level`` is not a transfer guard level.
    """
    return _option("transfer_guard_device_to_host", level)


def transfer_guard_device_to_device(level: str | None
                                    ) -> contextlib.AbstractContextManager[None]:
    """:func:`transfer_guard` for moves of arrays between devices or layouts only: an
    array moved to where a computation runs (another device's array among its operands,
    a jit ``in_shardings`` layout) (implicit); ``plait.device_put`` to another device or
    sharding (explicit).

    Raises:
      ValueError: ``level`` is not a transfer guard level.
    """
    return _option("transfer_guard_device_to_device", level)


def no_tracing(enable: bool = True) -> contextlib.AbstractContextManager[None]:
    """Within the block, tracing a function to a jaxpr raises ``RuntimeError``: a jitted
    call whose program is not cached (a new function, new argument types), ``make_jaxpr``,
    transformations and control flow that trace.  For tests that a step is not
    retraced; calls served from jit's cache and eager operations run."""
    return _option("no_tracing", bool(enable))


def no_execution(enable: bool = True) -> contextlib.AbstractContextManager[None]:
    """Within the block, running a computation raises ``RuntimeError``: a jitted or
    compiled call, an eager operation.  Tracing, lowering and compiling still work, and
    so do transfers (``device_put``, ``np.asarray``)."""
    return _option("no_execution", bool(enable))


def array_garbage_collection_guard(level: str | None) -> contextlib.AbstractContextManager[None]:
    """Within the block, an array freed by Python's cycle collector (an array held in a
    reference cycle) rather than by reference counting is reported: ``'allow'`` (``None``:
    as outside) says nothing, ``'log'`` logs an error with where the array was made,
    ``'fatal'`` aborts the process, as JAX's.

    Raises:
      ValueError: ``level`` is not one of these.
    """
    return _option("array_garbage_collection_guard", level)


def thread_guard(enable: bool = True) -> contextlib.AbstractContextManager[None]:
    """Within the block, in a multi-process run (``plait.distributed``), a computation
    started from another thread than this one raises (processes that start computations
    in different orders from several threads can deadlock).  Nested blocks in different
    threads raise.  A single process has no such computations: nothing changes there."""
    return _option("thread_guard", bool(enable))

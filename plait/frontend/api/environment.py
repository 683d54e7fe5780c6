"""The runtime environment and small conveniences of JAX's top level: device counts,
the backend, waiting for and fetching results, the type of a value."""

from __future__ import annotations

import contextlib
import platform
import sys
from collections.abc import Iterator
from importlib.metadata import version
from typing import Any, overload

import numpy as np

from plait.frontend.core.arguments import abstractify
from plait.frontend.core.array_base import Array
from plait.frontend.core.array_impl import ArrayImpl, cached_scalar_buffers
from plait.frontend.core.refs import AbstractRef, Ref
from plait.frontend.core.tree_util import tree_map
from plait.ir import config as _config
from plait.ir import dtypes as dt
from plait.ir.avals import ShapedArray
from plait.lowering import guards, runtime

__all__ = ["devices", "device_count", "local_device_count", "default_backend", "block_until_ready",
           "device_get", "typeof", "print_environment_info", "enable_x64", "live_arrays",
           "effects_barrier"]


def _check_backend(backend: Any) -> None:
    if backend not in (None, "cpu"):
        raise RuntimeError(f"Unknown backend {backend!r}: plait runs on 'cpu' only")


def devices(backend: str | None = None) -> list[Any]:
    """The devices (of every process, in a distributed run); ``backend`` may only be
    ``'cpu'``, as on a machine with no accelerator.

    Raises:
      RuntimeError: another backend.
    """
    _check_backend(backend)
    return runtime.devices()


def device_count(backend: str | None = None) -> int:
    """The number of devices (of every process, in a distributed run)."""
    _check_backend(backend)
    return len(runtime.devices())


def local_device_count(backend: str | None = None) -> int:
    """The number of devices this process drives."""
    _check_backend(backend)
    return len(runtime.local_devices())


def default_backend() -> str:
    """The platform computations run on: ``'cpu'``."""
    return "cpu"


def block_until_ready(x: Any) -> Any:
    """Wait until every Array in the pytree ``x`` is computed; returns ``x``."""
    def wait(leaf: Any) -> Any:
        ready = getattr(leaf, "block_until_ready", None)
        if ready is not None:
            ready()
        return leaf
    tree_map(wait, x)
    return x


def effects_barrier() -> None:
    """Wait until every host callback launched so far has run (``debug.print``,
    ``io_callback``...).  In plait that is always true already: a program with
    callbacks runs to completion before its call returns.  Kept for JAX code."""


def live_arrays(platform: str | None = None) -> list[Array]:
    """Every array whose device buffer is still alive (for finding leaks); each
    returned Array shares its buffer, so ``delete()`` frees it.  Typed PRNG keys
    appear as their ``uint32`` data."""
    _check_backend(platform)
    own = {id(b) for b in cached_scalar_buffers()}
    return [ArrayImpl(b.aval, b)
            for b in runtime.client().live_arrays() if id(b) not in own]


def device_get(x: Any) -> Any:
    """The pytree ``x`` with its Arrays copied to the host as NumPy arrays (explicit
    transfers for the transfer guards, ``plait.transfer_guard``).  As in JAX, traced
    values and key arrays are left as they are.

    Raises:
      JaxRuntimeError: the device-to-host transfer guard is ``'disallow_explicit'`` and
        an Array needs a copy (a sub-byte dtype, on the CPU).
    """
    with guards.explicit_get():
        return tree_map(_host_copy, x)


def _host_copy(leaf: Any) -> Any:
    if type(leaf) is ArrayImpl and not dt.is_key(leaf.dtype):
        return np.asarray(leaf)
    return leaf


@overload
def typeof(x: Ref) -> AbstractRef: ...
@overload
def typeof(x: Any) -> ShapedArray: ...
def typeof(x: Any) -> ShapedArray | AbstractRef:
    """The type plait gives ``x`` when it is an argument: shape, dtype and weak type
    (``typeof(1.0)`` is a weakly typed ``f32[]``); a Ref's is its ``AbstractRef``."""
    if isinstance(x, Ref):
        return x.aval
    return abstractify(x, "x", "typeof")


def print_environment_info(return_string: bool = False) -> str | None:
    """Print (or return) the versions of plait and its runtime, and the devices."""
    devices = runtime.devices()
    lines = [f"plait:  {version('plait')}", f"jaxlib: {version('jaxlib')}",
             f"numpy:  {np.__version__}", f"python: {sys.version}",
             f"device info: {devices[0].platform}-{len(devices)}, {len(devices)} local devices",
             f"platform: {platform.uname()}"]
    text = "\n".join(lines) + "\n"
    if return_string:
        return text
    print(text, end="")
    return None


@contextlib.contextmanager
def enable_x64(new_val: bool = True) -> Iterator[None]:
    """Within the block, x64 mode is ``new_val`` (64-bit dtypes are kept, not narrowed);
    the previous mode is restored after it (``plait.config.update('enable_x64', ...)``
    sets it for good)."""
    previous = _config.read("enable_x64")
    _config.update("enable_x64", bool(new_val))
    try:
        yield
    finally:
        _config.update("enable_x64", previous)

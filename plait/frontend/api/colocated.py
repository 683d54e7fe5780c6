"""Colocated Python (``jax.experimental.colocated_python``) on a CPU-only runtime: every
device is a CPU device, its own colocated one, so a colocated function or class runs in
place."""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

__all__ = ["colocated_cpu_devices", "colocated_python", "colocated_python_class"]

T = TypeVar("T")


def colocated_cpu_devices(devices: Sequence[Any]) -> tuple[Any, ...]:
    """The CPU devices colocated with ``devices``: the devices themselves, which are CPU
    devices (plait runs on the CPU only).

    Raises:
      ValueError: a device that is not a CPU device.
    """
    devices = tuple(devices)
    for d in devices:
        if getattr(d, "platform", None) != "cpu":
            raise ValueError(f"colocated_cpu_devices: expected CPU devices (plait runs on the "
                             f"CPU only), but got {d!r}")
    return devices


class _Colocated:
    """A function run on the colocated CPU devices: here, called in place."""

    def __init__(self, fun: Callable[..., Any]) -> None:
        self.fun = fun
        functools.update_wrapper(self, fun)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.fun(*args, **kwargs)

    def specialize(self, in_specs: Any = None, out_specs_fn: Any = None,
                   devices: Sequence[Any] | None = None) -> _Colocated:
        """The function for given argument and result specs and devices (JAX uses them
        to run it elsewhere; here it runs in place, so they are checked and kept only)."""
        if devices is not None:
            colocated_cpu_devices(devices)
        return self


def colocated_python(fun: Callable[..., Any]) -> Any:
    """``fun``, to run on the CPU devices colocated with its arguments' devices: on a CPU
    runtime, where it is called."""
    if not callable(fun):
        raise TypeError(f"colocated_python: expected a function, but got {fun!r}")
    return _Colocated(fun)


def colocated_python_class(cls: type[T]) -> type[T]:
    """``cls``, whose instances live on the colocated CPU devices: on a CPU runtime, the
    class itself."""
    if not isinstance(cls, type):
        raise TypeError(f"colocated_python_class: expected a class, but got {cls!r}")
    return cls

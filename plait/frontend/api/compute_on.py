"""``compute_on``: where the computations staged inside run, as
``jax.experimental.compute_on``.  On the CPU the host is the device, so every compute
type runs the same program (as in JAX on the CPU): the context only checks the type.  See
``docs/jit.md``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

__all__ = ["compute_on"]


def _check_valid(compute_type: str) -> None:
    if compute_type not in {"device_host", "device", "tpu_sparsecore"} and \
            not compute_type.startswith("gpu_stream:"):
        raise ValueError(f"Invalid compute type {compute_type}. Current supported values are "
                         "`device_host`, `device`, `tpu_sparsecore`, and `gpu_stream:#`.")


@contextlib.contextmanager
def compute_on(compute_type: str) -> Iterator[None]:
    """Inside (or, as a decorator, in the function), computations run on
    ``compute_type``: ``"device_host"``, ``"device"``, ``"tpu_sparsecore"`` or
    ``"gpu_stream:N"``.  On the CPU all of them run on the one device there is.

    Raises:
      TypeError: ``compute_type`` is not a string.
      ValueError: it names no compute type.
    """
    if not isinstance(compute_type, str):
        raise TypeError("`compute_on`'s compute_type argument must be a string.")
    _check_valid(compute_type)
    yield

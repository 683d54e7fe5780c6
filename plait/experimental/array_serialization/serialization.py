"""``jax.experimental.array_serialization.serialization``: the interface of an
asynchronous checkpoint manager, which orbax tests its checkpointers against.  plait has
no tensorstore serialization of its own (orbax writes arrays itself)."""

from __future__ import annotations

import abc
from typing import Any

__all__ = ["GlobalAsyncCheckpointManagerBase"]


class GlobalAsyncCheckpointManagerBase(abc.ABC):
    """A manager of checkpoints written in the background: ``serialize`` starts one,
    ``check_for_errors`` reports a failure without waiting, ``wait_until_finished``
    waits, ``deserialize`` reads one back."""

    @abc.abstractmethod
    def check_for_errors(self) -> None:
        """Raise an error a background write hit, without waiting."""

    @abc.abstractmethod
    def wait_until_finished(self) -> None:
        """Wait until the pending writes are done."""

    @abc.abstractmethod
    def serialize(self, arrays: Any, tensorstore_specs: Any, *,
                  on_commit_callback: Any) -> None:
        """Start writing ``arrays`` to ``tensorstore_specs``."""

    @abc.abstractmethod
    def deserialize(self, shardings: Any, tensorstore_specs: Any,
                    global_shapes: Any = None, dtypes: Any = None) -> Any:
        """Read arrays back, laid out by ``shardings``."""

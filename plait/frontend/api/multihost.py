"""``jax.experimental.multihost_utils``'s helpers beyond gathering: broadcasting from
one process, checking that all processes agree, moving between process-local and
global arrays, the preemption sync point and the live-devices context manager.

With one process (the usual case on one machine) each has JAX's one-process meaning:
``broadcast_one_to_all`` returns NumPy copies, ``assert_equal`` passes, the local and
global arrays are the same data, ``reached_preemption_sync_point`` is ``False``.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from plait.frontend.api.devices import (
    _dist,
    make_array_from_process_local_data,
    process_allgather,
    process_count,
    process_index,
)
from plait.frontend.core.array_impl import ArrayImpl
from plait.frontend.core.host_values import as_host_array
from plait.frontend.core.tree_util import (
    broadcast_prefix,
    tree_all,
    tree_flatten,
    tree_map,
    tree_unflatten,
)
from plait.ir.sharding import Mesh, NamedSharding, PartitionSpec

__all__ = ["broadcast_one_to_all", "assert_equal", "host_local_array_to_global_array",
           "global_array_to_host_local_array", "reached_preemption_sync_point",
           "live_devices", "ProcessFailureError"]


def broadcast_one_to_all(in_tree: Any, is_source: bool | None = None) -> Any:
    """The source process's values of the pytree ``in_tree`` (the same structure and
    shapes in every process), as NumPy arrays, in every process.  The source is the
    process passing ``is_source=True`` (by default process 0)."""
    if process_count() == 1:
        return tree_map(np.asarray, in_tree)
    source = process_index() == 0 if is_source is None else is_source

    def one(x: Any) -> np.ndarray:
        value = np.asarray(as_host_array(x))
        mine = value if source else np.zeros_like(value)
        return np.asarray(process_allgather(mine).sum(axis=0, dtype=value.dtype))
    return tree_map(one, in_tree)


def assert_equal(in_tree: Any, fail_message: str = "") -> None:
    """Check that every process holds the same values of the pytree ``in_tree``.

    Raises:
      AssertionError: the processes' values differ (JAX's message, after
        ``fail_message``).
    """
    n = process_count()

    def repeated(x: Any) -> np.ndarray:
        value = np.asarray(x)
        return np.concatenate([value.reshape(1) if value.ndim == 0 else value] * n)

    out = process_allgather(in_tree, tiled=True)
    expected = tree_map(repeated, in_tree)
    if not tree_all(tree_map(lambda a, b: bool(np.all(np.equal(a, b))), expected, out)):
        raise AssertionError(f"{fail_message}. Expected: {out}; got: {in_tree}.")


def _specs(pspecs: Any, tree: Any, what: str) -> list[PartitionSpec]:
    specs = broadcast_prefix(pspecs, tree, what,
                             lambda s: s is None or isinstance(s, PartitionSpec))
    if any(s is None for s in specs):
        raise ValueError("`None` is not a valid input to the pspecs argument. Please use "
                         "plait.sharding.PartitionSpec() if you wanted to replicate your "
                         "input.")
    return specs


def _local_factor(mesh: Mesh, names: Sequence[str]) -> int:
    """How many processes' parts a dimension split over the mesh axes ``names`` joins:
    the axes' sizes over the sizes this process's devices span along them."""
    me = process_index()
    axes = list(mesh.axis_names)
    grid = mesh.devices
    positions = np.argwhere(np.vectorize(lambda d: d.process_index == me)(grid))
    spans = [len({tuple(p)[axes.index(a)] for p in positions}) for a in names]
    return math.prod(mesh.shape[a] for a in names) // math.prod(spans)


def _to_global(x: Any, mesh: Mesh, spec: PartitionSpec) -> Any:
    if type(x) is ArrayImpl and not x.is_fully_addressable:
        return x  # already global
    data = as_host_array(x)
    shape = list(data.shape)
    for d, entry in enumerate(spec):
        if entry is not None and d < len(shape):
            names = (entry,) if isinstance(entry, str) else tuple(entry)
            shape[d] *= _local_factor(mesh, names)
    return make_array_from_process_local_data(NamedSharding(mesh, spec), data, tuple(shape))


def host_local_array_to_global_array(local_inputs: Any, global_mesh: Mesh, pspecs: Any) -> Any:
    """The global arrays, laid out over ``global_mesh`` by ``pspecs`` (a tree prefix of
    ``local_inputs``), whose parts along the dimensions split across processes are each
    process's ``local_inputs``.

    Raises:
      ValueError: a spec is ``None`` (use ``PartitionSpec()`` to replicate).
    """
    leaves, tree = tree_flatten(local_inputs)
    specs = _specs(pspecs, local_inputs, "host_local_array_to_global_array pspecs")
    return tree_unflatten(tree, [_to_global(x, global_mesh, s) for x, s in zip(leaves, specs)])


def global_array_to_host_local_array(global_inputs: Any, global_mesh: Mesh, pspecs: Any) -> Any:
    """This process's parts of the global arrays ``global_inputs`` laid out over
    ``global_mesh`` by ``pspecs``: with one process, the arrays themselves (JAX returns a
    fully addressable array as it is).

    Raises:
      ValueError: a spec is ``None`` (use ``PartitionSpec()`` to replicate).
      NotImplementedError: an array spans several processes (plait has no
        process-local sub-mesh yet).
    """
    leaves, tree = tree_flatten(global_inputs)
    _specs(pspecs, global_inputs, "global_array_to_host_local_array pspecs")
    for x in leaves:
        if type(x) is ArrayImpl and not x.is_fully_addressable:
            raise NotImplementedError(
                "global_array_to_host_local_array of an array spanning several processes "
                "is not supported yet; read this process's parts from x.addressable_shards")
    return tree_unflatten(tree, leaves)


def reached_preemption_sync_point(step_id: int) -> bool:
    """Whether every process has reached the step after a preemption notice, where a
    checkpoint is safe: ``False`` without a distributed run.

    Raises:
      RuntimeError: in a distributed run (plait's has no preemption service), as JAX
        raises without its preemption sync manager.
    """
    if "client" not in _dist:
        return False
    raise RuntimeError("Preemption sync manager has not been initialized: plait's "
                       "distributed runtime has no preemption service")


class ProcessFailureError(Exception):
    """Raised by :func:`live_devices` when processes failed; ``failed_devices`` holds
    their devices."""

    def __init__(self, failed_devices: set[Any]) -> None:
        self.failed_devices = failed_devices
        super().__init__(f"Devices failed: {failed_devices}")


def _live(client: Any, devices: Sequence[Any]) -> dict[Any, int]:
    ids = {d.process_index for d in devices}
    if process_index() not in ids:
        raise ValueError("Provided devices do not have any local devices.")
    alive = client.get_live_nodes(list(ids))
    return {d: alive[d.process_index] for d in devices if d.process_index in alive}


@contextlib.contextmanager
def live_devices(devices: Sequence[Any]) -> Iterator[list[Any]]:
    """Within the block, the ``devices`` whose processes are alive (sorted by id); leaving
    it raises :class:`ProcessFailureError` if one of their processes failed meanwhile.

    Raises:
      RuntimeError: no distributed run (:func:`plait.distributed.initialize`).
      ValueError: no devices, or none of this process.
    """
    client = _dist.get("client")
    if client is None:
        raise RuntimeError("Distributed runtime not initialized: call "
                           "plait.distributed.initialize first")
    if not devices:
        raise ValueError("No devices provided.")
    before = _live(client, devices)
    error: Exception | None = None
    try:
        yield sorted(before, key=lambda d: d.id)
    except Exception as e:
        error = e
    after = _live(client, devices)
    failed = {d for d in before if after.get(d) != before[d]}
    if failed:
        raise ProcessFailureError(failed) from error
    if error is not None:
        raise error

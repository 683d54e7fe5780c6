"""Devices, meshes and global arrays: ``make_mesh``, ``local_devices``,
``process_index``, ``make_array_from_callback``, ``make_array_from_single_device_arrays``,
``make_array_from_process_local_data``, and ``distributed.initialize`` (several
processes, each with its devices, forming one set of devices for SPMD programs).
"""

from __future__ import annotations

import atexit
import hashlib
import math
import socket
import time
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from jaxlib import _jax

from plait.frontend.api.jit import jit
from plait.frontend.core.array_impl import ArrayImpl
from plait.frontend.core.host_values import as_host_array
from plait.frontend.core.tree_util import tree_map
from plait.ir import dtypes as dt
from plait.ir.avals import ShapedArray
from plait.ir.sharding import AxisType, Mesh, NamedSharding, PartitionSpec
from plait.lowering import guards, multi_device, runtime

__all__ = ["make_mesh", "local_devices", "process_index", "process_count", "process_indices",
           "host_id", "host_count", "host_ids", "copy_to_host_async", "Device",
           "make_array_from_callback", "make_array_from_single_device_arrays",
           "make_array_from_process_local_data", "initialize", "shutdown", "is_initialized",
           "process_allgather", "sync_global_devices"]


Device = _jax.Device
"""The type of a device (``plait.devices()[0]``), as ``jax.Device``."""


def local_devices(process_index: int | None = None, backend: str | None = None,
                  host_id: int | None = None) -> list[Any]:
    """The devices of this process (or of process ``process_index``; ``host_id`` is its
    old name, with JAX's warning)."""
    if host_id is not None:
        warnings.warn("The argument to jax.local_devices has been renamed from `host_id` to "
                      "`process_index`. This alias will eventually be removed; please update "
                      "your code.", stacklevel=2)
        process_index = host_id
    if backend not in (None, "cpu"):
        raise RuntimeError(f"Unknown backend {backend!r}: plait runs on 'cpu' only")
    if process_index is None:
        return runtime.local_devices()
    return [d for d in runtime.devices() if d.process_index == process_index]


def process_index(backend: str | None = None) -> int:
    """This process's index among the processes of a distributed run (0 alone)."""
    return int(runtime.client().process_index())


def process_count(backend: str | None = None) -> int:
    """The number of processes of a distributed run (1 alone)."""
    return len({d.process_index for d in runtime.devices()})


def process_indices(backend: str | None = None) -> list[int]:
    """The indices of the processes of a distributed run, sorted (``[0]`` alone)."""
    return sorted({d.process_index for d in runtime.devices()})


def _renamed(old: str, new: str) -> None:
    warnings.warn(f"plait.{old} is JAX's old name of plait.{new}; use {new}", stacklevel=3)


def host_id(backend: str | None = None) -> int:
    """``process_index`` under its old name (warns, as JAX does)."""
    _renamed("host_id", "process_index")
    return process_index(backend)


def host_count(backend: str | None = None) -> int:
    """``process_count`` under its old name (warns, as JAX does)."""
    _renamed("host_count", "process_count")
    return process_count(backend)


def host_ids(backend: str | None = None) -> list[int]:
    """``process_indices`` under its old name (warns, as JAX does)."""
    _renamed("host_ids", "process_indices")
    return process_indices(backend)


def copy_to_host_async(x: Any) -> Any:
    """Start copying the Arrays among the leaves of ``x`` to host memory (so that a
    later ``np.asarray`` waits less); other leaves are left alone.  Returns ``x``."""
    def start(leaf: Any) -> Any:
        method = getattr(leaf, "copy_to_host_async", None) if isinstance(leaf, ArrayImpl) \
            else None
        if method is not None:
            method()
        return leaf
    tree_map(start, x)
    return x


def make_mesh(axis_shapes: Sequence[int], axis_names: Sequence[str],
              axis_types: AxisType | Sequence[AxisType] | None = None, *,
              devices: Sequence[Any] | None = None) -> Mesh:
    """A mesh of ``axis_shapes`` over the first ``prod(axis_shapes)`` devices (or over
    ``devices``), in device order.

    The axes are ``Explicit`` (shardings in types) unless ``axis_types`` says otherwise,
    as in JAX 0.10.2.

    Raises:
      ValueError: the shape does not match the number of devices.
    """
    shape = tuple(int(s) for s in axis_shapes)
    names = tuple(axis_names)
    if len(shape) != len(names):
        raise ValueError(f"make_mesh: expected one axis name per axis size, but got shape "
                         f"{shape} and names {names}")
    pool = list(devices) if devices is not None else runtime.devices()
    n = math.prod(shape)
    if devices is not None and n != len(pool):
        raise ValueError(f"make_mesh: expected {n} devices for a mesh of shape {shape}, but "
                         f"got {len(pool)}")
    if n > len(pool):
        raise ValueError(f"Number of devices {len(pool)} must be >= the product of mesh_shape "
                         f"{shape}")
    arr = np.empty(n, dtype=object)
    arr[:] = pool[:n]
    types = AxisType.Explicit if axis_types is None else axis_types
    return Mesh(arr.reshape(shape), names, axis_types=types)


def _check(sharding: Any, what: str) -> NamedSharding:
    if not isinstance(sharding, NamedSharding):
        raise TypeError(f"{what}: expected a NamedSharding, but got {type(sharding).__name__}")
    return sharding


def make_array_from_callback(shape: Sequence[int], sharding: NamedSharding | runtime.Sharding,
                             data_callback: Callable[[tuple[slice, ...]], Any],
                             dtype: Any = None) -> ArrayImpl:
    """A global array of ``shape`` laid out by ``sharding``, each of this process's
    devices getting ``data_callback(index)`` (``index`` a tuple of slices into the
    global array)."""
    shape = tuple(int(s) for s in shape)
    if isinstance(sharding, runtime.Sharding):
        whole = tuple(slice(None) for _ in shape)
        return _on_one_device(shape, sharding, [as_host_array(data_callback(whole))], dtype,
                              "make_array_from_callback")
    named = _check(sharding, "make_array_from_callback")
    indices = named.position_indices(shape)
    local = multi_device.local_positions(named)
    pieces = [as_host_array(data_callback(indices[p])) for p in local]
    return _assemble(shape, named, local, pieces, dtype)


def _on_one_device(shape: tuple[int, ...], sharding: runtime.Sharding,
                   pieces: list[np.ndarray], dtype: Any, what: str) -> ArrayImpl:
    """The array of ``shape`` whose one piece is on ``sharding``'s device."""
    if len(pieces) != 1 or pieces[0].shape != shape:
        raise ValueError(f"{what}: expected one array of shape {shape} for {sharding}, but "
                         f"got {[p.shape for p in pieces]}")
    want = dt.canonicalize(dtype if dtype is not None else pieces[0].dtype)
    return ArrayImpl.from_numpy(pieces[0].astype(want, copy=False), False, sharding._device)


def _assemble(shape: tuple[int, ...], named: NamedSharding, local: list[int],
              pieces: list[np.ndarray], dtype: Any) -> ArrayImpl:
    want = dt.canonicalize(dtype if dtype is not None else pieces[0].dtype)
    block = named.shard_shape(shape)
    for p, piece in zip(local, pieces):
        if piece.shape != block:
            raise ValueError(f"expected the data of device position {p} to have the shard "
                             f"shape {block} (of {shape} laid out by {named}), but got "
                             f"{piece.shape}")
    aval = ShapedArray(shape, want)
    return ArrayImpl(aval.update(sharding=named),
                     multi_device.put_pieces(aval, named, local, pieces))


def make_array_from_single_device_arrays(shape: Sequence[int],
                                         sharding: NamedSharding | runtime.Sharding,
                                         arrays: Sequence[Any]) -> ArrayImpl:
    """A global array of ``shape`` laid out by ``sharding`` from this process's parts,
    one single-device Array per local device of the mesh (in mesh order); for a
    ``SingleDeviceSharding``, the one array on its device."""
    shape = tuple(int(s) for s in shape)
    if isinstance(sharding, runtime.Sharding):
        with guards.unguarded():
            return _on_one_device(shape, sharding, [np.asarray(a) for a in arrays], None,
                                  "make_array_from_single_device_arrays")
    named = _check(sharding, "make_array_from_single_device_arrays")
    local = multi_device.local_positions(named)
    if len(arrays) != len(local):
        raise ValueError(f"make_array_from_single_device_arrays: expected {len(local)} arrays "
                         f"(one per local device of {named.mesh}), but got {len(arrays)}")
    # (No transfer in JAX, which reuses the arrays' buffers; plait copies them.)
    with guards.unguarded():
        return _assemble(shape, named, local, [np.asarray(a) for a in arrays], None)


def make_array_from_process_local_data(sharding: NamedSharding, local_data: Any,
                                       global_shape: Sequence[int] | None = None) -> ArrayImpl:
    """A global array laid out by ``sharding`` from the data this process holds: the
    processes' data, concatenated along the dimensions the mesh splits across processes,
    make the global array (``global_shape``; by default that of a mesh whose processes
    each hold an equal part along dimension 0)."""
    named = _check(sharding, "make_array_from_process_local_data")
    data = as_host_array(local_data)
    nproc = process_count()
    if global_shape is None:
        global_shape = (data.shape[0] * nproc,) + data.shape[1:] if named.spec.axis_names() \
            and data.ndim else data.shape
    shape = tuple(int(s) for s in global_shape)
    indices = named.position_indices(shape)
    local = multi_device.local_positions(named)
    # This process's data covers the union of its devices' indices.
    starts = [min((indices[p][d].start or 0) for p in local) for d in range(len(shape))]
    pieces = []
    for p in local:
        idx = tuple(slice((s.start or 0) - st, (s.stop if s.stop is not None else n) - st)
                    for s, st, n in zip(indices[p], starts, shape))
        pieces.append(data[idx])
    with guards.explicit_put():  # (JAX's puts the data with device_put)
        return _assemble(shape, named, local, pieces, None)


def process_allgather(x: Any, tiled: bool = False) -> Any:
    """Every process's value of the pytree ``x`` (the same structure and shapes in each),
    as NumPy arrays: stacked along a new leading axis in process order, or concatenated
    along the first axis when ``tiled``."""
    n = process_count()
    by_process: dict[int, list[Any]] = {}
    for d in runtime.devices():
        by_process.setdefault(d.process_index, []).append(d)
    per = min(len(v) for v in by_process.values())
    grid = np.empty((n, per), dtype=object)
    for p in range(n):
        grid[p, :] = by_process[p][:per]
    mesh = Mesh(grid, ("processes", "local"))
    stacked = NamedSharding(mesh, PartitionSpec("processes"))
    replicated = NamedSharding(mesh, PartitionSpec())

    def gather(leaf: Any) -> np.ndarray:
        value = np.asarray(as_host_array(leaf))
        # (Each device of this process holds this process's row.)
        arr = make_array_from_callback((n, *value.shape), stacked, lambda idx: value[None])
        whole = jit(lambda a: a, out_shardings=replicated)(arr)
        out = np.asarray(whole.addressable_shards[0].data)
        return out.reshape((-1, *value.shape[1:])) if tiled and value.ndim else out
    return tree_map(gather, x)


def sync_global_devices(name: str) -> None:
    """Wait until every process reaches this call with the same ``name``.

    Raises:
      AssertionError: the processes called it with different names.
    """
    digest = np.frombuffer(hashlib.blake2b(name.encode(), digest_size=8).digest(), np.uint32)
    seen = process_allgather(digest)
    if not (seen == seen[0]).all():
        raise AssertionError(f"sync_global_devices name mismatch ('{name}')")


# -- several processes ----------------------------------------------------------------

_dist: dict[str, Any] = {}


class DistributedState:
    """The state of ``initialize`` (JAX's ``jax._src.distributed.global_state``, which
    libraries read to learn whether the distributed runtime is up): its ``client`` and
    ``service``, ``None`` before ``initialize``."""

    @property
    def client(self) -> Any:
        """The distributed runtime client, or ``None``."""
        return _dist.get("client")

    @property
    def service(self) -> Any:
        """The coordination service (process 0's), or ``None``."""
        return _dist.get("service")


global_state = DistributedState()


def is_initialized() -> bool:
    """Whether :func:`initialize` has run in this process."""
    return "client" in _dist


def _wait_for(address: str, timeout: float) -> None:
    host, port = address.rsplit(":", 1)
    deadline = time.monotonic() + timeout
    while True:
        try:
            with socket.create_connection((host, int(port)), timeout=1.0):
                return
        except OSError:
            if time.monotonic() > deadline:
                return  # (connect() then reports the failure)
            time.sleep(0.02)


def initialize(coordinator_address: str, num_processes: int, process_id: int, *,
               local_device_count: int | None = None, initialization_timeout: int = 300,
               heartbeat_timeout_seconds: int = 100) -> None:
    """Join a run of ``num_processes`` processes coordinated at ``coordinator_address``
    (``host:port``; process 0 serves it): afterwards ``devices()`` lists every process's
    devices, and SPMD programs over meshes spanning them run on all processes at once
    (each process calls them with its part of the data).  Call it before any other plait
    computation.  ``local_device_count`` sets this process's number of CPU devices.

    Raises:
      RuntimeError: called twice, or after the runtime started.
    """
    if is_initialized():
        raise RuntimeError("distributed.initialize should only be called once.")
    if runtime.started():
        raise RuntimeError("distributed.initialize must be called before any plait "
                           "computation (the runtime has started)")
    if not 0 <= process_id < num_processes:
        raise ValueError(f"expected process_id in [0, {num_processes}), but got {process_id}")
    if process_id == 0:
        _dist["service"] = _jax.get_distributed_runtime_service(
            coordinator_address, num_processes, heartbeat_timeout=heartbeat_timeout_seconds,
            shutdown_timeout=60)
    else:
        _wait_for(coordinator_address, initialization_timeout)
    client = _jax.get_distributed_runtime_client(
        coordinator_address, process_id, init_timeout=initialization_timeout,
        use_compression=True, heartbeat_timeout=heartbeat_timeout_seconds)
    client.connect()
    _dist["client"] = client
    host = coordinator_address.rsplit(":", 1)[0]
    collectives = _jax.make_gloo_tcp_collectives(
        distributed_client=client, hostname="127.0.0.1" if host in ("localhost", "127.0.0.1")
        else None)
    runtime.start_distributed(client, process_id, num_processes, collectives,
                              local_device_count)
    atexit.register(shutdown)


def shutdown() -> None:
    """Leave the distributed run (every process must call it; at exit it is called)."""
    client = _dist.pop("client", None)
    if client is None:
        return
    runtime.release_client()
    client.shutdown()
    service = _dist.pop("service", None)
    if service is not None:
        service.shutdown()

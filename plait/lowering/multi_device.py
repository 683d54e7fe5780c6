"""Arrays and programs spanning several devices: the runtime side of meshes.

A :class:`~plait.ir.sharding.NamedSharding` becomes a :class:`MeshSharding`, the
object jaxlib's C++ side keeps in a multi-device buffer (jaxlib's
``GSPMDSharding``: the mesh's devices and XLA's ``HloSharding``, with the
attributes jaxlib reads).  Host arrays are cut into per-device pieces and put
with one ``batched_device_put``; SPMD programs are compiled with one partition
per mesh device and XLA's Shardy partitioner.
"""

from __future__ import annotations

import contextlib
import itertools
import sys
import types
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
from jaxlib import xla_client as _xc
from jaxlib._jax import JaxRuntimeError

from plait.ir.avals import ShapedArray
from plait.ir.caches import BoundedDict
from plait.ir.config import values as _config
from plait.ir.sharding import Mesh, NamedSharding, PartitionSpec
from plait.lowering import guards

__all__ = ["no_jax", "pieces", "piece_device", "MeshSharding", "mesh_sharding",
           "put_sharded", "put_pieces", "local_positions", "gather", "compile_options",
           "named_from_hlo", "device_list", "reshard"]


class MeshSharding(_xc.GSPMDSharding):  # type: ignore[misc]  # jaxlib has no stubs for it
    """A layout over several devices, as jaxlib's C++ side reads it; ``named`` is the
    :class:`NamedSharding` users see (``None`` when XLA chose a layout no spec over the
    mesh describes)."""

    named: NamedSharding | None
    mesh: Mesh

    @property
    def memory_kind(self) -> None:
        """Default memory."""
        return None

    @property
    def num_devices(self) -> int:
        """The number of devices."""
        return len(self._devices)

    @property
    def _device_assignment(self) -> tuple[Any, ...]:
        return tuple(self._devices)

    @property
    def device_set(self) -> set[Any]:
        """The devices."""
        return set(self._devices)

    @property
    def is_fully_replicated(self) -> bool:
        """Whether every device holds the whole array."""
        return bool(self._hlo_sharding.is_replicated())

    @property
    def is_fully_addressable(self) -> bool:
        """Whether this process holds every device."""
        return all(d.process_index == d.client.process_index() for d in self._devices)

    def _to_xla_hlo_sharding(self, ndim: int) -> Any:
        return self._hlo_sharding

    def __repr__(self) -> str:
        if self.named is not None:
            return repr(self.named)
        return f"GSPMDSharding({self._hlo_sharding})"


_devlists: BoundedDict[tuple[int, ...], Any] = BoundedDict("mesh device lists", 256)


def device_list(mesh: Mesh) -> Any:
    """The mesh's devices in flat order, as jaxlib's ``DeviceList``."""
    dl = _devlists.data.get(mesh.device_ids)
    if dl is None:
        dl = _devlists[mesh.device_ids] = _xc.DeviceList(tuple(mesh.devices.flat))
    return dl


def hlo_sharding(named: NamedSharding, ndim: int) -> Any:
    """XLA's ``HloSharding`` of ``named`` for an array of rank ``ndim`` (device numbers
    are positions in the mesh's flat device order)."""
    if named.is_fully_replicated:
        return _xc.HloSharding.replicate()
    assignment, replicas = named.tile_assignment(ndim)
    op = _xc.OpSharding()
    op.type = _xc.OpSharding.Type.OTHER
    dims = list(assignment.shape)
    if replicas > 1:
        op.replicate_on_last_tile_dim = True
    else:
        dims = dims[:-1]
    op.tile_assignment_dimensions = dims
    op.tile_assignment_devices = [int(p) for p in assignment.flat]
    return _xc.HloSharding.from_proto(op)


_mesh_shardings: BoundedDict[tuple[NamedSharding, int], MeshSharding] = BoundedDict(
    "mesh shardings", 1024)


def mesh_sharding(named: NamedSharding, ndim: int) -> MeshSharding:
    """The (cached) runtime sharding of ``named`` for arrays of rank ``ndim``."""
    key = (named, ndim)
    s = _mesh_shardings.data.get(key)
    if s is None:
        s = MeshSharding(device_list(named.device_mesh), hlo_sharding(named, ndim))
        s.named, s.mesh = named, named.device_mesh
        _mesh_shardings[key] = s
    return s


def put_sharded(value: np.ndarray, aval: ShapedArray, named: NamedSharding) -> Any:
    """Copy a host array to the mesh's devices, each getting its piece.

    Raises:
      ValueError: a dimension does not divide by its number of pieces.
    """
    indices = named.position_indices(aval.shape)
    local = local_positions(named)
    return put_pieces(aval, named, local, [value[indices[p]] for p in local])


def local_positions(named: NamedSharding) -> list[int]:
    """The mesh positions of this process's devices."""
    return [p for p, d in enumerate(named.device_mesh.devices.flat)
            if d.process_index == d.client.process_index()]


def put_pieces(aval: ShapedArray, named: NamedSharding, local: Sequence[int],
               pieces: Sequence[np.ndarray]) -> Any:
    """A buffer of type ``aval`` laid out by ``named`` from this process's pieces (one per
    position of ``local``, in order)."""
    devices = list(named.device_mesh.devices.flat)
    # Private host copies: a buffer may alias its piece's memory (see runtime.device_put),
    # and a piece may be a view of the caller's array.  (jaxlib's force_copy fails
    # with "bad_function_call" for pieces of a split array.)
    try:
        return _xc.batched_device_put(aval, mesh_sharding(named, aval.ndim),
                                      [np.array(x, aval.dtype, order="C") for x in pieces],
                                      [devices[p] for p in local], True,
                                      enable_x64=_config.enable_x64)
    except JaxRuntimeError as e:  # (a transfer guard's refusal: say what to do)
        raise guards.advised(e) from None


# jaxlib's C++ side imports ``jax`` when it makes the single-device pieces of a
# multi-device buffer: ``jax.core.ShapedArray`` (once, cached for the process) for
# their types, and ``jax._src.sharding_impls`` (at every piece, not cached when it
# fails) for their shardings.  plait never imports jax: unless jax is loaded already,
# the first lookup is answered with plait's ShapedArray, and the others fail at once
# (jaxlib then uses its own single-device sharding).
_primed = [False]


@contextlib.contextmanager
def no_jax(device: Any) -> Iterator[None]:
    """Inside the block jaxlib may make pieces of multi-device buffers (on ``device``'s
    client) without importing jax."""
    blocked = "jax._src.sharding_impls"
    if "jax" in sys.modules or blocked in sys.modules:  # (or within such a block already)
        yield
        return
    sys.modules[blocked] = None  # type: ignore[assignment]  # (an import of it fails)
    try:
        if not _primed[0]:
            _prime(device)
        yield
    finally:
        sys.modules.pop(blocked, None)


def _prime(d: Any) -> None:
    core = types.ModuleType("jax.core")
    core.ShapedArray = ShapedArray  # type: ignore[attr-defined]  # (a stub module)
    pkg = types.ModuleType("jax")
    pkg.__path__ = []  # (a package: jaxlib imports jax.core)
    pkg.core = core  # type: ignore[attr-defined]  # (a stub module)
    sys.modules["jax"], sys.modules["jax.core"] = pkg, core
    try:
        one = MeshSharding(_xc.DeviceList((d,)), _xc.HloSharding.replicate())
        a = _xc.batched_device_put(ShapedArray((1,), np.dtype(np.float32)), one,
                                   [np.zeros(1, np.float32)], [d], True,
                                   enable_x64=_config.enable_x64)
        a._arrays  # noqa: B018  # (jaxlib looks ShapedArray up here)
        _primed[0] = True
    finally:
        del sys.modules["jax"], sys.modules["jax.core"]


def pieces(buf: Any) -> list[Any]:
    """The single-device pieces of a multi-device buffer."""
    with no_jax(buf._sharding._devices[0]):
        out: list[Any] = buf._arrays
    return out


def shard_positions(buf: Any) -> list[int]:
    """For each piece of a multi-device buffer, its device's position in the mesh."""
    s: MeshSharding = buf._sharding
    where = {d: i for i, d in enumerate(s.mesh.device_ids)}
    return [where[piece_device(a).id] for a in pieces(buf)]


def piece_device(piece: Any) -> Any:
    """The device of a single-device piece of a multi-device buffer."""
    s = piece._sharding
    return s._devices[0] if type(s) is MeshSharding else s._device


def gather(buf: Any, aval: ShapedArray, to_numpy: Any) -> np.ndarray:
    """The whole value of a multi-device buffer on the host (``to_numpy`` copies one
    single-device piece).

    Raises:
      RuntimeError: some pieces live in other processes.
    """
    s: MeshSharding = buf._sharding
    parts = pieces(buf)
    if s.is_fully_replicated:
        with no_jax(s._devices[0]):
            return np.asarray(to_numpy(parts[0], _piece_aval(aval, aval.shape)))
    hlo = s._hlo_sharding
    if hlo.is_maximal():  # (all of it on one device: a host callback's result, say)
        device = s._devices[hlo.tile_assignment_devices()[0]]
        piece = next(p for p in parts if piece_device(p) == device)
        with no_jax(device):
            return np.asarray(to_numpy(piece, _piece_aval(aval, aval.shape)))
    if s.named is None:
        raise NotImplementedError(f"copying an array of layout {s} to the host")
    if len(parts) != s.named.mesh.size:
        raise RuntimeError("Fetching value for `plait.Array` that spans non-addressable (non "
                           "process local) devices is not possible. You can use "
                           "`plait.experimental.multihost_utils.process_allgather` to print "
                           "the global array or use `.addressable_shards` method of "
                           "plait.Array to inspect the addressable (process local) shards.")
    indices = s.named.position_indices(aval.shape)
    shard = s.named.shard_shape(aval.shape)
    with no_jax(s._devices[0]):
        values = [to_numpy(p, _piece_aval(aval, shard)) for p in parts]
    out = np.empty(aval.shape, values[0].dtype)
    for v, p in zip(values, shard_positions(buf)):
        out[indices[p]] = v
    return out


def _piece_aval(aval: ShapedArray, shape: tuple[int, ...]) -> ShapedArray:
    return aval.update(shape=shape)


def same_layout(a: Any, b: MeshSharding) -> bool:
    """Whether a buffer laid out as ``a`` is already laid out as ``b``.

    Compared by their HLO shardings and devices, not with ``==``: once JAX is imported
    in the process, jaxlib's sharding classes compare as JAX defines, which takes a
    layout on one device (a host callback's result) for a replicated one.
    """
    return a is b or (isinstance(a, MeshSharding) and a._hlo_sharding == b._hlo_sharding
                      and tuple(a._devices) == tuple(b._devices))


def reshard(buf: Any, aval: ShapedArray, target: MeshSharding, to_numpy: Any) -> Any:
    """``buf`` laid out as ``target`` (through the host: a device-to-device transfer for
    the transfer guards).

    Raises:
      JaxRuntimeError: the device-to-device transfer guard refuses the move.
    """
    current = buf._sharding
    assert target.named is not None
    with guards.device_to_device(aval, current, target):
        value = gather(buf, aval, to_numpy) if isinstance(current, MeshSharding) else \
            np.asarray(to_numpy(buf, aval))
        return put_sharded(value, aval, target.named)


def compile_options(mesh: Mesh) -> Any:
    """Compile options for an SPMD program over ``mesh``: one partition per device, the
    devices in the mesh's order, Shardy's partitioner."""
    opts = _xc.CompileOptions()
    build = opts.executable_build_options
    build.num_replicas = 1
    build.num_partitions = mesh.size
    build.use_spmd_partitioning = True
    build.use_shardy_partitioner = True
    build.device_assignment = _xc.DeviceAssignment.create(
        np.asarray(mesh.device_ids).reshape(1, mesh.size))
    return opts


def named_from_hlo(mesh: Mesh, hlo: Any, ndim: int) -> NamedSharding | None:
    """A :class:`NamedSharding` over ``mesh`` with the layout ``hlo``, or ``None``."""
    if hlo.is_replicated():
        return NamedSharding(mesh, PartitionSpec())
    axes = range(len(mesh.axis_names))
    # Each mesh axis splits one dimension or none; try the small space of choices.
    for choice in itertools.product(range(ndim + 1), repeat=len(mesh.axis_names)):
        parts: list[list[str]] = [[] for _ in range(ndim)]
        for a in axes:
            if choice[a] < ndim:
                parts[choice[a]].append(mesh.axis_names[a])
        for orders in itertools.product(*(itertools.permutations(p) for p in parts)):
            entries = [None if not o else o[0] if len(o) == 1 else tuple(o) for o in orders]
            while entries and entries[-1] is None:
                entries.pop()
            spec = PartitionSpec(*entries)
            named = NamedSharding(mesh, spec)
            if hlo_sharding(named, ndim) == hlo:
                return named
    return None


"""Meshes, partition specs and named shardings: where the parts of an array live.

A :class:`Mesh` names the axes of a grid of devices (``Mesh('x': 4, 'y': 2)``);
a :class:`PartitionSpec` says, per array dimension, which mesh axes split it
(``P('x', None)``: rows split over ``x``, columns whole); a
:class:`NamedSharding` pairs the two.  They are plain immutable values, so
they can be params of equations (``shard_map``, ``sharding_constraint``) and
keys of caches.  A mesh holds device *ids*: the runtime turns them into
devices (:attr:`Mesh.devices` asks the resolver the runtime installs).

They print as JAX 0.10.2 prints its own: ``Mesh('x': 4, 'y': 2,
axis_types=(Auto, Auto))``, ``P('x', None)``, ``NamedSharding(mesh=...,
spec=P('x',), memory_kind=device)``.
"""

from __future__ import annotations

import abc
import enum
import itertools
import math
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any, Final

import attrs
import numpy as np

# Re-exported: ``plait.ir.sharding`` is where users of the IR find every layout name.
from plait.ir.partition_spec import UNCONSTRAINED as UNCONSTRAINED
from plait.ir.partition_spec import PartitionSpec as PartitionSpec
from plait.ir.partition_spec import SpecEntry as SpecEntry
from plait.ir.partition_spec import names_of

__all__ = ["AxisType", "Mesh", "AbstractMesh", "abstract_mesh_of", "get_abstract_mesh",
           "PartitionSpec", "Sharding", "NamedSharding", "set_device_resolver", "UNCONSTRAINED",
           "current_mesh", "set_mesh", "resolve", "use_abstract_mesh", "type_sharding_of"]


class AxisType(enum.Enum):
    """How a mesh axis is used: ``Auto`` (the compiler's sharding propagation decides),
    ``Explicit`` (shardings in types; not supported by plait) or ``Manual`` (inside
    ``shard_map``)."""

    Auto = enum.auto()
    Explicit = enum.auto()
    Manual = enum.auto()

    def __repr__(self) -> str:
        return self.name

    def __str__(self) -> str:
        return f"AxisType.{self.name}"


_resolver: list[Callable[[int], Any]] = []


class _ExplicitSeen:
    """Whether a mesh with an ``Explicit`` axis was ever made.  Until one is, no type can
    carry a sharding, and typing skips the sharding rules altogether."""

    seen = False


EXPLICIT: Final = _ExplicitSeen()


def _note_types(types: tuple[AxisType, ...]) -> None:
    if AxisType.Explicit in types:
        EXPLICIT.seen = True


def _axis_types(axis_types: AxisType | Sequence[AxisType] | None, n: int
                ) -> tuple[AxisType, ...]:
    """One type per axis: ``Auto`` unless given, one given type for every axis."""
    if axis_types is None:
        return (AxisType.Auto,) * n
    if isinstance(axis_types, AxisType):
        return (axis_types,) * n
    return tuple(axis_types)


def set_device_resolver(resolve: Callable[[int], Any]) -> None:
    """Install the function mapping a device id to its device (the runtime does)."""
    _resolver[:] = [resolve]


class _AxisTypeQueries:
    """What a mesh's axis types say, for :class:`Mesh` and :class:`AbstractMesh`."""

    __slots__ = ()
    axis_names: tuple[str, ...]
    axis_types: tuple[AxisType, ...]

    def _axes_of(self, kind: AxisType) -> tuple[str, ...]:
        return tuple(n for n, t in zip(self.axis_names, self.axis_types) if t is kind)

    @property
    def explicit_axes(self) -> tuple[str, ...]:
        """The names of the ``Explicit`` axes."""
        return self._axes_of(AxisType.Explicit)

    @property
    def auto_axes(self) -> tuple[str, ...]:
        """The names of the ``Auto`` axes."""
        return self._axes_of(AxisType.Auto)

    @property
    def manual_axes(self) -> tuple[str, ...]:
        """The names of the ``Manual`` axes."""
        return self._axes_of(AxisType.Manual)

    @property
    def are_all_axes_explicit(self) -> bool:
        """Whether the mesh has axes and all are ``Explicit``."""
        return bool(self.axis_types) and len(self.explicit_axes) == len(self.axis_types)

    @property
    def are_all_axes_auto(self) -> bool:
        """Whether the mesh has axes and all are ``Auto``."""
        return bool(self.axis_types) and len(self.auto_axes) == len(self.axis_types)

    @property
    def are_all_axes_manual(self) -> bool:
        """Whether the mesh has axes and all are ``Manual``."""
        return bool(self.axis_types) and len(self.manual_axes) == len(self.axis_types)


@attrs.frozen(repr=False, init=False)
class Mesh(_AxisTypeQueries):
    """A grid of devices with named axes: ``Mesh(devices, axis_names)``, ``devices`` an
    array (of devices, or of device ids) with one dimension per name.

    Equal meshes (same names, sizes, types and devices) compare and hash alike.
    """

    axis_names: tuple[str, ...]
    """The axis names, outermost first."""
    axis_sizes: tuple[int, ...]
    """The number of devices along each axis."""
    device_ids: tuple[int, ...]
    """The devices' ids in row-major order over the axes."""
    axis_types: tuple[AxisType, ...]
    """Each axis's type."""

    def __init__(self, devices: Any, axis_names: str | Sequence[str], *,
                 axis_types: AxisType | Sequence[AxisType] | None = None) -> None:
        names = (axis_names,) if isinstance(axis_names, str) else tuple(axis_names)
        arr = np.asarray(devices, dtype=object)
        if arr.ndim != len(names):
            raise ValueError(f"expected a devices array with one dimension per axis name "
                             f"{names}, but got an array of shape {arr.shape}")
        ids = tuple(d if isinstance(d, int | np.integer) else d.id for d in arr.flat)
        types = _axis_types(axis_types, len(names))
        _note_types(types)
        for name, v in (("axis_names", names), ("axis_sizes", tuple(arr.shape)),
                        ("device_ids", tuple(int(i) for i in ids)), ("axis_types", types)):
            object.__setattr__(self, name, v)
        self.__attrs_post_init__()

    def __attrs_post_init__(self) -> None:
        n = len(self.axis_names)
        if len(set(self.axis_names)) != n:
            raise ValueError(f"expected distinct mesh axis names, but got {self.axis_names}")
        if len(self.axis_sizes) != n or len(self.axis_types) != n:
            raise ValueError(f"expected one size and one type per axis of {self.axis_names}, "
                             f"but got sizes {self.axis_sizes} and types {self.axis_types}")
        if math.prod(self.axis_sizes) != len(self.device_ids):
            raise ValueError(f"expected {math.prod(self.axis_sizes)} devices for a mesh of "
                             f"shape {self.axis_sizes}, but got {len(self.device_ids)}")
        if not all(isinstance(n, str) for n in self.axis_names):
            raise TypeError(f"expected string axis names, but got {self.axis_names}")
        if not all(isinstance(t, AxisType) for t in self.axis_types):
            raise TypeError(f"expected AxisType axis types, but got {self.axis_types}")
        if len(set(self.device_ids)) != len(self.device_ids):
            raise ValueError(f"expected distinct devices in a mesh, but got ids "
                             f"{self.device_ids}")

    @property
    def shape(self) -> OrderedDict[str, int]:
        """The size of each axis, by name (in axis order)."""
        return OrderedDict(zip(self.axis_names, self.axis_sizes))

    @property
    def size(self) -> int:
        """The number of devices."""
        return len(self.device_ids)

    @property
    def devices(self) -> np.ndarray:
        """The devices, as an array of the mesh's shape."""
        if not _resolver:
            raise RuntimeError("no runtime is loaded to resolve device ids: import plait")
        resolve = _resolver[0]
        flat = np.empty(len(self.device_ids), dtype=object)
        flat[:] = [resolve(i) for i in self.device_ids]
        return flat.reshape(self.axis_sizes)

    def axis_size(self, names: str | Sequence[str]) -> int:
        """The number of devices along ``names`` (one axis or several).

        Raises:
          NameError: a name is not an axis of the mesh.
        """
        names = (names,) if isinstance(names, str) else tuple(names)
        shape = self.shape
        for n in names:
            if n not in shape:
                raise NameError(f"unbound axis name: {n}; expected one of the mesh's axes "
                                f"{self.axis_names}")
        return math.prod(shape[n] for n in names)

    def positions(self) -> np.ndarray:
        """Each device's position in the flat device order, in the mesh's shape."""
        return np.arange(self.size).reshape(self.axis_sizes)

    @property
    def shape_tuple(self) -> tuple[tuple[str, int], ...]:
        """``(name, size)`` of each axis, in order."""
        return tuple(zip(self.axis_names, self.axis_sizes))

    @property
    def empty(self) -> bool:
        """Whether the mesh has no devices."""
        return self.size == 0

    @property
    def local_devices(self) -> list[Any]:
        """The mesh's devices this process drives."""
        return [d for d in self.devices.flat if d.process_index == d.client.process_index()]

    @property
    def is_multi_process(self) -> bool:
        """Whether some of the mesh's devices belong to other processes."""
        return self.size != len(self.local_devices)

    @property
    def local_mesh(self) -> Mesh:
        """The part of the mesh this process drives (the mesh itself in one process).

        Raises:
          NotImplementedError: a mesh over several processes.
        """
        if self.is_multi_process:
            raise NotImplementedError("Mesh.local_mesh of a mesh over several processes is "
                                      "not implemented")
        return self

    def update(self, devices: Any = None, axis_names: str | Sequence[str] | None = None,
               axis_types: AxisType | Sequence[AxisType] | None = None) -> Mesh:
        """A mesh with the parts given replaced."""
        return Mesh(self.devices if devices is None else devices,
                    self.axis_names if axis_names is None else axis_names,
                    axis_types=self.axis_types if axis_types is None else axis_types)

    @property
    def abstract_mesh(self) -> AbstractMesh:
        """The mesh without its devices."""
        return abstract_mesh_of(self)

    def __str__(self) -> str:
        axes = ", ".join(f"{n!r}: {s}" for n, s in zip(self.axis_names, self.axis_sizes))
        sep = ", " if axes else ""
        return f"Mesh({axes}{sep}axis_types={_types(self.axis_types)})"

    def __repr__(self) -> str:
        return (f"Mesh(axis_sizes={self.axis_sizes}, axis_names={self.axis_names}, "
                f"axis_types={_types(self.axis_types)})")

    def __enter__(self) -> Mesh:
        """``with mesh:`` makes it the current mesh (see :func:`current_mesh`)."""
        _ambient.stack.append(self)
        return self

    def __exit__(self, *exc: object) -> None:
        _ambient.stack.pop()


class _Ambient(threading.local):
    def __init__(self) -> None:
        self.stack: list[Mesh | None] = []
        self.abstract: list[AbstractMesh] = []


_ambient = _Ambient()


def current_mesh() -> Mesh | None:
    """The mesh set by ``with mesh:`` or ``plait.set_mesh`` (``None`` if none is)."""
    return _ambient.stack[-1] if _ambient.stack else None


class set_mesh:  # noqa: N801  (a function to its callers, as JAX's)
    """Make ``mesh`` the current mesh: a bare ``PartitionSpec`` then lays values out over
    it (``with_sharding_constraint``, ``device_put``, ``jit``'s shardings) and
    ``shard_map`` may omit ``mesh=``.  Used as ``with set_mesh(mesh):`` it lasts for the
    block; called alone it stays set."""

    def __init__(self, mesh: Mesh | None) -> None:
        if mesh is not None and not isinstance(mesh, Mesh):
            raise TypeError(f"set_mesh: expected a plait.sharding.Mesh, but got "
                            f"{type(mesh).__name__}")
        _ambient.stack.append(mesh)
        self._depth = len(_ambient.stack)

    def __enter__(self) -> Mesh | None:
        return _ambient.stack[self._depth - 1]

    def __exit__(self, *exc: object) -> None:
        del _ambient.stack[self._depth - 1:]


@attrs.frozen(repr=False, init=False)
class AbstractMesh(_AxisTypeQueries):
    """``AbstractMesh(axis_sizes, axis_names, axis_types=None)``: axes without devices.

    Equal abstract meshes (same sizes, names, types and device kind) compare and
    hash alike.
    """

    axis_sizes: tuple[int, ...]
    """The number of devices along each axis."""
    axis_names: tuple[str, ...]
    """The axis names, outermost first."""
    axis_types: tuple[AxisType, ...]
    """Each axis's type (``Auto`` unless given)."""
    device_kind: str | None
    """The kind of the devices (``'cpu'``) when known, else ``None``."""

    def __init__(self, axis_sizes: Sequence[int], axis_names: Sequence[str],
                 axis_types: AxisType | Sequence[AxisType] | None = None, *,
                 device_kind: str | None = None) -> None:
        sizes = tuple(int(s) for s in axis_sizes)
        names = tuple(axis_names)
        types = _axis_types(axis_types, len(names))
        _note_types(types)
        if not len(sizes) == len(names) == len(types):
            raise ValueError(f"AbstractMesh: expected one size and one type per axis name "
                             f"{names}, but got sizes {sizes} and types {types}")
        if len(set(names)) != len(names) or not all(isinstance(n, str) for n in names):
            raise ValueError(f"AbstractMesh: expected distinct string axis names, but got "
                             f"{names}")
        if not all(isinstance(t, AxisType) for t in types):
            raise TypeError(f"AbstractMesh: expected AxisType axis types, but got {types}")
        for field, value in (("axis_sizes", sizes), ("axis_names", names),
                             ("axis_types", types), ("device_kind", device_kind)):
            object.__setattr__(self, field, value)

    @property
    def shape(self) -> OrderedDict[str, int]:
        """The size of each axis, by name (in axis order)."""
        return OrderedDict(zip(self.axis_names, self.axis_sizes))

    @property
    def shape_tuple(self) -> tuple[tuple[str, int], ...]:
        """``(name, size)`` per axis."""
        return tuple(zip(self.axis_names, self.axis_sizes))

    @property
    def size(self) -> int:
        """The number of devices."""
        return math.prod(self.axis_sizes)

    @property
    def empty(self) -> bool:
        """Whether the mesh has no axes (no mesh is set)."""
        return not self.axis_names

    def axis_size(self, names: str | Sequence[str]) -> int:
        """The number of devices along ``names`` (one axis or several).

        Raises:
          NameError: a name is not an axis of the mesh.
        """
        return Mesh.axis_size(self, names)  # type: ignore[arg-type]  # (reads .shape, .axis_names only)

    def update(self, axis_sizes: Sequence[int] | None = None,
               axis_names: Sequence[str] | None = None,
               axis_types: Sequence[AxisType] | None = None) -> AbstractMesh:
        """A copy with the given fields changed."""
        return AbstractMesh(self.axis_sizes if axis_sizes is None else axis_sizes,
                            self.axis_names if axis_names is None else axis_names,
                            self.axis_types if axis_types is None else axis_types,
                            device_kind=self.device_kind)

    def __str__(self) -> str:
        if self.empty:
            return "AbstractMesh((), axis_types=())"
        axes = ", ".join(f"{n!r}: {s}" for n, s in zip(self.axis_names, self.axis_sizes))
        devices = ("" if self.device_kind is None else
                   f", device_kind={self.device_kind}, num_cores=None, "
                   f"platform={self.device_kind}")
        return f"AbstractMesh({axes}, axis_types={_types(self.axis_types)}{devices})"

    __repr__ = __str__


_abstract_meshes: dict[Mesh, AbstractMesh] = {}


def abstract_mesh_of(mesh: Mesh) -> AbstractMesh:
    """``mesh`` without its devices (the devices' kind kept)."""
    hit = _abstract_meshes.get(mesh)
    if hit is None:
        kind: Any = getattr(mesh.devices.flat[0], "platform", None) if mesh.size else None
        hit = AbstractMesh(mesh.axis_sizes, mesh.axis_names, mesh.axis_types, device_kind=kind)
        if len(_abstract_meshes) > 256:
            _abstract_meshes.clear()
        _abstract_meshes[mesh] = hit
    return hit


_EMPTY_MESH: Final = AbstractMesh((), ())


def get_abstract_mesh() -> AbstractMesh:
    """The current mesh's axes: the innermost ``use_abstract_mesh``, else the current
    mesh's (an empty abstract mesh when none is set)."""
    if _ambient.abstract:
        return _ambient.abstract[-1]
    mesh = current_mesh()
    return _EMPTY_MESH if mesh is None else abstract_mesh_of(mesh)


class use_abstract_mesh:  # noqa: N801  (a function to its callers, as JAX's)
    """``with use_abstract_mesh(m):`` makes ``m`` the current abstract mesh for the block
    (the axes types and shardings in types name).  Under a trace its size must be the
    current mesh's: only the axes' names, sizes and types change, not the devices."""

    def __init__(self, mesh: AbstractMesh, *, _any_size: bool = False) -> None:
        if not isinstance(mesh, AbstractMesh):
            raise TypeError(f"use_abstract_mesh: expected a plait.sharding.AbstractMesh, but "
                            f"got {type(mesh).__name__}")
        outer = get_abstract_mesh()
        # (shard_map's body sees its own mesh, whatever the current one is.)
        if not _any_size and not outer.empty and outer.size != mesh.size:
            raise ValueError(f"use_abstract_mesh: expected a mesh of the current mesh's size "
                             f"{outer.size} ({outer}), but got {mesh} of size {mesh.size}")
        self.mesh = mesh

    def __enter__(self) -> AbstractMesh:
        _ambient.abstract.append(self.mesh)
        return self.mesh

    def __exit__(self, *exc: object) -> None:
        _ambient.abstract.pop()


def type_sharding_of(sharding: Any, what: str) -> NamedSharding:
    """``sharding`` (a ``PartitionSpec`` over the current abstract mesh, or a
    ``NamedSharding``) as the sharding of a type: over the mesh's axes only.

    Raises:
      TypeError: ``sharding`` is neither.
      ValueError: a bare ``PartitionSpec`` while no mesh is set.
    """
    if isinstance(sharding, PartitionSpec):
        current = get_abstract_mesh()
        if current.empty:
            raise ValueError(f"{what}: a PartitionSpec {sharding!r} needs a mesh: pass "
                             "NamedSharding(mesh, spec), or set one with plait.set_mesh(mesh)")
        return NamedSharding(current, sharding)
    if not isinstance(sharding, NamedSharding):
        raise TypeError(f"{what}: expected a PartitionSpec or a NamedSharding, but got "
                        f"{type(sharding).__name__}")
    mesh = sharding.mesh
    if isinstance(mesh, AbstractMesh):
        return sharding
    return NamedSharding(mesh.abstract_mesh, sharding.spec)


def resolve(sharding: Any, what: str) -> Any:
    """``sharding``, with a bare ``PartitionSpec`` laid over the current mesh, and a
    ``NamedSharding`` over an abstract mesh over the current mesh it abstracts (as JAX
    places it: flax builds its shardings from ``get_abstract_mesh()``).

    Raises:
      ValueError: a bare ``PartitionSpec`` while no mesh is set.
    """
    if isinstance(sharding, NamedSharding) and isinstance(sharding.mesh, AbstractMesh):
        concrete = current_mesh()
        if concrete is not None and abstract_mesh_of(concrete) == sharding.mesh:
            return NamedSharding(concrete, sharding.spec)
        return sharding
    if not isinstance(sharding, PartitionSpec):
        return sharding
    mesh = current_mesh()
    if mesh is None:
        raise ValueError(f"{what}: a bare PartitionSpec {sharding!r} needs a mesh: pass "
                         "NamedSharding(mesh, spec), or set one with plait.set_mesh(mesh)")
    return NamedSharding(mesh, sharding)


def _types(types: tuple[AxisType, ...]) -> str:
    return "(" + ", ".join(t.name for t in types) + ("," if len(types) == 1 else "") + ")"


def memory_kind_checked(kind: str | None) -> str:
    """``'device'``, the one memory kind plait places arrays in (``None`` means it).

    Raises:
      ValueError: another kind (JAX's ``'pinned_host'``, ``'unpinned_host'``).
    """
    if kind not in (None, "device"):
        raise ValueError(f"expected memory_kind None or 'device', but got {kind!r}: plait "
                         "keeps arrays in device memory only (JAX's host memory kinds, and "
                         "offloading to them, are not supported)")
    return "device"


class Sharding(abc.ABC):
    """The base of every array layout, as ``jax.sharding.Sharding``: a
    :class:`NamedSharding`, a ``SingleDeviceSharding``, or a layout XLA chose.

    The runtime's layouts are jaxlib classes registered here (``Sharding.register``)."""

    @property
    @abc.abstractmethod
    def device_set(self) -> set[Any]:
        """The devices holding a part of the array."""

    @property
    @abc.abstractmethod
    def is_fully_replicated(self) -> bool:
        """Whether every device holds the whole array."""


@attrs.frozen(repr=False, cache_hash=True)
class NamedSharding:
    """An array's layout over a mesh: ``spec`` says which mesh axes split each
    dimension; the array is replicated over the axes the spec does not use.

    Over an :class:`AbstractMesh` it is the sharding of a type (``typeof(x).sharding``):
    the layout without the devices."""

    mesh: Mesh | AbstractMesh
    """The devices (or, for a type's sharding, the mesh's axes only)."""
    spec: PartitionSpec = attrs.field(factory=PartitionSpec)
    """How each dimension is split."""
    memory_kind: str = attrs.field(default="device", eq=False, converter=memory_kind_checked)
    """Where on the device: only its default memory, ``'device'`` (``None`` means it)."""

    def __attrs_post_init__(self) -> None:
        if not isinstance(self.mesh, Mesh | AbstractMesh):
            raise TypeError(f"expected a plait.sharding.Mesh or AbstractMesh, but got "
                            f"{type(self.mesh).__name__}")
        if not isinstance(self.spec, PartitionSpec):
            raise TypeError(f"expected a PartitionSpec, but got {self.spec!r}")
        for n in self.spec.axis_names():
            if n not in self.mesh.axis_names:
                raise ValueError(f"expected PartitionSpec axes among the mesh's axes "
                                 f"{self.mesh.axis_names}, but got {n!r} in {self.spec!r}")

    def update(self, **changes: Any) -> NamedSharding:
        """A copy with the fields given (``mesh``, ``spec``, ``memory_kind``) changed; a
        ``spec`` may be a tuple."""
        unknown = set(changes) - {"mesh", "spec", "memory_kind"}
        if unknown:
            raise TypeError(f"NamedSharding.update: expected fields among mesh, spec, "
                            f"memory_kind, but got {sorted(unknown)}")
        spec = changes.get("spec", self.spec)
        return NamedSharding(changes.get("mesh", self.mesh),
                             spec if isinstance(spec, PartitionSpec) else PartitionSpec(*spec),
                             changes.get("memory_kind", self.memory_kind))

    def with_memory_kind(self, kind: str | None) -> NamedSharding:
        """This sharding in memory ``kind``: only ``'device'`` (see
        :func:`memory_kind_checked`)."""
        return self.update(memory_kind=kind)

    @property
    def device_mesh(self) -> Mesh:
        """The mesh of devices.

        Raises:
          TypeError: the sharding is a type's, over an abstract mesh (no devices).
        """
        mesh = self.mesh
        if not isinstance(mesh, Mesh):
            raise TypeError(f"expected a NamedSharding over a Mesh of devices, but got one "
                            f"over {mesh}: a type's sharding has no devices")
        return mesh

    def __repr__(self) -> str:
        if isinstance(self.mesh, AbstractMesh):
            return f"NamedSharding(mesh={self.mesh}, spec={self.spec!r})"
        return f"NamedSharding(mesh={self.mesh}, spec={self.spec!r}, memory_kind=device)"

    __str__ = __repr__

    @property
    def num_devices(self) -> int:
        """The number of devices of the mesh."""
        return self.mesh.size

    @property
    def device_set(self) -> set[Any]:
        """The mesh's devices."""
        return set(self.device_mesh.devices.flat)

    @property
    def is_fully_replicated(self) -> bool:
        """Whether every device holds the whole array."""
        return all(self.mesh.shape[n] == 1 for n in self.spec.axis_names())

    @property
    def is_fully_addressable(self) -> bool:
        """Whether this process holds every device of the mesh."""
        devices = self.device_mesh.devices.flat
        return all(d.process_index == d.client.process_index() for d in devices)

    @property
    def _addressable_device_assignment(self) -> tuple[Any, ...]:
        return tuple(d for d in self.device_mesh.devices.flat
                     if d.process_index == d.client.process_index())

    def tiles(self, ndim: int) -> tuple[int, ...]:
        """How many parts each of ``ndim`` dimensions is split into."""
        return tuple(self.mesh.axis_size(names_of(p)) for p in self.spec.padded(ndim))

    def shard_shape(self, global_shape: Sequence[int]) -> tuple[int, ...]:
        """The shape of each device's part of an array of ``global_shape``.

        Raises:
          ValueError: a dimension does not divide evenly.
        """
        tiles = self.tiles(len(global_shape))
        for d, (s, t) in enumerate(zip(global_shape, tiles)):
            if s % t:
                raise ValueError(
                    f"expected dimension {d} of shape {tuple(global_shape)} to be divisible "
                    f"by {t} (the devices along {self.spec.padded(len(global_shape))[d]!r} "
                    f"of {self.mesh!r}), but it is not")
        return tuple(s // t for s, t in zip(global_shape, tiles))

    def tile_assignment(self, ndim: int) -> tuple[np.ndarray, int]:
        """The device positions (into the mesh's flat device order) as an array of shape
        ``tiles + (replicas,)``, and the number of replicas of each tile."""
        parts = self.spec.padded(ndim)
        used = [self.mesh.axis_names.index(n) for p in parts for n in names_of(p)]
        rest = [i for i in range(len(self.mesh.axis_names)) if i not in used]
        grid = np.arange(self.mesh.size).reshape(self.mesh.axis_sizes)
        pos = grid.transpose(used + rest)
        tiles = self.tiles(ndim)
        replicas = self.mesh.size // math.prod(tiles)
        return pos.reshape(tiles + (replicas,)), replicas

    def devices_indices_map(self, global_shape: Sequence[int]) -> dict[Any, tuple[slice, ...]]:
        """Each device's index into an array of ``global_shape``."""
        devices = list(self.device_mesh.devices.flat)
        return {devices[p]: idx for p, idx in self.position_indices(global_shape).items()}

    def is_equivalent_to(self, other: Any, ndim: int) -> bool:
        """Whether ``other`` (any sharding) lays an array of ``ndim`` dimensions out as
        this one does: the same devices holding the same blocks."""
        return same_layout(self, other, ndim)

    def position_indices(self, global_shape: Sequence[int]) -> dict[int, tuple[slice, ...]]:
        """Each device position's index into an array of ``global_shape``."""
        shard = self.shard_shape(global_shape)
        assignment, _ = self.tile_assignment(len(global_shape))
        out: dict[int, tuple[slice, ...]] = {}
        for tile in itertools.product(*(range(t) for t in assignment.shape[:-1])):
            idx = tuple(slice(i * s, (i + 1) * s) if t > 1 else slice(None)
                        for i, s, t in zip(tile, shard, assignment.shape))
            for p in assignment[tile].flat:
                out[int(p)] = idx
        return out


def same_layout(a: Any, b: Any, ndim: int) -> bool:
    """Whether shardings ``a`` and ``b`` place the same blocks of an array of ``ndim``
    dimensions on the same devices (compared on a shape every split divides)."""
    if not isinstance(b, Sharding) or a.device_set != b.device_set:
        return False
    side = len(a.device_set)  # (every dimension's number of blocks divides it)
    shape = (side,) * ndim

    def blocks(s: Any) -> dict[Any, tuple[tuple[Any, Any], ...]]:
        return {d: tuple((i.start or 0, side if i.stop is None else i.stop) for i in idx)
                for d, idx in s.devices_indices_map(shape).items()}
    return blocks(a) == blocks(b)


# Registered, not derived: a subclass of an ABC checks isinstance through ABCMeta, which
# costs the hot paths that ask whether a layout is a NamedSharding.
Sharding.register(NamedSharding)

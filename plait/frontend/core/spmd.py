"""Which devices a program runs on: one, or the mesh its shardings name.

A program is SPMD when its jaxpr holds a ``shard_map`` or a sharding constraint,
or when it is called with arrays laid out over a mesh or with explicit
shardings.  All of them must name the same mesh.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from plait.ir.avals import ShapedArray
from plait.ir.caches import LRUCache
from plait.ir.errors import ArgumentError
from plait.ir.jaxpr import Jaxpr, subjaxprs
from plait.ir.sharding import (
    EXPLICIT,
    AbstractMesh,
    Mesh,
    NamedSharding,
    PartitionSpec,
    current_mesh,
)
from plait.lowering import multi_device
from plait.lowering.runtime import SpmdLayout

__all__ = ["jaxpr_meshes", "arg_sharding", "spmd_layout"]

_meshes: LRUCache[Jaxpr, frozenset[Mesh | AbstractMesh]] = LRUCache("jaxpr meshes", 1024)


def _typed(avals: Iterator[object]) -> Iterator[AbstractMesh]:
    for a in avals:
        if type(a) is ShapedArray and a.explicit_sharding is not None:
            mesh = a.explicit_sharding.mesh
            assert isinstance(mesh, AbstractMesh)
            yield mesh


def _walk(jaxpr: Jaxpr) -> Iterator[Mesh | AbstractMesh]:
    if EXPLICIT.seen:  # shardings in types name the mesh's axes only
        yield from _typed(iter(jaxpr.in_avals))
        yield from _typed(v.aval for e in jaxpr.eqns for v in e.outvars)
    for e in jaxpr.eqns:
        mesh = e.params.get("mesh")
        if isinstance(mesh, Mesh):
            yield mesh
        sharding = e.params.get("sharding")
        if isinstance(sharding, NamedSharding) and isinstance(sharding.mesh, Mesh):
            yield sharding.mesh
        for sub in subjaxprs(e.params):
            yield from jaxpr_meshes(sub)


def jaxpr_meshes(jaxpr: Jaxpr) -> frozenset[Mesh | AbstractMesh]:
    """The meshes ``jaxpr`` (and the jaxprs it holds) names: concrete ones in its
    params, abstract ones in the shardings of its types."""
    hit = _meshes.get(jaxpr)
    if hit is None:
        hit = _meshes[jaxpr] = frozenset(_walk(jaxpr))
    return hit


def arg_sharding(x: Any) -> NamedSharding | None:
    """The layout of an argument over a mesh (``None``: on one device, or not an Array)."""
    buf = getattr(x, "_buf", None)
    if buf is None:
        return None
    s = buf._sharding
    if type(s) is not multi_device.MeshSharding:
        return None
    # A layout XLA chose that no spec describes (all on one device, after a host
    # callback): the program takes it replicated, moved there through the host.
    return s.named if s.named is not None else NamedSharding(s.mesh, PartitionSpec())


def spmd_layout(jaxpr: Jaxpr, in_avals: Sequence[ShapedArray],
                in_shardings: Sequence[NamedSharding | None],
                out_shardings: Sequence[NamedSharding | None]) -> SpmdLayout | None:
    """The SPMD layout of a program, or ``None`` if it runs on one device.

    Raises:
      ArgumentError: the shardings name different meshes.
    """
    named = set(jaxpr_meshes(jaxpr))
    named.update(s.mesh for s in out_shardings if s is not None)
    in_shardings = _onto(named, in_shardings)
    named.update(s.mesh for s in in_shardings if s is not None)
    if not named:
        return None
    meshes = {m for m in named if isinstance(m, Mesh)}
    abstract = named - meshes
    if abstract:
        meshes = _devices_for(meshes, abstract)
    if len(meshes) > 1:
        raise ArgumentError(
            "Received incompatible devices for jitted computation: expected every sharding "
            "and shard_map of one program over the same mesh, but got "
            + ", ".join(sorted(str(m) + f" (devices {list(m.device_ids)})" for m in meshes)))
    (mesh,) = meshes
    replicated = NamedSharding(mesh, PartitionSpec())
    ins = tuple(s if s is not None else _typed_layout(mesh, a) or replicated
                for s, a in zip(in_shardings, in_avals))
    outs = tuple(s if s is not None else _typed_layout(mesh, a)
                 for s, a in zip(out_shardings, jaxpr.out_avals))
    return SpmdLayout(mesh, tuple(in_avals), ins, outs)


def _onto(named: set[Mesh | AbstractMesh], in_shardings: Sequence[NamedSharding | None]
          ) -> Sequence[NamedSharding | None]:
    """The arguments' layouts, an argument laid out over a mesh that is the program's
    one mesh under other axis names (the same devices in the same grid: pmap's mesh and
    a ``device_put`` over ``Mesh(devices, ('_r',))``) taken as the same layout over the
    program's mesh, as JAX, which compares devices, takes it."""
    program = [m for m in named if isinstance(m, Mesh)]
    if len(program) != 1:
        return in_shardings
    mesh = program[0]
    out: list[NamedSharding | None] = []
    for s in in_shardings:
        if s is not None and isinstance(s.mesh, Mesh) and s.mesh != mesh and (
                s.mesh.device_ids, s.mesh.axis_sizes) == (mesh.device_ids, mesh.axis_sizes):
            rename = dict(zip(s.mesh.axis_names, mesh.axis_names))
            s = NamedSharding(mesh, PartitionSpec(*[
                None if e is None else tuple(rename[n] for n in e) if isinstance(e, tuple)
                else rename[e] for e in s.spec]))
        out.append(s)
    return out


def _typed_layout(mesh: Mesh, aval: object) -> NamedSharding | None:
    """The layout the sharding in ``aval``'s type gives over ``mesh`` (``None`` if none)."""
    if type(aval) is not ShapedArray or aval.explicit_sharding is None:
        return None
    return NamedSharding(mesh, aval.explicit_sharding.spec)


def _devices_for(meshes: set[Mesh], abstract: set[Mesh | AbstractMesh]) -> set[Mesh]:
    """The concrete mesh of a program whose types name abstract ones: the mesh of its
    arguments or params if they name one, else the current mesh (``set_mesh``)."""
    if not meshes:
        current = current_mesh()
        if current is None:
            raise ArgumentError(
                "expected a mesh for a program whose types are sharded over "
                + ", ".join(sorted(map(str, abstract))) + ", but none of its arguments "
                "lives on one and no mesh is set: call it under `with plait.set_mesh(mesh):`")
        meshes = {current}
    for m in meshes:
        for a in abstract:
            assert isinstance(a, AbstractMesh)
            if (a.axis_names, a.axis_sizes) != (m.axis_names, m.axis_sizes):
                raise ArgumentError(
                    f"expected the mesh of the program's sharded types {a} to have the "
                    f"axes of its devices' mesh {m}, but they differ")
    return meshes

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
from plait.ir.sharding import Mesh, NamedSharding, PartitionSpec
from plait.lowering import multi_device
from plait.lowering.runtime import SpmdLayout

__all__ = ["jaxpr_meshes", "arg_sharding", "spmd_layout"]

_meshes: LRUCache[Jaxpr, frozenset[Mesh]] = LRUCache("jaxpr meshes", 1024)


def _walk(jaxpr: Jaxpr) -> Iterator[Mesh]:
    for e in jaxpr.eqns:
        mesh = e.params.get("mesh")
        if isinstance(mesh, Mesh):
            yield mesh
        sharding = e.params.get("sharding")
        if isinstance(sharding, NamedSharding):
            yield sharding.mesh
        for sub in subjaxprs(e.params):
            yield from jaxpr_meshes(sub)


def jaxpr_meshes(jaxpr: Jaxpr) -> frozenset[Mesh]:
    """The meshes ``jaxpr`` (and the jaxprs it holds) names."""
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
    meshes = set(jaxpr_meshes(jaxpr))
    meshes.update(s.mesh for s in (*in_shardings, *out_shardings) if s is not None)
    if not meshes:
        return None
    if len(meshes) > 1:
        raise ArgumentError(
            "Received incompatible devices for jitted computation: expected every sharding "
            "and shard_map of one program over the same mesh, but got "
            + ", ".join(sorted(str(m) + f" (devices {list(m.device_ids)})" for m in meshes)))
    (mesh,) = meshes
    replicated = NamedSharding(mesh, PartitionSpec())
    ins = tuple(s if s is not None else replicated for s in in_shardings)
    return SpmdLayout(mesh, tuple(in_avals), ins, tuple(out_shardings))

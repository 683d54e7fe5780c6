"""Reference rules of ``shard_map`` and the collectives: the devices simulated in lockstep.

The body of a ``shard_map`` runs once per device of the mesh, one equation at a time
for all devices together: an ordinary equation is evaluated on each device's values, a
collective combines them across the devices of its groups (the devices that differ
only along the named axes).  A collective outside a ``shard_map`` only runs when it
names array dimensions (what ``vmap`` leaves of a named axis).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from plait.ir import primitives as P
from plait.ir.atoms import Atom, Literal, Var
from plait.ir.avals import shaped
from plait.ir.errors import RuleNotImplementedError
from plait.ir.interpreter import impl_rules
from plait.ir.jaxpr import ClosedJaxpr, subjaxprs
from plait.ir.primitives.parallel import global_aval, named_axes
from plait.ir.sharding import Mesh, NamedSharding, PartitionSpec

PerDevice = list[np.ndarray]

_REDUCE: dict[Any, Callable[..., Any]] = {P.psum_p: np.sum, P.pmax_p: np.max,
                                          P.pmin_p: np.min}


def _groups(mesh: Mesh, names: Sequence[str]) -> np.ndarray:
    idx = [mesh.axis_names.index(n) for n in names]
    rest = [i for i in range(len(mesh.axis_names)) if i not in idx]
    size = int(np.prod([mesh.axis_sizes[i] for i in idx], dtype=np.int64))
    return mesh.positions().transpose(rest + idx).reshape(-1, size)


def _local(prim: Any, x: np.ndarray, axes: tuple[Any, ...]) -> np.ndarray:
    dims = tuple(a for a in axes if isinstance(a, int))
    return np.asarray(_REDUCE[prim](x, axis=dims)) if dims else x


def _standalone(prim: Any) -> Any:
    def rule(*xs: np.ndarray, axes: tuple[Any, ...], axis_index_groups: None) -> list[Any]:
        names = named_axes(axes)
        if names:
            raise NameError(f"unbound axis name: {names[0]} (a {prim.name} outside shard_map)")
        return [_local(prim, x, axes).astype(x.dtype) for x in xs]
    return rule


for _p in _REDUCE:
    impl_rules[_p] = _standalone(_p)


def _unbound(name: str) -> Any:
    def rule(*xs: Any, **params: Any) -> list[Any]:
        raise NameError(f"unbound axis name: {params.get('axis_name')} (a {name} outside "
                        "shard_map)")
    return rule


for _p in (P.all_gather_p, P.reduce_scatter_p, P.ppermute_p, P.axis_index_p,
           P.all_to_all_p, P.pbroadcast_p):
    impl_rules[_p] = _unbound(_p.name)

impl_rules[P.sharding_constraint_p] = lambda x, **_: [x]
impl_rules[P.pvary_p] = lambda x, **_: [x]
impl_rules[P.reshard_p] = lambda x, **_: [x]


# -- collectives across simulated devices -------------------------------------------------

def _reduce_across(prim: Any, mesh: Mesh, xs: list[PerDevice], axes: tuple[Any, ...]
                   ) -> list[PerDevice]:
    names = named_axes(axes)
    outs = []
    for vals in xs:
        local = [_local(prim, v, axes).astype(v.dtype) for v in vals]
        if names:
            res: PerDevice = list(local)
            for g in _groups(mesh, names):
                r = _REDUCE[prim](np.stack([local[p] for p in g]), axis=0).astype(vals[0].dtype)
                for p in g:
                    res[p] = r
            local = res
        outs.append(local)
    return outs


def _collective(prim: Any, mesh: Mesh, xs: list[PerDevice], params: dict[str, Any]
                ) -> list[PerDevice]:
    if prim in _REDUCE:
        return _reduce_across(prim, mesh, xs, params["axes"])
    names = named_axes(params["axis_name"])
    groups = _groups(mesh, names)
    out: PerDevice = [np.empty(0)] * mesh.size
    if prim is P.axis_index_p:
        for g in groups:
            for k, p in enumerate(g):
                out[p] = np.asarray(k, np.int32)
        return [out]
    (vals,) = xs
    for g in groups:
        members = [vals[p] for p in g]
        for k, p in enumerate(g):
            out[p] = _one(prim, members, k, params)
    return [out]


def _one(prim: Any, members: list[np.ndarray], k: int, params: dict[str, Any]) -> np.ndarray:
    """Member ``k``'s result of a collective among ``members``."""
    n = len(members)
    if prim is P.all_gather_p:
        d = params["all_gather_dimension"]
        return np.concatenate(members, d) if params["tiled"] else np.stack(members, d)
    if prim is P.reduce_scatter_p:
        d = params["scatter_dimension"]
        total = np.sum(np.stack(members), axis=0).astype(members[0].dtype)
        part = np.split(total, n, axis=d)[k]
        return part if params["tiled"] else np.squeeze(part, d)
    if prim is P.ppermute_p:
        for s, t in params["perm"]:
            if t == k:
                return np.asarray(members[s])
        return np.zeros_like(members[k])
    if prim is P.pbroadcast_p:
        return np.asarray(members[params["source"]])
    if prim is P.all_to_all_p:
        s, c = params["split_axis"], params["concat_axis"]
        if params["tiled"]:
            return np.concatenate([np.split(m, n, axis=s)[k] for m in members], axis=c)
        parts = [np.take(m, k, axis=s) for m in members]
        return np.stack(parts, axis=c)
    raise RuleNotImplementedError("Reference", prim.name)


_COLLECTIVES = frozenset({*_REDUCE, P.all_gather_p, P.reduce_scatter_p, P.ppermute_p,
                          P.axis_index_p, P.all_to_all_p, P.pbroadcast_p})


def _has_collectives(params: Any) -> bool:
    return any(e.primitive in _COLLECTIVES or _has_collectives(e.params)
               for j in subjaxprs(params) for e in j.eqns)


def _shard_map(*args: np.ndarray, jaxpr: ClosedJaxpr, mesh: Mesh,
               in_specs: tuple[PartitionSpec, ...], out_specs: tuple[PartitionSpec, ...],
               check_vma: bool, newly_manual_axes: frozenset[str]) -> list[np.ndarray]:
    n = mesh.size
    env: dict[Var, PerDevice] = {}

    def read(a: Atom) -> PerDevice:
        if type(a) is Literal:
            return [np.asarray(a.val, a.aval.dtype)] * n
        return env[a]

    body = jaxpr.jaxpr
    for v, c in zip(body.constvars, jaxpr.consts):
        env[v] = [np.asarray(c)] * n
    for v, x, spec in zip(body.invars, args, in_specs):
        idx = NamedSharding(mesh, spec).position_indices(np.shape(x))
        env[v] = [np.asarray(x)[idx[p]] for p in range(n)]
    for eqn in body.eqns:
        ins = [read(a) for a in eqn.invars]
        params = dict(eqn.params)
        if eqn.primitive in _COLLECTIVES:
            outs = _collective(eqn.primitive, mesh, ins, params)
        else:
            if _has_collectives(eqn.params):
                raise NotImplementedError(f"the reference interpreter runs collectives only at "
                                          f"the top level of a shard_map body, not inside "
                                          f"{eqn.primitive.name}")
            rule = impl_rules.get(eqn.primitive)
            if rule is None:
                raise RuleNotImplementedError("Reference", eqn.primitive.name)
            per = [rule(*[x[p] for x in ins], **params) for p in range(n)]
            outs = [[np.asarray(per[p][i]) for p in range(n)] for i in range(len(eqn.outvars))]
        for v, o in zip(eqn.outvars, outs):
            env[v] = o
    results = []
    for a, spec, gv in zip(body.outvars, out_specs, _global_avals(jaxpr, mesh, out_specs,
                                                                  newly_manual_axes)):
        vals = read(a)
        shape, dtype = gv
        out = np.empty(shape, dtype)
        idx = NamedSharding(mesh, spec).position_indices(shape)
        for p in range(n):
            out[idx[p]] = vals[p]
        results.append(out)
    return results


def _global_avals(jaxpr: ClosedJaxpr, mesh: Mesh, specs: tuple[PartitionSpec, ...],
                  manual: frozenset[str]) -> list[tuple[tuple[int, ...], Any]]:
    out = []
    for a, s in zip(jaxpr.out_avals, specs):
        g = global_aval(mesh, s, shaped(a), manual)
        out.append((g.shape, g.dtype))
    return out


impl_rules[P.shard_map_p] = _shard_map

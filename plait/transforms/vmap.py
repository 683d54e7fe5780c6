"""Batching as a jaxpr rewrite: ``vmap_jaxpr``.

Each value carries a batch dimension (an int) or ``None`` (not mapped).
Equations whose operands are all unmapped are copied; the others go through
their primitive's rule (:data:`batching_rules`), which receives the operands
and their batch dimensions and returns results and theirs.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from plait.ir.atoms import Atom, Literal, Var
from plait.ir.avals import AbstractValue, ShapedArray, shaped
from plait.ir.caches import LRUCache
from plait.ir.check import check_jaxpr
from plait.ir.config import values as _config
from plait.ir.errors import missing_rule
from plait.ir.jaxpr import Jaxpr, subjaxprs
from plait.ir.notes import note_equation
from plait.ir.primitive import Primitive
from plait.transforms.emit import Emitter

__all__ = ["vmap_jaxpr", "batching_rules", "BatchRule", "Dim", "move_axis", "bdim_to_front",
           "batched_outputs",
           "batched_aval", "vmap_eqns", "vmapping", "vmapped_axis", "vmapped_spmd_axis",
           "collective_axes", "SpmdAxis"]

Dim = int | None
SpmdAxis = str | tuple[str, ...] | None
"""A ``vmap``'s ``spmd_axis_name``: the mesh axis (or axes) splitting its batch."""
BatchRule = Callable[..., tuple[Sequence[Atom], Sequence[Dim]]]
"""``rule(e, axis_size, operands, dims, **params) -> (results, result dims)``."""

batching_rules: dict[Primitive, BatchRule] = {}
collective_axes: dict[Primitive, Callable[[Any], tuple[str, ...]]] = {}
"""Per collective, the axis names an equation's params name: when they include the
vmapped axis, the rule runs even if no operand is batched (``axis_index``, a ``psum``
of a value the same for every element)."""
_cache: LRUCache[tuple[Any, ...], Jaxpr] = LRUCache("vmap")


def batched_aval(aval: AbstractValue, dim: Dim, size: int) -> ShapedArray:
    """``aval`` with a mapped axis of ``size`` inserted at ``dim``."""
    aval = shaped(aval)
    if dim is None:
        return aval
    shape = list(aval.shape)
    shape.insert(dim, size)
    return aval.update(shape=tuple(shape))


def batched_outputs(jaxpr: Jaxpr, batched: Sequence[bool]) -> list[bool]:
    """Which outputs of ``jaxpr`` vmap maps when the ``batched`` inputs are mapped (as
    a loop's batching rule asks of its body).

    An output that depends on no batched input is never batched.  Otherwise it is,
    unless the jaxpr applies a user primitive, whose batching rule may give an unmapped
    result of mapped operands (equinox's ``unvmap_any``): then the rules say, as JAX's
    batching of a loop body asks them."""
    if _applies_user_primitives(jaxpr):
        dims: list[Dim] = [0 if b else None for b in batched]
        args = [Var(batched_aval(v.aval, d, _PROBE_SIZE)) for v, d in zip(jaxpr.invars, dims)]
        consts = [Var(v.aval) for v in jaxpr.constvars]
        _, out_dims = vmap_eqns(Emitter(), jaxpr, _PROBE_SIZE, consts, args, dims)
        return [d is not None for d in out_dims]
    live = {v for v, b in zip(jaxpr.invars, batched) if b}
    for eqn in jaxpr.eqns:
        if any(type(a) is Var and a in live for a in eqn.invars):
            live.update(eqn.outvars)
    return [type(a) is Var and a in live for a in jaxpr.outvars]


_PROBE_SIZE = 2
"""The batch size :func:`batched_outputs` batches a body at to see its rules' results
(which of them are mapped does not depend on the size)."""

_user_applied: LRUCache[Jaxpr, bool] = LRUCache("user primitives applied")


def _applies_user_primitives(jaxpr: Jaxpr) -> bool:
    """Whether ``jaxpr`` (or a jaxpr in its equations' params) applies a primitive
    defined outside plait."""
    hit = _user_applied.get(jaxpr)
    if hit is None:
        hit = any(eqn.primitive.open_params or any(map(_applies_user_primitives,
                                                       subjaxprs(eqn.params)))
                  for eqn in jaxpr.eqns)
        _user_applied[jaxpr] = hit
    return hit


def move_axis(e: Emitter, x: Atom, src: int, dst: int) -> Atom:
    """Move dimension ``src`` of ``x`` to position ``dst``."""
    if src == dst:
        return x
    nd = shaped(x.aval).ndim
    perm = [i for i in range(nd) if i != src]
    perm.insert(dst, src)
    return e.transpose(x, perm)


def bdim_to_front(e: Emitter, x: Atom, dim: Dim, size: int) -> Atom:
    """``x`` with its batch dimension first (broadcast when it is not mapped)."""
    if dim is None:
        a = shaped(x.aval)
        return e.broadcast_in_dim(x, (size,) + a.shape, range(1, a.ndim + 1))
    return move_axis(e, x, dim, 0)


def _names_vmapped_axis(eqn: Any) -> bool:
    axes = collective_axes.get(eqn.primitive)
    if axes is None:
        return False
    name = vmapped_axis()
    return name is not None and name in axes(eqn.params)


def vmap_eqns(e: Emitter, jaxpr: Jaxpr, size: int, consts: Sequence[Atom],
              args: Sequence[Atom], dims: Sequence[Dim]) -> tuple[list[Atom], list[Dim]]:
    """Emit the batched equations of ``jaxpr`` applied to ``args`` mapped along ``dims``."""
    env: dict[Var, Atom] = {}
    denv: dict[Var, int] = {}

    def read(a: Atom) -> tuple[Atom, Dim]:
        if type(a) is Literal:
            return a, None
        return env[a], denv.get(a)

    for v, c in zip(jaxpr.constvars, consts, strict=True):
        env[v] = c
    for v, x, d in zip(jaxpr.invars, args, dims, strict=True):
        env[v] = x
        if d is not None:
            denv[v] = d
    b = e.builder
    outer_source = b.source_info
    for eqn in jaxpr.eqns:
        vals, ds = zip(*[read(a) for a in eqn.invars]) if eqn.invars else ((), ())
        src = None if eqn.source_info is None else eqn.source_info.transformed("vmap")
        if all(d is None for d in ds) and not _names_vmapped_axis(eqn):
            outs: Sequence[Atom] = b.bind(eqn.primitive, tuple(vals), eqn.params, src)
            out_dims: Sequence[Dim] = [None] * len(outs)
        else:
            b.source_info = src
            try:
                rule = batching_rules.get(eqn.primitive)
                if rule is None:
                    raise missing_rule("Batching", eqn.primitive.name, eqn.primitive.open_params)
                outs, out_dims = rule(e, size, list(vals), list(ds), **eqn.params)
            except Exception as exc:
                note_equation(exc, jaxpr, eqn, "batching (vmap)")
                raise
        for v, x, d in zip(eqn.outvars, outs, out_dims, strict=True):
            env[v] = x
            if d is not None:
                denv[v] = d
    b.source_info = outer_source
    res = [read(a) for a in jaxpr.outvars]
    return [r[0] for r in res], [r[1] for r in res]


class _Vmapped(threading.local):
    def __init__(self) -> None:
        self.names: list[str | None] = []
        self.spmd: list[SpmdAxis] = []


_vmapped = _Vmapped()


@contextlib.contextmanager
def vmapping(name: str | None, spmd_axis_name: SpmdAxis = None) -> Iterator[None]:
    """Inside the block, batching rules see ``name`` as the vmapped axis, and
    ``spmd_axis_name`` as the mesh axes splitting it."""
    _vmapped.names.append(name)
    _vmapped.spmd.append(spmd_axis_name)
    try:
        yield
    finally:
        _vmapped.names.pop()
        _vmapped.spmd.pop()


def vmapped_axis() -> str | None:
    """The axis name of the innermost ``vmap`` being applied (``None``: unnamed); the
    rules of collectives over it turn them into array code."""
    return _vmapped.names[-1] if _vmapped.names else None


def vmapped_spmd_axis() -> SpmdAxis:
    """The mesh axes splitting the innermost ``vmap``'s batch (its ``spmd_axis_name``;
    ``None``: not split); the rules of sharding constraints put them at the batch
    dimension."""
    return _vmapped.spmd[-1] if _vmapped.spmd else None


def vmap_jaxpr(jaxpr: Jaxpr, axis_size: int, in_dims: Sequence[Dim],
               out_dims: Sequence[Dim], axis_name: str | None = None,
               spmd_axis_name: SpmdAxis = None) -> Jaxpr:
    """The batched version of ``jaxpr``.

    Args:
      jaxpr: the program; its constvars are not mapped.
      axis_size: the size of the mapped axis.
      in_dims: per invar, the mapped dimension of the argument (``None``: not mapped).
      out_dims: per output, where the mapped dimension goes (``None``: the
        output must not depend on mapped values).
      axis_name: the name collectives use for the mapped axis (by default the one of
        the enclosing rewrite, for the jaxprs a rule batches).
      spmd_axis_name: the mesh axis (or axes) splitting the mapped axis in the
        sharding constraints of ``jaxpr`` (by default the enclosing rewrite's).

    Raises:
      ValueError: an output with ``out_dims`` ``None`` depends on mapped values.
      RuleNotImplementedError: a primitive on a mapped path has no rule.
    """
    name = axis_name if axis_name is not None else vmapped_axis()
    spmd = spmd_axis_name if spmd_axis_name is not None else vmapped_spmd_axis()
    key = (jaxpr.typed_key(), axis_size, tuple(in_dims), tuple(out_dims), name, spmd)
    hit = _cache.get(key)
    if hit is not None:
        return hit
    with vmapping(name, spmd):
        return _vmap(jaxpr, axis_size, in_dims, out_dims, key)


def _vmap(jaxpr: Jaxpr, axis_size: int, in_dims: Sequence[Dim], out_dims: Sequence[Dim],
          key: tuple[Any, ...]) -> Jaxpr:
    e = Emitter()
    consts = [Var(v.aval) for v in jaxpr.constvars]
    args = [Var(batched_aval(v.aval, d, axis_size)) for v, d in zip(jaxpr.invars, in_dims)]
    outs, dims = vmap_eqns(e, jaxpr, axis_size, consts, args, in_dims)
    final = []
    for i, (x, d, want) in enumerate(zip(outs, dims, out_dims)):
        if want is None:
            if d is not None:
                raise ValueError(f"at vmap out_axes, got axis spec None but output {i} was "
                                 f"batched on axis {d}")
            final.append(x)
        elif d is None:
            a = shaped(x.aval)
            b = e.broadcast_in_dim(x, (axis_size,) + a.shape, range(1, a.ndim + 1))
            final.append(move_axis(e, b, 0, want))
        else:
            final.append(move_axis(e, x, d, want))
    result = e.builder.build(args, final, consts)
    if _config.check_jaxprs:
        check_jaxpr(result)
    _cache[key] = result
    return result

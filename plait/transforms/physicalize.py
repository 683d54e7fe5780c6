"""Physicalization: typed PRNG key arrays replaced by their data.

XLA knows no key type.  Before a jaxpr holding key arrays (``key<fry>[...]``) is
lowered, this rewrite gives every key-typed variable the type of its data
(``u32[..., 2]``; ``u32[..., 4]`` for rbg keys), replaces the key primitives by their
implementation (a ``jit`` call of the jaxpr :mod:`plait.ir.decompositions` builds for the
physical types and the keys' implementation, passed as the param ``impl``),
drops ``random_wrap``/``random_unwrap``/``random_clone``, and adapts the structural
primitives that moved keys to the trailing data dimension.  Sub-jaxprs (loop
bodies, branches, callees) are rewritten the same way.  A jaxpr without keys is
returned as it is.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from plait.ir import dtypes as dt
from plait.ir import primitives as P
from plait.ir.atoms import Atom, Literal, Var
from plait.ir.avals import AbstractValue, ShapedArray, shaped
from plait.ir.builder import Builder
from plait.ir.caches import LRUCache
from plait.ir.decompositions import decomposition
from plait.ir.errors import JaxprTypeError
from plait.ir.jaxpr import ClosedJaxpr, Eqn, Jaxpr
from plait.ir.primitive import Primitive
from plait.ir.primitives.random import impl_of
from plait.ir.rewriter import JaxprRewriter

__all__ = ["physicalize", "has_keys", "physical_aval", "physical_value", "PHYSICALIZED"]


def physical_aval(aval: AbstractValue) -> AbstractValue:
    """The type of a key array's data (``u32[..., 2]``); other types unchanged."""
    if isinstance(aval, ShapedArray) and dt.is_key(aval.dtype):
        return ShapedArray(aval.shape + dt.key_shape(aval.dtype), dt.uint32)
    return aval


def physical_value(value: Any) -> Any:
    """The data of a key array constant (``uint32``, one trailing dimension more)."""
    arr = np.asarray(value)
    if arr.dtype.names is not None and dt.is_key(arr.dtype):
        return np.ascontiguousarray(arr[dt.key_field(arr.dtype)])
    return value


def _is_key(a: Atom) -> bool:
    aval = a.aval
    return isinstance(aval, ShapedArray) and dt.is_key(aval.dtype)


_key_cache: LRUCache[Jaxpr, bool] = LRUCache("has_keys")


def has_keys(jaxpr: Jaxpr) -> bool:
    """Whether a key array appears anywhere in ``jaxpr`` (its sub-jaxprs included)."""
    hit = _key_cache.get(jaxpr)
    if hit is None:
        hit = _key_cache[jaxpr] = _scan_keys(jaxpr)
    return hit


def _scan_keys(jaxpr: Jaxpr) -> bool:
    if any(_is_key(v) for v in (*jaxpr.constvars, *jaxpr.invars)):
        return True
    for eqn in jaxpr.eqns:
        if any(_is_key(v) for v in eqn.outvars) or any(
                has_keys(sub.jaxpr if isinstance(sub, ClosedJaxpr) else sub)
                for sub in _subjaxprs(eqn)):
            return True
    return False


def _subjaxprs(eqn: Eqn) -> list[Jaxpr | ClosedJaxpr]:
    out: list[Jaxpr | ClosedJaxpr] = []
    for v in eqn.params.values():
        if isinstance(v, Jaxpr | ClosedJaxpr):
            out.append(v)
        elif isinstance(v, tuple):
            out.extend(x for x in v if isinstance(x, Jaxpr | ClosedJaxpr))
    return out


PhysicalRule = Callable[[Builder, Eqn, Sequence[Atom]], Sequence[Atom]]


class _Physicalizer(JaxprRewriter):
    """Rewrites key-typed variables to their data (see the module docstring)."""

    def binder(self, v: Var) -> Var:
        return Var(physical_aval(v.aval))

    def rewrite_eqn(self, builder: Builder, eqn: Eqn,
                    atoms: Sequence[Atom]) -> Sequence[Atom | None]:
        rule = _rules.get(eqn.primitive)
        if rule is not None:
            return rule(builder, eqn, atoms)
        if eqn.primitive in _TRANSPARENT or not any(
                _is_key(a) for a in (*eqn.invars, *eqn.outvars)):
            return self.copy_eqn(builder, eqn, atoms)
        raise JaxprTypeError(f"expected operands that are not PRNG key arrays for "
                             f"'{eqn.primitive.name}', but got "
                             + ", ".join(shaped(a.aval).str_short() for a in eqn.invars))


_TRANSPARENT = frozenset({
    P.squeeze_p, P.concatenate_p, P.rev_p, P.copy_p, P.optimization_barrier_p, P.jit_p,
    P.while_p, P.scan_p, P.cond_p, P.remat_p, P.custom_jvp_call_p, P.custom_vjp_call_p,
    P.split_p, P.stack_p, P.unstack_p, P.custom_vmap_call_p, P.shard_map_p,
    # (a sharding names leading dimensions: the keys' data dimension is left whole)
    P.sharding_constraint_p, P.reshard_p,
})
"""Primitives whose params stay valid when key arrays gain a trailing dimension."""

_rules: dict[Primitive, PhysicalRule] = {}


def _decomposed(prim: Primitive) -> PhysicalRule:
    """A key primitive's implementation, called as a ``jit`` of its decomposition (built
    for the keys' implementation: the physical types do not tell rbg's from unsafe_rbg's)."""
    def rule(b: Builder, eqn: Eqn, atoms: Sequence[Atom]) -> Sequence[Atom]:
        params = dict(eqn.params)
        if "impl" not in params:
            params["impl"] = impl_of(shaped(eqn.invars[0].aval).dtype)
        closed = decomposition(prim, [shaped(a.aval) for a in atoms], params)
        return b.bind(P.jit_p, tuple(atoms),
                      {"name": prim.name, "jaxpr": closed,
                       "donated_invars": (False,) * len(atoms), "keep_unused": False,
                       "inline": False})
    return rule


def _identity(b: Builder, eqn: Eqn, atoms: Sequence[Atom]) -> Sequence[Atom]:
    return [atoms[0]]


for _p in (P.random_seed_p, P.random_split_p, P.random_fold_in_p, P.random_bits_p):
    _rules[_p] = _decomposed(_p)
for _p in (P.random_wrap_p, P.random_unwrap_p, P.random_clone_p):
    _rules[_p] = _identity

PHYSICALIZED = frozenset({P.random_seed_p, P.random_split_p, P.random_fold_in_p,
                          P.random_bits_p, P.random_wrap_p, P.random_unwrap_p,
                          P.random_clone_p})
"""The key primitives: they never reach the lowering, which sees their replacements."""


def _with_params(prim: Primitive, adjust: Callable[[Eqn], dict[str, Any]]) -> None:
    """Register a rule rebinding ``prim`` with params adjusted for keys' data dimension."""
    def rule(b: Builder, eqn: Eqn, atoms: Sequence[Atom]) -> Sequence[Atom]:
        params = eqn.params.replace(**adjust(eqn)) if _is_key(eqn.outvars[0]) else eqn.params
        return b.bind(prim, tuple(atoms), params, eqn.source_info)
    _rules[prim] = rule


def _ndim(eqn: Eqn) -> int:
    return shaped(eqn.outvars[0].aval).ndim


def _data(eqn: Eqn) -> tuple[int, ...]:
    """The shape of one key's data, for an equation whose result is keys."""
    return dt.key_shape(shaped(eqn.outvars[0].aval).dtype)


_with_params(P.broadcast_in_dim_p, lambda eqn: {
    "shape": eqn.params["shape"] + _data(eqn),
    "broadcast_dimensions": eqn.params["broadcast_dimensions"] + (_ndim(eqn),)})
_with_params(P.reshape_p, lambda eqn: {
    "new_sizes": eqn.params["new_sizes"] + _data(eqn), "dimensions": None})
_with_params(P.transpose_p, lambda eqn: {
    "permutation": eqn.params["permutation"] + (_ndim(eqn),)})
_with_params(P.slice_p, lambda eqn: {
    "start_indices": eqn.params["start_indices"] + (0,),
    "limit_indices": eqn.params["limit_indices"] + _data(eqn),
    "strides": None if eqn.params["strides"] is None else eqn.params["strides"] + (1,)})
_with_params(P.tile_p, lambda eqn: {"reps": eqn.params["reps"] + (1,)})


def _zero_index(atoms: Sequence[Atom]) -> Literal:
    dtype = shaped(atoms[0].aval).dtype if atoms else dt.int32
    return Literal(0, ShapedArray((), dtype))


def _dynamic_slice(b: Builder, eqn: Eqn, atoms: Sequence[Atom]) -> Sequence[Atom]:
    if not _is_key(eqn.outvars[0]):
        return b.bind(P.dynamic_slice_p, tuple(atoms), eqn.params, eqn.source_info)
    x, *idx = atoms
    params = eqn.params.replace(slice_sizes=eqn.params["slice_sizes"] + _data(eqn))
    return b.bind(P.dynamic_slice_p, (x, *idx, _zero_index(idx)), params, eqn.source_info)


def _dynamic_update_slice(b: Builder, eqn: Eqn, atoms: Sequence[Atom]) -> Sequence[Atom]:
    if not _is_key(eqn.outvars[0]):
        return b.bind(P.dynamic_update_slice_p, tuple(atoms), eqn.params, eqn.source_info)
    x, update, *idx = atoms
    return b.bind(P.dynamic_update_slice_p, (x, update, *idx, _zero_index(idx)), eqn.params,
                  eqn.source_info)


def _select_n(b: Builder, eqn: Eqn, atoms: Sequence[Atom]) -> Sequence[Atom]:
    which, *cases = atoms
    w = shaped(which.aval)
    if _is_key(eqn.outvars[0]) and w.ndim:
        shape = shaped(cases[0].aval).shape
        which = b.bind1(P.broadcast_in_dim_p, which, shape=shape,
                        broadcast_dimensions=tuple(range(w.ndim)), sharding=None)
    return b.bind(P.select_n_p, (which, *cases), eqn.params, eqn.source_info)


def _gather_params(eqn: Eqn) -> dict[str, Any]:
    dnums = eqn.params["dimension_numbers"]
    return {"dimension_numbers": dnums._replace(offset_dims=dnums.offset_dims + (_ndim(eqn),)),
            "slice_sizes": eqn.params["slice_sizes"] + _data(eqn)}


def _scatter(b: Builder, eqn: Eqn, atoms: Sequence[Atom]) -> Sequence[Atom]:
    params = eqn.params
    if _is_key(eqn.outvars[0]):
        dnums = params["dimension_numbers"]
        window = dnums.update_window_dims + (shaped(eqn.invars[2].aval).ndim,)
        params = params.replace(dimension_numbers=dnums._replace(update_window_dims=window))
    return b.bind(P.scatter_p, tuple(atoms), params, eqn.source_info)


def _compare_keys(reduce: Primitive) -> PhysicalRule:
    """``eq``/``ne`` of key arrays: their data compared, then all (``eq``) or any
    (``ne``) of each key's words."""
    def rule(b: Builder, eqn: Eqn, atoms: Sequence[Atom]) -> Sequence[Atom]:
        if not _is_key(eqn.invars[0]):
            return b.bind(eqn.primitive, tuple(atoms), eqn.params, eqn.source_info)
        out = shaped(eqn.outvars[0].aval).shape
        data = dt.key_shape(shaped(eqn.invars[0].aval).dtype)
        full = out + data
        words = tuple(range(len(out), len(full)))
        operands = []
        for x, logical in zip(atoms, eqn.invars):
            nd = shaped(logical.aval).ndim  # (a rank-0 key broadcasts against the other)
            if nd != len(out):
                dims = tuple(range(len(out) - nd, len(out))) + words
                x = b.bind1(P.broadcast_in_dim_p, x, shape=full, broadcast_dimensions=dims,
                            sharding=None)
            operands.append(x)
        same = b.bind1(eqn.primitive, *operands)
        return b.bind(reduce, (same,), {"axes": words}, eqn.source_info)
    return rule


_rules[P.eq_p] = _compare_keys(P.reduce_and_p)
_rules[P.ne_p] = _compare_keys(P.reduce_or_p)
_with_params(P.gather_p, _gather_params)
_rules[P.scatter_p] = _scatter
_rules[P.dynamic_slice_p] = _dynamic_slice
_rules[P.dynamic_update_slice_p] = _dynamic_update_slice
_rules[P.select_n_p] = _select_n

_cache: LRUCache[Jaxpr, Jaxpr] = LRUCache("physicalize")


def physicalize(closed: ClosedJaxpr) -> ClosedJaxpr:
    """``closed`` with key arrays replaced by their data (itself when it has none).

    Raises:
      JaxprTypeError: a key array reaches a primitive that cannot take one.
    """
    jaxpr = closed.jaxpr
    if not has_keys(jaxpr):
        return closed
    new = _cache.get(jaxpr)
    if new is None:
        new = _cache[jaxpr] = _Physicalizer().rewrite(jaxpr)
    return ClosedJaxpr(new, tuple(physical_value(c) for c in closed.consts))

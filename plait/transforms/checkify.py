"""``checkify`` as a jaxpr rewrite: run-time errors made into values.

``checkify_jaxpr(jaxpr, errors)`` returns a jaxpr that computes, besides the
outputs, an error state: a flag (did a check fail?), a code (which *site* failed
first) and, per site, its payload (the values its message shows).  Sites are the
``check`` equations (``"user"``), equations producing a NaN (``"nan"``), integer
divisions by zero (``"div"``) and out-of-bounds dynamic slices and gathers
(``"oob"``), each kind enabled by ``errors``.  The first failure in program order
wins: a later one changes nothing.

Loops carry the state; ``cond`` branches and ``jit`` calls update it; a
``custom_jvp``/``custom_vjp``/``checkpoint`` call holding a site is inlined (its
primal function is what runs).  Sites inside other higher-order equations, and in
a ``while_loop``'s condition, are refused.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

import attrs
import numpy as np

from plait.ir import dtypes as dt
from plait.ir import primitives as P
from plait.ir.atoms import Atom, Literal, Var
from plait.ir.avals import ShapedArray, shaped
from plait.ir.caches import LRUCache
from plait.ir.check import check_jaxpr
from plait.ir.config import values as _config
from plait.ir.errors import TransformError
from plait.ir.jaxpr import ClosedJaxpr, Eqn, Jaxpr, subjaxprs
from plait.ir.sharding import PartitionSpec
from plait.transforms.custom_batching_rules import embed_const
from plait.transforms.emit import Emitter
from plait.transforms.jvp import Tangent, jvp_rules
from plait.transforms.vmap import Dim, batching_rules, move_axis

__all__ = ["Site", "Checked", "checkify_jaxpr", "KINDS"]

KINDS: Final = frozenset({"user", "nan", "div", "oob"})
"""The kinds of check ``errors`` may enable."""

_MOVES_DATA: Final = frozenset({
    P.broadcast_in_dim_p, P.reshape_p, P.transpose_p, P.squeeze_p, P.slice_p,
    P.dynamic_slice_p, P.dynamic_update_slice_p, P.concatenate_p, P.pad_p, P.rev_p,
    P.select_n_p, P.gather_p, P.copy_p, P.convert_element_type_p, P.real_p, P.imag_p,
    P.complex_p, P.conj_p, P.neg_p, P.abs_p, P.max_p, P.min_p, P.clamp_p, P.sort_p,
    P.reduce_max_p, P.reduce_min_p, P.cummax_p, P.cummin_p, P.stop_gradient_p,
    P.optimization_barrier_p, P.stack_p, P.unstack_p, P.split_p, P.tile_p})
"""Equations that only move, choose or copy values: a NaN they return was made
earlier, and is reported where it was made."""

_INLINED: Final = frozenset({P.jit_p, P.custom_jvp_call_p, P.custom_vjp_call_p, P.remat_p})

_COMBINERS: Final = frozenset({*P.SCATTERS, P.reduce_p, P.reduce_window_p})
"""Equations whose jaxpr params combine elements (a scatter's update, a reduction's
monoid): checked as one operation, their jaxprs not entered."""


def _subjaxprs(eqn: Eqn) -> list[Jaxpr]:
    return [] if eqn.primitive in _COMBINERS else list(subjaxprs(eqn.params))


@attrs.frozen
class Site:
    """A place where a check may fail."""

    kind: str
    """``"user"``, ``"nan"``, ``"div"`` or ``"oob"``."""
    detail: Any
    """The check's :class:`~plait.ir.primitives.CheckMessage`; the primitive's name; or
    the indexed array's shape."""
    payload: tuple[ShapedArray, ...]
    """The types of the values its message shows."""


@attrs.frozen
class Checked:
    """A checkified jaxpr: ``(*args) -> (flag, code, *payloads, *outs)``."""

    jaxpr: Jaxpr
    """The rewritten program (the original's constvars kept)."""
    sites: tuple[Site, ...]
    """The sites; a code is an index into them (-1: none failed)."""


class _State:
    """The error state being threaded: flag, code and each site's payload."""

    def __init__(self, flag: Atom, code: Atom, payloads: dict[Site, list[Atom]]) -> None:
        self.flag, self.code, self.payloads = flag, code, payloads

    def atoms(self, layout: Sequence[Site]) -> list[Atom]:
        return [self.flag, self.code, *[p for s in layout for p in self.payloads[s]]]

    def take(self, atoms: Sequence[Atom], layout: Sequence[Site]) -> None:
        self.flag, self.code = atoms[0], atoms[1]
        it = iter(atoms[2:])
        for s in layout:
            self.payloads[s] = [next(it) for _ in s.payload]


def _state_avals(layout: Sequence[Site]) -> list[ShapedArray]:
    return [ShapedArray((), np.dtype(np.bool_)), ShapedArray((), np.dtype(np.int32)),
            *[a for s in layout for a in s.payload]]


class _Rewriter:
    def __init__(self, errors: frozenset[str]) -> None:
        self.errors = errors
        self.codes: dict[Site, int] = {}
        """Each site's code (set once the whole program's sites are known)."""
        self._sites: dict[Jaxpr, list[Site]] = {}

    # -- which sites a program has ------------------------------------------
    def sites(self, jaxpr: Jaxpr) -> list[Site]:
        """The sites of ``jaxpr``, in program order, each once (remembered: nested
        jaxprs are asked again as the rewrite enters them)."""
        known = self._sites.get(jaxpr)
        if known is None:
            out: dict[Site, None] = {}
            for eqn in jaxpr.eqns:
                for s in self._eqn_sites(eqn):
                    out[s] = None
            known = self._sites[jaxpr] = list(out)
        return known

    def _eqn_sites(self, eqn: Eqn) -> list[Site]:
        prim = eqn.primitive
        if prim is P.check_p:
            return [_user_site(eqn)] if "user" in self.errors else []
        subs = _subjaxprs(eqn)
        if subs:
            return [s for j in subs for s in self.sites(j)]
        out = []
        if "nan" in self.errors and prim not in _MOVES_DATA and any(
                dt.is_inexact(shaped(v.aval).dtype) for v in eqn.outvars):
            out.append(Site("nan", prim.name, ()))
        if "div" in self.errors and prim is P.div_p:
            out.append(Site("div", None, ()))
        if "oob" in self.errors and _oob_checked(eqn):
            shape = shaped(eqn.invars[0].aval).shape
            out.append(Site("oob", shape, (_I32, _I32)))
        return out

    # -- rewriting -------------------------------------------------------------
    def emit(self, e: Emitter, jaxpr: Jaxpr, consts: Sequence[Atom], args: Sequence[Atom],
             state: _State) -> list[Atom]:
        """Emit ``jaxpr`` with its checks updating ``state``; returns its outputs."""
        env: dict[Var, Atom] = dict(zip(jaxpr.constvars, consts, strict=True))
        env.update(zip(jaxpr.invars, args, strict=True))

        def read(a: Atom) -> Atom:
            return a if type(a) is Literal else env[a]

        for eqn in jaxpr.eqns:
            ins = [read(a) for a in eqn.invars]
            outs = self._eqn(e, eqn, ins, state)
            env.update(zip(eqn.outvars, outs, strict=True))
        return [read(a) for a in jaxpr.outvars]

    def _eqn(self, e: Emitter, eqn: Eqn, ins: list[Atom], state: _State) -> list[Atom]:
        prim, params = eqn.primitive, eqn.params
        if prim is P.check_p:
            if "user" in self.errors:
                self._record(e, state, _user_site(eqn), *_user_check(e, ins, params))
            return []
        subs = _subjaxprs(eqn)
        if subs and any(self.sites(j) for j in subs):
            return self._higher_order(e, eqn, ins, state)
        outs: list[Atom] = list(e.builder.bind(prim, tuple(ins), params, eqn.source_info))
        for site in self._eqn_sites(eqn) if not subs else []:
            failed, payload = _failure(e, site, eqn, ins, outs)
            self._record(e, state, site, failed, payload)
        return outs

    def _record(self, e: Emitter, state: _State, site: Site, failed: Atom,
                payload: Sequence[Atom]) -> None:
        first = e.bind1(P.and_p, failed, e.bind1(P.not_p, state.flag))
        state.flag = e.bind1(P.or_p, state.flag, failed)
        state.code = e.select_n(first, state.code, e.literal(self.codes[site], _I32.dtype))
        state.payloads[site] = [e.select_n(first, old, new)
                                for old, new in zip(state.payloads[site], payload)]

    def _higher_order(self, e: Emitter, eqn: Eqn, ins: list[Atom],
                      state: _State) -> list[Atom]:
        prim, params = eqn.primitive, eqn.params
        if prim in _INLINED:  # (what runs is the callee, or the primal function)
            closed = params["jaxpr"] if prim in (P.jit_p, P.remat_p) else params["call_jaxpr"]
            return self.emit(e, closed.jaxpr, _consts(e, closed), ins, state)
        if prim is P.cond_p:
            return self._cond(e, ins, params, state)
        if prim is P.scan_p:
            return self._scan(e, ins, params, state)
        if prim is P.while_p:
            return self._while(e, ins, params, state)
        if prim is P.shard_map_p:
            return self._shard_map(e, ins, params, state)
        raise TransformError(f"checkify: checks inside a '{prim.name}' equation are not "
                             "supported yet")

    def with_state(self, closed: ClosedJaxpr, lead: int, layout: Sequence[Site],
                   across: tuple[tuple[str, ...], int] | None = None) -> ClosedJaxpr:
        """``closed`` taking the error state after its first ``lead`` inputs and returning
        it first, its checks updating it; ``across`` (a ``shard_map`` body's manual axes
        and their number of devices): the state returned is the first failing device's
        (in mesh order), the same on every device."""
        j = closed.jaxpr
        e = Emitter()
        constvars = [Var(v.aval) for v in j.constvars]
        args = [Var(v.aval) for v in j.invars]
        state_in = [Var(a) for a in _state_avals(layout)]
        state = _State(state_in[0], state_in[1], {})
        state.take(state_in, layout)
        outs = self.emit(e, j, constvars, args, state)
        state_out = state.atoms(layout)
        if across is not None:
            axes, size = across
            flag, *rest = [e.bind1(P.all_gather_p, x, all_gather_dimension=0,
                                   axis_index_groups=None, axis_name=axes, axis_size=size,
                                   tiled=False) for x in state_out]
            first = e.bind1(P.argmax_p, flag, axes=(0,), index_dtype=np.dtype(np.int32))
            state_out = [e.bind1(P.reduce_or_p, flag, axes=(0,)),
                         *[_pick(e, x, first) for x in rest]]
        new = e.builder.build([*args[:lead], *state_in, *args[lead:]],
                              [*state_out, *outs], constvars)
        return ClosedJaxpr(new, closed.consts)

    def _cond(self, e: Emitter, ins: list[Atom], params: Any, state: _State) -> list[Atom]:
        branches = params["branches"]
        layout = list({s: None for b in branches for s in self.sites(b.jaxpr)})
        new = tuple(self.with_state(b, 0, layout) for b in branches)
        outs = e.bind(P.cond_p, ins[0], *state.atoms(layout), *ins[1:],
                      **{**params, "branches": new})
        k = len(_state_avals(layout))
        state.take(outs[:k], layout)
        return list(outs[k:])

    def _scan(self, e: Emitter, ins: list[Atom], params: Any, state: _State) -> list[Atom]:
        nc = params["num_consts"]
        layout = self.sites(params["jaxpr"].jaxpr)
        body = self.with_state(params["jaxpr"], nc, layout)
        k = len(_state_avals(layout))
        outs = e.bind(P.scan_p, *ins[:nc], *state.atoms(layout), *ins[nc:],
                      **{**params, "jaxpr": body, "num_carry": params["num_carry"] + k})
        state.take(outs[:k], layout)
        return list(outs[k:])

    def _shard_map(self, e: Emitter, ins: list[Atom], params: Any, state: _State
                   ) -> list[Atom]:
        # The state goes in and comes out replicated: the devices agree on the first
        # failure (in mesh order) by gathering their states.
        layout = self.sites(params["jaxpr"].jaxpr)
        mesh = params["mesh"]
        manual = [(n, size) for n, size in zip(mesh.axis_names, mesh.axis_sizes)
                  if n in params["newly_manual_axes"]]
        across = (tuple(n for n, _ in manual), int(np.prod([size for _, size in manual])))
        body = self.with_state(params["jaxpr"], 0, layout, across)
        k = len(_state_avals(layout))
        outs = e.bind(P.shard_map_p, *state.atoms(layout), *ins,
                      **{**params, "jaxpr": body,
                         "in_specs": (PartitionSpec(),) * k + params["in_specs"],
                         "out_specs": (PartitionSpec(),) * k + params["out_specs"]})
        state.take(outs[:k], layout)
        return list(outs[k:])

    def _while(self, e: Emitter, ins: list[Atom], params: Any, state: _State) -> list[Atom]:
        if self.sites(params["cond_jaxpr"].jaxpr):
            raise TransformError("checkify: checks in a while_loop's condition are not "
                                 "supported yet; check in the body instead")
        cn, bn = params["cond_nconsts"], params["body_nconsts"]
        layout = self.sites(params["body_jaxpr"].jaxpr)
        body = self.with_state(params["body_jaxpr"], bn, layout)
        cond = _ignoring_state(params["cond_jaxpr"], cn, layout)
        k = len(_state_avals(layout))
        outs = e.bind(P.while_p, *ins[:cn + bn], *state.atoms(layout), *ins[cn + bn:],
                      **{**params, "cond_jaxpr": cond, "body_jaxpr": body})
        state.take(outs[:k], layout)
        return list(outs[k:])


_I32: Final = ShapedArray((), np.dtype(np.int32))


def _consts(e: Emitter, closed: ClosedJaxpr) -> list[Atom]:
    return [embed_const(e, c, shaped(v.aval), "checkify")
            for v, c in zip(closed.jaxpr.constvars, closed.consts)]


def _ignoring_state(closed: ClosedJaxpr, lead: int, layout: Sequence[Site]) -> ClosedJaxpr:
    j = closed.jaxpr
    state_in = [Var(a) for a in _state_avals(layout)]
    new = Jaxpr(j.constvars, (*j.invars[:lead], *state_in, *j.invars[lead:]), j.eqns,
                j.outvars, j.effects, j.debug_info)
    return ClosedJaxpr(new, closed.consts)


# -- the checks ----------------------------------------------------------------

def _user_site(eqn: Eqn) -> Site:
    nb = eqn.params["batch_ndim"]
    return Site("user", eqn.params["message"],
                tuple(shaped(a.aval).update(shape=shaped(a.aval).shape[nb:])
                      for a in eqn.invars[1:]))


def _user_check(e: Emitter, ins: list[Atom], params: Any) -> tuple[Atom, list[Atom]]:
    pred, fmt = ins[0], ins[1:]
    bad = e.bind1(P.not_p, pred)
    nb = params["batch_ndim"]
    if nb == 0:
        return bad, list(fmt)
    # (Batched by vmap: it fails if any element does; the message shows the first.)
    shape = shaped(pred.aval).shape
    n = int(np.prod(shape))
    flat = e.reshape(bad, (n,))
    failed = e.bind1(P.reduce_or_p, flat, axes=(0,))
    i = e.bind1(P.argmax_p, flat, axes=(0,), index_dtype=np.dtype(np.int32))
    return failed, [_pick(e, e.reshape(a, (n, *shaped(a.aval).shape[nb:])), i) for a in fmt]


def _pick(e: Emitter, x: Atom, i: Atom) -> Atom:
    """``x[i]`` along the first axis, ``i`` a traced index."""
    rest = shaped(x.aval).shape[1:]
    zero = e.literal(0, np.dtype(np.int32))
    row = e.bind1(P.dynamic_slice_p, x, i, *[zero] * len(rest), slice_sizes=(1, *rest))
    return e.reshape(row, rest)


def _any(e: Emitter, x: Atom) -> Atom:
    nd = len(shaped(x.aval).shape)
    return e.bind1(P.reduce_or_p, x, axes=tuple(range(nd))) if nd else x


def _failure(e: Emitter, site: Site, eqn: Eqn, ins: list[Atom], outs: list[Atom]
             ) -> tuple[Atom, list[Atom]]:
    if site.kind == "nan":
        nans = [_any(e, e.bind1(P.ne_p, o, o)) for o in outs
                if dt.is_inexact(shaped(o.aval).dtype)]
        failed = nans[0]
        for x in nans[1:]:
            failed = e.bind1(P.or_p, failed, x)
        return failed, []
    if site.kind == "div":
        y = ins[1]
        zero = e.full(shaped(y.aval), 0)
        return _any(e, e.bind1(P.eq_p, y, zero)), []
    return _oob(e, eqn, ins)


def _oob_checked(eqn: Eqn) -> bool:
    # (Whatever their mode, as JAX: an index out of bounds is an error to report.)
    return eqn.primitive in _INDEXING


_INDEXING: Final = frozenset({P.dynamic_slice_p, P.dynamic_update_slice_p, P.gather_p,
                              *P.SCATTERS})


def _window_sizes(eqn: Eqn, shape: tuple[int, ...]) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """A gather's or scatter's operand dimensions its index vectors start, and the
    window size along every operand dimension."""
    dnums = eqn.params["dimension_numbers"]
    if eqn.primitive is P.gather_p:
        return tuple(dnums.start_index_map), tuple(eqn.params["slice_sizes"])
    updates = shaped(eqn.invars[2].aval).shape
    skipped = set(dnums.inserted_window_dims) | set(dnums.operand_batching_dims)
    window = iter(dnums.update_window_dims)
    sizes = tuple(1 if d in skipped else updates[next(window)] for d in range(len(shape)))
    return tuple(dnums.scatter_dims_to_operand_dims), sizes


def _oob(e: Emitter, eqn: Eqn, ins: list[Atom]) -> tuple[Atom, list[Atom]]:
    """Whether an index is out of bounds, the first such index and its axis."""
    shape = shaped(ins[0].aval).shape
    if eqn.primitive not in (P.dynamic_slice_p, P.dynamic_update_slice_p):
        axes, sizes = _window_sizes(eqn, shape)
        idx = ins[1]
        ishape = shaped(idx.aval).shape
        n, k = int(np.prod(ishape[:-1])), ishape[-1]
        flat = e.reshape(e.convert(idx, np.dtype(np.int32)), (n * k,))
        bounds = [shape[d] - sizes[d] for d in axes]
        limit = e.reshape(e.broadcast_in_dim(_const_vector(e, bounds), (n, k), (1,)), (n * k,))
        axis_of = e.reshape(e.broadcast_in_dim(_const_vector(e, axes), (n, k), (1,)), (n * k,))
    else:
        starts = ins[1:] if eqn.primitive is P.dynamic_slice_p else ins[2:]
        sizes = (eqn.params["slice_sizes"] if eqn.primitive is P.dynamic_slice_p
                 else shaped(ins[1].aval).shape)
        flat = _stack(e, [e.convert(s, np.dtype(np.int32)) for s in starts])
        limit = _const_vector(e, [d - s for d, s in zip(shape, sizes)])
        axis_of = _const_vector(e, list(range(len(shape))))
    zero = e.full(shaped(flat.aval), 0)
    bad = e.bind1(P.or_p, e.bind1(P.lt_p, flat, zero), e.bind1(P.gt_p, flat, limit))
    failed = _any(e, bad)
    i = e.bind1(P.argmax_p, bad, axes=(0,), index_dtype=np.dtype(np.int32))
    return failed, [_pick(e, flat, i), _pick(e, axis_of, i)]


def _const_vector(e: Emitter, values: Sequence[int]) -> Atom:
    return _stack(e, [e.literal(int(v), np.dtype(np.int32)) for v in values])


def _stack(e: Emitter, scalars: Sequence[Atom]) -> Atom:
    ones = [e.reshape(s, (1,)) if type(s) is not Literal else
            e.broadcast_in_dim(s, (1,), ()) for s in scalars]
    if not ones:
        return e.broadcast_in_dim(e.literal(0, np.dtype(np.int32)), (0,), ())
    return ones[0] if len(ones) == 1 else e.bind1(P.concatenate_p, *ones, dimension=0)


# -- the entry point -------------------------------------------------------------

_cache: LRUCache[tuple[Any, ...], Checked] = LRUCache("checkify")


def checkify_jaxpr(jaxpr: Jaxpr, errors: frozenset[str]) -> Checked:
    """``jaxpr`` with its checks of the ``errors`` kinds made into error values.

    Raises:
      TransformError: a check where plait cannot thread the state yet.
    """
    key = (jaxpr, errors)
    hit = _cache.get(key)
    if hit is not None:
        return hit
    unknown = errors - KINDS
    if unknown:
        raise ValueError(f"checkify: expected error kinds among {sorted(KINDS)}, but got "
                         f"{sorted(unknown)}")
    rw = _Rewriter(errors)
    sites = rw.sites(jaxpr)
    rw.codes = {s: i for i, s in enumerate(sites)}
    e = Emitter()
    constvars = [Var(v.aval) for v in jaxpr.constvars]
    args = [Var(v.aval) for v in jaxpr.invars]
    state = _State(e.literal(False, np.dtype(np.bool_)), e.literal(-1, np.dtype(np.int32)),
                   {s: [e.zeros(a) for a in s.payload] for s in sites})
    outs = rw.emit(e, jaxpr, constvars, args, state)
    new = e.builder.build(args, [*state.atoms(sites), *outs], constvars, jaxpr.debug_info)
    if _config.check_jaxprs:
        check_jaxpr(new)
    result = _cache[key] = Checked(new, tuple(sites))
    return result


# -- the check equation under other transformations --------------------------------

def _check_jvp(e: Emitter, primals: Sequence[Atom], tangents: Sequence[Tangent],
               **params: Any) -> tuple[list[Atom], list[Tangent]]:
    e.bind(P.check_p, *primals, **params)
    return [], []


def _check_vmap(e: Emitter, size: int, vals: list[Atom], dims: list[Dim], *,
                message: Any, batch_ndim: int, debug: bool) -> tuple[list[Atom], list[Dim]]:
    front = []
    for x, d in zip(vals, dims):
        if d is None:
            shape = shaped(x.aval).shape
            x = e.broadcast_in_dim(x, (size, *shape), tuple(range(1, len(shape) + 1)))
        else:
            x = move_axis(e, x, d, 0)
        front.append(x)
    e.bind(P.check_p, *front, message=message, batch_ndim=batch_ndim + 1, debug=debug)
    return [], []


jvp_rules[P.check_p] = _check_jvp
batching_rules[P.check_p] = _check_vmap

"""JVP, transpose and batching rules of ``gather`` and the scatters.

A gather transposes to a scatter-add of the same windows, and a scatter's
updates transpose to the gather of those windows (:func:`inverse_gather`).  A
scatter with repeated indices keeps one update per position, chosen by XLA: its
JVP finds which one by scattering update ids, as JAX does, and then needs only
scatter-adds, which transpose.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from plait.ir import primitives as P
from plait.ir.atoms import Atom, Var
from plait.ir.avals import ShapedArray, shaped
from plait.ir.primitive import Primitive
from plait.ir.primitives.indexing import (
    GatherDimensionNumbers,
    GatherScatterMode,
    ScatterDimensionNumbers,
    combiner_jaxpr,
    inverse_gather,
    window_sizes,
)
from plait.transforms.emit import Emitter, Zero
from plait.transforms.jvp import Tangent, jvp_rules, tangent_aval
from plait.transforms.transpose import Cotangent, UndefPrimal, check_linear_inputs
from plait.transforms.transpose_rules import deflinear_transpose
from plait.transforms.vmap import Dim, batching_rules, bdim_to_front

Result = tuple[Sequence[Atom], Sequence[Dim]]


# -- emitting gathers and scatters ---------------------------------------------------

def gather(e: Emitter, x: Atom, idx: Atom, dn: GatherDimensionNumbers,
           slice_sizes: Sequence[int], mode: GatherScatterMode, *, fill_value: Any = None,
           indices_are_sorted: bool = False, unique_indices: bool = False) -> Var:
    """Emit a gather (``fill_value`` only matters in ``FILL_OR_DROP`` mode)."""
    fill = fill_value if mode == GatherScatterMode.FILL_OR_DROP else None
    return e.bind1(P.gather_p, x, idx, dimension_numbers=dn, slice_sizes=tuple(slice_sizes),
                   indices_are_sorted=indices_are_sorted, unique_indices=unique_indices,
                   mode=mode, fill_value=fill)


def scatter(e: Emitter, prim: Primitive, x: Atom, idx: Atom, updates: Atom,
            dn: ScatterDimensionNumbers, mode: GatherScatterMode, *,
            indices_are_sorted: bool = False, unique_indices: bool = False) -> Var:
    """Emit scatter ``prim`` with its combining jaxpr."""
    return e.bind1(prim, x, idx, updates, dimension_numbers=dn,
                   indices_are_sorted=indices_are_sorted, unique_indices=unique_indices,
                   mode=mode, update_jaxpr=combiner_jaxpr(prim, shaped(x.aval).dtype),
                   update_consts=())


def _windows(e: Emitter, x: Atom, idx: Atom, updates_shape: Sequence[int],
             dn: ScatterDimensionNumbers, mode: GatherScatterMode) -> Var:
    """The windows of ``x`` that a scatter with ``dn`` writes, shaped like its updates."""
    sizes = window_sizes(dn, shaped(x.aval).ndim, updates_shape)
    return gather(e, x, idx, inverse_gather(dn), sizes, mode, fill_value=0)


# -- JVP -----------------------------------------------------------------------------

def _gather_jvp(e: Emitter, primals: Sequence[Atom], tangents: Sequence[Tangent],
                **params: Any) -> tuple[list[Var], list[Tangent]]:
    out = e.bind(P.gather_p, *primals, **params)
    t = tangents[0]
    if isinstance(t, Zero):
        return out, [Zero(tangent_aval(out[0].aval))]
    fill = 0 if params["mode"] == GatherScatterMode.FILL_OR_DROP else None
    return out, [e.bind1(P.gather_p, t, primals[1], **{**params, "fill_value": fill})]


jvp_rules[P.gather_p] = _gather_jvp


def _scatter_linear_jvp(prim: Primitive) -> Any:
    def rule(e: Emitter, primals: Sequence[Atom], tangents: Sequence[Tangent],
             **params: Any) -> tuple[list[Var], list[Tangent]]:
        out = e.bind(prim, *primals, **params)
        t_x, _, t_u = tangents
        if isinstance(t_x, Zero) and isinstance(t_u, Zero):
            return out, [Zero(tangent_aval(out[0].aval))]
        t_out: Tangent = e.bind1(prim, e.instantiate(t_x), primals[1], e.instantiate(t_u),
                                 **params)
        return out, [t_out]
    return rule


jvp_rules[P.scatter_add_p] = _scatter_linear_jvp(P.scatter_add_p)
jvp_rules[P.scatter_sub_p] = _scatter_linear_jvp(P.scatter_sub_p)

_MUL_UNIQUE = "scatter_mul gradients are only implemented if `unique_indices=True`"


def _scatter_mul_jvp(e: Emitter, primals: Sequence[Atom], tangents: Sequence[Tangent],
                     **params: Any) -> tuple[list[Var], list[Tangent]]:
    x, idx, u = primals
    out = e.bind(P.scatter_mul_p, *primals, **params)
    t_x, _, t_u = tangents
    terms: list[Atom] = []
    if not isinstance(t_x, Zero):
        terms.append(e.bind1(P.scatter_mul_p, t_x, idx, u, **params))
    if not isinstance(t_u, Zero):
        if not params["unique_indices"]:
            raise NotImplementedError(_MUL_UNIQUE)
        placed = e.bind1(P.scatter_add_p, e.zeros(shaped(x.aval)), idx, t_u,
                         **{**params, "update_jaxpr": combiner_jaxpr(P.scatter_add_p,
                                                                     shaped(x.aval).dtype)})
        terms.append(e.mul(x, placed))
    if not terms:
        return out, [Zero(tangent_aval(out[0].aval))]
    return out, [terms[0] if len(terms) == 1 else e.add_any(terms[0], terms[1])]


jvp_rules[P.scatter_mul_p] = _scatter_mul_jvp


def _scatter_extremal_jvp(prim: Primitive) -> Any:
    # Where several values tie for the extremum, the tangent is their average (as JAX).
    def rule(e: Emitter, primals: Sequence[Atom], tangents: Sequence[Tangent], *,
             dimension_numbers: ScatterDimensionNumbers, mode: GatherScatterMode,
             **params: Any) -> tuple[list[Var], list[Tangent]]:
        x, idx, u = primals
        dn = dimension_numbers
        out = e.bind(prim, *primals, dimension_numbers=dn, mode=mode, **params)
        t_x, _, t_u = tangents
        if isinstance(t_x, Zero) and isinstance(t_u, Zero):
            return out, [Zero(tangent_aval(out[0].aval))]
        t_x, t_u = e.instantiate(t_x), e.instantiate(t_u)
        xa, ua = shaped(x.aval), shaped(u.aval)
        promise = GatherScatterMode.PROMISE_IN_BOUNDS

        def windows(v: Atom) -> Var:
            sizes = window_sizes(dn, xa.ndim, ua.shape)
            return gather(e, v, idx, inverse_gather(dn), sizes, promise)

        def add_at(v: Atom) -> Var:
            return scatter(e, P.scatter_add_p, e.zeros(xa), idx, v, dn, mode)

        initial, target = windows(x), windows(out[0])
        won = e.bind1(P.eq_p, u, target)
        kept = e.bind1(P.eq_p, initial, target)
        one, zero = e.full(ua, 1), e.full(ua, 0)
        n_won = windows(add_at(e.select_n(won, zero, one)))
        n_refs = windows(add_at(one))
        share_kept = e.div(one, e.add(n_won, one))
        u_coef = e.select_n(won, zero, e.select_n(kept, e.div(one, n_won), share_kept))
        x_coef = e.div(e.add(e.full(ua, -1), e.select_n(kept, zero, share_kept)), n_refs)
        t_upd = e.add(e.mul(windows(t_x), x_coef), e.mul(t_u, u_coef))
        return out, [scatter(e, P.scatter_add_p, t_x, idx, t_upd, dn, mode,
                             indices_are_sorted=params["indices_are_sorted"],
                             unique_indices=params["unique_indices"])]
    return rule


jvp_rules[P.scatter_min_p] = _scatter_extremal_jvp(P.scatter_min_p)
jvp_rules[P.scatter_max_p] = _scatter_extremal_jvp(P.scatter_max_p)


def _scatter_jvp(e: Emitter, primals: Sequence[Atom], tangents: Sequence[Tangent], *,
                 dimension_numbers: ScatterDimensionNumbers, mode: GatherScatterMode,
                 update_jaxpr: Any, unique_indices: bool, indices_are_sorted: bool,
                 update_consts: tuple[()]) -> tuple[list[Var], list[Tangent]]:
    if update_jaxpr is not None:
        raise NotImplementedError("scatter_apply JVP not implemented")
    x, idx, u = primals
    dn = dimension_numbers
    params = dict(dimension_numbers=dn, mode=mode, update_jaxpr=None, update_consts=(),
                  unique_indices=unique_indices, indices_are_sorted=indices_are_sorted)
    t_x, _, t_u = tangents
    if isinstance(t_x, Zero) and isinstance(t_u, Zero):
        out = e.bind(P.scatter_p, *primals, **params)
        return out, [Zero(tangent_aval(out[0].aval))]
    t_x, t_u = e.instantiate(t_x), e.instantiate(t_u)
    if unique_indices:
        return (e.bind(P.scatter_p, *primals, **params),
                [e.bind1(P.scatter_p, t_x, idx, t_u, **params)])
    # Which update lands where: scatter ids 1..n (0 marks the operand's own values).
    xa, ua = shaped(x.aval), shaped(u.aval)
    ids_shape = [1 if d in dn.update_window_dims else s for d, s in enumerate(ua.shape)]
    n = math.prod(ids_shape)
    id_dtype = np.dtype(np.uint8 if n < 2**8 - 1 else np.uint16 if n < 2**16 - 1 else np.uint32)
    ids = e.reshape(e.bind1(P.iota_p, dtype=id_dtype, shape=(n,), dimension=0, sharding=None),
                    ids_shape)
    ids = e.broadcast_to(e.add(ids, e.literal(1, id_dtype)), ua.shape)
    placed = e.bind1(P.scatter_p, e.full(ShapedArray(xa.shape, id_dtype), 0), idx, ids,
                     **params)
    landed = _windows(e, placed, idx, ua.shape, dn, GatherScatterMode.PROMISE_IN_BOUNDS)
    untouched = e.bind1(P.eq_p, placed, e.full(ShapedArray(xa.shape, id_dtype), 0))
    winner = e.bind1(P.eq_p, ids, landed)

    def masked(keep: Atom, v: Atom) -> Var:
        return e.select_n(keep, e.zeros(shaped(v.aval)), v)

    def add_at(base: Atom, v: Atom) -> Var:
        return scatter(e, P.scatter_add_p, base, idx, v, dn, mode,
                       indices_are_sorted=indices_are_sorted)
    primal = add_at(masked(untouched, x), masked(winner, u))
    return [primal], [add_at(masked(untouched, t_x), masked(winner, t_u))]


jvp_rules[P.scatter_p] = _scatter_jvp


# -- transpose -----------------------------------------------------------------------

def _gather_t(e: Emitter, ct: Atom, x: Any, idx: Any, *,
              dimension_numbers: GatherDimensionNumbers, slice_sizes: tuple[int, ...],
              indices_are_sorted: bool, unique_indices: bool, mode: GatherScatterMode,
              fill_value: Any) -> Sequence[Cotangent]:
    check_linear_inputs("gather", [x, idx], [0])
    dn = dimension_numbers
    sdn = ScatterDimensionNumbers(
        update_window_dims=dn.offset_dims, inserted_window_dims=dn.collapsed_slice_dims,
        scatter_dims_to_operand_dims=dn.start_index_map,
        operand_batching_dims=dn.operand_batching_dims,
        scatter_indices_batching_dims=dn.start_indices_batching_dims)
    zeros = e.zeros(shaped(x.aval))
    return [scatter(e, P.scatter_add_p, zeros, idx, ct, sdn, mode,
                    indices_are_sorted=indices_are_sorted, unique_indices=unique_indices),
            None]


deflinear_transpose(P.gather_p, _gather_t)


def _updates_shape(u: Any) -> tuple[int, ...]:
    return shaped(u.aval).shape


def _scatter_add_t(negate: bool) -> Any:
    def rule(e: Emitter, ct: Atom, x: Any, idx: Any, u: Any, *,
             dimension_numbers: ScatterDimensionNumbers, mode: GatherScatterMode,
             **_: Any) -> Sequence[Cotangent]:
        check_linear_inputs("scatter-add", [x, idx, u], [0, 2])
        ct_u = None
        if type(u) is UndefPrimal:
            ct_u = _windows(e, ct, idx, _updates_shape(u), dimension_numbers, mode)
            if negate:
                ct_u = e.neg(ct_u)
        return [ct if type(x) is UndefPrimal else None, None, ct_u]
    return rule


deflinear_transpose(P.scatter_add_p, _scatter_add_t(False))
deflinear_transpose(P.scatter_sub_p, _scatter_add_t(True))


def _scatter_mul_t(e: Emitter, ct: Atom, x: Any, idx: Any, u: Any, *,
                   dimension_numbers: ScatterDimensionNumbers, mode: GatherScatterMode,
                   unique_indices: bool, **params: Any) -> Sequence[Cotangent]:
    check_linear_inputs("scatter-mul", [x, idx, u], [0])
    dn = dimension_numbers
    return [scatter(e, P.scatter_mul_p, ct, idx, u, dn, mode,
                    unique_indices=unique_indices), None, None]


deflinear_transpose(P.scatter_mul_p, _scatter_mul_t)


def _scatter_t(e: Emitter, ct: Atom, x: Any, idx: Any, u: Any, *,
               dimension_numbers: ScatterDimensionNumbers, mode: GatherScatterMode,
               unique_indices: bool, update_jaxpr: Any, **params: Any) -> Sequence[Cotangent]:
    check_linear_inputs("scatter", [x, idx, u], [0, 2])
    if not unique_indices or update_jaxpr is not None:
        raise NotImplementedError("scatter transpose is only implemented where "
                                  "unique_indices=True")
    dn = dimension_numbers
    ushape = _updates_shape(u)
    ct_x = None
    if type(x) is UndefPrimal:
        ct_x = e.bind1(P.scatter_p, ct, idx, e.zeros(ShapedArray(ushape, shaped(ct.aval).dtype)),
                       dimension_numbers=dn, mode=mode, unique_indices=True,
                       indices_are_sorted=params["indices_are_sorted"], update_jaxpr=None,
                       update_consts=())
    ct_u = _windows(e, ct, idx, ushape, dn, mode) if type(u) is UndefPrimal else None
    return [ct_x, None, ct_u]


deflinear_transpose(P.scatter_p, _scatter_t)


# -- batching ------------------------------------------------------------------------

def _shift(dims: Sequence[int]) -> tuple[int, ...]:
    return tuple(d + 1 for d in dims)


def _gather_batch(e: Emitter, size: int, vals: list[Atom], dims: list[Dim], *,
                  dimension_numbers: GatherDimensionNumbers, slice_sizes: tuple[int, ...],
                  **params: Any) -> Result:
    x, idx = vals
    dx, di = dims
    dn = dimension_numbers
    if di is None:  # one gather of whole batch rows
        x = bdim_to_front(e, x, dx, size)
        new = GatherDimensionNumbers(
            offset_dims=(0,) + _shift(dn.offset_dims),
            collapsed_slice_dims=_shift(dn.collapsed_slice_dims),
            start_index_map=_shift(dn.start_index_map),
            operand_batching_dims=_shift(dn.operand_batching_dims),
            start_indices_batching_dims=dn.start_indices_batching_dims)
        return e.bind(P.gather_p, x, idx, dimension_numbers=new,
                      slice_sizes=(size,) + slice_sizes, **params), [0]
    idx = bdim_to_front(e, idx, di, size)
    if dx is None:  # more index vectors into the same operand
        new = dn._replace(offset_dims=_shift(dn.offset_dims),
                          start_indices_batching_dims=_shift(dn.start_indices_batching_dims))
        return e.bind(P.gather_p, x, idx, dimension_numbers=new, slice_sizes=slice_sizes,
                      **{**params, "unique_indices": False, "indices_are_sorted": False}), [0]
    x = bdim_to_front(e, x, dx, size)  # both: pair the batch dimensions
    new = GatherDimensionNumbers(
        offset_dims=_shift(dn.offset_dims),
        collapsed_slice_dims=_shift(dn.collapsed_slice_dims),
        start_index_map=_shift(dn.start_index_map),
        operand_batching_dims=(0,) + _shift(dn.operand_batching_dims),
        start_indices_batching_dims=(0,) + _shift(dn.start_indices_batching_dims))
    return e.bind(P.gather_p, x, idx, dimension_numbers=new,
                  slice_sizes=(0 if size == 0 else 1,) + slice_sizes, **params), [0]


batching_rules[P.gather_p] = _gather_batch


def _scatter_batch(prim: Primitive) -> Any:
    def rule(e: Emitter, size: int, vals: list[Atom], dims: list[Dim], *,
             dimension_numbers: ScatterDimensionNumbers, **params: Any) -> Result:
        x, idx, u = vals
        dx, di, du = dims
        dn = dimension_numbers
        x, u = bdim_to_front(e, x, dx, size), bdim_to_front(e, u, du, size)
        if di is None:
            new = ScatterDimensionNumbers(
                update_window_dims=(0,) + _shift(dn.update_window_dims),
                inserted_window_dims=_shift(dn.inserted_window_dims),
                scatter_dims_to_operand_dims=_shift(dn.scatter_dims_to_operand_dims),
                operand_batching_dims=_shift(dn.operand_batching_dims),
                scatter_indices_batching_dims=dn.scatter_indices_batching_dims)
        else:
            idx = bdim_to_front(e, idx, di, size)
            new = ScatterDimensionNumbers(
                update_window_dims=_shift(dn.update_window_dims),
                inserted_window_dims=_shift(dn.inserted_window_dims),
                scatter_dims_to_operand_dims=_shift(dn.scatter_dims_to_operand_dims),
                operand_batching_dims=(0,) + _shift(dn.operand_batching_dims),
                scatter_indices_batching_dims=(0,) + _shift(dn.scatter_indices_batching_dims))
        return e.bind(prim, x, idx, u, dimension_numbers=new, **params), [0]
    return rule


for _p in P.SCATTERS:
    batching_rules[_p] = _scatter_batch(_p)


# -- top_k: its tangent is the tangent at the chosen indices --------------------------

def take_along(e: Emitter, x: Atom, idx: Atom, axis: int) -> Var:
    """``x`` indexed along ``axis`` by ``idx`` (same shape but that axis): a gather
    pairing every other dimension."""
    ia = shaped(idx.aval)
    others = tuple(d for d in range(ia.ndim) if d != axis)
    dn = GatherDimensionNumbers(offset_dims=(), collapsed_slice_dims=(axis,),
                                start_index_map=(axis,), operand_batching_dims=others,
                                start_indices_batching_dims=others)
    vectors = e.reshape(idx, ia.shape + (1,))
    return gather(e, x, vectors, dn, (1,) * ia.ndim, GatherScatterMode.PROMISE_IN_BOUNDS)


def _top_k_jvp(e: Emitter, primals: Sequence[Atom], tangents: Sequence[Tangent], *, k: int,
               axis: int) -> tuple[list[Var], list[Tangent]]:
    values, idx = e.bind(P.top_k_p, *primals, k=k, axis=axis)
    t = tangents[0]
    t_idx = Zero(tangent_aval(idx.aval))
    if isinstance(t, Zero):
        return [values, idx], [Zero(tangent_aval(values.aval)), t_idx]
    return [values, idx], [take_along(e, t, idx, axis), t_idx]


jvp_rules[P.top_k_p] = _top_k_jvp


def _top_k_batch(e: Emitter, size: int, vals: list[Atom], dims: list[Dim], *, k: int,
                 axis: int) -> Result:
    x = bdim_to_front(e, vals[0], dims[0], size)
    return e.bind(P.top_k_p, x, k=k, axis=axis + 1), [0, 0]


batching_rules[P.top_k_p] = _top_k_batch


def _approx_top_k_jvp(e: Emitter, primals: Sequence[Atom], tangents: Sequence[Tangent],
                      **params: Any) -> tuple[list[Var], list[Tangent]]:
    values, idx = e.bind(P.approx_top_k_p, *primals, **params)
    t = tangents[0]
    t_idx = Zero(tangent_aval(idx.aval))
    if isinstance(t, Zero):
        return [values, idx], [Zero(tangent_aval(values.aval)), t_idx]
    axis = params["reduction_dimension"] % shaped(values.aval).ndim
    return [values, idx], [take_along(e, t, idx, axis), t_idx]


def _approx_top_k_batch(e: Emitter, size: int, vals: list[Atom], dims: list[Dim],
                        **params: Any) -> Result:
    x = bdim_to_front(e, vals[0], dims[0], size)
    d = params["reduction_dimension"] % (shaped(x.aval).ndim - 1)
    return e.bind(P.approx_top_k_p, x, **{**params, "reduction_dimension": d + 1}), [0, 0]


jvp_rules[P.approx_top_k_p] = _approx_top_k_jvp
batching_rules[P.approx_top_k_p] = _approx_top_k_batch

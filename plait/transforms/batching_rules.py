"""Batching rules, one per primitive, mostly through family helpers."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

import numpy as np

from plait.ir import dtypes as dt
from plait.ir import primitives as P
from plait.ir.atoms import Atom
from plait.ir.avals import shaped
from plait.ir.jaxpr import ClosedJaxpr
from plait.ir.primitive import Primitive
from plait.transforms.emit import Emitter
from plait.transforms.vmap import Dim, batching_rules, bdim_to_front, move_axis, vmap_jaxpr

Result = tuple[Sequence[Atom], Sequence[Dim]]
# vmap_eqns calls a rule only when some operand is mapped, so a one-operand rule's
# dims[0] is an int: the rules below ``cast`` it rather than test it.
_I32 = np.dtype(np.int32)


def defvectorized(prim: Primitive) -> None:
    """One operand, elementwise: the batch dimension passes through unchanged."""
    def rule(e: Emitter, size: int, vals: list[Atom], dims: list[Dim], **params: Any) -> Result:
        return e.bind(prim, *vals, **params), [dims[0]]
    batching_rules[prim] = rule


def _align_elementwise(e: Emitter, size: int, vals: Sequence[Atom],
                       dims: Sequence[Dim]) -> list[Atom]:
    """Operands of an elementwise op with mapped ones' batch dimension first.

    Unmapped rank-0 operands stay rank 0; other unmapped operands get a leading
    size-1 dimension; mapped operands that were rank 0 get trailing size-1
    dimensions up to the others' rank.
    """
    rank = max(shaped(x.aval).ndim - (d is not None) for x, d in zip(vals, dims))
    out = []
    for x, d in zip(vals, dims):
        a = shaped(x.aval)
        if d is None:
            out.append(x if a.ndim == 0 else e.broadcast_in_dim(x, (1,) + a.shape,
                                                                range(1, a.ndim + 1)))
            continue
        x = move_axis(e, x, d, 0)
        if a.ndim - 1 < rank:
            x = e.reshape(x, (size,) + (1,) * rank)
        out.append(x)
    return out


def defbroadcasting(prim: Primitive) -> None:
    """An n-ary elementwise primitive (rank-0 and size-1 operands broadcast)."""
    def rule(e: Emitter, size: int, vals: list[Atom], dims: list[Dim], **params: Any) -> Result:
        mapped = {d for d in dims if d is not None}
        ranks = {shaped(x.aval).ndim for x in vals}
        if len(mapped) == 1 and all(d is not None for d in dims) and len(ranks) == 1:
            outs = e.bind(prim, *vals, **params)
            return outs, [mapped.pop()] * len(outs)
        outs = e.bind(prim, *_align_elementwise(e, size, vals, dims), **params)
        return outs, [0] * len(outs)
    batching_rules[prim] = rule


for _p in (P.neg_p, P.sign_p, P.floor_p, P.ceil_p, P.round_p, P.is_finite_p, P.exp_p, P.exp2_p,
           P.log_p, P.log1p_p, P.expm1_p, P.tanh_p, P.logistic_p, P.sin_p, P.cos_p, P.tan_p,
           P.asin_p, P.acos_p, P.atan_p, P.sinh_p, P.cosh_p, P.asinh_p, P.acosh_p, P.atanh_p,
           P.sqrt_p, P.rsqrt_p, P.cbrt_p, P.abs_p, P.not_p, P.copy_p, P.real_p, P.imag_p,
           P.conj_p, P.integer_pow_p, P.convert_element_type_p, P.erf_p, P.erfc_p,
           P.erf_inv_p, P.lgamma_p, P.digamma_p, P.population_count_p, P.clz_p,
           P.stop_gradient_p, P.square_p, P.bessel_i0e_p, P.bessel_i1e_p):
    defvectorized(_p)

for _p in (P.add_p, P.sub_p, P.mul_p, P.div_p, P.rem_p, P.pow_p, P.max_p, P.min_p,
           P.atan2_p, P.nextafter_p, P.and_p, P.or_p, P.xor_p, P.eq_p, P.ne_p, P.lt_p, P.le_p,
           P.gt_p, P.ge_p, P.complex_p, P.polygamma_p, P.zeta_p, P.shift_left_p,
           P.shift_right_arithmetic_p, P.shift_right_logical_p, P.igamma_p, P.igammac_p,
           P.igamma_grad_a_p, P.regularized_incomplete_beta_p):
    defbroadcasting(_p)


def _full_shape(e: Emitter, size: int, vals: Sequence[Atom], dims: Sequence[Dim]) -> list[Atom]:
    # All operands with the batch dimension first, broadcast to one full shape.
    out_shape: tuple[int, ...] = ()
    for x, d in zip(vals, dims):
        a = shaped(x.aval)
        s = a.shape if d is None else a.shape[:d] + a.shape[d + 1:]
        if len(s) > len(out_shape):
            out_shape = s
    full = (size,) + out_shape
    res = []
    for x, d in zip(vals, dims):
        x = bdim_to_front(e, x, d, size)
        a = shaped(x.aval)
        if a.shape != full:
            x = e.broadcast_in_dim(x, full, [0] if a.ndim == 1 else range(a.ndim))
        res.append(x)
    return res


def _select_n(e: Emitter, size: int, vals: list[Atom], dims: list[Dim]) -> Result:
    which, *cases = vals
    if dims[0] is None and shaped(which.aval).ndim == 0:
        # A shared scalar predicate: only the cases need aligning.
        aligned = _full_shape(e, size, cases, dims[1:])
        return [e.select_n(which, *aligned)], [0]
    return [e.select_n(*_full_shape(e, size, vals, dims))], [0]


batching_rules[P.select_n_p] = _select_n


def _clamp(e: Emitter, size: int, vals: list[Atom], dims: list[Dim]) -> Result:
    return e.bind(P.clamp_p, *_full_shape(e, size, vals, dims)), [0]


batching_rules[P.clamp_p] = _clamp


def _add_any(e: Emitter, size: int, vals: list[Atom], dims: list[Dim]) -> Result:
    # add_any takes operands of one type (no broadcasting): both get the full batch axis.
    x, y = (bdim_to_front(e, v, d, size) for v, d in zip(vals, dims))
    return [e.add_any(x, y)], [0]


batching_rules[P.add_any_p] = _add_any


def _reducer(prim: Primitive) -> Any:
    def rule(e: Emitter, size: int, vals: list[Atom], dims: list[Dim], **params: Any) -> Result:
        x = move_axis(e, vals[0], cast(int, dims[0]), 0)  # the one operand is mapped
        new = dict(params, axes=tuple(a + 1 for a in params["axes"]))
        return e.bind(prim, x, **new), [0]
    return rule


for _p in (P.reduce_sum_p, P.reduce_prod_p, P.reduce_max_p, P.reduce_min_p, P.reduce_and_p,
           P.reduce_or_p, P.reduce_xor_p, P.argmax_p, P.argmin_p):
    batching_rules[_p] = _reducer(_p)


def _cumulative(prim: Primitive) -> Any:
    def rule(e: Emitter, size: int, vals: list[Atom], dims: list[Dim], *, axis: int,
             reverse: bool) -> Result:
        x = move_axis(e, vals[0], cast(int, dims[0]), 0)  # the one operand is mapped
        return e.bind(prim, x, axis=axis + 1, reverse=reverse), [0]
    return rule


for _p in (P.cumsum_p, P.cumprod_p, P.cummax_p, P.cummin_p):
    batching_rules[_p] = _cumulative(_p)


def _broadcast_in_dim(e: Emitter, size: int, vals: list[Atom], dims: list[Dim], *,
                      shape: tuple[int, ...], broadcast_dimensions: tuple[int, ...],
                      sharding: None) -> Result:
    x = move_axis(e, vals[0], cast(int, dims[0]), 0)  # the one operand is mapped
    return [e.broadcast_in_dim(x, (size,) + shape, (0,) + tuple(d + 1 for d in
                                                                broadcast_dimensions))], [0]


batching_rules[P.broadcast_in_dim_p] = _broadcast_in_dim


def _reshape(e: Emitter, size: int, vals: list[Atom], dims: list[Dim], *,
             new_sizes: tuple[int, ...], dimensions: tuple[int, ...] | None,
             sharding: None) -> Result:
    x = move_axis(e, vals[0], cast(int, dims[0]), 0)  # the one operand is mapped
    if dimensions is not None:
        x = e.transpose(x, (0,) + tuple(d + 1 for d in dimensions))
    return [e.reshape(x, (size,) + new_sizes)], [0]


batching_rules[P.reshape_p] = _reshape


def _transpose(e: Emitter, size: int, vals: list[Atom], dims: list[Dim], *,
               permutation: tuple[int, ...]) -> Result:
    x = move_axis(e, vals[0], cast(int, dims[0]), 0)  # the one operand is mapped
    return [e.transpose(x, (0,) + tuple(p + 1 for p in permutation))], [0]


batching_rules[P.transpose_p] = _transpose


def _shift_dims_rule(prim: Primitive, name: str) -> Any:
    def rule(e: Emitter, size: int, vals: list[Atom], dims: list[Dim], **params: Any) -> Result:
        x = move_axis(e, vals[0], cast(int, dims[0]), 0)  # the one operand is mapped
        new = dict(params)
        new[name] = tuple(d + 1 for d in params[name])
        return e.bind(prim, x, **new), [0]
    return rule


batching_rules[P.squeeze_p] = _shift_dims_rule(P.squeeze_p, "dimensions")
batching_rules[P.rev_p] = _shift_dims_rule(P.rev_p, "dimensions")


def _concatenate(e: Emitter, size: int, vals: list[Atom], dims: list[Dim], *,
                 dimension: int) -> Result:
    xs = [bdim_to_front(e, x, d, size) for x, d in zip(vals, dims)]
    return e.bind(P.concatenate_p, *xs, dimension=dimension + 1), [0]


batching_rules[P.concatenate_p] = _concatenate


def _slice(e: Emitter, size: int, vals: list[Atom], dims: list[Dim], *,
           start_indices: tuple[int, ...], limit_indices: tuple[int, ...],
           strides: tuple[int, ...] | None) -> Result:
    x = move_axis(e, vals[0], cast(int, dims[0]), 0)  # the one operand is mapped
    return e.bind(P.slice_p, x, start_indices=(0,) + start_indices,
                  limit_indices=(size,) + limit_indices,
                  strides=None if strides is None else (1,) + strides), [0]


batching_rules[P.slice_p] = _slice


def _pad(e: Emitter, size: int, vals: list[Atom], dims: list[Dim], *,
         padding_config: tuple[tuple[int, int, int], ...]) -> Result:
    x, v = vals
    dx, dv = dims
    cfg = ((0, 0, 0),) + padding_config
    x = bdim_to_front(e, x, dx, size)
    if dv is None:
        return e.bind(P.pad_p, x, v, padding_config=cfg), [0]
    # A mapped padding value: pad with zeros, then fill the padding per batch element.
    padded = e.bind1(P.pad_p, x, e.scalar_like(x, 0), padding_config=cfg)
    mask_src = e.full(shaped(x.aval).update(dtype=dt.bool_), False)
    mask = e.bind1(P.pad_p, mask_src, e.literal(True, dt.bool_), padding_config=cfg)
    shape = shaped(padded.aval).shape
    vb = e.broadcast_in_dim(move_axis(e, v, dv, 0), shape, [0])
    return [e.select_n(mask, padded, vb)], [0]


batching_rules[P.pad_p] = _pad


def _dot_general(e: Emitter, size: int, vals: list[Atom], dims: list[Dim], *,
                 dimension_numbers: Any, precision: Any, preferred_element_type: Any,
                 out_sharding: None) -> Result:
    (lc, rc), (lb, rb) = dimension_numbers
    x, y = vals
    dx, dy = dims

    def shift(ds: Sequence[int]) -> tuple[int, ...]:
        return tuple(d + 1 for d in ds)
    if dx is not None and dy is not None:
        x, y = move_axis(e, x, dx, 0), move_axis(e, y, dy, 0)
        dn = ((shift(lc), shift(rc)), ((0,) + shift(lb), (0,) + shift(rb)))
        out_dim = 0
    elif dx is not None:
        x = move_axis(e, x, dx, 0)
        dn = ((shift(lc), rc), (shift(lb), rb))
        out_dim = len(lb)
    else:
        y = move_axis(e, y, cast(int, dy), 0)  # x is unmapped, so y is mapped
        dn = ((lc, shift(rc)), (lb, shift(rb)))
        n_lfree = shaped(x.aval).ndim - len(lc) - len(lb)
        out_dim = len(lb) + n_lfree
    return [e.dot_general(x, y, dn, preferred_element_type, precision)], [out_dim]


batching_rules[P.dot_general_p] = _dot_general


def _sort(e: Emitter, size: int, vals: list[Atom], dims: list[Dim], *, dimension: int,
          is_stable: bool, num_keys: int) -> Result:
    xs = [bdim_to_front(e, x, d, size) for x, d in zip(vals, dims)]
    outs = e.bind(P.sort_p, *xs, dimension=dimension + 1, is_stable=is_stable, num_keys=num_keys)
    return outs, [0] * len(outs)


batching_rules[P.sort_p] = _sort


def _take_window(e: Emitter, x: Atom, axis: int, starts: Atom, width: int) -> Atom:
    """``x[b, ..., starts[b] + k, ...]`` for ``k < width`` along ``axis`` (batch first).

    A gather by exact selection: every output element picks one input element
    (the others contribute nothing), so no arithmetic touches the values.
    """
    a = shaped(x.aval)
    big = list(a.shape[:axis + 1]) + [width] + list(a.shape[axis + 1:])
    src = e.bind1(P.iota_p, dtype=_I32, shape=tuple(big), dimension=axis, sharding=None)
    k = e.bind1(P.iota_p, dtype=_I32, shape=tuple(big), dimension=axis + 1, sharding=None)
    s = e.broadcast_in_dim(starts, big, [0])
    hit = e.bind1(P.eq_p, src, e.add(s, k))
    xb = e.broadcast_in_dim(x, big, [i for i in range(len(big)) if i != axis + 1])
    if a.dtype == dt.bool_:
        chosen = e.bind1(P.and_p, hit, xb)
        return e.bind1(P.reduce_or_p, chosen, axes=(axis,))
    chosen = e.select_n(hit, e.full(shaped(xb.aval), 0), xb)
    return e.reduce_sum(chosen, [axis])


def _clamped_start(e: Emitter, idx: Atom, size_dim: int, width: int) -> Atom:
    i = e.convert(idx, _I32)
    lo = e.literal(0, _I32)
    hi = e.literal(size_dim - width, _I32)
    return e.bind1(P.clamp_p, lo, i, hi)


def _dynamic_slice(e: Emitter, size: int, vals: list[Atom], dims: list[Dim], *,
                   slice_sizes: tuple[int, ...]) -> Result:
    x, *idx = vals
    dx, *didx = dims
    if all(d is None for d in didx):
        x = move_axis(e, x, cast(int, dx), 0)  # no index is mapped, so x is
        zero = e.literal(0, shaped(idx[0].aval).dtype) if idx else e.literal(0, _I32)
        return e.bind(P.dynamic_slice_p, x, zero, *idx, slice_sizes=(size,) + slice_sizes), [0]
    x = bdim_to_front(e, x, dx, size)
    out = x
    for axis, (i, d, w) in enumerate(zip(idx, didx, slice_sizes)):
        n = shaped(x.aval).shape[axis + 1]
        starts = bdim_to_front(e, i, d, size)
        out = _take_window(e, out, axis + 1, _clamped_start(e, starts, n, w), w)
    return [out], [0]


batching_rules[P.dynamic_slice_p] = _dynamic_slice


def _dynamic_update_slice(e: Emitter, size: int, vals: list[Atom], dims: list[Dim]) -> Result:
    x, u, *idx = vals
    dx, du, *didx = dims
    if all(d is None for d in didx):
        x, u = bdim_to_front(e, x, dx, size), bdim_to_front(e, u, du, size)
        zero = e.literal(0, shaped(idx[0].aval).dtype) if idx else e.literal(0, _I32)
        return e.bind(P.dynamic_update_slice_p, x, u, zero, *idx), [0]
    x, u = bdim_to_front(e, x, dx, size), bdim_to_front(e, u, du, size)
    xa, ua = shaped(x.aval), shaped(u.aval)
    inside = None
    placed = u
    for axis, (i, d) in enumerate(zip(idx, didx)):
        n, w = xa.shape[axis + 1], ua.shape[axis + 1]
        start = _clamped_start(e, bdim_to_front(e, i, d, size), n, w)
        # Position p of the operand takes update element p - start when in the window.
        pos = e.bind1(P.iota_p, dtype=_I32, shape=xa.shape, dimension=axis + 1, sharding=None)
        rel = e.sub(pos, e.broadcast_in_dim(start, xa.shape, [0]))
        ok = e.bind1(P.and_p, e.bind1(P.ge_p, rel, e.literal(0, _I32)),
                     e.bind1(P.lt_p, rel, e.literal(w, _I32)))
        inside = ok if inside is None else e.bind1(P.and_p, inside, ok)
        # Spread the update along this axis to the operand's length.
        neg_start = e.sub(e.literal(0, _I32), start)
        placed = _take_window(e, _pad_axis(e, placed, axis + 1, n), axis + 1,
                              e.add(neg_start, e.literal(n, _I32)), n)
    assert inside is not None
    return [e.select_n(inside, x, placed)], [0]


def _pad_axis(e: Emitter, x: Atom, axis: int, n: int) -> Atom:
    # n zeros before x along axis, so index (n - start + p) reads update element p - start.
    a = shaped(x.aval)
    cfg = [(0, 0, 0)] * a.ndim
    cfg[axis] = (n, n, 0)
    zero = e.literal(0, a.dtype) if a.dtype != dt.bool_ else e.literal(False, a.dtype)
    return e.bind1(P.pad_p, x, zero, padding_config=tuple(cfg))


batching_rules[P.dynamic_update_slice_p] = _dynamic_update_slice


def _jit(e: Emitter, size: int, vals: list[Atom], dims: list[Dim], *, name: str,
         jaxpr: ClosedJaxpr, donated_invars: tuple[bool, ...], keep_unused: bool,
         inline: bool) -> Result:
    out_dims = [0] * len(jaxpr.jaxpr.outvars)
    batched = vmap_jaxpr(jaxpr.jaxpr, size, dims, out_dims)
    # The call keeps its name, as in JAX's printed jaxprs.
    outs = e.bind(P.jit_p, *vals, name=name, jaxpr=ClosedJaxpr(batched),
                  donated_invars=donated_invars, keep_unused=keep_unused, inline=inline)
    return outs, out_dims


batching_rules[P.jit_p] = _jit

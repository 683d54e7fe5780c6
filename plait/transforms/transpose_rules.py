"""Transpose rules of the linear primitives."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from plait.ir import dtypes as dt
from plait.ir import primitives as P
from plait.ir.atoms import Atom
from plait.ir.avals import ShapedArray, shaped
from plait.ir.errors import JaxprTypeError
from plait.ir.jaxpr import ClosedJaxpr
from plait.ir.lists import merge_lists
from plait.ir.sharding import EXPLICIT, NamedSharding, PartitionSpec
from plait.transforms.emit import Emitter, Zero, target_sharding
from plait.transforms.transpose import (
    Cotangent,
    UndefPrimal,
    check_linear_inputs,
    transpose_jaxpr,
    transpose_rules,
)


def deflinear_transpose(prim: Any, fn: Callable[..., Sequence[Cotangent]]) -> None:
    """Register ``fn(e, ct, *inputs, **params)`` (one output cotangent, instantiated)."""
    def rule(e: Emitter, cts: Sequence[Atom | Zero], *ins: Any,
             **params: Any) -> Sequence[Cotangent]:
        return fn(e, e.instantiate(cts[0]), *ins, **params)
    transpose_rules[prim] = rule


def _undef(x: object) -> bool:
    return type(x) is UndefPrimal


def _add_t(e: Emitter, ct: Atom, x: Any, y: Any) -> Sequence[Cotangent]:
    return [e.unbroadcast(ct, shaped(x.aval)) if _undef(x) else None,
            e.unbroadcast(ct, shaped(y.aval)) if _undef(y) else None]


def _sub_t(e: Emitter, ct: Atom, x: Any, y: Any) -> Sequence[Cotangent]:
    return [e.unbroadcast(ct, shaped(x.aval)) if _undef(x) else None,
            e.unbroadcast(e.neg(ct), shaped(y.aval)) if _undef(y) else None]


def _mul_t(e: Emitter, ct: Atom, x: Any, y: Any, **_: Any) -> Sequence[Cotangent]:
    if _undef(x) and _undef(y):
        check_linear_inputs("mul", [x, y], [0])
    # With ``out_dtype`` the cotangent is wider than the operands: multiply in its
    # dtype, and ``unbroadcast`` converts back to the operand's.
    ct_dtype = shaped(ct.aval).dtype
    if _undef(x):
        return [e.unbroadcast(e.mul(ct, e.to_dtype(y, ct_dtype)), shaped(x.aval)), None]
    return [None, e.unbroadcast(e.mul(e.to_dtype(x, ct_dtype), ct), shaped(y.aval))]


def _div_t(e: Emitter, ct: Atom, x: Any, y: Any) -> Sequence[Cotangent]:
    check_linear_inputs("div", [x, y], [0])
    return [e.unbroadcast(e.div(ct, y), shaped(x.aval)), None]


deflinear_transpose(P.add_p, _add_t)
deflinear_transpose(P.add_any_p, _add_t)
deflinear_transpose(P.sub_p, _sub_t)
deflinear_transpose(P.mul_p, _mul_t)
deflinear_transpose(P.div_p, _div_t)
deflinear_transpose(P.neg_p, lambda e, ct, x: [e.neg(ct)])
deflinear_transpose(P.copy_p, lambda e, ct, x: [ct])


def _integer_pow_t(e: Emitter, ct: Atom, x: Any, *, y: int) -> Sequence[Cotangent]:
    # Only x ** 1 is linear (JVPs never emit it, but user jaxprs may hold it).
    if y != 1:
        raise JaxprTypeError(f"integer_pow with y={y} is not linear; it cannot be transposed")
    return [ct]


deflinear_transpose(P.integer_pow_p, _integer_pow_t)
def _strong_zeros(e: Emitter, ct: Atom) -> Atom:
    # JAX's transposes of real and imag pair the cotangent with a strongly typed zero,
    # so a gradient with respect to a complex Python scalar is not weakly typed.
    return e.zeros(shaped(ct.aval).update(weak_type=False))


deflinear_transpose(P.real_p, lambda e, ct, x: [e.bind1(P.complex_p, ct, _strong_zeros(e, ct))])
deflinear_transpose(P.imag_p, lambda e, ct, x: [e.bind1(P.complex_p, _strong_zeros(e, ct),
                                                        e.neg(ct))])
deflinear_transpose(P.conj_p, lambda e, ct, x, **_: [e.conj(ct)])
deflinear_transpose(P.complex_p, lambda e, ct, x, y: [
    e.unbroadcast(e.unary(P.real_p, ct), shaped(x.aval)) if _undef(x) else None,
    e.unbroadcast(e.neg(e.unary(P.imag_p, ct)), shaped(y.aval)) if _undef(y) else None])


def _convert_t(e: Emitter, ct: Atom, x: Any, **_: Any) -> Sequence[Cotangent]:
    a = shaped(x.aval)
    if dt.is_complex(shaped(ct.aval).dtype) and not dt.is_complex(a.dtype):
        ct = e.unary(P.real_p, ct)
    return [e.convert(ct, a.dtype, a.weak_type)]


deflinear_transpose(P.convert_element_type_p, _convert_t)


def _reduce_sum_t(e: Emitter, ct: Atom, x: Any, *, axes: tuple[int, ...],
                  **_: Any) -> Sequence[Cotangent]:
    a = shaped(x.aval)
    kept = [i for i in range(a.ndim) if i not in axes]
    return [e.broadcast_in_dim(ct, a.shape, kept)]


deflinear_transpose(P.reduce_sum_p, _reduce_sum_t)


def _broadcast_in_dim_t(e: Emitter, ct: Atom, x: Any, *, shape: tuple[int, ...],
                        broadcast_dimensions: tuple[int, ...],
                        sharding: None) -> Sequence[Cotangent]:
    a = shaped(x.aval)
    bd = broadcast_dimensions
    # Sum the new dimensions and the size-1 dimensions that were expanded.
    summed = [d for d in range(len(shape)) if d not in bd]
    expanded = [d for i, d in enumerate(bd) if a.shape[i] == 1 and shape[d] != 1]
    out = e.reduce_sum(ct, sorted(summed + expanded))
    return [e.reshape(out, a.shape)]


deflinear_transpose(P.broadcast_in_dim_p, _broadcast_in_dim_t)


def _reshape_t(e: Emitter, ct: Atom, x: Any, *, new_sizes: tuple[int, ...],
               dimensions: tuple[int, ...] | None, sharding: None) -> Sequence[Cotangent]:
    a = shaped(x.aval)
    if dimensions is None:
        return [e.reshape(ct, a.shape)]
    permuted = [a.shape[d] for d in dimensions]
    return [e.transpose(e.reshape(ct, permuted), list(np.argsort(dimensions)))]


deflinear_transpose(P.reshape_p, _reshape_t)
deflinear_transpose(P.transpose_p, lambda e, ct, x, *, permutation: [
    e.transpose(ct, list(np.argsort(permutation)))])
deflinear_transpose(P.squeeze_p,
                    lambda e, ct, x, *, dimensions: [e.reshape(ct, shaped(x.aval).shape)])
deflinear_transpose(P.rev_p, lambda e, ct, x, *, dimensions: [
    e.bind1(P.rev_p, ct, dimensions=dimensions)])
deflinear_transpose(P.cumsum_p, lambda e, ct, x, *, axis, reverse: [
    e.bind1(P.cumsum_p, ct, axis=axis, reverse=not reverse)])


def _slice_t(e: Emitter, ct: Atom, x: Any, *, start_indices: tuple[int, ...],
             limit_indices: tuple[int, ...],
             strides: tuple[int, ...] | None) -> Sequence[Cotangent]:
    a = shaped(x.aval)
    st = strides or (1,) * a.ndim
    out_shape = shaped(ct.aval).shape
    if 0 in out_shape:
        return [e.zeros(a)]
    config = []
    for d, lo, s, n in zip(a.shape, start_indices, st, out_shape):
        last = lo + (n - 1) * s
        config.append((lo, d - last - 1, s - 1))
    return [e.bind1(P.pad_p, ct, e.scalar_like(ct, 0), padding_config=tuple(config))]


deflinear_transpose(P.slice_p, _slice_t)


def _pad_t(e: Emitter, ct: Atom, x: Any, v: Any, *,
           padding_config: tuple[tuple[int, int, int], ...]) -> Sequence[Cotangent]:
    # The operand's cotangent is ct at the operand's positions: undo the edge
    # padding (negative padding crops), then stride over the interior padding.
    unpad = tuple((-lo, -hi, 0) for lo, hi, _ in padding_config)
    unpadded = e.bind1(P.pad_p, ct, e.scalar_like(ct, 0), padding_config=unpad)
    shape = shaped(unpadded.aval).shape
    ct_x = e.bind1(P.slice_p, unpadded, start_indices=(0,) * len(shape), limit_indices=shape,
                   strides=tuple(i + 1 for _, _, i in padding_config))
    ct_v: Cotangent = None
    if _undef(v):
        # The padding value's cotangent: everything else.
        total = e.reduce_sum(ct, range(shaped(ct.aval).ndim))
        ct_v = e.sub(total, e.reduce_sum(ct_x, range(shaped(ct_x.aval).ndim)))
    return [ct_x if _undef(x) else None, ct_v]


deflinear_transpose(P.pad_p, _pad_t)


def _concatenate_t(e: Emitter, ct: Atom, *xs: Any, dimension: int) -> Sequence[Cotangent]:
    outs: list[Cotangent] = []
    start = 0
    shape = shaped(ct.aval).shape
    for x in xs:
        n = shaped(x.aval).shape[dimension]
        if _undef(x):
            lo = [0] * len(shape)
            hi = list(shape)
            lo[dimension], hi[dimension] = start, start + n
            outs.append(e.bind1(P.slice_p, ct, start_indices=tuple(lo), limit_indices=tuple(hi),
                                strides=None))
        else:
            outs.append(None)
        start += n
    return outs


deflinear_transpose(P.concatenate_p, _concatenate_t)


def _dynamic_slice_t(e: Emitter, ct: Atom, x: Any, *idx: Any,
                     slice_sizes: tuple[int, ...]) -> Sequence[Cotangent]:
    check_linear_inputs("dynamic_slice", [x, *idx], [0])
    zeros = e.zeros(shaped(x.aval))
    return [e.bind1(P.dynamic_update_slice_p, zeros, ct, *idx)] + [None] * len(idx)


deflinear_transpose(P.dynamic_slice_p, _dynamic_slice_t)


def _dynamic_update_slice_t(e: Emitter, ct: Atom, x: Any, update: Any,
                            *idx: Any) -> Sequence[Cotangent]:
    check_linear_inputs("dynamic_update_slice", [x, update, *idx], [0, 1])
    ua = shaped(update.aval)
    ct_x = e.bind1(P.dynamic_update_slice_p, ct, e.zeros(ua), *idx) if _undef(x) else None
    ct_u = e.bind1(P.dynamic_slice_p, ct, *idx, slice_sizes=ua.shape) if _undef(update) else None
    return [ct_x, ct_u] + [None] * len(idx)


deflinear_transpose(P.dynamic_update_slice_p, _dynamic_update_slice_t)


def _select_n_t(e: Emitter, ct: Atom, which: Any, *cases: Any) -> Sequence[Cotangent]:
    check_linear_inputs("select_n", [which, *cases], range(1, len(cases) + 1))
    zeros = e.zeros(shaped(ct.aval))
    outs: list[Cotangent] = [None]
    for i, c in enumerate(cases):
        if _undef(c):
            picks = [zeros] * len(cases)
            picks[i] = ct
            outs.append(e.select_n(which, *picks))
        else:
            outs.append(None)
    return outs


deflinear_transpose(P.select_n_p, _select_n_t)


def _ranges_like(*xs: Sequence[int]) -> list[list[int]]:
    out, start = [], 0
    for x in xs:
        out.append(list(range(start, start + len(x))))
        start += len(x)
    return out


def _dot_t_lhs(e: Emitter, ct: Atom, x_aval: ShapedArray, y: Atom, dims: Any,
               precision: Any, preferred: Any, swap_ans: bool = False) -> Atom:
    (xc, yc), (xb, yb) = dims
    y_aval = shaped(y.aval)
    x_kept = [i for i in range(x_aval.ndim) if i not in xc and i not in xb]
    y_kept = [i for i in range(y_aval.ndim) if i not in yc and i not in yb]
    if swap_ans:
        ans_batch, ans_y, _ = _ranges_like(xb, y_kept, x_kept)
    else:
        ans_batch, _, ans_y = _ranges_like(xb, x_kept, y_kept)
    new_dims = ((tuple(ans_y), tuple(y_kept)), (tuple(ans_batch), tuple(yb)))
    xc_by_y = [xc[i] for i in np.argsort(yc)]
    out_axes = np.argsort(list(xb) + x_kept + xc_by_y)
    # ct and y may differ in dtype (a preferred_element_type, mixed operands): they are
    # contracted as they are, with the forward preferred type, as JAX does.
    sharding = None
    if EXPLICIT.seen:  # the result in x's sharding, laid out in dot_general's order
        x_sharding = target_sharding(x_aval, ct.aval, y.aval)
        if x_sharding is not None:
            spec = x_sharding.spec.padded(x_aval.ndim)
            order = [0] * x_aval.ndim
            for i, a in enumerate(out_axes):
                order[int(a)] = spec[i]
            sharding = NamedSharding(x_sharding.mesh, PartitionSpec(*order))
    out = e.dot_general(ct, y, new_dims, preferred, precision, sharding)
    return e.to_dtype(e.transpose(out, [int(a) for a in out_axes]), x_aval.dtype)


def _dot_general_t(e: Emitter, ct: Atom, x: Any, y: Any, *, dimension_numbers: Any,
                   precision: Any, preferred_element_type: Any,
                   out_sharding: None) -> Sequence[Cotangent]:
    if _undef(x) and _undef(y):
        check_linear_inputs("dot_general", [x, y], [0])
    (xc, yc), (xb, yb) = dimension_numbers
    if _undef(x):
        return [_dot_t_lhs(e, ct, shaped(x.aval), y, dimension_numbers, precision,
                           preferred_element_type), None]
    swapped = ((yc, xc), (yb, xb))
    return [None, _dot_t_lhs(e, ct, shaped(y.aval), x, swapped, precision,
                             preferred_element_type, swap_ans=True)]


deflinear_transpose(P.dot_general_p, _dot_general_t)


def _sort_t(e: Emitter, cts: Sequence[Atom | Zero], *ins: Any, dimension: int, is_stable: bool,
            num_keys: int) -> Sequence[Cotangent]:
    # Linear in the payloads (the keys fix a permutation ``perm``: out[i] = in[perm[i]]).
    # Sorting each cotangent by ``perm`` sends ct[i] back to position perm[i].
    check_linear_inputs("sort", ins, range(num_keys, len(ins)))
    keys = ins[:num_keys]
    shape = shaped(keys[0].aval).shape
    iota = e.bind1(P.iota_p, dtype=np.dtype(np.int32), shape=shape, dimension=dimension,
                   sharding=None)
    perm = e.bind(P.sort_p, *keys, iota, dimension=dimension, is_stable=is_stable,
                  num_keys=num_keys)[-1]
    live = [i for i in range(num_keys, len(ins)) if _undef(ins[i])]
    back = e.bind(P.sort_p, perm, *[e.instantiate(cts[i]) for i in live], dimension=dimension,
                  is_stable=True, num_keys=1)[1:]
    outs: list[Cotangent] = [None] * len(ins)
    for i, c in zip(live, back):
        outs[i] = c
    return outs


transpose_rules[P.sort_p] = _sort_t


def _jit_t(e: Emitter, cts: Sequence[Atom | Zero], *ins: Any, name: str, jaxpr: ClosedJaxpr,
           donated_invars: tuple[bool, ...], keep_unused: bool,
           inline: bool) -> Sequence[Cotangent]:
    linear = [_undef(x) for x in ins]
    nonlin = [x for x in ins if not _undef(x)]
    cts_in = [e.instantiate(c) for c in cts]
    t = transpose_jaxpr(jaxpr.jaxpr, linear)
    # The call keeps its name, as in JAX's printed jaxprs.
    outs = e.bind(P.jit_p, *nonlin, *cts_in, name=name, jaxpr=ClosedJaxpr(t),
                  donated_invars=(False,) * (len(nonlin) + len(cts_in)),
                  keep_unused=keep_unused, inline=inline)
    return merge_lists(linear, [None] * linear.count(False), outs)


transpose_rules[P.jit_p] = _jit_t

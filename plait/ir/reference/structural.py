"""Reference rules of reductions, data movement, contraction and sorting."""

from __future__ import annotations

from typing import Any

import numpy as np

from plait.ir import dtypes as dt
from plait.ir import primitives as P
from plait.ir.interpreter import impl_rules
from plait.ir.reference.elementwise import _def, max_, min_


def _reduce_sum(x: np.ndarray, *, axes: tuple[int, ...], **_: Any) -> np.ndarray:
    # XLA starts from +0.0, so a sum of -0.0s is +0.0; adding 0 gives the same.
    return np.asarray(np.sum(x, axis=axes, dtype=x.dtype) + np.zeros((), x.dtype))


def _scan(x: np.ndarray, axis: int, op: Any) -> np.ndarray:
    """The running ``op``-fold of ``x`` along ``axis``, left to right (slow: complex only)."""
    out = np.array(np.moveaxis(x, axis, 0))
    for i in range(1, out.shape[0]):
        out[i] = op(out[i - 1], out[i])
    return np.moveaxis(out, 0, axis)


def _signed_zeros(out: np.ndarray, x: np.ndarray, is_max: bool, any_: Any) -> np.ndarray:
    # XLA's max prefers +0.0 to -0.0 (min the reverse); NumPy keeps whichever zero it met.
    # ``any_`` reduces (or scans) a mask like the extremum itself was computed.
    preferred = any_((x == 0) & (np.signbit(x) != is_max))
    zeros = np.where(preferred, 0.0, -0.0) if is_max else np.where(preferred, -0.0, 0.0)
    return np.where(out == 0, zeros.astype(x.dtype), out)


def _extremum(is_max: bool) -> Any:
    def rule(x: np.ndarray, *, axes: tuple[int, ...]) -> np.ndarray:
        d = x.dtype
        kept = tuple(n for i, n in enumerate(x.shape) if i not in axes)
        if x.size == 0:  # the identity of the reduction
            return np.full(kept, dt.max_identity(d) if is_max else dt.min_identity(d), d)
        if dt.is_complex(d):  # a left fold of the lexicographic max/min
            flat = np.moveaxis(x, axes, tuple(range(len(kept), x.ndim))).reshape(kept + (-1,))
            return _scan(flat, flat.ndim - 1, max_ if is_max else min_)[..., -1]
        out: np.ndarray = np.max(x, axis=axes) if is_max else np.min(x, axis=axes)  # NaN wins
        if dt.is_float(d):
            out = _signed_zeros(out, x, is_max, lambda m: np.any(m, axis=axes))
        return out
    return rule


_def(P.reduce_sum_p, _reduce_sum)
_def(P.reduce_prod_p, lambda x, *, axes: np.prod(x, axis=axes, dtype=x.dtype))
_def(P.reduce_max_p, _extremum(True))
_def(P.reduce_min_p, _extremum(False))
_def(P.reduce_and_p, lambda x, *, axes: np.all(x, axis=tuple(axes)) if x.dtype == dt.bool_
     else np.bitwise_and.reduce(x, axis=tuple(axes)))
_def(P.reduce_or_p, lambda x, *, axes: np.any(x, axis=tuple(axes)) if x.dtype == dt.bool_
     else np.bitwise_or.reduce(x, axis=tuple(axes)))
_def(P.reduce_xor_p, lambda x, *, axes: np.logical_xor.reduce(x, axis=tuple(axes))
     if x.dtype == dt.bool_ else np.bitwise_xor.reduce(x, axis=tuple(axes)))


def _arg(fn: Any) -> Any:
    def rule(x: np.ndarray, *, axes: tuple[int, ...], index_dtype: Any) -> np.ndarray:
        axis, = axes
        # NaN wins, as in XLA's comparator: the first NaN's index is returned.
        if dt.is_inexact(x.dtype):
            nan = np.isnan(x)
            idx = fn(np.where(nan, 0, x), axis=axis)
            first_nan = np.argmax(nan, axis=axis)
            idx = np.where(np.any(nan, axis=axis), first_nan, idx)
        else:
            idx = fn(x, axis=axis)
        return np.asarray(idx).astype(index_dtype)
    return rule


_def(P.argmax_p, _arg(np.argmax))
_def(P.argmin_p, _arg(np.argmin))


def _cumulative(op: Any) -> Any:
    def rule(x: np.ndarray, *, axis: int, reverse: bool) -> np.ndarray:
        if reverse:
            x = np.flip(x, axis)
        out = op(x, axis)
        return np.flip(out, axis) if reverse else out
    return rule


# XLA's running sum starts from +0.0, so -0.0 never survives.
_def(P.cumsum_p, _cumulative(lambda x, a: np.add.accumulate(x, a, x.dtype) + np.zeros((), x.dtype)))
_def(P.cumprod_p, _cumulative(lambda x, a: np.multiply.accumulate(x, a, x.dtype)))


def _cum_extremum(is_max: bool) -> Any:
    def op(x: np.ndarray, axis: int) -> np.ndarray:
        if dt.is_complex(x.dtype):
            return _scan(x, axis, max_ if is_max else min_)
        out = (np.maximum if is_max else np.minimum).accumulate(x, axis)  # NaN propagates
        if dt.is_float(x.dtype):
            out = _signed_zeros(out, x, is_max, lambda m: np.logical_or.accumulate(m, axis))
        return out
    return op


_def(P.cummax_p, _cumulative(_cum_extremum(True)))
_def(P.cummin_p, _cumulative(_cum_extremum(False)))


def _broadcast_in_dim(x: np.ndarray, *, shape: tuple[int, ...],
                      broadcast_dimensions: tuple[int, ...], sharding: None) -> np.ndarray:
    expanded = [1] * len(shape)
    for i, d in enumerate(broadcast_dimensions):
        expanded[d] = x.shape[i]
    return np.broadcast_to(x.reshape(expanded), shape)


_def(P.broadcast_in_dim_p, _broadcast_in_dim)


def _reshape(x: np.ndarray, *, new_sizes: tuple[int, ...], dimensions: Any,
             sharding: None) -> np.ndarray:
    if dimensions is not None:
        x = np.transpose(x, dimensions)
    return x.reshape(new_sizes)


_def(P.reshape_p, _reshape)
_def(P.transpose_p, lambda x, *, permutation: np.transpose(x, permutation))
_def(P.squeeze_p, lambda x, *, dimensions: np.squeeze(x, tuple(dimensions)))
_def(P.concatenate_p, lambda *xs, dimension: np.concatenate(xs, axis=dimension))
_def(P.rev_p, lambda x, *, dimensions: np.flip(x, tuple(dimensions)) if dimensions else x)


def _pad(x: np.ndarray, value: np.ndarray, *, padding_config: Any) -> np.ndarray:
    out = x
    for axis, (lo, hi, interior) in enumerate(padding_config):
        n = out.shape[axis]
        if interior and n > 1:
            size = n + (n - 1) * interior
            shape = list(out.shape)
            shape[axis] = size
            spread = np.full(shape, value, dtype=x.dtype)
            idx = [slice(None)] * out.ndim
            idx[axis] = slice(None, None, interior + 1)
            spread[tuple(idx)] = out
            out = spread
        n = out.shape[axis]
        # Negative padding crops.
        start, stop = max(-lo, 0), n - max(-hi, 0)
        idx = [slice(None)] * out.ndim
        idx[axis] = slice(start, max(start, stop))
        out = out[tuple(idx)]
        widths = [(0, 0)] * out.ndim
        widths[axis] = (max(lo, 0), max(hi, 0))
        out = np.pad(out, widths, constant_values=value)
    return out


_def(P.pad_p, _pad)


def _slice(x: np.ndarray, *, start_indices: Any, limit_indices: Any, strides: Any) -> np.ndarray:
    st = strides or (1,) * x.ndim
    return x[tuple(slice(a, b, s) for a, b, s in zip(start_indices, limit_indices, st))]


_def(P.slice_p, _slice)


def _clamped_starts(shape: tuple[int, ...], sizes: tuple[int, ...], idx: Any) -> list[int]:
    # XLA clamps start indices so the slice stays in bounds.
    return [int(min(max(int(i), 0), d - s)) for i, d, s in zip(idx, shape, sizes)]


def _dynamic_slice(x: np.ndarray, *idx: np.ndarray, slice_sizes: tuple[int, ...]) -> np.ndarray:
    starts = _clamped_starts(x.shape, slice_sizes, idx)
    return x[tuple(slice(s, s + n) for s, n in zip(starts, slice_sizes))]


def _dynamic_update_slice(x: np.ndarray, update: np.ndarray, *idx: np.ndarray) -> np.ndarray:
    starts = _clamped_starts(x.shape, update.shape, idx)
    out = np.array(x)
    out[tuple(slice(s, s + n) for s, n in zip(starts, update.shape))] = update
    return out


_def(P.dynamic_slice_p, _dynamic_slice)
_def(P.dynamic_update_slice_p, _dynamic_update_slice)


def _iota(*, dtype: Any, shape: tuple[int, ...], dimension: int, sharding: None) -> np.ndarray:
    expanded = [1] * len(shape)
    expanded[dimension] = shape[dimension]
    return np.broadcast_to(np.arange(shape[dimension]).reshape(expanded), shape).astype(dtype)


_def(P.iota_p, _iota)


def _dim_as_value(*, dim: Any) -> np.ndarray:
    # A symbolic dimension's value is known only when a call fixes the shapes.
    if isinstance(dim, int):
        return np.asarray(dim, np.int32)
    raise NotImplementedError(f"the reference interpreter cannot evaluate the symbolic "
                              f"dimension {dim}: evaluate a jaxpr traced for concrete shapes")


_def(P.dim_as_value_p, _dim_as_value)
_def(P.empty_p, lambda *, dtype, shape, out_sharding: np.zeros(shape, dtype))


def _dot_general(lhs: np.ndarray, rhs: np.ndarray, *, dimension_numbers: Any, precision: None,
                 preferred_element_type: Any, out_sharding: None) -> np.ndarray:
    (lc, rc), (lb, rb) = dimension_numbers
    letters = iter("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
    lhs_s = [""] * lhs.ndim
    rhs_s = [""] * rhs.ndim
    for a, b in zip(lb, rb):
        lhs_s[a] = rhs_s[b] = next(letters)
    for a, b in zip(lc, rc):
        lhs_s[a] = rhs_s[b] = next(letters)
    for s in (lhs_s, rhs_s):
        for i, c in enumerate(s):
            if not c:
                s[i] = next(letters)
    batch = "".join(lhs_s[a] for a in lb)
    lfree = "".join(c for i, c in enumerate(lhs_s) if i not in lc and i not in lb)
    rfree = "".join(c for i, c in enumerate(rhs_s) if i not in rc and i not in rb)
    spec = f"{''.join(lhs_s)},{''.join(rhs_s)}->{batch}{lfree}{rfree}"
    out_dtype = P.dot_general_dtype(lhs.dtype, rhs.dtype, preferred_element_type)
    # Exact or wider accumulation, rounded once: within XLA's rounding of its own order.
    compute: type[np.generic] = np.float64
    if dt.is_integer(out_dtype) or dt.is_bool(out_dtype):
        compute = np.int64
    if dt.is_complex(out_dtype):
        compute = np.complex128
    return np.asarray(np.einsum(spec, lhs.astype(compute), rhs.astype(compute)).astype(out_dtype))


_def(P.dot_general_p, _dot_general)


def _sort(*xs: np.ndarray, dimension: int, is_stable: bool, num_keys: int) -> list[np.ndarray]:
    # XLA's order: -0.0 equals +0.0, NaNs of either sign last, complex by (real, imag).
    # lexsort is stable and puts NaNs last, but needs float64 for float16 and bfloat16.
    keys = []
    for k in xs[:num_keys]:
        k = np.moveaxis(k, dimension, -1)
        parts = [k.real, k.imag] if dt.is_complex(k.dtype) else [k]
        keys += [p.astype(np.float64) if dt.is_float(p.dtype) else p for p in parts]
    order = np.lexsort(keys[::-1], axis=-1)
    outs = []
    for x in xs:
        moved = np.moveaxis(x, dimension, -1)
        outs.append(np.moveaxis(np.take_along_axis(moved, order, axis=-1), -1, dimension))
    return outs


impl_rules[P.sort_p] = _sort


def _top_k(x: np.ndarray, *, k: int, axis: int) -> list[np.ndarray]:
    # Descending, NaNs first, ties (and -0.0 with +0.0) in index order: a stable sort of
    # the negated keys, NaNs given the smallest key.
    moved = np.moveaxis(x, axis, -1)
    key = moved.astype(np.float64) if dt.is_float(moved.dtype) else moved.astype(np.int64)
    if dt.is_bool(x.dtype):
        key = moved.astype(np.int64)
    neg = np.where(np.isnan(key), -np.inf, -key) if dt.is_float(moved.dtype) else -key
    nan_first = ~np.isnan(key) if dt.is_float(moved.dtype) else np.zeros(key.shape, bool)
    order = np.lexsort((neg, nan_first), axis=-1)[..., :k]
    values = np.take_along_axis(moved, order, axis=-1)
    return [np.moveaxis(values, -1, axis), np.moveaxis(order.astype(np.int32), -1, axis)]


impl_rules[P.top_k_p] = _top_k


def _approx_top_k(x: np.ndarray, *, k: int, reduction_dimension: int, is_max_k: bool,
                  **_: Any) -> list[np.ndarray]:
    # Exact on CPU: the largest as top_k gives them; the smallest ascending, NaNs last,
    # ties in index order.
    axis = reduction_dimension % x.ndim
    if is_max_k:
        return _top_k(x, k=k, axis=axis)
    moved = np.moveaxis(x, axis, -1)
    key = moved.astype(np.float64)
    order = np.lexsort((np.where(np.isnan(key), np.inf, key), np.isnan(key)), axis=-1)[..., :k]
    values = np.take_along_axis(moved, order, axis=-1)
    return [np.moveaxis(values, -1, axis), np.moveaxis(order.astype(np.int32), -1, axis)]


impl_rules[P.approx_top_k_p] = _approx_top_k

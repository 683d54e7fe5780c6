"""Reference rules of reductions, data movement, contraction and sorting."""

from __future__ import annotations

from typing import Any

import numpy as np

from plait.ir import dtypes as dt
from plait.ir import primitives as P
from plait.ir.interpreter import impl_rules
from plait.ir.reference.elementwise import _def


def _reduce(fn: Any) -> Any:
    return lambda x, *, axes, **_: fn(x, axis=tuple(axes))


_def(P.reduce_sum_p, _reduce(np.sum))
_def(P.reduce_prod_p, _reduce(np.prod))
_def(P.reduce_max_p, _reduce(np.max))
_def(P.reduce_min_p, _reduce(np.min))
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


def _cumulative(ufunc: Any) -> Any:
    def rule(x: np.ndarray, *, axis: int, reverse: bool) -> np.ndarray:
        if reverse:
            x = np.flip(x, axis)
        out = ufunc.accumulate(x, axis=axis, dtype=x.dtype)
        return np.flip(out, axis) if reverse else out
    return rule


_def(P.cumsum_p, _cumulative(np.add))
_def(P.cumprod_p, _cumulative(np.multiply))
_def(P.cummax_p, _cumulative(np.maximum))
_def(P.cummin_p, _cumulative(np.minimum))


def _broadcast_in_dim(x: np.ndarray, *, shape: tuple[int, ...],
                      broadcast_dimensions: tuple[int, ...], sharding: None) -> np.ndarray:
    expanded = [1] * len(shape)
    for i, d in enumerate(broadcast_dimensions):
        expanded[d] = x.shape[i]
    return np.broadcast_to(x.reshape(expanded), shape)


_def(P.broadcast_in_dim_p, _broadcast_in_dim)


def _reshape(x: np.ndarray, *, new_sizes: tuple[int, ...], dimensions: Any, sharding: None) -> np.ndarray:
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
    out_dtype = preferred_element_type or lhs.dtype
    compute = np.float64 if dt.is_float(out_dtype) and out_dtype.itemsize <= 8 else None
    if dt.is_integer(out_dtype) or dt.is_bool(out_dtype):
        compute = np.int64
    if dt.is_complex(out_dtype):
        compute = np.complex128
    return np.einsum(spec, lhs.astype(compute), rhs.astype(compute)).astype(out_dtype)


_def(P.dot_general_p, _dot_general)


def _sort(*xs: np.ndarray, dimension: int, is_stable: bool, num_keys: int) -> list[np.ndarray]:
    keys = [np.moveaxis(k, dimension, -1) for k in xs[:num_keys]]
    # NumPy's lexsort is stable and puts NaNs last, as XLA's total order does.
    order = np.lexsort(list(reversed(keys)), axis=-1)
    outs = []
    for x in xs:
        moved = np.moveaxis(x, dimension, -1)
        outs.append(np.moveaxis(np.take_along_axis(moved, order, axis=-1), -1, dimension))
    return outs


impl_rules[P.sort_p] = _sort  # type: ignore[assignment]

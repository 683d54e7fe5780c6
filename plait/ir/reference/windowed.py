"""Reference rules of the windowed reductions: the operand is dilated and padded
with the reduction's initial value, viewed as ``(*windows, *window)``, and each
window is folded in row-major order, the order XLA's CPU backend uses (which
decides the winner among ties for ``select_and_*``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from plait.ir import dtypes as dt
from plait.ir import primitives as P
from plait.ir.interpreter import eval_jaxpr, impl_rules
from plait.ir.primitives.windowed import window_output_shape
from plait.ir.reference.elementwise import _def
from plait.ir.reference.structural import _extremum, _reduce_sum

Pairs = tuple[tuple[int, int], ...]


def _identity(dtype: np.dtype[Any], is_max: bool) -> Any:
    return dt.max_identity(dtype) if is_max else dt.min_identity(dtype)


def _windows(x: np.ndarray, init: Any, window_dimensions: tuple[int, ...],
             window_strides: tuple[int, ...], padding: Pairs,
             base_dilation: tuple[int, ...] | None = None,
             window_dilation: tuple[int, ...] | None = None) -> np.ndarray:
    """``x`` dilated and padded with ``init``, as an array ``(*windows, *window)``."""
    rank = x.ndim
    base = base_dilation or (1,) * rank
    wdil = window_dilation or (1,) * rank
    init = np.asarray(init, x.dtype)
    for ax, d in enumerate(base):
        if d > 1 and x.shape[ax]:
            shape = list(x.shape)
            shape[ax] = (shape[ax] - 1) * d + 1
            holes = np.full(shape, init, x.dtype)
            holes[(slice(None),) * ax + (slice(None, None, d),)] = x
            x = holes
    widths = [(max(lo, 0), max(hi, 0)) for lo, hi in padding]
    x = np.pad(x, widths, constant_values=init)
    x = x[tuple(slice(max(-lo, 0), x.shape[i] - max(-hi, 0))
                for i, (lo, hi) in enumerate(padding))]
    out_shape = window_output_shape(x.shape, window_dimensions, window_strides,
                                      ((0, 0),) * rank, None, wdil)
    if 0 in out_shape:
        return np.zeros(out_shape + tuple(window_dimensions), x.dtype)
    spans = [(w - 1) * d + 1 for w, d in zip(window_dimensions, wdil)]
    view = np.lib.stride_tricks.sliding_window_view(x, spans)
    index = tuple(slice(None, None, s) for s in window_strides) + tuple(
        slice(None, None, d) for d in wdil)
    return np.ascontiguousarray(view[index])


def _monoid(reduce: Any, init: Any) -> Any:
    def rule(x: np.ndarray, **params: Any) -> np.ndarray:
        v = _windows(x, init(x.dtype), **params)
        return np.asarray(reduce(v, axes=tuple(range(x.ndim, v.ndim))))
    return rule


_def(P.reduce_window_sum_p, _monoid(_reduce_sum, lambda d: 0))
_def(P.reduce_window_max_p, _monoid(_extremum(True), lambda d: _identity(d, True)))
_def(P.reduce_window_min_p, _monoid(_extremum(False), lambda d: _identity(d, False)))


def _flat_windows(x: np.ndarray, init: Any, **params: Any) -> np.ndarray:
    v = _windows(x, init, **params)
    return v.reshape(v.shape[:x.ndim] + (-1,))


def _reduce_window(*args: np.ndarray, jaxpr: Any, consts: tuple[()],
                   **params: Any) -> tuple[np.ndarray, ...]:
    # The computation is applied to whole arrays of windows at once (its equations
    # are elementwise on scalars, and the reference rules broadcast).
    n = len(args) // 2
    views = [_flat_windows(x, init, **params) for x, init in zip(args[:n], args[n:])]
    accs = [np.broadcast_to(init, v.shape[:-1]).astype(v.dtype) for init, v in
            zip(args[n:], views)]
    with np.errstate(all="ignore"):
        for k in range(views[0].shape[-1]):
            outs = eval_jaxpr(jaxpr, [], *accs, *[v[..., k] for v in views])
            accs = [np.asarray(o, v.dtype).reshape(v.shape[:-1]) for o, v in zip(outs, views)]
    return tuple(accs)


impl_rules[P.reduce_window_p] = _reduce_window


def _prefers(select_prim: Any) -> Any:
    return np.greater_equal if select_prim is P.ge_p else np.less_equal


def _select_and_gather_add(t: np.ndarray, x: np.ndarray, *, select_prim: Any,
                           **params: Any) -> np.ndarray:
    # A fold of (operand, tangent) pairs from (identity, 0), keeping the accumulator
    # while ``select_prim(acc, element)`` holds, as JAX's variadic reduce_window does.
    xs = _flat_windows(x, _identity(x.dtype, select_prim is P.ge_p), **params)
    ts = _flat_windows(t, 0, **params)
    keep_x = np.full(xs.shape[:-1], _identity(x.dtype, select_prim is P.ge_p), x.dtype)
    keep_t = np.zeros(ts.shape[:-1], t.dtype)
    prefers = _prefers(select_prim)
    for k in range(xs.shape[-1]):
        keep = prefers(keep_x, xs[..., k])
        keep_x = np.where(keep, keep_x, xs[..., k])
        keep_t = np.where(keep, keep_t, ts[..., k])
    return keep_t


_def(P.select_and_gather_add_p, _select_and_gather_add)


def _select_and_scatter_add(source: np.ndarray, x: np.ndarray, *, select_prim: Any,
                            window_dimensions: tuple[int, ...],
                            window_strides: tuple[int, ...], padding: Pairs) -> np.ndarray:
    # As JAX lowers it: pad the operand with the identity, select in each window the
    # first element that ``select_prim`` prefers to all later ones, add the source
    # there, and crop the padding off.
    rank = x.ndim
    ident = _identity(x.dtype, select_prim is P.ge_p)
    xs = _flat_windows(x, ident, window_dimensions=window_dimensions,
                       window_strides=window_strides, padding=padding)
    chosen = np.zeros(xs.shape[:-1], np.int64)
    best = xs[..., 0] if xs.shape[-1] else np.zeros(xs.shape[:-1], x.dtype)
    prefers = _prefers(select_prim)
    for k in range(1, xs.shape[-1]):
        keep = prefers(best, xs[..., k])
        best = np.where(keep, best, xs[..., k])
        chosen = np.where(keep, chosen, k)
    lows = [lo for lo, _ in padding]
    padded = [n + lo + hi for n, (lo, hi) in zip(x.shape, padding)]
    out = np.zeros(padded, source.dtype)
    if source.size:
        offsets = np.unravel_index(chosen, window_dimensions)
        grid: tuple[np.ndarray, ...] = tuple(np.indices(source.shape, sparse=True))
        coords = tuple(g * s + o for g, s, o in zip(grid, window_strides, offsets))
        np.add.at(out, coords, source)
    crop = tuple(slice(lo, lo + n) for lo, n in zip(lows, x.shape))
    return out[crop] if rank else out


_def(P.select_and_scatter_add_p, _select_and_scatter_add)


def _logaddexp_complex(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    # XLA's max of complex numbers is lexicographic; the phase is wrapped into [-pi, pi).
    amax = np.where((a.real > b.real) | ((a.real == b.real) & (a.imag >= b.imag)), a, b)
    with np.errstate(invalid="ignore", over="ignore"):
        out = amax + np.log1p(np.exp(a + b - 2 * amax))
    phase = np.mod(out.imag + np.pi, 2 * np.pi) - np.pi
    return np.asarray(out.real + 1j * phase)


def _cumlogsumexp(x: np.ndarray, *, axis: int, reverse: bool) -> np.ndarray:
    wide = x.astype(np.complex128 if x.dtype.kind == "c" else np.float64)
    if reverse:
        wide = np.flip(wide, axis)
    if x.dtype.kind != "c":
        out = np.logaddexp.accumulate(wide, axis) if x.size else wide
    else:
        out = np.moveaxis(wide, axis, 0).copy()
        total = np.full(out.shape[1:], -np.inf, out.dtype)  # (XLA's initial value)
        for i in range(out.shape[0]):
            out[i] = total = _logaddexp_complex(total, out[i])
        out = np.moveaxis(out, 0, axis)
    return (np.flip(out, axis) if reverse else out).astype(x.dtype)


_def(P.cumlogsumexp_p, _cumlogsumexp)


def _reduce(*args: np.ndarray, jaxpr: Any, dimensions: tuple[int, ...]) -> tuple[np.ndarray, ...]:
    # ``reduce`` with a computation: a left fold over the reduced elements in row-major
    # order, vectorized over the kept positions like reduce_window's.
    n = len(args) // 2
    kept = [d for d in range(args[0].ndim) if d not in dimensions]
    size = int(np.prod([args[0].shape[d] for d in dimensions]))
    flat = [np.transpose(x, kept + list(dimensions)).reshape(
        tuple(x.shape[d] for d in kept) + (size,)) for x in args[:n]]
    accs = [np.broadcast_to(init, v.shape[:-1]).astype(v.dtype) for init, v in
            zip(args[n:], flat)]
    with np.errstate(all="ignore"):
        for k in range(flat[0].shape[-1]):
            outs = eval_jaxpr(jaxpr.jaxpr, [], *accs, *[v[..., k] for v in flat])
            accs = [np.asarray(o, v.dtype).reshape(v.shape[:-1]) for o, v in zip(outs, flat)]
    return tuple(accs)


impl_rules[P.reduce_p] = _reduce

"""``pad``: NumPy's padding modes from ``lax.pad``, slices, flips and concatenations."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from plait.frontend import lax
from plait.frontend.core.array_base import Array
from plait.frontend.numpy._core import as_array, check_arraylike
from plait.frontend.numpy.creation import asarray, linspace, zeros_like
from plait.frontend.numpy.manipulation import broadcast_to, flip, repeat, squeeze
from plait.frontend.numpy.quantiles import median as _median
from plait.frontend.numpy.reductions import max as _amax
from plait.frontend.numpy.reductions import mean as _mean
from plait.frontend.numpy.reductions import min as _amin
from plait.frontend.numpy.ufuncs import multiply, round, subtract
from plait.ir import dtypes as dt

__all__ = ["pad"]

_ALLOWED_KWARGS: dict[str, list[str]] = {
    "empty": [], "edge": [], "wrap": [], "constant": ["constant_values"],
    "linear_ramp": ["end_values"], "maximum": ["stat_length"], "mean": ["stat_length"],
    "median": ["stat_length"], "minimum": ["stat_length"], "reflect": ["reflect_type"],
    "symmetric": ["reflect_type"],
}

Pairs = tuple[tuple[Any, Any], ...]


def pad(array: Any, pad_width: Any, mode: str | Callable[..., Any] = "constant",
        **kwargs: Any) -> Array:
    """``array`` padded by ``pad_width`` (``((before, after), ...)`` per axis, or one
    pair or number for all axes) in one of NumPy's modes: ``constant`` (keyword
    ``constant_values``), ``edge``, ``wrap``, ``reflect``/``symmetric`` (keyword
    ``reflect_type``), ``linear_ramp`` (``end_values``), ``maximum``/``minimum``/``mean``
    (``stat_length``) and ``empty`` (zeros).

    Raises:
      NotImplementedError: a callable mode, or an unknown mode.
      ValueError: negative widths, keywords the mode does not take, or padding an
        empty axis in a mode that copies its elements.
      TypeError: non-integer widths.
    """
    check_arraylike("pad", array)
    arr = as_array(array)
    nd = arr.ndim
    widths = _broadcast_to_pairs(pad_width, nd, "pad_width")
    if widths and not all(_is_int(v) for pair in widths for v in pair):
        raise TypeError("`pad_width` must be of integral type.")
    if callable(mode):
        raise NotImplementedError("pad: a callable mode is not supported")
    if mode not in _ALLOWED_KWARGS:
        raise NotImplementedError(f"Unimplemented padding mode '{mode}' for np.pad.")
    unsupported = set(kwargs) - set(_ALLOWED_KWARGS[mode])
    if unsupported:
        raise ValueError(f"unsupported keyword arguments for mode '{mode}': {unsupported}")
    if nd == 0:
        return arr
    w = tuple((int(lo), int(hi)) for lo, hi in widths)
    if any(v < 0 for pair in w for v in pair):
        raise ValueError("index can't contain negative values")
    if mode == "constant":
        return _pad_constant(arr, w, kwargs.get("constant_values", 0))
    if mode == "wrap":
        return _pad_wrap(arr, w)
    if mode in ("symmetric", "reflect"):
        reflect_type = kwargs.get("reflect_type", "even")
        if reflect_type not in ("even", "odd"):
            raise ValueError(f"pad: reflect_type must be 'even' or 'odd', but got "
                             f"{reflect_type!r}")
        return _pad_symmetric_or_reflect(arr, w, mode, reflect_type)
    if mode == "edge":
        return _pad_edge(arr, w)
    if mode == "linear_ramp":
        ends = _broadcast_to_pairs(kwargs.get("end_values", 0), nd, "end_values")
        return _pad_linear_ramp(arr, w, ends)
    if mode in ("maximum", "minimum", "mean", "median"):
        stat_length = kwargs.get("stat_length")
        lengths = None if stat_length is None else _broadcast_to_pairs(stat_length, nd,
                                                                       "stat_length")
        stats: dict[str, Callable[..., Array]] = {"maximum": _amax, "minimum": _amin,
                                                  "mean": _mean, "median": _median}
        stat = stats[mode]
        return _pad_stats(arr, w, lengths, stat)
    return _pad_empty(arr, w)


def _is_int(v: Any) -> bool:
    return isinstance(v, int | np.integer) and not isinstance(v, bool | np.bool_)


def _broadcast_to_pairs(values: Any, nd: int, name: str) -> Pairs:
    """``values`` as one ``(before, after)`` pair per axis."""
    try:
        v = np.asarray(values)
    except ValueError as e:
        raise TypeError(f"`{name}` entries must be the same shape: {values}") from e
    if v.dtype == object:
        raise TypeError(f"`{name}` entries must be the same shape: {values}")
    if v.shape == (nd, 2):
        return tuple((row[0].item(), row[1].item()) for row in v)
    if v.shape == (1, 2):
        return ((v[0, 0].item(), v[0, 1].item()),) * nd
    if v.shape == (2,):
        return ((v[0].item(), v[1].item()),) * nd
    if v.shape in ((1,), ()):
        s = v.reshape(()).item()
        return ((s, s),) * nd
    raise ValueError(f"pad: {name} with nd={nd} has unsupported shape {v.shape}. Valid shapes "
                     f"are ({nd}, 2), (1, 2), (2,), (1,), or ().")


def _pad_constant(arr: Array, widths: Pairs, constant_values: Any) -> Array:
    values = lax.convert_element_type(asarray(constant_values), arr.dtype, arr.weak_type)
    nd = arr.ndim
    if values.ndim == 0:
        return lax.pad(arr, values, [(lo, hi, 0) for lo, hi in widths])
    if values.ndim == 1:
        if values.shape[-1] == 1:
            return lax.pad(arr, squeeze(values), [(lo, hi, 0) for lo, hi in widths])
        if values.shape[-1] != 2:
            raise ValueError(f"pad: constant_values has unsupported shape {values.shape}. If "
                             "the shape is 1D or 2D, the last dimension must be of size 1 or 2.")
    values = broadcast_to(values, (nd, 2))
    for i, (lo, hi) in enumerate(widths):
        for side, width in ((0, lo), (1, hi)):
            if width:
                config = [(0, 0, 0)] * nd
                config[i] = (width, 0, 0) if side == 0 else (0, width, 0)
                arr = lax.pad(arr, values[i, side], config)
    return arr


def _check_no_padding(pair: tuple[int, int], mode: str) -> None:
    if pair[0] > 0 or pair[1] > 0:
        raise ValueError(f"Cannot apply '{mode}' padding to empty axis")


def _pad_wrap(arr: Array, widths: Pairs) -> Array:
    for i, (lo, hi) in enumerate(widths):
        size = arr.shape[i]
        if size == 0:
            _check_no_padding((lo, hi), "wrap")
            continue
        left_repeats, left_rest = divmod(lo, size)
        right_repeats, right_rest = divmod(hi, size)
        parts = []
        if left_rest:
            parts.append(lax.slice_in_dim(arr, size - left_rest, size, axis=i))
        parts += [arr] * (left_repeats + right_repeats + 1)
        if right_rest:
            parts.append(lax.slice_in_dim(arr, 0, right_rest, axis=i))
        arr = lax.concatenate(parts, i) if len(parts) > 1 else arr
    return arr


def _edge(arr: Array, axis: int, before: bool) -> Array:
    n = arr.shape[axis]
    return lax.slice_in_dim(arr, 0, 1, axis=axis) if before else \
        lax.slice_in_dim(arr, n - 1, n, axis=axis)


def _pad_symmetric_or_reflect(arr: Array, widths: Pairs, mode: str,
                              reflect_type: str) -> Array:
    for i, (lo, hi) in enumerate(widths):
        size = arr.shape[i]
        if size == 0:
            _check_no_padding((lo, hi), mode)
            continue
        offset = 1 if (mode == "reflect" and size > 1) else 0
        for before, padding in ((True, lo), (False, hi)):
            edge = _edge(arr, i, before)
            while padding > 0:
                cur = min(padding, size - offset)
                padding -= cur
                n = arr.shape[i]
                if before:
                    start, stop = offset, offset + cur
                else:
                    stop = n if (mode == "symmetric" or size == 1) else n - 1
                    start = stop - cur
                x = flip(lax.slice_in_dim(arr, start, stop, axis=i), i)
                if reflect_type == "odd":
                    x = subtract(multiply(2, edge), x)
                    if size > 1:
                        edge = _edge(x, i, before)
                arr = lax.concatenate([x, arr] if before else [arr, x], i)
    return arr


def _pad_edge(arr: Array, widths: Pairs) -> Array:
    for i, (lo, hi) in enumerate(widths):
        if arr.shape[i] == 0:
            _check_no_padding((lo, hi), "edge")
            continue
        before = repeat(_edge(arr, i, True), lo, axis=i)
        after = repeat(_edge(arr, i, False), hi, axis=i)
        arr = lax.concatenate([before, arr, after], i)
    return arr


def _pad_linear_ramp(arr: Array, widths: Pairs, ends: Pairs) -> Array:
    for i, (lo, hi) in enumerate(widths):
        ramps = []
        for before, num, end in ((True, lo, ends[i][0]), (False, hi, ends[i][1])):
            ramp = linspace(end, squeeze(_edge(arr, i, before), i), num=num, endpoint=False,
                            dtype=arr.dtype, axis=i)
            ramps.append(lax.convert_element_type(ramp, arr.dtype, arr.weak_type))
        arr = lax.concatenate([ramps[0], arr, flip(ramps[1], i)], i)
    return arr


def _pad_stats(arr: Array, widths: Pairs, lengths: Pairs | None,
               stat: Callable[..., Array]) -> Array:
    for i, (lo, hi) in enumerate(widths):
        if lengths is None:
            stat_before = stat_after = stat(arr, axis=i, keepdims=True)
        else:
            length_before, length_after = (int(v) for v in lengths[i])
            if length_before == 0 or length_after == 0:
                raise ValueError("stat_length of 0 yields no value for padding")
            n = arr.shape[i]
            length_before, length_after = min(length_before, n), min(length_after, n)
            stat_before = stat(lax.slice_in_dim(arr, 0, length_before, axis=i), axis=i,
                               keepdims=True)
            stat_after = stat(lax.slice_in_dim(arr, n - length_after, n, axis=i), axis=i,
                              keepdims=True)
        if dt.is_integer(arr.dtype):
            stat_before, stat_after = round(stat_before), round(stat_after)
        stat_before = lax.convert_element_type(stat_before, arr.dtype, arr.weak_type)
        stat_after = lax.convert_element_type(stat_after, arr.dtype, arr.weak_type)
        arr = lax.concatenate([repeat(stat_before, lo, axis=i), arr,
                               repeat(stat_after, hi, axis=i)], i)
    return arr


def _pad_empty(arr: Array, widths: Pairs) -> Array:
    # (As in JAX, whose ``empty`` gives zeros.)
    for i, (lo, hi) in enumerate(widths):
        before = zeros_like(arr, shape=arr.shape[:i] + (lo,) + arr.shape[i + 1:])
        after = zeros_like(arr, shape=arr.shape[:i] + (hi,) + arr.shape[i + 1:])
        arr = lax.concatenate([before, arr, after], i)
    return arr

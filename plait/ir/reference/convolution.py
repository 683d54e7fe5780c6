"""Reference rule of ``conv_general_dilated``: dilate and pad the input, take every
(strided) window of the dilated kernel's size, and contract with ``einsum`` in
float64 (complex128), group by group."""

from __future__ import annotations

from typing import Any

import numpy as np

from plait.ir import primitives as P
from plait.ir.primitives.convolution import ConvDimensionNumbers
from plait.ir.reference.elementwise import _def


def _dilate(x: np.ndarray, axes: range, factors: tuple[int, ...]) -> np.ndarray:
    for ax, d in zip(axes, factors):
        if d > 1 and x.shape[ax]:
            shape = list(x.shape)
            shape[ax] = (x.shape[ax] - 1) * d + 1
            out = np.zeros(shape, x.dtype)
            index = [slice(None)] * x.ndim
            index[ax] = slice(None, None, d)
            out[tuple(index)] = x
            x = out
    return x


def _pad(x: np.ndarray, padding: tuple[tuple[int, int], ...]) -> np.ndarray:
    # Negative padding crops.
    for i, (lo, hi) in enumerate(padding):
        ax = 2 + i
        widths = [(0, 0)] * x.ndim
        widths[ax] = (max(lo, 0), max(hi, 0))
        x = np.pad(x, widths)
        index = [slice(None)] * x.ndim
        index[ax] = slice(max(-lo, 0), x.shape[ax] - max(-hi, 0))
        x = x[tuple(index)]
    return x


def _conv(lhs: np.ndarray, rhs: np.ndarray, *, window_strides: tuple[int, ...],
          padding: tuple[tuple[int, int], ...], lhs_dilation: tuple[int, ...],
          rhs_dilation: tuple[int, ...], dimension_numbers: ConvDimensionNumbers,
          feature_group_count: int, batch_group_count: int, precision: None,
          preferred_element_type: Any, out_sharding: None) -> np.ndarray:
    dn = dimension_numbers
    wide = np.complex128 if np.iscomplexobj(lhs) else np.float64
    x = np.transpose(lhs, dn.lhs_spec).astype(wide)  # (N, C, spatial...)
    k = np.transpose(rhs, dn.rhs_spec).astype(wide)  # (O, I, window...)
    nsp = x.ndim - 2
    space = range(2, 2 + nsp)
    x = _pad(_dilate(x, space, lhs_dilation), padding)
    k = _dilate(k, space, rhs_dilation)
    n, c = x.shape[:2]
    o, i = k.shape[:2]
    window = k.shape[2:]
    out_space = tuple(max(0, (x.shape[2 + d] - window[d]) // window_strides[d] + 1)
                      if x.shape[2 + d] >= window[d] else 0 for d in range(nsp))
    g, b = feature_group_count, batch_group_count
    result = np.zeros((n // b, o, *out_space), wide)
    if all(out_space) and n and o and all(window):
        views = np.lib.stride_tricks.sliding_window_view(x, window, axis=tuple(space))
        views = views[(slice(None), slice(None)) + tuple(
            slice(None, s * window_strides[d], window_strides[d])
            for d, s in enumerate(out_space))]
        letters = "abcdefgh"[:nsp]
        wletters = "stuvwxyz"[:nsp]
        spec = f"nc{letters}{wletters},oc{wletters}->no{letters}"
        og = o // (g * b)
        for grp in range(g * b):
            # Feature groups split the input features; batch groups split the batch.
            if g > 1:
                xs, rows = views[:, grp * i:(grp + 1) * i], slice(None)
            else:
                xs, rows = views[grp * (n // b):(grp + 1) * (n // b)], slice(None)
            ks = k[grp * og:(grp + 1) * og]
            result[rows, grp * og:(grp + 1) * og] = np.einsum(spec, xs, ks)
    dtype = preferred_element_type if preferred_element_type is not None else lhs.dtype
    out = result if np.iscomplexobj(np.zeros((), dtype)) else result.real
    return np.transpose(out.astype(dtype), np.argsort(dn.out_spec))


_def(P.conv_general_dilated_p, _conv)

"""Convolutions with ``jax.lax``'s signatures: ``conv_general_dilated`` and the
functions over it (``conv``, ``conv_with_general_padding``, ``conv_transpose``,
``conv_general_dilated_patches``), with ``conv_dimension_numbers`` and
``padtype_to_pads``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from plait.frontend.core.array_base import Array
from plait.frontend.core.tracing import bind1
from plait.frontend.lax.ops import (
    _operands,
    _shape_of,
    add,
    broadcast_in_dim,
    broadcasted_iota,
    canonicalize_precision,
    convert_element_type,
    dot_general,
    eq,
    reshape,
    rev,
    transpose,
)
from plait.ir import dtypes as dt
from plait.ir import primitives as P
from plait.ir.primitives.convolution import ConvDimensionNumbers, conv_output_shape

__all__ = ["ConvDimensionNumbers", "conv_general_dilated", "conv", "conv_with_general_padding",
           "conv_dimension_numbers", "padtype_to_pads", "conv_transpose",
           "conv_general_dilated_patches", "conv_general_dilated_local",
           "conv_general_permutations", "conv_shape_tuple",
           "conv_general_shape_tuple", "conv_transpose_shape_tuple"]

Padding = str | Sequence[tuple[int, int]]


def padtype_to_pads(in_shape: Sequence[int], window_shape: Sequence[int],
                    window_strides: Sequence[int], padding: str) -> list[tuple[int, int]]:
    """``(low, high)`` pads for ``'VALID'``, ``'SAME'`` (odd extra at the end) or
    ``'SAME_LOWER'`` (odd extra at the start)."""
    kind = padding.upper() if isinstance(padding, str) else padding
    if kind == "VALID":
        return [(0, 0)] * len(in_shape)
    if kind not in ("SAME", "SAME_LOWER"):
        raise RuntimeError(f"Unrecognized padding type: expected 'VALID', 'SAME', or "
                           f"'SAME_LOWER', got {padding}.")
    pads = []
    for n, k, s in zip(in_shape, window_shape, window_strides):
        out = -(-int(n) // int(s))
        total = max((out - 1) * int(s) + int(k) - int(n), 0)
        small, big = total // 2, total - total // 2
        pads.append((small, big) if kind == "SAME" else (big, small))
    return pads


def conv_general_permutations(specs: Sequence[str]) -> tuple[tuple[int, ...], ...]:
    """The permutations of string dimension numbers such as ``('NHWC', 'HWIO', 'NHWC')``."""
    pairs = (("N", "C"), ("O", "I"), ("N", "C"))
    for i, (a, b) in enumerate(pairs):
        if not specs[i].count(a) == specs[i].count(b) == 1:
            raise TypeError(f"convolution dimension_numbers[{i}] must contain the characters "
                            f"'{a}' and '{b}' exactly once, got {specs[i]}.")
        if len(specs[i]) != len(set(specs[i])):
            raise TypeError(f"convolution dimension_numbers[{i}] cannot have duplicate "
                            f"characters, got {specs[i]}.")
    rhs_spec = specs[1]
    if not (set(specs[0]) - set("NC") == set(rhs_spec) - set("OI") == set(specs[2]) - set("NC")):
        raise TypeError(f"convolution dimension_numbers elements must each have the same set "
                        f"of spatial characters, got {tuple(specs)}.")

    def perm(spec: str, pair: tuple[str, str]) -> tuple[int, ...]:
        spatial = [i for i, ch in enumerate(spec) if ch not in pair]
        if spec is not rhs_spec:  # spatial dimensions in the kernel's order
            spatial.sort(key=lambda i: rhs_spec.index(spec[i]))
        return (spec.index(pair[0]), spec.index(pair[1]), *spatial)
    return tuple(perm(s, p) for s, p in zip(specs, pairs))


def conv_dimension_numbers(lhs_shape: Sequence[int], rhs_shape: Sequence[int],
                           dimension_numbers: Any) -> ConvDimensionNumbers:
    """``dimension_numbers`` (None, three strings, or ConvDimensionNumbers) as
    ConvDimensionNumbers."""
    if isinstance(dimension_numbers, ConvDimensionNumbers):
        return dimension_numbers
    if len(lhs_shape) != len(rhs_shape):
        raise TypeError(f"convolution requires lhs and rhs ndim to be equal, got "
                        f"{len(lhs_shape)} and {len(rhs_shape)}.")
    if dimension_numbers is None:
        iota = tuple(range(len(lhs_shape)))
        return ConvDimensionNumbers(iota, iota, iota)
    if not isinstance(dimension_numbers, list | tuple) or len(dimension_numbers) != 3:
        raise TypeError(f"convolution dimension_numbers must be a tuple/list of length 3 or "
                        f"None, got {dimension_numbers!r}.")
    if not all(isinstance(e, str) for e in dimension_numbers):
        raise TypeError(f"convolution dimension_numbers elements must be strings, got "
                        f"{tuple(map(type, dimension_numbers))}.")
    for i, e in enumerate(dimension_numbers):
        if len(e) != len(lhs_shape):
            raise TypeError(f"convolution dimension_numbers[{i}] must have len equal to the "
                            f"ndim of lhs and rhs, got {len(e)} for lhs and rhs shapes "
                            f"{tuple(lhs_shape)} and {tuple(rhs_shape)}.")
    return ConvDimensionNumbers(*conv_general_permutations(dimension_numbers))


def conv_general_dilated(lhs: Any, rhs: Any, window_strides: Sequence[int], padding: Padding,
                         lhs_dilation: Sequence[int] | None = None,
                         rhs_dilation: Sequence[int] | None = None,
                         dimension_numbers: Any = None, feature_group_count: int = 1,
                         batch_group_count: int = 1, precision: Any = None,
                         preferred_element_type: Any = None,
                         out_sharding: None = None) -> Array:
    """A general n-d convolution (XLA's): strides, padding (pairs or ``'SAME'``,
    ``'SAME_LOWER'``, ``'VALID'``), input and kernel dilation, layouts as strings
    like ``('NHWC', 'HWIO', 'NHWC')``, and feature or batch groups."""
    lhs, rhs = _operands("conv_general_dilated", lhs, rhs)
    lshape, rshape = _shape_of(lhs), _shape_of(rhs)
    dn = conv_dimension_numbers(lshape, rshape, dimension_numbers)
    nsp = len(lshape) - 2
    lhs_dilation = tuple(lhs_dilation) if lhs_dilation is not None else (1,) * nsp
    rhs_dilation = tuple(rhs_dilation) if rhs_dilation is not None else (1,) * nsp
    if isinstance(padding, str):
        if any(d != 1 for d in lhs_dilation):
            raise ValueError("String padding is not implemented for transposed convolution "
                             "using this op. Please either exactly specify the required "
                             "padding or use conv_transpose.")
        window = [(rshape[d] - 1) * r + 1 for d, r in zip(dn.rhs_spec[2:], rhs_dilation)]
        pads = padtype_to_pads([lshape[d] for d in dn.lhs_spec[2:]], window, window_strides,
                               padding)
    else:
        try:
            pads = [(int(lo), int(hi)) for lo, hi in padding]
        except (TypeError, ValueError) as e:
            raise ValueError("padding argument to conv_general_dilated should be a string or "
                             f"a sequence of (low, high) pairs, got {padding}") from e
    if out_sharding is not None:
        raise NotImplementedError("conv_general_dilated: out_sharding= is not supported yet; "
                                  "leave it None")
    pet = None if preferred_element_type is None else dt.canonicalize(
        np.dtype(preferred_element_type))
    return bind1(P.conv_general_dilated_p, lhs, rhs,
                 window_strides=tuple(int(s) for s in window_strides), padding=tuple(pads),
                 lhs_dilation=tuple(int(d) for d in lhs_dilation),
                 rhs_dilation=tuple(int(d) for d in rhs_dilation), dimension_numbers=dn,
                 feature_group_count=int(feature_group_count),
                 batch_group_count=int(batch_group_count),
                 precision=canonicalize_precision(precision),
                 preferred_element_type=pet, out_sharding=None)


def conv(lhs: Any, rhs: Any, window_strides: Sequence[int], padding: str,
         precision: Any = None, preferred_element_type: Any = None) -> Array:
    """An NCHW / OIHW convolution with string padding."""
    return conv_general_dilated(lhs, rhs, window_strides, padding, precision=precision,
                                preferred_element_type=preferred_element_type)


def conv_with_general_padding(lhs: Any, rhs: Any, window_strides: Sequence[int],
                              padding: Padding, lhs_dilation: Sequence[int] | None,
                              rhs_dilation: Sequence[int] | None, precision: Any = None,
                              preferred_element_type: Any = None) -> Array:
    """An NCHW / OIHW convolution with explicit padding and dilations."""
    return conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation=lhs_dilation,
                                rhs_dilation=rhs_dilation, precision=precision,
                                preferred_element_type=preferred_element_type)


def conv_general_dilated_local(lhs: Any, rhs: Any, window_strides: Sequence[int],
                               padding: Padding, filter_shape: Sequence[int],
                               lhs_dilation: Sequence[int] | None = None,
                               rhs_dilation: Sequence[int] | None = None,
                               dimension_numbers: Any = None, precision: Any = None) -> Array:
    """A locally connected ("unshared") convolution: a different kernel at each output
    position.  ``rhs`` has the output's spatial dimensions where a convolution kernel has
    its own, and ``prod(filter_shape) * in_features`` input features (feature-major);
    computed, as in JAX, as the patches contracted with ``rhs`` position by position."""
    lhs, rhs = _operands("conv_general_dilated_local", lhs, rhs)
    pair = canonicalize_precision(precision)
    if pair is not None and not (isinstance(pair, tuple) and len(pair) == 2):
        raise ValueError(f"Unsupported precision for conv_general_dilated_local: {precision}")
    patches = conv_general_dilated_patches(lhs, filter_shape, window_strides, padding,
                                           lhs_dilation, rhs_dilation, dimension_numbers,
                                           None if pair is None else pair[0])
    dn = conv_dimension_numbers(_shape_of(lhs), (1, 1, *filter_shape), dimension_numbers)
    lhs_batch = list(dn.out_spec[2:])
    rhs_batch = [dn.rhs_spec[2:][i] for i in sorted(range(len(lhs_batch)),
                                                     key=lambda k: lhs_batch[k])]
    out = dot_general(patches, rhs, (((dn.out_spec[1],), (dn.rhs_spec[1],)),
                                     (tuple(sorted(lhs_batch)), tuple(rhs_batch))),
                      precision=precision)
    # The product's dimensions: the output's spatial ones, then batch, then features.
    nd = len(dn.out_spec)
    order = [d for d in range(nd) if d not in (dn.out_spec[0], dn.out_spec[1])]
    perm = [0] * nd
    for src, dst in zip(range(nd), [*order, dn.out_spec[0], dn.out_spec[1]]):
        perm[dst] = src
    return transpose(out, perm)


def _transpose_padding(k: int, s: int, padding: Any) -> tuple[int, int]:
    """(before, after) padding of one dimension of a transposed convolution whose forward
    convolution had kernel size ``k``, stride ``s`` and ``padding``."""
    if padding == "SAME":
        total = k + s - 2
        before = k - 1 if s > k - 1 else -(-total // 2)
    elif padding == "VALID":
        total = k + s - 2 + max(k - s, 0)
        before = k - 1
    elif isinstance(padding, tuple):
        before, after = (k - p - 1 for p in padding)
        total = before + after
    else:
        raise ValueError(f"Invalid padding mode: {padding}")
    return before, total - before


_TRANSPOSE_LAYOUTS = {2: ("NC", "IO", "NC"), 3: ("NHC", "HIO", "NHC"),
                      4: ("NHWC", "HWIO", "NHWC"), 5: ("NHWDC", "HWDIO", "NHWDC")}


def conv_transpose(lhs: Any, rhs: Any, strides: Sequence[int], padding: Padding,
                   rhs_dilation: Sequence[int] | None = None, dimension_numbers: Any = None,
                   transpose_kernel: bool = False, precision: Any = None,
                   preferred_element_type: Any = None,
                   use_consistent_padding: bool = False) -> Array:
    """The transposed ("deconvolution") convolution: the input dilated by ``strides``
    and convolved with ``rhs`` (spatially flipped, input and output features swapped,
    when ``transpose_kernel``), padded so that ``'SAME'``/``'VALID'`` invert the
    forward convolution's shapes; layouts default to ``NHWC``/``HWIO``."""
    lhs, rhs = _operands("conv_transpose", lhs, rhs)
    lshape, rshape = _shape_of(lhs), _shape_of(rhs)
    if len(lshape) != len(rshape) or len(lshape) < 2:
        raise TypeError(f"conv_transpose: expected operands of equal rank of at least 2, "
                        f"but got shapes {lshape} and {rshape}")
    if dimension_numbers is None:
        if len(lshape) not in _TRANSPOSE_LAYOUTS:
            raise ValueError("No 4+ dimensional dimension_number defaults.")
        dimension_numbers = _TRANSPOSE_LAYOUTS[len(lshape)]
    dn = conv_dimension_numbers(lshape, rshape, dimension_numbers)
    nsp = len(lshape) - 2
    dil = tuple(rhs_dilation) if rhs_dilation is not None else (1,) * nsp
    pads: Padding = padding
    if use_consistent_padding or padding in ("SAME", "VALID"):
        kernel = [(rshape[d] - 1) * r + 1 for d, r in zip(dn.rhs_spec[2:], dil)]
        each = [padding] * len(strides) if isinstance(padding, str) else list(padding)
        pads = [_transpose_padding(k, s, p) for k, s, p in zip(kernel, strides, each)]
    if transpose_kernel:
        for d in dn.rhs_spec[2:]:  # one rev per axis, as JAX flips them
            rhs = rev(rhs, (d,))
        perm = list(range(len(rshape)))
        perm[dn.rhs_spec[0]], perm[dn.rhs_spec[1]] = dn.rhs_spec[1], dn.rhs_spec[0]
        rhs = transpose(rhs, perm)
    return conv_general_dilated(lhs, rhs, (1,) * nsp, pads, strides, dil, dn,
                                precision=precision,
                                preferred_element_type=preferred_element_type)


def conv_general_dilated_patches(lhs: Any, filter_shape: Sequence[int],
                                 window_strides: Sequence[int], padding: Padding,
                                 lhs_dilation: Sequence[int] | None = None,
                                 rhs_dilation: Sequence[int] | None = None,
                                 dimension_numbers: Any = None, precision: Any = None,
                                 preferred_element_type: Any = None) -> Array:
    """The patches a convolution with a ``filter_shape`` kernel would see, as features:
    each input feature becomes ``prod(filter_shape)`` output features (feature-major),
    computed by a grouped convolution with a one-hot kernel."""
    lhs, = _operands("conv_general_dilated_patches", lhs)
    lshape = _shape_of(lhs)
    window = tuple(int(f) for f in filter_shape)
    dn = conv_dimension_numbers(lshape, (1, 1, *window), dimension_numbers)
    size = int(np.prod(window))
    channels = lshape[dn.lhs_spec[1]]
    dtype = lhs.dtype if hasattr(lhs, "dtype") else dt.canonicalize(np.result_type(lhs))
    rows = add(broadcasted_iota(np.int32, (size, size), 0), np.int32(0))  # (as JAX's _eye)
    eye = convert_element_type(eq(rows, broadcasted_iota(np.int32, (size, size), 1)), dtype)
    kernel = reshape(broadcast_in_dim(eye, (channels, size, size), (1, 2)),
                     (channels * size, 1, *window))
    # Kernel dimensions 0 (output features) and 1 (input features) go where rhs_spec says.
    order = [d for d in range(len(window) + 2) if d not in (0, 1)]
    perm = [0] * (len(window) + 2)
    perm[dn.rhs_spec[0]], perm[dn.rhs_spec[1]] = 0, 1
    rest = iter(order)
    for i in range(len(perm)):
        if i not in (dn.rhs_spec[0], dn.rhs_spec[1]):
            perm[i] = next(rest)
    if perm != sorted(perm):
        kernel = transpose(kernel, perm)
    # (The kernel's precision is the default, as in JAX.)
    return conv_general_dilated(lhs, kernel, window_strides, padding, lhs_dilation,
                                rhs_dilation, dn, feature_group_count=channels,
                                precision=None if precision is None else (
                                    precision, P.Precision.DEFAULT),
                                preferred_element_type=preferred_element_type)


def conv_shape_tuple(lhs_shape: Sequence[int], rhs_shape: Sequence[int],
                     strides: Sequence[int], pads: Padding,
                     batch_group_count: int = 1) -> tuple[int, ...]:
    """The result shape of an NCHW / OIHW convolution."""
    nsp = len(lhs_shape) - 2
    dn = ConvDimensionNumbers(*(tuple(range(nsp + 2)),) * 3)
    return _shape(lhs_shape, rhs_shape, dn, strides, pads, batch_group_count)


def conv_general_shape_tuple(lhs_shape: Sequence[int], rhs_shape: Sequence[int],
                             window_strides: Sequence[int], padding: Padding,
                             dimension_numbers: Any) -> tuple[int, ...]:
    """The result shape of ``conv_general_dilated`` without dilation."""
    dn = conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers)
    return _shape(lhs_shape, rhs_shape, dn, window_strides, padding, 1)


def conv_transpose_shape_tuple(lhs_shape: Sequence[int], rhs_shape: Sequence[int],
                               window_strides: Sequence[int], padding: Padding,
                               dimension_numbers: Any) -> tuple[int, ...]:
    """The result shape of ``conv_transpose`` with these arguments."""
    dn = conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers)
    kernel = [rhs_shape[d] for d in dn.rhs_spec[2:]]
    if isinstance(padding, str):
        pads = [_transpose_padding(k, s, padding) for k, s in zip(kernel, window_strides)]
    else:
        pads = [(int(lo), int(hi)) for lo, hi in padding]
    return conv_output_shape(tuple(lhs_shape), tuple(rhs_shape), dn,
                               (1,) * len(window_strides), tuple(pads),
                               tuple(int(s) for s in window_strides), (1,) * len(kernel), 1)


def _shape(lhs_shape: Sequence[int], rhs_shape: Sequence[int], dn: ConvDimensionNumbers,
           strides: Sequence[int], padding: Padding, batch_group_count: int) -> tuple[int, ...]:
    if isinstance(padding, str):
        window = [rhs_shape[d] for d in dn.rhs_spec[2:]]
        pads = padtype_to_pads([lhs_shape[d] for d in dn.lhs_spec[2:]], window, strides,
                               padding)
    else:
        pads = [(int(lo), int(hi)) for lo, hi in padding]
    ones = (1,) * len(pads)
    return conv_output_shape(tuple(lhs_shape), tuple(rhs_shape), dn,
                               tuple(int(s) for s in strides), tuple(pads), ones, ones,
                               batch_group_count)

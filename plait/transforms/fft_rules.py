"""JVP, transpose and batching of ``fft``.

Every kind is linear.  The complex-to-complex transforms are their own transposes
(the DFT matrix is symmetric); real-to-complex transposes to the real part of the
forward transform of the zero-padded cotangent (it is ``slice ∘ fft ∘ complex``);
complex-to-real transposes to a scaled real-to-complex transform in which the
frequencies the half spectrum stands for twice count twice, conjugated by JAX's
convention for complex cotangents.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from plait.ir import primitives as P
from plait.ir.atoms import Atom, Var
from plait.ir.avals import shaped
from plait.ir.errors import JaxprTypeError
from plait.ir.primitives.fft import FftType
from plait.transforms.emit import Emitter, Zero
from plait.transforms.jvp import deflinear
from plait.transforms.transpose import Cotangent, UndefPrimal, transpose_rules
from plait.transforms.vmap import Dim, batching_rules, bdim_to_front


def _fft(e: Emitter, x: Atom, fft_type: FftType, fft_lengths: tuple[int, ...]) -> Var:
    return e.bind1(P.fft_p, x, fft_type=fft_type, fft_lengths=fft_lengths)


def _rfft_transpose(e: Emitter, ct: Atom, fft_lengths: tuple[int, ...]) -> Atom:
    a = shaped(ct.aval)
    n = fft_lengths[-1]
    cfg = tuple((0, 0, 0) for _ in a.shape[:-1]) + ((0, n - a.shape[-1], 0),)
    padded = e.bind1(P.pad_p, ct, e.scalar_like(ct, 0), padding_config=cfg)
    return e.bind1(P.real_p, _fft(e, padded, FftType.FFT, fft_lengths))


def _irfft_transpose(e: Emitter, ct: Atom, fft_lengths: tuple[int, ...]) -> Atom:
    x = _fft(e, ct, FftType.RFFT, fft_lengths)
    xa = shaped(x.aval)
    m, n = xa.shape[-1], fft_lengths[-1]
    weights = np.full(m, 2.0)
    weights[0] = 1.0
    if n % 2 == 0:
        weights[-1] = 1.0  # the Nyquist frequency stands for itself only
    weights /= math.prod(fft_lengths)
    w = e.mul(x, _vector(e, weights.astype(xa.dtype), xa.shape))
    return e.conj(w)


def _vector(e: Emitter, values: np.ndarray, shape: tuple[int, ...]) -> Atom:
    """``values`` along the last dimension of ``shape``, as a concatenation of literals."""
    parts = []
    start = 0
    while start < len(values):  # runs of equal weights: 1, 2 ... 2, 1
        stop = start + 1
        while stop < len(values) and values[stop] == values[start]:
            stop += 1
        lit = e.literal(values[start], values.dtype)
        parts.append(e.broadcast_in_dim(lit, shape[:-1] + (stop - start,), ()))
        start = stop
    if len(parts) == 1:
        return parts[0]
    return e.bind1(P.concatenate_p, *parts, dimension=len(shape) - 1)


def _transpose(e: Emitter, cts: Sequence[Atom | Zero], x: Atom | UndefPrimal, *,
               fft_type: FftType, fft_lengths: tuple[int, ...]) -> Sequence[Cotangent]:
    if type(x) is not UndefPrimal:
        raise JaxprTypeError("fft: expected a linear operand to transpose")
    (ct,) = cts
    if type(ct) is Zero:
        return [None]
    if fft_type == FftType.RFFT:
        return [_rfft_transpose(e, ct, fft_lengths)]
    if fft_type == FftType.IRFFT:
        return [_irfft_transpose(e, ct, fft_lengths)]
    return [_fft(e, ct, fft_type, fft_lengths)]


def _vmap(e: Emitter, size: int, vals: list[Atom], dims: list[Dim], *, fft_type: FftType,
          fft_lengths: tuple[int, ...]) -> tuple[list[Var], list[Dim]]:
    # The transform acts on the trailing dimensions: the batch goes first.
    x = bdim_to_front(e, vals[0], dims[0], size)
    return [_fft(e, x, fft_type, fft_lengths)], [0]


deflinear(P.fft_p)
transpose_rules[P.fft_p] = _transpose
batching_rules[P.fft_p] = _vmap

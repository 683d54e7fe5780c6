"""The threefry2x32 PRNG implementation, over one key's data (``u32[2]``).

These functions define the key primitives of threefry keys (``random_seed``,
``random_split``, ``random_fold_in``, ``random_bits``; :mod:`.key_impls` maps them over
batches of keys and registers them as the primitives' decompositions) and
``threefry2x32`` itself.  They compute what JAX 0.10.2 computes.  A key made from a
seed holds its high and low 32 bits.  With ``jax_threefry_partitionable`` on (the
default) the counters hashed for ``split`` and ``random_bits`` are the flat indices of
the result as 64-bit integers split into two 32-bit words; off, JAX's older scheme:
the counters ``0 .. n-1`` are cut in two halves hashed as the two words, and the two
output words are laid end to end (``random_bits`` then packs narrow integers four or
two to a word and takes 64-bit ones' high words from the first half).  ``fold_in``
hashes the counter ``(0, data)`` in both modes.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from plait.frontend import lax
from plait.frontend.api.control_flow import fori_loop
from plait.frontend.core.array_base import Array
from plait.frontend.core.trace_to_jaxpr import trace_to_jaxpr
from plait.frontend.core.tree_util import tree_structure
from plait.ir import dtypes as dt
from plait.ir import primitives as P
from plait.ir.avals import ShapedArray
from plait.ir.decompositions import register_decomposition
from plait.ir.jaxpr import ClosedJaxpr

__all__ = ["threefry2x32", "seed", "split", "fold_in", "random_bits"]

_U32 = dt.uint32
_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))
_PARITY = 0x1BD11BDA  # Threefry's key schedule constant


def _u32(value: int) -> Array:
    return lax.full((), value, _U32)


def _rounds(x0: Array, x1: Array, rotations: Sequence[Array]) -> tuple[Array, Array]:
    for r in rotations:
        x0 = x0 + x1
        x1 = lax.bitwise_xor(x0, _rotl_dynamic(x1, r))
    return x0, x1


def _rotl_dynamic(x: Array, r: Array) -> Array:
    # The shift amounts are scalars, broadcast once computed (as JAX's lowering does).
    left = lax.broadcast_in_dim(r, x.shape, ())
    right = lax.broadcast_in_dim(_u32(32) - r, x.shape, ())
    return lax.bitwise_or(lax.shift_left(x, left), lax.shift_right_logical(x, right))


def threefry2x32(k0: Array, k1: Array, x0: Array, x1: Array) -> tuple[Array, Array]:
    """Threefry-2x32 (20 rounds) of the counter words ``x0``, ``x1`` under the key
    ``k0``, ``k1`` (all ``uint32``, broadcast together).  As JAX's CPU lowering, the five
    groups of four rounds run as a loop whose state rotates the key schedule and the
    rotation constants."""
    shape = np.broadcast_shapes(k0.shape, k1.shape, x0.shape, x1.shape)

    def full(a: Array) -> Array:
        return a if a.shape == shape else lax.broadcast_in_dim(
            a, shape, tuple(range(len(shape) - a.ndim, len(shape))))

    # The key words keep their own shape (scalars, usually): the loop carries them at
    # that size and broadcasts them where they are added.
    x0, x1 = full(x0), full(x1)
    ks = (k0, k1, lax.bitwise_xor(lax.bitwise_xor(k0, k1), _u32(_PARITY)))
    rotations = tuple(lax.stack([_u32(x) for x in r]) for r in _ROTATIONS)

    def step(i: Array, state: tuple[Array, ...]) -> tuple[Array, ...]:
        a, b, s0, s1, s2, rot0, rot1 = state
        a, b = _rounds(a, b, [rot0[j] for j in range(4)])
        a = a + s0
        b = b + s1 + lax.convert_element_type(i + 1, _U32)
        return a, b, s1, s2, s0, rot1, rot0

    init = (x0 + ks[0], x1 + ks[1], ks[1], ks[2], ks[0], *rotations)
    out = fori_loop(0, 5, step, init)
    return out[0], out[1]


def _counters(shape: tuple[int, ...]) -> tuple[Array, Array]:
    """The flat index of each position of ``shape`` as (high, low) ``uint32`` words."""
    size = math.prod(shape)
    if size > 2 ** 32:
        raise NotImplementedError("random bits of more than 2**32 elements per key")
    lo = lax.reshape(lax.iota(_U32, size), shape) if shape else _u32(0)
    return lax.full(shape, 0, _U32), lo


def _hash_flat(key: Array, size: int) -> Array:
    """JAX's older ``threefry_2x32(key, iota(size))``: the counters cut in two halves (a
    zero appended when ``size`` is odd), hashed as the two words, the outputs end to
    end."""
    if size >= 2 ** 32 - 1:
        raise NotImplementedError("random bits of 2**32 - 1 words or more per key with "
                                  "jax_threefry_partitionable off")
    half = (size + 1) // 2
    x0 = lax.iota(_U32, half)
    x1 = x0 + _u32(half)
    if size % 2:  # the appended zero is the last counter of the second half
        x1 = lax.concatenate([lax.slice(x1, (0,), (half - 1,)), lax.full((1,), 0, _U32)], 0)
    b0, b1 = threefry2x32(key[0], key[1], x0, x1)
    return lax.slice(lax.concatenate([b0, b1], 0), (0,), (size,))


def seed(value: Array) -> Array:
    """The key of one integer seed: its high 32 bits (zero for 32-bit seeds) and low 32."""
    width = value.dtype.itemsize * 8
    hi = (lax.convert_element_type(lax.shift_right_logical(value, lax.full((), 32, value.dtype)),
                                   _U32) if width > 32 else _u32(0))
    lo = lax.convert_element_type(value, _U32)
    return lax.stack([hi, lo])


def split(key: Array, shape: tuple[int, ...], partitionable: bool) -> Array:
    """``shape`` new keys (``u32[*shape, 2]``) from one."""
    if not partitionable:
        return lax.reshape(_hash_flat(key, 2 * math.prod(shape)), (*shape, 2))
    hi, lo = _counters(shape)
    b0, b1 = threefry2x32(key[0], key[1], hi, lo)
    return lax.stack([b0, b1], axis=len(shape))


def fold_in(key: Array, msg: Array) -> Array:
    """The key made from ``key`` and one ``uint32`` message."""
    b0, b1 = threefry2x32(key[0], key[1], _u32(0), msg)
    return lax.stack([b0, b1])


_UINT = {8: dt.uint8, 16: dt.uint16, 32: dt.uint32, 64: dt.uint64}


def _join64(hi: Array, lo: Array) -> Array:
    wide = _UINT[64]
    return lax.bitwise_or(lax.shift_left(lax.convert_element_type(hi, wide),
                                         lax.full((), 32, wide)),
                          lax.convert_element_type(lo, wide))


def random_bits(key: Array, bit_width: int, shape: tuple[int, ...],
                partitionable: bool) -> Array:
    """``shape`` random unsigned integers of ``bit_width`` bits from one key."""
    if not partitionable:
        return _bits_original(key, bit_width, shape)
    hi, lo = _counters(shape)
    b0, b1 = threefry2x32(key[0], key[1], hi, lo)
    if bit_width == 64:
        return _join64(b0, b1)
    bits = lax.bitwise_xor(b0, b1)
    return bits if bit_width == 32 else lax.convert_element_type(bits, _UINT[bit_width])


def _bits_original(key: Array, bit_width: int, shape: tuple[int, ...]) -> Array:
    size = math.prod(shape)
    words = -(-bit_width * size // 32)
    bits = _hash_flat(key, words)
    if bit_width == 64:  # high words first, then the low ones
        out = _join64(lax.slice(bits, (0,), (size,)), lax.slice(bits, (size,), (words,)))
    elif bit_width == 32:
        out = bits
    else:  # each word holds 32 // bit_width numbers, the first in its low bits
        per = 32 // bit_width
        shifts = lax.iota(_U32, per) * _u32(bit_width)
        parts = lax.shift_right_logical(lax.broadcast_in_dim(bits, (words, per), (0,)),
                                        lax.broadcast_in_dim(shifts, (words, per), (1,)))
        parts = lax.bitwise_and(parts, _u32(2 ** bit_width - 1))
        flat = lax.convert_element_type(lax.reshape(parts, (words * per,)), _UINT[bit_width])
        out = lax.slice(flat, (0,), (size,))
    return lax.reshape(out, shape)


def _build_threefry(*avals: ShapedArray) -> ClosedJaxpr:
    avals = tuple(a.update(weak_type=False) for a in avals)
    return trace_to_jaxpr(lambda *xs: list(threefry2x32(*xs)), tree_structure((0,) * len(avals)),
                          avals, "decomposition").closed


register_decomposition(P.threefry2x32_p, _build_threefry)

"""The threefry2x32 PRNG implementation, over key data (``u32[..., 2]``).

These functions define the key primitives (``random_seed``, ``random_split``,
``random_fold_in``, ``random_bits``) and ``threefry2x32`` itself: they are
registered as their decompositions (:mod:`plait.ir.decompositions`), which
physicalization (:mod:`plait.transforms.physicalize`) calls in place of the
primitives.  They compute what JAX 0.10.2 computes with its default settings
(``jax_threefry_partitionable`` on): counters are the flat indices of the result
as 64-bit integers split into two 32-bit words, hashed under the key; a key made
from a seed holds its high and low 32 bits.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from plait.frontend import lax
from plait.frontend.api.control_flow import fori_loop
from plait.frontend.api.vmap import vmap
from plait.frontend.core.array_base import Array
from plait.frontend.core.trace_to_jaxpr import trace_to_jaxpr
from plait.frontend.core.tree_util import tree_structure
from plait.ir import dtypes as dt
from plait.ir import primitives as P
from plait.ir.avals import ShapedArray
from plait.ir.decompositions import register_decomposition
from plait.ir.jaxpr import ClosedJaxpr
from plait.ir.primitives.random import PRNGImpl

__all__ = ["threefry2x32"]

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


def _seed(seed: Array) -> Array:
    """The key of one integer seed: its high 32 bits (zero for 32-bit seeds) and low 32."""
    width = seed.dtype.itemsize * 8
    hi = (lax.convert_element_type(lax.shift_right_logical(seed, lax.full((), 32, seed.dtype)),
                                   _U32) if width > 32 else _u32(0))
    lo = lax.convert_element_type(seed, _U32)
    return lax.stack([hi, lo])


def _split(key: Array, shape: tuple[int, ...]) -> Array:
    hi, lo = _counters(shape)
    b0, b1 = threefry2x32(key[0], key[1], hi, lo)
    return lax.stack([b0, b1], axis=len(shape))


def _fold_in(key: Array, msg: Array) -> Array:
    b0, b1 = threefry2x32(key[0], key[1], _u32(0), msg)
    return lax.stack([b0, b1])


_UINT = {8: dt.uint8, 16: dt.uint16, 32: dt.uint32, 64: dt.uint64}


def _bits(key: Array, bit_width: int, shape: tuple[int, ...]) -> Array:
    hi, lo = _counters(shape)
    b0, b1 = threefry2x32(key[0], key[1], hi, lo)
    if bit_width == 64:
        wide = _UINT[64]
        return lax.bitwise_or(lax.shift_left(lax.convert_element_type(b0, wide),
                                             lax.full((), 32, wide)),
                              lax.convert_element_type(b1, wide))
    bits = lax.bitwise_xor(b0, b1)
    return bits if bit_width == 32 else lax.convert_element_type(bits, _UINT[bit_width])


def _over_keys(fn: Callable[..., Array], nbatch: int, in_axes: tuple[int | None, ...] = (0,)
               ) -> Callable[..., Array]:
    """``fn`` of one key, mapped over ``nbatch`` leading key dimensions."""
    for _ in range(nbatch):
        fn = vmap(fn, in_axes=in_axes)
    return fn


def _trace(fn: Callable[..., Any], avals: Sequence[ShapedArray]) -> ClosedJaxpr:
    avals = tuple(a.update(weak_type=False) for a in avals)
    return trace_to_jaxpr(fn, tree_structure((0,) * len(avals)), avals, "decomposition").closed


def _build_seed(seeds: ShapedArray, *, impl: PRNGImpl) -> ClosedJaxpr:
    return _trace(_over_keys(_seed, seeds.ndim), [seeds])


def _build_split(data: ShapedArray, *, shape: tuple[int, ...]) -> ClosedJaxpr:
    return _trace(_over_keys(lambda k: _split(k, shape), data.ndim - 1), [data])


def _build_bits(data: ShapedArray, *, bit_width: int, shape: tuple[int, ...]) -> ClosedJaxpr:
    return _trace(_over_keys(lambda k: _bits(k, bit_width, shape), data.ndim - 1), [data])


def _build_fold_in(data: ShapedArray, msgs: ShapedArray) -> ClosedJaxpr:
    def fold_in(keys: Array, m: Array) -> Array:
        shape = np.broadcast_shapes(keys.shape[:-1], m.shape)
        keys = lax.broadcast_in_dim(keys, shape + dt.KEY_SHAPE,
                                    tuple(range(len(shape) - keys.ndim + 1, len(shape) + 1)))
        m = lax.broadcast_in_dim(m, shape, tuple(range(len(shape) - m.ndim, len(shape))))
        return _over_keys(_fold_in, len(shape), (0, 0))(keys, m)
    return _trace(fold_in, [data, msgs])


def _build_threefry(*avals: ShapedArray) -> ClosedJaxpr:
    return _trace(lambda *xs: list(threefry2x32(*xs)), avals)


register_decomposition(P.random_seed_p, _build_seed)
register_decomposition(P.random_split_p, _build_split)
register_decomposition(P.random_bits_p, _build_bits)
register_decomposition(P.random_fold_in_p, _build_fold_in)
register_decomposition(P.threefry2x32_p, _build_threefry)

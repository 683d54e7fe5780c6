"""The ``rbg`` and ``unsafe_rbg`` PRNG implementations, over one key's data (``u32[4]``).

Both draw random bits with XLA's ``RngBitGenerator`` (its default algorithm, as JAX
0.10.2 asks for; on the CPU that is Philox), seeded by the key.  A key made from a seed
is the threefry key of the seed, twice.  ``rbg`` splits and folds in with threefry, on
each half of the key (so its ``split`` follows ``jax_threefry_partitionable``);
``unsafe_rbg`` splits by taking every tenth of ``10 * n`` keys drawn with
``RngBitGenerator``, and folds in by XOR-ing the key with the last of ten keys drawn from
the seed of the message.  Mapped over a batch of keys (or, for ``unsafe_rbg``'s
``fold_in``, of messages), ``RngBitGenerator`` draws every row from the first key only:
that is JAX's batching rule, kept so that the bits equal JAX's.
"""

from __future__ import annotations

import math

from plait.frontend import lax
from plait.frontend.core.array_base import Array
from plait.frontend.random import threefry
from plait.ir import dtypes as dt
from plait.ir import primitives as P

__all__ = ["seed", "split", "fold_in", "unsafe_split", "unsafe_fold_in", "random_bits"]

_UINT = {8: dt.uint8, 16: dt.uint16, 32: dt.uint32, 64: dt.uint64}


def _generate(key: Array, shape: tuple[int, ...], bit_width: int) -> Array:
    # (bound directly: lax.rng_bit_generator would narrow uint64 outside x64 mode, and
    # decompositions may be built after x64 mode is turned off)
    _, bits = P.rng_bit_generator_p.bind(key, shape=shape, dtype=_UINT[bit_width],
                                         algorithm=P.RandomAlgorithm.RNG_DEFAULT,
                                         out_sharding=None)
    out: Array = bits
    return out


def seed(value: Array) -> Array:
    """The key of one integer seed: its threefry key, twice."""
    half = threefry.seed(value)
    return lax.concatenate([half, half], 0)


def _halves(key: Array) -> tuple[Array, Array]:
    return lax.slice(key, (0,), (2,)), lax.slice(key, (2,), (4,))


def split(key: Array, shape: tuple[int, ...], partitionable: bool) -> Array:
    """``shape`` new keys: threefry's split of each half, side by side."""
    parts = [threefry.split(h, shape, partitionable) for h in _halves(key)]
    return lax.reshape(lax.stack(parts, axis=len(shape)), (*shape, 4))


def fold_in(key: Array, msg: Array) -> Array:
    """Threefry's ``fold_in`` of each half of the key."""
    return lax.concatenate([threefry.fold_in(h, msg) for h in _halves(key)], 0)


def unsafe_split(key: Array, shape: tuple[int, ...], partitionable: bool) -> Array:
    """``shape`` new keys: every tenth of ``10 * n`` drawn from the key."""
    n = math.prod(shape)
    keys = _generate(key, (10 * n, 4), 32)
    return lax.reshape(lax.slice(keys, (0, 0), (10 * n, 4), (10, 1)), (*shape, 4))


def unsafe_fold_in(key: Array, msg: Array) -> Array:
    """The key XOR-ed with the last of ten keys drawn from the message's seed."""
    drawn = _generate(seed(msg), (10, 4), 32)
    return lax.bitwise_xor(key, lax.reshape(lax.slice(drawn, (9, 0), (10, 4)), (4,)))


def random_bits(key: Array, bit_width: int, shape: tuple[int, ...],
                partitionable: bool) -> Array:
    """``shape`` random unsigned integers of ``bit_width`` bits drawn from the key."""
    return _generate(key, shape, bit_width)

"""Reference rules of ``rng_bit_generator`` (XLA's expansion of ``RngBitGenerator``,
bit for bit: Threefry-2x32 or Philox-4x32 over counters taken from the key) and
``rng_uniform`` (XLA's transform of random bits into ``[a, b)``, from bits drawn
from a fresh seed, as XLA's own are: its values are not reproducible)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from plait.ir import primitives as P
from plait.ir.interpreter import impl_rules
from plait.ir.primitives.rng import RandomAlgorithm
from plait.ir.reference.elementwise import _def

U32, U64 = np.dtype(np.uint32), np.dtype(np.uint64)
_MASK32 = np.uint64(0xFFFFFFFF)


def _lo_hi(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    x = np.asarray(x, U64)
    return (x & _MASK32).astype(U32), (x >> np.uint64(32)).astype(U32)


def _join(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    return np.asarray(lo, U64) | (np.asarray(hi, U64) << np.uint64(32))


def _rotl(v: np.ndarray, r: int) -> np.ndarray:
    return (v << np.uint32(r)) | (v >> np.uint32(32 - r))


def threefry2x32(x0: np.ndarray, x1: np.ndarray, k0: Any, k1: Any
                 ) -> tuple[np.ndarray, np.ndarray]:
    """Threefry-2x32 with 20 rounds, as XLA's PRNG library computes it."""
    rotations = (13, 15, 26, 6, 17, 29, 16, 24)
    ks = [np.uint32(k0), np.uint32(k1), np.uint32(0x1BD11BDA ^ int(k0) ^ int(k1))]
    a = np.asarray(x0, U32) + ks[0]
    b = np.asarray(x1, U32) + ks[1]
    for i in range(5):
        for r in rotations[(i % 2) * 4:(i % 2) * 4 + 4]:
            a = a + b
            b = _rotl(b, r) ^ a
        a = a + ks[(i + 1) % 3]
        b = b + ks[(i + 2) % 3] + np.uint32(i + 1)
    return a, b


def philox4x32(x: list[np.ndarray], k0: Any, k1: Any) -> list[np.ndarray]:
    """Philox-4x32 with 10 rounds."""
    key = [int(k0), int(k1)]
    for _ in range(10):
        p0 = np.asarray(x[0], U64) * np.uint64(0xD2511F53)
        p1 = np.asarray(x[2], U64) * np.uint64(0xCD9E8D57)
        hi0, lo0 = (p0 >> np.uint64(32)).astype(U32), (p0 & _MASK32).astype(U32)
        hi1, lo1 = (p1 >> np.uint64(32)).astype(U32), (p1 & _MASK32).astype(U32)
        x = [hi1 ^ x[1] ^ np.uint32(key[0]), lo1, hi0 ^ x[3] ^ np.uint32(key[1]), lo0]
        key = [(key[0] + 0x9E3779B9) & 0xFFFFFFFF, (key[1] + 0xBB67AE85) & 0xFFFFFFFF]
    return x


def _split_halves(shape: tuple[int, ...]) -> tuple[tuple[int, ...], int]:
    """XLA's SplitShapeIntoHalves: the half shape (a 1 inserted after the split
    dimension) and the split dimension."""
    if not shape:
        return (1,), 0
    split = next((i for i, d in enumerate(shape) if d % 2 == 0), None)
    if split is None:
        split = max(range(len(shape)), key=lambda i: (shape[i], -i))
    half = shape[:split] + (-(-shape[split] // 2), 1) + shape[split + 1:]
    return half, split


def _threefry_bits(s0: int, s1: int, shape: tuple[int, ...], bits: int
                   ) -> tuple[np.ndarray, int]:
    k0, k1 = s0 & 0xFFFFFFFF, s0 >> 32
    if bits == 64:
        n = math.prod(shape)
        lo, hi = _lo_hi(np.uint64(s1) + np.arange(n, dtype=U64))
        a, b = threefry2x32(lo, hi, k0, k1)
        return _join(a, b).reshape(shape), (s1 + n) % 2 ** 64
    half, split = _split_halves(shape)
    n = math.prod(half)
    lo, hi = _lo_hi(np.uint64(s1) + np.arange(n, dtype=U64))
    a, b = threefry2x32(lo, hi, k0, k1)
    if not shape:
        out = a.reshape(())
    else:
        both = np.concatenate([a.reshape(half), b.reshape(half)], axis=split + 1)
        full = list(shape)
        full[split] = 2 * half[split]
        out = both.reshape(full)[tuple(slice(0, d) for d in shape)]
    return out, (s1 + n) % 2 ** 64


def _philox_bits(s0: int, s1: int, shape: tuple[int, ...], bits: int) -> tuple[np.ndarray, int]:
    # XLA's expander: the key is s0; the 128-bit counter is (low s1, high s0), and
    # only its low word is written back.
    k0, k1 = s0 & 0xFFFFFFFF, s0 >> 32
    n = math.prod(shape)
    words = n * (2 if bits == 64 else 1)
    nvec = -(-words // 4)
    low = np.uint64(s1) + np.arange(nvec, dtype=U64)
    high = np.where(low < np.uint64(s1), np.uint64((s0 + 1) % 2 ** 64), np.uint64(s0))
    out = philox4x32([*_lo_hi(low), *_lo_hi(high)], k0, k1)
    if bits == 64:
        pairs = [_join(out[0], out[1]), _join(out[2], out[3])]
        numbers = np.stack(pairs, axis=1).reshape(-1)[:n]
    else:
        numbers = np.stack(out, axis=1).reshape(-1)[:n]
    return numbers.reshape(shape), (s1 + nvec) % 2 ** 64


def rng_bits(key: np.ndarray, shape: tuple[int, ...], dtype: np.dtype[Any],
             algorithm: RandomAlgorithm) -> tuple[np.ndarray, np.ndarray]:
    """``rng_bit_generator``'s results: the new key and the bits."""
    key = np.asarray(key)
    state = key.astype(U64) if key.dtype == U64 else _join(key[0::2], key[1::2])
    s0, s1 = int(state[0]), int(state[1])
    dtype = np.dtype(dtype)
    bits = 64 if dtype.itemsize == 8 else 32
    gen = _threefry_bits if algorithm == RandomAlgorithm.RNG_THREE_FRY else _philox_bits
    values, new_s1 = gen(s0, s1, tuple(shape), bits)
    new_state = np.array([s0, new_s1], U64)
    new_key = new_state if key.dtype == U64 else np.stack(_lo_hi(new_state), axis=1).reshape(4)
    return new_key.astype(key.dtype), np.asarray(values).astype(dtype)


def _rng_bit_generator(key: np.ndarray, *, shape: tuple[int, ...], dtype: np.dtype[Any],
                       algorithm: RandomAlgorithm, out_sharding: None
                       ) -> tuple[np.ndarray, np.ndarray]:
    return rng_bits(key, shape, dtype, algorithm)


def _rng_uniform(a: np.ndarray, b: np.ndarray, *, shape: tuple[int, ...]) -> np.ndarray:
    d = np.asarray(a).dtype
    seed = np.random.SeedSequence().generate_state(2, np.uint64)
    wide = d.itemsize == 8
    key = np.asarray(seed, U64)
    _, raw = rng_bits(key, shape, U64 if wide else U32, RandomAlgorithm.RNG_PHILOX)
    if d.kind in "iu":  # XLA's ConvertRandomBitsToUniformInt
        u = np.dtype(f"u{d.itemsize}")
        span = (np.asarray(b).astype(d).view(u) - np.asarray(a).astype(d).view(u)).astype(u)
        dist = raw % span if span else raw
        half = dist >> u.type(1)
        out: np.ndarray = (np.asarray(a, d) + half.view(d) + (dist - half).view(d)).astype(d)
        return out
    if d.itemsize == 2:  # XLA's 16-bit float path: random mantissa bits of 1.x, minus 1
        fbits = np.dtype(f"u{d.itemsize}")
        mant = int(np.finfo(np.float16).nmant) if d == np.float16 else 7
        one = np.array(1, d).view(fbits)
        unit = ((raw.astype(fbits) & fbits.type((1 << mant) - 1)) | one).view(d) - d.type(1)
    else:
        mant = 52 if wide else 23
        unit = (raw >> raw.dtype.type(raw.dtype.itemsize * 8 - mant)).astype(d) * d.type(
            2.0 ** -mant)
    return np.asarray(unit * (np.asarray(b, d) - np.asarray(a, d)) + np.asarray(a, d), d)


impl_rules[P.rng_bit_generator_p] = _rng_bit_generator
_def(P.rng_uniform_p, _rng_uniform)

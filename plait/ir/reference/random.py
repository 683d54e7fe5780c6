"""Reference rules of ``threefry2x32`` and the PRNG key primitives, in NumPy.

Key arrays are NumPy record arrays of the key dtype (``key<fry>``, ``key<rbg>``...),
one record of the key's ``uint32`` words per key, so the structural rules (slicing,
reshaping, ...) move keys as they move any other element.  The rules follow JAX
0.10.2's threefry2x32 (both ``partitionable`` modes), rbg and unsafe_rbg
implementations, written independently of plait's own
(:mod:`plait.frontend.random.threefry`, :mod:`plait.frontend.random.rbg`), which the
tests compare with these.  Where JAX maps ``RngBitGenerator`` over a batch of keys
(rbg's bits, unsafe_rbg's split and fold_in), every row is drawn from the first key, as
JAX's batching rule draws them.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from plait.ir import dtypes as dt
from plait.ir import primitives as P
from plait.ir.interpreter import impl_rules
from plait.ir.primitives.random import PRNGImpl, impl_of
from plait.ir.primitives.rng import RandomAlgorithm
from plait.ir.reference.elementwise import _def
from plait.ir.reference.rng import rng_bits

_U32 = np.dtype(np.uint32)
_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))


def threefry(k0: Any, k1: Any, x0: Any, x1: Any) -> tuple[np.ndarray, np.ndarray]:
    """Threefry-2x32 with 20 rounds, elementwise over broadcast ``uint32`` operands."""
    k0, k1, x0, x1 = np.broadcast_arrays(*(np.asarray(a, _U32) for a in (k0, k1, x0, x1)))
    ks = (k0, k1, k0 ^ k1 ^ np.uint32(0x1BD11BDA))
    a, b = x0 + ks[0], x1 + ks[1]
    with np.errstate(over="ignore"):
        for i in range(5):
            for r in _ROTATIONS[i % 2]:
                a = a + b
                b = ((b << np.uint32(r)) | (b >> np.uint32(32 - r))) ^ a
            a = a + ks[(i + 1) % 3]
            b = b + ks[(i + 2) % 3] + np.uint32(i + 1)
    return a, b


def _data(keys: np.ndarray) -> np.ndarray:
    """The ``uint32[..., 2]`` data of a record array of keys."""
    return np.asarray(keys[dt.key_field(keys.dtype)], _U32)


def _keys(data: np.ndarray, impl: PRNGImpl = PRNGImpl.THREEFRY2X32) -> np.ndarray:
    """Record keys holding ``data`` (``uint32[..., 2]``; ``[..., 4]`` for rbg)."""
    return np.ascontiguousarray(data, _U32).view(impl.dtype)[..., 0]


def _counters(shape: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
    index = np.arange(math.prod(shape), dtype=np.uint64).reshape(shape)
    return (index >> np.uint64(32)).astype(_U32), index.astype(_U32)


def _hash_flat(k: np.ndarray, n: int) -> np.ndarray:
    """JAX's older scheme: counters ``0 .. n-1`` (a zero appended to an odd count) cut
    in two halves hashed as the two words, the two outputs laid end to end."""
    counts = np.concatenate([np.arange(n, dtype=_U32), np.zeros(n % 2, _U32)])
    half = len(counts) // 2
    a, b = threefry(k[0], k[1], counts[:half], counts[half:])
    return np.concatenate([a, b])[:n]


def _seed(seeds: np.ndarray, *, impl: PRNGImpl) -> np.ndarray:
    s = np.asarray(seeds)
    wide = s.itemsize > 4
    hi = (s.astype(np.uint64) >> np.uint64(32)).astype(_U32) if wide else np.zeros(s.shape, _U32)
    words = [hi, s.astype(_U32)] * (impl.key_shape[0] // 2)  # (rbg: the threefry key twice)
    return _keys(np.stack(words, axis=-1), impl)


def _per_key(fn: Any, keys: np.ndarray) -> np.ndarray:
    """``fn`` of each key's data, stacked in the keys' shape."""
    flat = _data(keys).reshape(-1, dt.key_shape(keys.dtype)[0])
    probe = fn(np.zeros(flat.shape[1], _U32))
    outs = [fn(k) for k in flat]
    stacked = np.stack(outs) if outs else np.zeros((0, *probe.shape), probe.dtype)
    return stacked.reshape(keys.shape + probe.shape)


def _drawn(keys: np.ndarray, shape: tuple[int, ...], dtype: Any) -> np.ndarray:
    """``RngBitGenerator`` mapped over a batch of keys (``u32[..., 4]``): the bits of
    every row drawn from the first key."""
    batch = keys.shape[:-1]
    first = keys.reshape(-1, 4)[0] if keys.size else np.zeros(4, _U32)
    _, bits = rng_bits(first, batch + shape, np.dtype(dtype), RandomAlgorithm.RNG_DEFAULT)
    return bits


def _tf_split(k: np.ndarray, shape: tuple[int, ...], partitionable: bool) -> np.ndarray:
    if not partitionable:
        return _hash_flat(k, 2 * math.prod(shape)).reshape(*shape, 2)
    hi, lo = _counters(shape)
    return np.stack(threefry(k[0], k[1], hi, lo), axis=-1)


def _split(keys: np.ndarray, *, shape: tuple[int, ...], partitionable: bool) -> np.ndarray:
    impl = impl_of(keys.dtype)
    if impl is PRNGImpl.UNSAFE_RBG:
        n = math.prod(shape)
        drawn = _drawn(_data(keys), (10 * n, 4), _U32)
        return _keys(drawn[..., ::10, :].reshape(keys.shape + shape + (4,)), impl)
    if impl is PRNGImpl.RBG:
        def one(k: np.ndarray) -> np.ndarray:
            halves = [_tf_split(h, shape, partitionable) for h in (k[:2], k[2:])]
            return np.concatenate(halves, axis=-1)
        return _keys(_per_key(one, keys), impl)
    return _keys(_per_key(lambda k: _tf_split(k, shape, partitionable), keys), impl)


def _tf_fold_in(data: np.ndarray, msgs: np.ndarray) -> np.ndarray:
    return np.stack(threefry(data[..., 0], data[..., 1], np.uint32(0), msgs), axis=-1)


def _fold_in(keys: np.ndarray, msgs: np.ndarray) -> np.ndarray:
    impl = impl_of(keys.dtype)
    msgs = np.asarray(msgs, _U32)
    if impl is PRNGImpl.UNSAFE_RBG:
        return _keys(_unsafe_fold_in(_data(keys), msgs), impl)
    keys, msgs = np.broadcast_arrays(keys, msgs)
    data = _data(keys)
    if impl is PRNGImpl.RBG:
        out = np.concatenate([_tf_fold_in(data[..., :2], msgs),
                              _tf_fold_in(data[..., 2:], msgs)], axis=-1)
    else:
        out = _tf_fold_in(data, msgs)
    return _keys(out, impl)


def _unsafe_fold_in(data: np.ndarray, msgs: np.ndarray) -> np.ndarray:
    """XOR with the last of ten keys drawn from the message's seed: mapped over the
    dimensions where JAX maps the messages (all but those where a message is broadcast
    against several keys), from the first message."""
    kshape = data.shape[:-1]
    if msgs.ndim and kshape:
        rank = max(len(kshape), msgs.ndim)
        kshape = (1,) * (rank - len(kshape)) + kshape
        msgs = msgs.reshape((1,) * (rank - msgs.ndim) + msgs.shape)
    mapped = ((True,) * msgs.ndim if not kshape else
              tuple(m == k or k == 1 for m, k in zip(msgs.shape, kshape, strict=False))
              if msgs.ndim else ())
    sizes = tuple(m for m, keep in zip(msgs.shape, mapped, strict=True) if keep)
    first = msgs.reshape(-1)[0] if msgs.size else np.uint32(0)
    seed = np.array([0, first, 0, first], _U32)
    _, drawn = rng_bits(seed, sizes + (10, 4), _U32, RandomAlgorithm.RNG_DEFAULT)
    last = drawn[..., 9, :].reshape(
        tuple(m if keep else 1 for m, keep in zip(msgs.shape, mapped, strict=True)) + (4,))
    out: np.ndarray = np.bitwise_xor(data.reshape(kshape + (4,)), last)
    return out


_UINT = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}


def _tf_bits(k: np.ndarray, bit_width: int, shape: tuple[int, ...],
             partitionable: bool) -> np.ndarray:
    if not partitionable:
        n = math.prod(shape)
        words = _hash_flat(k, -(-bit_width * n // 32))
        if bit_width == 64:
            out = (words[:n].astype(np.uint64) << np.uint64(32)) | words[n:].astype(np.uint64)
        else:  # narrow numbers are the words' bytes (or half-words), low first
            shifts = np.arange(32 // bit_width, dtype=_U32) * np.uint32(bit_width)
            parts = (words[:, None] >> shifts) & np.uint32(2 ** bit_width - 1)
            out = parts.reshape(-1)[:n].astype(_UINT[bit_width])
        return np.asarray(out).reshape(shape)
    hi, lo = _counters(shape)
    b0, b1 = threefry(k[0], k[1], hi, lo)
    if bit_width == 64:
        wide: np.ndarray = (b0.astype(np.uint64) << np.uint64(32)) | b1.astype(np.uint64)
        return wide
    return np.asarray(b0 ^ b1).astype(_UINT[bit_width])


def _bits(keys: np.ndarray, *, bit_width: int, shape: tuple[int, ...],
          partitionable: bool) -> np.ndarray:
    if impl_of(keys.dtype) is not PRNGImpl.THREEFRY2X32:
        return _drawn(_data(keys), shape, _UINT[bit_width])
    return _per_key(lambda k: _tf_bits(k, bit_width, shape, partitionable), keys)


def _threefry_rule(k0: np.ndarray, k1: np.ndarray, x0: np.ndarray, x1: np.ndarray
                   ) -> tuple[np.ndarray, np.ndarray]:
    return threefry(k0, k1, x0, x1)


_def(P.random_seed_p, _seed)
_def(P.random_split_p, _split)
_def(P.random_fold_in_p, _fold_in)
_def(P.random_bits_p, _bits)
_def(P.random_wrap_p, lambda data, *, impl: _keys(data, impl))
_def(P.random_unwrap_p, _data)
_def(P.random_clone_p, lambda keys: keys.copy())
impl_rules[P.threefry2x32_p] = _threefry_rule

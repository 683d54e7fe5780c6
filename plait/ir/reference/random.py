"""Reference rules of ``threefry2x32`` and the PRNG key primitives, in NumPy.

Key arrays are NumPy record arrays of the key dtype (``key<fry>``), one record of
two ``uint32`` words per key, so the structural rules (slicing, reshaping, ...)
move keys as they move any other element.  The rules follow JAX 0.10.2's threefry2x32
implementation with its default settings (``jax_threefry_partitionable``), written
independently of plait's own (:mod:`plait.frontend.random.threefry`), which the tests
compare with these.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from plait.ir import dtypes as dt
from plait.ir import primitives as P
from plait.ir.interpreter import impl_rules
from plait.ir.primitives.random import PRNGImpl
from plait.ir.reference.elementwise import _def

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
    """Record keys holding ``data`` (``uint32[..., 2]``)."""
    return np.ascontiguousarray(data, _U32).view(impl.dtype)[..., 0]


def _counters(shape: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
    index = np.arange(math.prod(shape), dtype=np.uint64).reshape(shape)
    return (index >> np.uint64(32)).astype(_U32), index.astype(_U32)


def _seed(seeds: np.ndarray, *, impl: PRNGImpl) -> np.ndarray:
    s = np.asarray(seeds)
    wide = s.itemsize > 4
    hi = (s.astype(np.uint64) >> np.uint64(32)).astype(_U32) if wide else np.zeros(s.shape, _U32)
    return _keys(np.stack([hi, s.astype(_U32)], axis=-1), impl)


def _per_key(fn: Any, keys: np.ndarray) -> np.ndarray:
    """``fn`` of each key's data, stacked in the keys' shape."""
    flat = _data(keys).reshape(-1, 2)
    probe = fn(np.zeros(2, _U32))
    outs = [fn(k) for k in flat]
    stacked = np.stack(outs) if outs else np.zeros((0, *probe.shape), probe.dtype)
    return stacked.reshape(keys.shape + probe.shape)


def _partitionable_only(partitionable: bool, what: str) -> None:
    if not partitionable:
        raise NotImplementedError(f"the reference interpreter computes {what} with "
                                  "jax_threefry_partitionable on only; run the program "
                                  "compiled (plait.jit) for the other mode")


def _split(keys: np.ndarray, *, shape: tuple[int, ...], partitionable: bool = True
           ) -> np.ndarray:
    _partitionable_only(partitionable, "random_split")

    def one(k: np.ndarray) -> np.ndarray:
        hi, lo = _counters(shape)
        return np.stack(threefry(k[0], k[1], hi, lo), axis=-1)
    return _keys(_per_key(one, keys), PRNGImpl(dt.key_tag(keys.dtype)))


def _fold_in(keys: np.ndarray, msgs: np.ndarray) -> np.ndarray:
    keys, msgs = np.broadcast_arrays(keys, np.asarray(msgs, _U32))
    data = _data(keys)
    out = np.stack(threefry(data[..., 0], data[..., 1], np.uint32(0), msgs), axis=-1)
    return _keys(out, PRNGImpl(dt.key_tag(keys.dtype)))


_UINT = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}


def _bits(keys: np.ndarray, *, bit_width: int, shape: tuple[int, ...],
          partitionable: bool = True) -> np.ndarray:
    _partitionable_only(partitionable, "random_bits")

    def one(k: np.ndarray) -> np.ndarray:
        hi, lo = _counters(shape)
        b0, b1 = threefry(k[0], k[1], hi, lo)
        if bit_width == 64:
            wide: np.ndarray = (b0.astype(np.uint64) << np.uint64(32)) | b1.astype(np.uint64)
            return wide
        return np.asarray(b0 ^ b1).astype(_UINT[bit_width])
    return _per_key(one, keys)


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

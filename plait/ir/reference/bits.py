"""Reference rules of the bit operations (XLA semantics, in NumPy)."""

from __future__ import annotations

from typing import Any

import numpy as np

from plait.ir import primitives as P
from plait.ir.reference.elementwise import _def


def _unsigned(x: np.ndarray) -> np.ndarray:
    return x.view(np.dtype(f"u{x.dtype.itemsize}"))


def _signed(x: np.ndarray) -> np.ndarray:
    return x.view(np.dtype(f"i{x.dtype.itemsize}"))


def _shift(kind: str) -> Any:
    def rule(x: np.ndarray, y: np.ndarray, **_: Any) -> np.ndarray:
        x, y = np.broadcast_arrays(np.asarray(x), np.asarray(y))
        width = x.dtype.itemsize * 8
        # Amounts are read as unsigned: negative ones are huge, past the width.
        amount = _unsigned(np.ascontiguousarray(y)).astype(np.uint64)
        big = amount >= width
        safe = np.where(big, 0, amount).astype(_unsigned(x).dtype)
        if kind == "left":
            out = np.where(big, 0, _unsigned(np.ascontiguousarray(x)) << safe)
            return np.asarray(out).astype(_unsigned(x).dtype).view(x.dtype)
        if kind == "logical":
            out = np.where(big, 0, _unsigned(np.ascontiguousarray(x)) >> safe)
            return np.asarray(out).astype(_unsigned(x).dtype).view(x.dtype)
        sx = _signed(np.ascontiguousarray(x))
        out = np.where(big, np.where(sx < 0, -1, 0), sx >> safe.astype(sx.dtype))
        return np.asarray(out).astype(sx.dtype).view(x.dtype)
    return rule


def _population_count(x: np.ndarray, **_: Any) -> np.ndarray:
    counts: np.ndarray = np.bitwise_count(_unsigned(np.ascontiguousarray(x)))
    return counts.astype(x.dtype)


def _clz(x: np.ndarray, **_: Any) -> np.ndarray:
    u = _unsigned(np.ascontiguousarray(x)).astype(np.uint64)
    width = x.dtype.itemsize * 8
    bits = np.zeros(u.shape, np.int64)
    for _i in range(width):  # the bit length: shift until nothing is left
        nonzero = u > 0
        bits += nonzero
        u = u >> np.uint64(1)
    return (width - bits).astype(x.dtype)


_def(P.shift_left_p, _shift("left"))
_def(P.shift_right_logical_p, _shift("logical"))
_def(P.shift_right_arithmetic_p, _shift("arithmetic"))
_def(P.population_count_p, _population_count)
_def(P.clz_p, _clz)
_def(P.stop_gradient_p, lambda x: x)

"""Timing helpers shared by the side-by-side benchmarks."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import jax


def block(x: Any) -> Any:
    """Wait for every array in ``x`` (plait's and jax's Arrays both have
    ``block_until_ready``)."""
    return [v.block_until_ready() for v in jax.tree_util.tree_leaves(x)]


def best_of(fn: Callable[[], Any], number: int, repeat: int = 7) -> float:
    """The best mean time in seconds of ``number`` calls of ``fn`` over ``repeat`` rounds."""
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        best = min(best, (time.perf_counter() - t0) / number)
    return best

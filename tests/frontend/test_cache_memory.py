"""Caches are bounded: memory stays flat over many ``grad`` calls with changing constants,
and a cache hit still skips the work (counted)."""

from __future__ import annotations

import gc
import tracemalloc
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest

import plait
import plait.numpy as pnp
from plait.ir.caches import BoundedDict, LRUCache, _live


@pytest.fixture
def small_caches() -> Iterator[None]:
    """Every cache bounded at 16 entries, so that a test fills them quickly."""
    plait.clear_caches()
    saved = [(c, c.maxsize) for c in _live() if isinstance(c, LRUCache | BoundedDict)]
    for c, _ in saved:
        c.maxsize = 16
    try:
        yield
    finally:
        for c, m in saved:
            c.maxsize = m


def _grad_with_constant(c: float) -> object:
    return plait.grad(lambda x: pnp.sin(x) * c)(1.0)


def _traced_grad_with_constant(c: float) -> object:
    return plait.make_jaxpr(plait.grad(lambda x: pnp.sin(x) * c))(1.0)


def _python_memory_growth(step: Callable[[float], Any], start: int, stop: int,
                          checkpoint: int) -> int:
    """Bytes allocated (and still held) between call ``checkpoint`` and call ``stop``."""
    tracemalloc.start()
    try:
        for i in range(start, checkpoint):
            step(i + 0.25)
        gc.collect()
        before = tracemalloc.get_traced_memory()[0]
        for i in range(checkpoint, stop):
            step(i + 0.25)
        gc.collect()
        return tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()


def test_transform_caches_stay_flat_over_many_traced_grads(small_caches: None) -> None:
    growth = _python_memory_growth(_traced_grad_with_constant, 0, 1200, 400)
    # Each call leaves a new literal, jaxprs and transformed jaxprs; unbounded caches kept
    # ~15 kB per call here (12 MB over 800 calls).
    assert growth < 400_000, f"{growth} bytes kept over 800 calls"
    sizes = {name: info.size for name, info in plait.cache_info().items()}
    assert all(n <= 16 for n in sizes.values()), sizes


def test_compiled_grads_stay_bounded(small_caches: None) -> None:
    growth = _python_memory_growth(_grad_with_constant, 0, 120, 40)
    assert growth < 400_000, f"{growth} bytes kept over 80 compiled calls"
    assert plait.cache_info()["executables"].size <= 16


def test_hits_skip_the_work() -> None:
    plait.clear_caches()
    info = plait.cache_info

    def f(x: object) -> object:
        return pnp.sin(x) * 2.0

    g = plait.grad(f)
    assert np.allclose(g(1.0), 2 * np.cos(1.0))
    first = {k: (v.hits, v.misses) for k, v in info().items()}
    for _ in range(5):
        g(1.0)
    after = {k: (v.hits, v.misses) for k, v in info().items()}
    # Tracing again gives an equal jaxpr: no transformation or compilation runs again.
    for name in ("value_and_grad", "executables"):
        assert after[name][1] == first[name][1], name
        assert after[name][0] >= first[name][0] + 5, name
    plait.clear_caches()
    g(1.0)
    assert info()["executables"].misses == after["executables"][1] + 1


@pytest.mark.slow
def test_ten_thousand_grads_with_changing_constants_keep_memory_flat() -> None:
    """The issue's measure, with the real cache bounds: resident memory, which includes
    compiled executables, stays flat once the caches are full."""
    def rss() -> int:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * 4096

    plait.clear_caches()
    for i in range(3000):
        _grad_with_constant(i + 0.5)
    gc.collect()
    before = rss()
    for i in range(3000, 10000):
        _grad_with_constant(i + 0.5)
    gc.collect()
    assert rss() - before < 60_000_000

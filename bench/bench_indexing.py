"""Gather and scatter speed, plait and jax side by side in one process.

Prints, for each library and the ratio plait / jax (lower is better):
* the jitted gradient of an embedding lookup, ``sum(E[ids] @ W)`` with ``E``
  f32[50000, 256], ``W`` f32[256, 64] and 4096 ids (gather forward, scatter-add
  backward);
* a jitted ``x.at[idx].add(v)`` with 10^5 updates into f32[10^6];
* tracing ``x[idx]`` (``make_jaxpr``), in microseconds.
Run from the repository root: python -m bench.bench_indexing
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

import plait
import plait.numpy as pnp
from bench._timing import best_of, best_of_pair, block, record


def run(fn: Callable[..., Any], args: tuple[Any, ...]) -> Any:
    """Call ``fn`` and wait for its results, leaving them on the device for both libraries:
    a copy to the host would be timed for one library only."""
    return block(fn(*args))


def trace_getitem(lib: Any, x: Any, i: Any) -> Any:
    return lib.make_jaxpr(lambda a, j: a[j])(x, i)


def main() -> None:
    rng = np.random.default_rng(0)
    emb = rng.normal(size=(50000, 256)).astype(np.float32)
    w = rng.normal(size=(256, 64)).astype(np.float32) / 16
    ids = rng.integers(0, 50000, size=4096).astype(np.int32)
    x = np.zeros(10**6, np.float32)
    idx = rng.integers(0, 10**6, size=10**5).astype(np.int32)
    vals = rng.normal(size=10**5).astype(np.float32)

    def loss(np_: Any) -> Callable[..., Any]:
        return lambda e, w, i: np_.sum(e[i] @ w)

    def embedding(lib: Any, np_: Any) -> tuple[Callable[..., Any], tuple[Any, ...]]:
        return lib.jit(lib.grad(loss(np_), argnums=(0, 1))), (emb, w, ids)

    def scatter_add(lib: Any, np_: Any) -> tuple[Callable[..., Any], tuple[Any, ...]]:
        return lib.jit(lambda a, i, v: a.at[i].add(v)), (x, idx, vals)

    libs = {"plait": (plait, pnp), "jax": (jax, jnp)}
    for name, make in [("indexing: jitted grad of embedding lookup", embedding),
                       ("indexing: jitted x.at[idx].add(v), 1e5 updates", scatter_add)]:
        runs = {}
        for lib_name, (lib, np_) in libs.items():
            fn, args = make(lib, np_)
            block(fn(*args))
            runs[lib_name] = functools.partial(run, fn, args)
        record(name, *best_of_pair(runs["plait"], runs["jax"], 5, repeat=7))
    small = np.zeros((100, 8), np.float32)
    some = np.array([3, 1, 4], np.int32)
    trace = {}
    for lib_name, (lib, _) in libs.items():
        trace[lib_name] = best_of(functools.partial(trace_getitem, lib, small, some), 50)
    record("indexing: make_jaxpr of x[idx]", trace["plait"], trace["jax"], unit="us")


if __name__ == "__main__":
    main()

"""Gather and scatter speed, plait and jax side by side in one process.

Prints, for each library and the ratio plait / jax (lower is better):
* the jitted gradient of an embedding lookup, ``sum(E[ids] @ W)`` with ``E``
  f32[50000, 256], ``W`` f32[256, 64] and 4096 ids (gather forward, scatter-add
  backward);
* a jitted ``x.at[idx].add(v)`` with 10^5 updates into f32[10^6];
* tracing ``x[idx]`` (``make_jaxpr``), in microseconds.
Run: python bench/bench_indexing.py
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

import plait
import plait.numpy as pnp


def best_of(fn: Callable[[], Any], number: int, repeat: int = 7) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        best = min(best, (time.perf_counter() - t0) / number)
    return best


def block(x: Any) -> Any:
    """Wait for every result (a pytree of jax or plait arrays), leaving it on the device
    for both: a copy to the host would be timed for one library only."""
    return [v.block_until_ready() for v in jax.tree_util.tree_leaves(x)]


def run(fn: Callable[..., Any], args: tuple[Any, ...]) -> Any:
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

    rows = []
    libs = {"plait": (plait, pnp), "jax": (jax, jnp)}
    for name, make in [("grad embedding lookup (ms)", embedding),
                       ("x.at[idx].add(v), 1e5 updates (ms)", scatter_add)]:
        times = {}
        for lib_name, (lib, np_) in libs.items():
            fn, args = make(lib, np_)
            block(fn(*args))
            times[lib_name] = best_of(functools.partial(run, fn, args), 5) * 1e3
        rows.append((name, times["plait"], times["jax"]))
    small = np.zeros((100, 8), np.float32)
    some = np.array([3, 1, 4], np.int32)
    trace = {}
    for lib_name, (lib, _) in libs.items():
        trace[lib_name] = best_of(functools.partial(trace_getitem, lib, small, some), 50) * 1e6
    rows.append(("trace x[idx] (us)", trace["plait"], trace["jax"]))
    print(f"{'figure':40} {'plait':>10} {'jax':>10} {'plait/jax':>10}")
    for name, p, j in rows:
        print(f"{name:40} {p:10.3f} {j:10.3f} {p / j:10.2f}")


if __name__ == "__main__":
    main()

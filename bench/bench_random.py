"""plait.random and jax.random side by side (issue 14's figures): jitted sampling and key
splitting from the same key, whose results are equal bit for bit.

Prints the best time of each over several rounds and the ratio plait / jax (lower is
better).  Run it several times on a quiet machine, from the repository root:
python -m bench.bench_random
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.random as jr
import numpy as np

import plait
import plait.random as pr
from bench._timing import best_of_pair, block, record


def _figure(label: str, make: Callable[[Any], Callable[[Any], Any]], number: int) -> None:
    runs = {}
    for name, lib, rnd in (("plait", plait, pr), ("jax", jax, jr)):
        fn = lib.jit(make(rnd))
        key = rnd.key(0)
        out = block(fn(key))
        def run(f: Any = fn, k: Any = key) -> Any:
            return block(f(k))
        runs[name] = run
        if name == "plait":
            first = out
        else:
            same = all(np.array_equal(np.asarray(a), np.asarray(b)) for a, b in zip(first, out))
            assert same, f"{label}: plait's results differ from jax's"
    record(f"random: {label}", *best_of_pair(runs["plait"], runs["jax"], number, repeat=7))


def main() -> None:
    _figure("normal(key, (10**6,))", lambda r: lambda k: r.normal(k, (10 ** 6,)), 20)
    _figure("uniform(key, (10**6,))", lambda r: lambda k: r.uniform(k, (10 ** 6,)), 20)
    _figure("split(key, 10**4) (key data)",
            lambda r: lambda k: r.key_data(r.split(k, 10 ** 4)), 200)
    _figure("randint(key, (10**6,), 0, 100)",
            lambda r: lambda k: r.randint(k, (10 ** 6,), 0, 100), 20)


if __name__ == "__main__":
    main()

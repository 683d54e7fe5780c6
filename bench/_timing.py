"""Timing and reporting helpers shared by the side-by-side benchmarks.

Every figure goes through :func:`record`: it prints one line (plait's time, jax's
time, the ratio plait / jax, lower is better for plait) and, when the
``PLAIT_BENCH_RESULTS`` environment variable names a file (``bench/run_all.py``
sets it), appends the figure to that file as one JSON line.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from typing import Any

RESULTS_ENV = "PLAIT_BENCH_RESULTS"
"""The environment variable naming the JSON-lines file figures are appended to."""

_UNITS = {"s": 1.0, "ms": 1e3, "us": 1e6}


def block(x: Any) -> Any:
    """Wait for every array in ``x`` (plait's and jax's Arrays both have
    ``block_until_ready``)."""
    import jax
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


def best_of_pair(ours: Callable[[], Any], theirs: Callable[[], Any], number: int,
                 repeat: int = 9) -> tuple[float, float]:
    """The best mean time in seconds of ``number`` calls of each of two functions, over
    rounds that alternate which runs first (on 2 cores, whichever runs second in a
    round can find the machine busier: the order moved ratios by up to 0.3)."""
    best = [float("inf"), float("inf")]
    fns = [ours, theirs]
    for r in range(repeat):
        for i in ((0, 1) if r % 2 == 0 else (1, 0)):
            t0 = time.perf_counter()
            for _ in range(number):
                fns[i]()
            best[i] = min(best[i], (time.perf_counter() - t0) / number)
    return best[0], best[1]


def record(name: str, plait_s: float, jax_s: float, unit: str = "ms",
           note: str = "") -> None:
    """Report one side-by-side figure: seconds per operation in each library.

    ``unit`` is how the line prints the times (``s``, ``ms`` or ``us``); the
    results file keeps seconds.  ``note`` says what the figure includes.
    """
    scale = _UNITS[unit]
    ratio = plait_s / jax_s
    extra = f"  ({note})" if note else ""
    print(f"{name}: plait {plait_s * scale:.3f} {unit}, jax {jax_s * scale:.3f} {unit}, "
          f"plait/jax = {ratio:.2f}{extra}", flush=True)
    path = os.environ.get(RESULTS_ENV)
    if path:
        entry = {"name": name, "plait_s": plait_s, "jax_s": jax_s, "ratio": ratio,
                 "unit": unit, "note": note}
        with open(path, "a") as f:
            f.write(json.dumps(entry) + "\n")

"""Mutable arrays (``Ref``), plait and jax side by side: a jitted call that updates a
Ref it closes over, one that takes Refs as arguments, and a scan whose body updates
a Ref, against the same programs written with values threaded through.

Prints the best time of each over several rounds and the ratio plait / jax (lower is
better).  Run it several times on a quiet machine, from the repository root:
python -m bench.bench_refs
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import jax
import numpy as np

import plait
from bench._timing import best_of_pair, block, record

F32 = np.float32


def _programs(lib: Any) -> dict[str, Callable[[], Any]]:
    """Each figure's call, set up (traced and compiled) for ``lib``."""
    counter = lib.new_ref(np.zeros(8, F32))

    @lib.jit
    def bump() -> None:
        counter[...] += 1.0

    @lib.jit
    def sin_into(x_ref: Any, y_ref: Any) -> None:
        y_ref[...] = lib.numpy.sin(x_ref[...])

    xr, yr = lib.new_ref(np.ones(8, F32)), lib.new_ref(np.zeros(8, F32))
    total = lib.new_ref(np.zeros((), F32))

    @lib.jit
    def scan_sum(xs: Any) -> Any:
        def body(c: Any, x: Any) -> Any:
            total[...] += x
            return c, None
        return lib.lax.scan(body, 0.0, xs)[0]

    xs = np.ones(1000, F32)
    calls = {"jit call updating a closed-over Ref, f32[8]": bump,
             "jit call with two Ref arguments, f32[8]": functools.partial(sin_into, xr, yr),
             "jit scan of 1000 steps updating a Ref": functools.partial(scan_sum, xs)}
    for call in calls.values():
        call()
    block([counter[...], yr[...], total[...]])
    return calls


def main() -> None:
    ours, theirs = _programs(plait), _programs(jax)
    for label in ours:
        p, j = best_of_pair(ours[label], theirs[label], 300)
        record(f"refs: {label}", p, j, unit="us")


if __name__ == "__main__":
    main()

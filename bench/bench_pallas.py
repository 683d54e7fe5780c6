"""Pallas kernels in interpret mode, plait and jax side by side: the first call of a
blocked matmul (tracing the kernel and compiling), then cached calls of it, of a
Triton-style row softmax with masked loads, and of a TPU-style matmul with a VMEM
accumulator.

Prints the best time of each over several rounds and the ratio plait / jax (lower is
better).  Run it several times on a quiet machine, from the repository root:
python -m bench.bench_pallas
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from typing import Any

import jax
import numpy as np

import plait
from bench._timing import best_of_pair, block, record
from tests.frontend.pallas_kernels import JAX, PLAIT, tpu_matmul
from tests.frontend.pallas_kernels import matmul as blocked_matmul
from tests.frontend.pallas_kernels import softmax as row_softmax


def _run(f: Callable[..., Any], args: tuple[Any, ...]) -> Any:
    return block(f(*args))


def main() -> None:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((256, 256), np.float32)
    s = rng.standard_normal((64, 100), np.float32)
    first = []
    for lib in (PLAIT, JAX):
        t0 = time.perf_counter()
        block(lib.lib.jit(blocked_matmul(lib, 32, 32, 32))(x, x))
        first.append(time.perf_counter() - t0)
    record("pallas: first call of a blocked matmul, 256x256, 8x8x8 grid (trace + compile)",
           first[0], first[1], unit="ms")
    cases = [("cached call of a blocked matmul, 256x256, 8x8x8 grid",
              functools.partial(blocked_matmul, bm=32, bn=32, bk=32), (x, x), 20),
             ("cached call of a masked row softmax, 64x100, 64 programs",
              functools.partial(row_softmax, block=128), (s,), 50),
             ("cached call of a TPU-style matmul with a VMEM accumulator, 256x256",
              functools.partial(tpu_matmul, b=32), (x, x), 20)]
    for label, make, args, number in cases:
        ours, theirs = plait.jit(make(PLAIT)), jax.jit(make(JAX))
        np.testing.assert_allclose(np.asarray(ours(*args)), np.asarray(theirs(*args)),
                                   rtol=1e-4, atol=1e-4)
        p, j = best_of_pair(functools.partial(_run, ours, args),
                            functools.partial(_run, theirs, args), number)
        record(f"pallas: {label}", p, j, unit="ms")


if __name__ == "__main__":
    main()

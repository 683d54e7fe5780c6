"""A jitted training step of a small convolutional network, plait and jax side by side.

The network is tests/frontend/cnn_model.py's (two strided 3x3 'SAME' convolutions
with ReLU, a 2x2 max pool, a dense layer, softmax cross-entropy), at batch 64 on
32x32x3 inputs.  Prints the best time of each library over several rounds and the
ratio plait / jax (lower is better); run it several times on a quiet machine.
Run: python bench/bench_cnn.py
"""

from __future__ import annotations

import functools
import pathlib
import sys
import time
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax as jlax

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))

import plait  # noqa: E402
import plait.lax as plax  # noqa: E402
import plait.numpy as pnp  # noqa: E402
from tests.frontend.cnn_model import data, init_params, train_step  # noqa: E402


def block(x: Any) -> Any:
    """Wait for every result, leaving it on the device (for both libraries)."""
    return [v.block_until_ready() for v in jax.tree_util.tree_leaves(x)]


def run(fn: Callable[..., Any], args: tuple[Any, ...]) -> Any:
    return block(fn(*args))


def best_of(fn: Callable[[], Any], number: int, repeat: int = 7) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        best = min(best, (time.perf_counter() - t0) / number)
    return best


def main() -> None:
    rng = np.random.default_rng(0)
    params = init_params(rng)
    x, y = data(rng, 64)
    times = {}
    for name, (lib, np_, lax_) in {"plait": (plait, pnp, plax),
                                   "jax": (jax, jnp, jlax)}.items():
        step = train_step(lib, np_, lax_)
        p = lib.tree_util.tree_map(lib.numpy.asarray, params)
        xs, ys = lib.numpy.asarray(x), lib.numpy.asarray(y)
        block(step(p, xs, ys))
        times[name] = best_of(functools.partial(run, step, (p, xs, ys)), 10) * 1e3
    print(f"{'CNN training step, batch 64, 32x32x3 (ms)':<45} {'plait':>8} {'jax':>8} {'ratio':>6}")
    print(f"{'':<45} {times['plait']:8.3f} {times['jax']:8.3f} "
          f"{times['plait'] / times['jax']:6.2f}")


if __name__ == "__main__":
    main()

"""A recurrent network's training step through ``lax.scan``, plait and jax side by side.

An Elman RNN (hidden 256, batch 32, 200 steps, ``h = tanh(h W + x U + b)``) whose loss
reads the final state and every step's output.  Figures: the jitted gradient of the
loss (forward scan, then the backward scan over the saved residuals), and the jitted
forward pass alone.  Inputs stay on the device.  Prints the best time per call of each
library and the ratio plait / jax (lower is better).
Run from the repository root: python -m bench.bench_scan
"""

from __future__ import annotations

import functools
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

import plait
import plait.numpy as pnp
from bench._timing import best_of_pair, block, record

T, B, H = 200, 32, 256


def make_loss(lib: Any, np_: Any) -> Any:
    def loss(params: Any, xs: Any, h0: Any) -> Any:
        w, u, b = params

        def step(h: Any, x: Any) -> Any:
            h = np_.tanh(h @ w + x @ u + b)
            return h, h.sum()
        h, ys = lib.lax.scan(step, h0, xs)
        return np_.sum(h ** 2) + ys.sum()
    return loss


def run(fn: Any, args: Any) -> Any:
    return block(fn(*args))


def main() -> None:
    rng = np.random.default_rng(0)
    params = ((rng.normal(size=(H, H)) / np.sqrt(H)).astype(np.float32),
              (rng.normal(size=(H, H)) / np.sqrt(H)).astype(np.float32),
              np.zeros(H, np.float32))
    xs = rng.normal(size=(T, B, H)).astype(np.float32)
    h0 = np.zeros((B, H), np.float32)
    runs: dict[tuple[str, str], Any] = {}
    results = {}
    for name, lib, np_ in (("plait", plait, pnp), ("jax", jax, jnp)):
        args = lib.device_put((params, xs, h0))
        loss = make_loss(lib, np_)
        fns = {"grad": lib.jit(lib.grad(loss)), "forward": lib.jit(loss)}
        for what, fn in fns.items():
            results[name, what] = block(fn(*args))
            runs[name, what] = functools.partial(run, fn, args)
    for a, b in zip(results["plait", "grad"], results["jax", "grad"]):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=2e-3, atol=2e-3)
    for what, label in (("grad", "jit(grad) step"), ("forward", "jit forward")):
        t_p, t_j = best_of_pair(runs["plait", what], runs["jax", what], 5, repeat=6)
        record(f"scan: RNN {label}, T={T} B={B} H={H}", t_p, t_j)

if __name__ == "__main__":
    main()

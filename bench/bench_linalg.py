"""Linear algebra and Fourier transforms, plait and jax side by side (issue 13's figures).

Each figure is a jitted function run on the same inputs by both libraries; prints the
best time of each over several rounds and the ratio plait / jax (lower is better).
Run it several times on a quiet machine, from the repository root:
python -m bench.bench_linalg
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import jax.scipy.linalg as jsl
import numpy as np

import plait
import plait.numpy as pnp
import plait.scipy.linalg as psl
from bench._timing import best_of_pair, block, record


def _figure(label: str, make: Callable[[Any, Any], Callable[..., Any]],
            args: tuple[Any, ...], number: int) -> None:
    runs = {}
    libs = {"plait": (plait, pnp, psl), "jax": (jax, jnp, jsl)}
    for name, (lib, np_, sl) in libs.items():
        fn = lib.jit(make(np_, sl))
        xs = tuple(np_.asarray(a) for a in args)
        block(fn(*xs))
        runs[name] = functools.partial(lambda f, a: block(f(*a)), fn, xs)
    record(f"linalg: {label}", *best_of_pair(runs["plait"], runs["jax"], number, repeat=7))


def main() -> None:
    rng = np.random.default_rng(0)
    x = (rng.normal(size=(1024, 1024)) + 1j * rng.normal(size=(1024, 1024))).astype(np.complex64)
    _figure("fft2, complex64 1024x1024", lambda np_, sl: np_.fft.fft2, (x,), 5)
    r = rng.normal(size=(64, 4096)).astype(np.float32)
    _figure("rfft + irfft, float32 64x4096", lambda np_, sl: lambda a: np_.fft.irfft(
        np_.fft.rfft(a)), (r,), 20)
    g = rng.normal(size=(64, 256, 256)).astype(np.float32)
    spd = g @ np.swapaxes(g, -1, -2) + 256 * np.eye(256, dtype=np.float32)
    rhs = rng.normal(size=(64, 256, 1)).astype(np.float32)
    _figure("cholesky + cho_solve, 64 x f32[256,256]", lambda np_, sl: lambda a, b: sl.cho_solve(
        sl.cho_factor(a, lower=True), b), (spd, rhs), 5)
    m = rng.normal(size=(512, 512)).astype(np.float32)
    _figure("svd, f32[512,512]", lambda np_, sl: lambda a: np_.linalg.svd(a), (m,), 3)
    _figure("solve, f32[512,512]", lambda np_, sl: np_.linalg.solve, (m, m[:, :8]), 5)


if __name__ == "__main__":
    main()

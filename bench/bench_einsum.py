"""``einsum`` over several operands, plait and jax side by side in one process.

Prints, for each library and the ratio plait / jax (lower is better):
* a jitted ``einsum("ij,jk,k->i")`` with f32[1024, 1024] matrices (the order of the
  contractions decides the cost: the vector first is two matrix-vector products,
  the matrices first a matrix product);
* a jitted five-operand chain ``ab,bc,cd,de,e->a`` (f32[512, 512] and a vector);
* tracing (``make_jaxpr``) a ten-operand ring ``ab,bc,...,ja->`` of f32[8, 8], which
  runs the branch-and-bound search over the contraction orders, in microseconds.
Run from the repository root: python -m bench.bench_einsum
"""

from __future__ import annotations

import functools
import string
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

import plait
import plait.numpy as pnp
from bench._timing import best_of, best_of_pair, block, record


def run(fn: Callable[..., Any], args: tuple[Any, ...]) -> Any:
    """Call ``fn`` and wait for its results (left on the device for both libraries)."""
    return block(fn(*args))


def trace(lib: Any, np_: Any, spec: str, ops: list[np.ndarray]) -> Any:
    return lib.make_jaxpr(lambda *xs: np_.einsum(spec, *xs))(*ops)


def main() -> None:
    rng = np.random.default_rng(0)
    big = [rng.standard_normal((1024, 1024)).astype(np.float32) for _ in range(2)]
    vec = rng.standard_normal(1024).astype(np.float32)
    chain = [rng.standard_normal((512, 512)).astype(np.float32) / 16 for _ in range(4)]
    libs = {"plait": (plait, pnp), "jax": (jax, jnp)}
    cases = [("einsum: jitted ij,jk,k->i, f32[1024,1024]", "ij,jk,k->i", (*big, vec)),
             ("einsum: jitted ab,bc,cd,de,e->a, f32[512,512]", "ab,bc,cd,de,e->a",
              (*chain, vec[:512]))]
    for name, spec, args in cases:
        runs = {}
        for lib_name, (lib, np_) in libs.items():
            fn = lib.jit(functools.partial(np_.einsum, spec))
            block(fn(*args))
            runs[lib_name] = functools.partial(run, fn, args)
        record(name, *best_of_pair(runs["plait"], runs["jax"], 5, repeat=7))
    letters = string.ascii_lowercase[:10]
    ring = ",".join(a + b for a, b in zip(letters, letters[1:] + letters[0])) + "->"
    small = [rng.standard_normal((8, 8)).astype(np.float32) for _ in range(10)]
    times = {lib_name: best_of(functools.partial(trace, lib, np_, ring, small), 20)
             for lib_name, (lib, np_) in libs.items()}
    record("einsum: make_jaxpr of a 10-operand ring", times["plait"], times["jax"], unit="us")


if __name__ == "__main__":
    main()

"""A transformer block's training step, plait and jax side by side.

One pre-norm block: multi-head self-attention (4 heads, causal mask, softmax) and a
GELU MLP, each with layer norm and a residual connection, then a mean-squared loss;
batch 8, sequence 128, width 256.  The step is ``jit`` of the gradient plus an SGD
update; inputs stay on the device.  Prints the best time per step of each library and
the ratio plait / jax (lower is better).
Run from the repository root: python -m bench.bench_attention
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

BATCH, SEQ, D, HEADS = 8, 128, 256, 4


def init(rng: np.random.Generator) -> dict[str, np.ndarray]:
    def dense(m: int, n: int) -> np.ndarray:
        return (rng.normal(size=(m, n)) / np.sqrt(m)).astype(np.float32)
    return {"qkv": dense(D, 3 * D), "out": dense(D, D), "up": dense(D, 4 * D),
            "down": dense(4 * D, D), "g1": np.ones(D, np.float32), "g2": np.ones(D, np.float32),
            "b_up": np.zeros(4 * D, np.float32)}


def make_step(lib: Any, np_: Any) -> Any:
    def norm(x: Any, g: Any) -> Any:
        mu = x.mean(-1, keepdims=True)
        var = ((x - mu) ** 2).mean(-1, keepdims=True)
        return (x - mu) * lib.lax.rsqrt(var + 1e-5) * g

    def block_fn(p: Any, x: Any) -> Any:
        q, k, v = np_.split(norm(x, p["g1"]) @ p["qkv"], 3, axis=-1)
        def heads(t: Any) -> Any:
            return t.reshape(BATCH, SEQ, HEADS, D // HEADS).transpose(0, 2, 1, 3)
        q, k, v = heads(q), heads(k), heads(v)
        scores = q @ k.transpose(0, 1, 3, 2) / np.sqrt(D // HEADS)
        mask = np_.tril(np_.ones((SEQ, SEQ), bool))
        attn = lib.nn.softmax(np_.where(mask, scores, -1e9), axis=-1) @ v
        x = x + attn.transpose(0, 2, 1, 3).reshape(BATCH, SEQ, D) @ p["out"]
        hidden = lib.nn.gelu(norm(x, p["g2"]) @ p["up"] + p["b_up"])
        return x + hidden @ p["down"]

    def loss(p: Any, x: Any, y: Any) -> Any:
        return np_.mean((block_fn(p, x) - y) ** 2)

    def step(p: Any, x: Any, y: Any) -> Any:
        g = lib.grad(loss)(p, x, y)
        return lib.tree_util.tree_map(lambda a, b: a - 0.01 * b, p, g)
    return lib.jit(step)


def run(fn: Any, args: Any) -> Any:
    return block(fn(*args))


def main() -> None:
    rng = np.random.default_rng(0)
    params = init(rng)
    x = rng.normal(size=(BATCH, SEQ, D)).astype(np.float32)
    y = rng.normal(size=(BATCH, SEQ, D)).astype(np.float32)
    runs, results = {}, {}
    for name, lib, np_ in (("plait", plait, pnp), ("jax", jax, jnp)):
        step = make_step(lib, np_)
        args = lib.device_put((params, x, y))
        results[name] = block(step(*args))
        runs[name] = functools.partial(run, step, args)
    for a, b in zip(results["plait"], results["jax"]):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-3, atol=1e-4)
    t_p, t_j = best_of_pair(runs["plait"], runs["jax"], 5, repeat=6)
    record(f"attention: transformer block jit(grad) step, batch {BATCH} seq {SEQ} width {D}",
           t_p, t_j)

if __name__ == "__main__":
    main()

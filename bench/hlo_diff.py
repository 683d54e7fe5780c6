"""The compiled programs of the training-step benchmarks, plait's and jax's side by side.

For the MLP (bench_autodiff), transformer block (bench_attention), scan RNN gradient
(bench_scan) and CNN (bench_cnn) steps, lowers and compiles the same step in both
libraries and counts the instructions of XLA's optimized HLO by opcode; prints the
totals and every opcode whose count differs.  When the counts agree, a difference in
their timings lies in XLA's runtime, not in what plait emits.  Not a timing, so
``bench/run_all.py`` does not run it.
Run from the repository root: python -m bench.hlo_diff
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax as jlax

import plait
import plait.lax as plax
import plait.numpy as pnp
from bench import bench_attention, bench_autodiff, bench_scan
from tests.frontend.cnn_model import data, init_params, train_step

_INSTRUCTION = re.compile(r"\s*(?:ROOT )?%?[\w.\-]+ = .*? ([a-z][a-z\-]*)\(")


def opcodes(hlo: str) -> Counter[str]:
    """How many instructions of each opcode an HLO module's text has."""
    counts: Counter[str] = Counter()
    for line in hlo.splitlines():
        m = _INSTRUCTION.match(line)
        if m:
            counts[m.group(1)] += 1
    return counts


def compare(name: str, ours: Any, theirs: Any, args: tuple[Any, ...]) -> None:
    """Print the opcode counts of both compiled programs where they differ."""
    p = opcodes(ours.lower(*args).compile().as_text())
    j = opcodes(theirs.lower(*args).compile().as_text())
    print(f"{name}: plait {sum(p.values())} instructions, jax {sum(j.values())}")
    for op in sorted(set(p) | set(j)):
        if p[op] != j[op]:
            print(f"    {op}: plait {p[op]}, jax {j[op]}")


def main() -> None:
    rng = np.random.default_rng(0)
    params = bench_autodiff.init(rng)
    x = rng.normal(size=(128, 256)).astype(np.float32)
    y = rng.normal(size=(128, 10)).astype(np.float32)

    def mlp_step(lib: Any, np_: Any) -> Any:
        loss = bench_autodiff.make_loss(np_)

        def step(p: Any, x: Any, y: Any) -> Any:
            g = lib.grad(loss)(p, x, y)
            return lib.tree_util.tree_map(lambda a, b: a - 0.01 * b, p, g)
        return lib.jit(step)
    compare("MLP training step", mlp_step(plait, pnp), mlp_step(jax, jnp), (params, x, y))

    p = bench_attention.init(rng)
    xa = rng.normal(size=(bench_attention.BATCH, bench_attention.SEQ, bench_attention.D))
    xa = xa.astype(np.float32)
    compare("transformer block step", bench_attention.make_step(plait, pnp),
            bench_attention.make_step(jax, jnp), (p, xa, xa))

    t, b, h = bench_scan.T, bench_scan.B, bench_scan.H
    rnn_args = ((np.ones((h, h), np.float32), np.ones((h, h), np.float32),
                 np.zeros(h, np.float32)), np.ones((t, b, h), np.float32),
                np.zeros((b, h), np.float32))
    compare("scan RNN gradient", plait.jit(plait.grad(bench_scan.make_loss(plait, pnp))),
            jax.jit(jax.grad(bench_scan.make_loss(jax, jnp))), rnn_args)

    cx, cy = data(rng, 64)
    compare("CNN training step", train_step(plait, pnp, plax), train_step(jax, jnp, jlax),
            (init_params(rng), cx, cy))


if __name__ == "__main__":
    main()

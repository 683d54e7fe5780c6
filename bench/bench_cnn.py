"""A jitted training step of a small convolutional network, plait and jax side by side.

The network is tests/frontend/cnn_model.py's (two strided 3x3 'SAME' convolutions
with ReLU, a 2x2 max pool, a dense layer, softmax cross-entropy), at batch 64 on
32x32x3 inputs.  Prints the best time of each library over several rounds and the
ratio plait / jax (lower is better); run it several times on a quiet machine.
Run from the repository root: python -m bench.bench_cnn
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax as jlax

import plait
import plait.lax as plax
import plait.numpy as pnp
from bench._timing import best_of_pair, block, record
from tests.frontend.cnn_model import data, init_params, train_step


def run(fn: Callable[..., Any], args: tuple[Any, ...]) -> Any:
    return block(fn(*args))


def main() -> None:
    rng = np.random.default_rng(0)
    params = init_params(rng)
    x, y = data(rng, 64)
    runs = {}
    for name, (lib, np_, lax_) in {"plait": (plait, pnp, plax),
                                   "jax": (jax, jnp, jlax)}.items():
        step = train_step(lib, np_, lax_)
        p = lib.tree_util.tree_map(lib.numpy.asarray, params)
        xs, ys = lib.numpy.asarray(x), lib.numpy.asarray(y)
        block(step(p, xs, ys))
        runs[name] = functools.partial(run, step, (p, xs, ys))
    t_p, t_j = best_of_pair(runs["plait"], runs["jax"], 10)
    record("cnn: jitted training step, batch 64, 32x32x3", t_p, t_j)


if __name__ == "__main__":
    main()

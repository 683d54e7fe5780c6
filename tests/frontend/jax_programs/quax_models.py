"""quax's array types, written for JAX: ``python quax_models.py [name ...]`` prints, per
use (all of them unless named), numbers to compare as JSON.  quax defines a trace of its
own (``quaxify``), whose ``process_primitive`` dispatches each primitive on the types of
its operands."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import Any

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import quax
from quax.examples import lora, sparse, structured_matrices, unitful, zero

_X: Any = np.linspace(-1.0, 1.0, 4, dtype=np.float32)


def _flat(tree: Any) -> list[float]:
    return [float(v) for leaf in jax.tree_util.tree_leaves(tree)
            for v in np.ravel(np.asarray(leaf, np.float64))]


def _lora_train() -> list[float]:
    model = eqx.nn.MLP(4, 2, 8, 2, key=jax.random.PRNGKey(0))
    model = lora.loraify(model, rank=2, scale=0.5, key=jax.random.PRNGKey(1))

    @eqx.filter_jit
    def step(m: Any) -> Any:
        def loss(m: Any) -> Any:
            return jnp.sum((quax.quaxify(m)(_X) - 1.0) ** 2)
        value, grads = eqx.filter_value_and_grad(loss)(m)
        return value, eqx.apply_updates(m, jax.tree_util.tree_map(lambda g: -0.1 * g, grads))

    losses = []
    for _ in range(3):
        value, model = step(model)
        losses.append(float(value))
    return [*losses, *_flat(quax.quaxify(model)(_X))]


def _unitful() -> list[float]:
    metres = unitful.Unitful(jnp.array([3.0, 4.0]), {unitful.meters: 1})
    seconds = unitful.Unitful(jnp.array(2.0), {unitful.seconds: 1})
    area = quax.quaxify(lambda a: a * a)(metres)
    speed = quax.quaxify(jax.jit(lambda a, b: a * b))(metres, seconds)
    exps = [float(area.units[unitful.meters]), float(speed.units[unitful.seconds])]
    return [*_flat(area.array), *_flat(speed.array), *exps]


def _zero() -> list[float]:
    z = zero.Zero((3,), jnp.float32)
    y = jnp.arange(3.0)
    product = quax.quaxify(lambda a, b: a * b)(z, y)
    total = quax.quaxify(lambda a, b: a * b + b)(z, y)
    grads = jax.grad(lambda b: jnp.sum(quax.quaxify(lambda a, c: a * c + c * c)(z, b)))(y)
    return [float(isinstance(product, zero.Zero)), *_flat(total), *_flat(grads)]


def _sparse() -> list[float]:
    data = jnp.array([1.0, 2.0, 3.0])
    indices = jnp.array([[0, 1], [1, 0], [2, 2]])
    matrix = sparse.BCOO(data, indices, (3, 3))
    dense = jnp.arange(9.0).reshape(3, 3)
    added = quax.quaxify(lambda m, d: m + d)(matrix, dense)
    jitted = jax.jit(quax.quaxify(lambda m, d: d + m * 2.0))(matrix, dense)
    return [*_flat(added), *_flat(jitted)]


def _structured_loops() -> list[float]:
    tri = structured_matrices.TridiagonalMatrix(
        jnp.array([-1.0, -1.0]), jnp.array([2.0, 2.0, 2.0]), jnp.array([0.5, 0.5]))

    def iterate(m: Any, v: Any) -> Any:
        scanned = jax.lax.scan(lambda c, _: (m @ c, jnp.sum(c)), v, None, length=3)
        looped = jax.lax.fori_loop(0, 2, lambda i, c: m @ c, v)
        return scanned, looped
    (final, sums), looped = quax.quaxify(iterate)(tri, jnp.array([1.0, 0.0, -1.0]))
    return [*_flat(final), *_flat(sums), *_flat(looped)]


def uses() -> dict[str, Callable[[], list[float]]]:
    """Each use's numbers."""
    return {"lora_train": _lora_train, "unitful": _unitful, "zero": _zero,
            "sparse": _sparse, "structured_loops": _structured_loops}


def main(names: list[str] | None = None) -> dict[str, list[float]]:
    """The numbers of the uses named (all by default)."""
    return {name: run() for name, run in uses().items() if not names or name in names}


if __name__ == "__main__":
    print(json.dumps({"jax": jax.__version__, "results": main(sys.argv[1:])}))

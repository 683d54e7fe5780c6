"""Equinox's models and filtered transformations, written for JAX: ``python
equinox_models.py [name ...]`` prints, per use (all of them unless named), numbers to
compare as JSON."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import Any

import equinox as eqx
import equinox.internal as eqxi
import jax
import jax.numpy as jnp
import numpy as np
import optax

_X = np.linspace(-1.0, 1.0, 8 * 4, dtype=np.float32).reshape(8, 4)


def _flat(tree: Any) -> list[float]:
    return [float(v) for leaf in jax.tree_util.tree_leaves(eqx.filter(tree, eqx.is_array))
            for v in np.ravel(np.asarray(leaf, np.float64))]


def _mlp_train() -> list[float]:
    model = eqx.nn.MLP(4, 2, 16, 2, activation=jax.nn.gelu, key=jax.random.key(0))
    targets = jnp.sin(jnp.asarray(_X[:, :2]))
    opt = optax.adam(1e-2)
    state = opt.init(eqx.filter(model, eqx.is_inexact_array))

    @eqx.filter_jit
    def step(model: Any, state: Any) -> tuple[Any, Any, Any]:
        def loss(m: Any) -> Any:
            return jnp.mean((jax.vmap(m)(_X) - targets) ** 2)
        value, grads = eqx.filter_value_and_grad(loss)(model)
        updates, state = opt.update(grads, state, eqx.filter(model, eqx.is_inexact_array))
        return eqx.apply_updates(model, updates), state, value

    losses = []
    for _ in range(4):
        model, state, value = step(model, state)
        losses.append(float(value))
    return [*losses, *_flat(model)]


class _CNN(eqx.Module):
    conv: eqx.nn.Conv2d
    norm: eqx.nn.BatchNorm
    drop: eqx.nn.Dropout
    head: eqx.nn.Linear

    def __init__(self, key: Any) -> None:
        k1, k2 = jax.random.split(key)
        self.conv = eqx.nn.Conv2d(3, 4, 3, padding=1, key=k1)
        self.norm = eqx.nn.BatchNorm(4, axis_name="batch", mode="batch")
        self.drop = eqx.nn.Dropout(0.3)
        self.head = eqx.nn.Linear(4 * 4 * 4, 2, key=k2)

    def __call__(self, x: Any, state: Any, key: Any) -> tuple[Any, Any]:
        h = jax.nn.relu(self.conv(x))
        h, state = self.norm(h, state)
        h = eqx.nn.MaxPool2d(2, 2)(h)
        return self.head(self.drop(h.reshape(-1), key=key)), state


def _cnn_batchnorm() -> list[float]:
    model, state = eqx.nn.make_with_state(_CNN)(jax.random.key(1))
    images = jnp.linspace(-1.0, 1.0, 2 * 3 * 8 * 8).reshape(2, 3, 8, 8)
    keys = jax.random.split(jax.random.key(2), 2)

    def loss(m: Any, s: Any) -> tuple[Any, Any]:
        out, s = jax.vmap(m, axis_name="batch", in_axes=(0, None, 0), out_axes=(0, None))(
            images, s, keys)
        return jnp.sum(out ** 2), s

    (value, state), grads = eqx.filter_jit(eqx.filter_value_and_grad(loss, has_aux=True))(
        model, state)
    inference = eqx.nn.inference_mode(model)
    out, _ = jax.vmap(inference, axis_name="batch", in_axes=(0, None, None),
                      out_axes=(0, None))(images, state, None)
    return [float(value), *_flat(grads), *_flat(state), *_flat(out)]


def _attention_and_cells() -> list[float]:
    k1, k2, k3, k4 = jax.random.split(jax.random.key(3), 4)
    attention = eqx.nn.MultiheadAttention(2, 8, key=k1)
    embed = eqx.nn.Embedding(10, 8, key=k2)
    gru = eqx.nn.GRUCell(8, 5, key=k3)
    lstm = eqx.nn.LSTMCell(8, 5, key=k4)
    tokens = jnp.array([1, 4, 2, 9, 0])

    def run(att: Any) -> Any:
        x = jax.vmap(embed)(tokens)
        x = eqx.nn.LayerNorm(8)(att(x, x, x).sum(0))
        h = gru(x, jnp.zeros(5))
        return lstm(x, (h, jnp.zeros(5)))

    grads = eqx.filter_grad(lambda a: sum(jnp.sum(t ** 2) for t in run(a)))(attention)
    return [*_flat(run(attention)), *_flat(grads)]


def _loops_and_errors() -> list[float]:
    # equinox.internal's checkpointed while loop and error_if are built on equinox's own
    # primitives (jax.extend.core.Primitive with ad/batching/mlir rules).
    def body(carry: Any) -> Any:
        i, x = carry
        return i + 1, jnp.sin(x) * 1.1

    def final(x: Any) -> Any:
        _, out = eqxi.while_loop(lambda c: c[0] < 6, body, (0, x), max_steps=8,
                                 kind="checkpointed", checkpoints=3)
        return jnp.sum(out ** 2)

    x = jnp.asarray(_X[0])
    checked = eqx.error_if(x, x > 5.0, "too large")
    grads = jax.jit(jax.grad(final))(checked)
    batched = [jax.vmap(lambda v, k=kind: eqxi.while_loop(  # (the default binds the kind)
        lambda c: c[0] < 3, body, (0, v), max_steps=4, kind=k)[1])(_X[:3] + 0.5)
        for kind in ("lax", "checkpointed", "bounded")]
    updated = eqx.tree_at(lambda m: m.weight, eqx.nn.Linear(2, 2, key=jax.random.key(5)),
                          jnp.eye(2))
    return [float(final(x)), *_flat(grads), *_flat(batched), *_flat(updated)]


def uses() -> dict[str, Callable[[], list[float]]]:
    """Each use's numbers."""
    return {"mlp_train": _mlp_train, "cnn": _cnn_batchnorm, "attention": _attention_and_cells,
            "loops": _loops_and_errors}


def main(names: list[str] | None = None) -> dict[str, list[float]]:
    """The numbers of the uses named (all by default)."""
    return {name: run() for name, run in uses().items() if not names or name in names}


if __name__ == "__main__":
    print(json.dumps({"jax": jax.__version__, "results": main(sys.argv[1:])}))

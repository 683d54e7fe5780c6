"""Issue 14's acceptance test: a two-layer classifier written once against a namespace
(``jax``/``plait`` with their ``random``, ``nn`` and ``numpy``), initialized with
``glorot_normal`` from ``random.key(0)``, trains 20 steps to the same losses on both."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

import plait
import plait.nn
import plait.numpy as pnp
import plait.random

jax.config.update("jax_platforms", "cpu")

JAX = SimpleNamespace(lib=jax, np=jnp, random=jax.random, nn=jax.nn)
PLAIT = SimpleNamespace(lib=plait, np=pnp, random=plait.random, nn=plait.nn)
SIZES = (16, 32, 4)


def init(ns: Any) -> dict[str, Any]:
    k1, k2, k3 = ns.random.split(ns.random.key(0), 3)
    glorot = ns.nn.initializers.glorot_normal()
    return {"w1": glorot(k1, SIZES[:2]), "b1": ns.np.zeros(SIZES[1]),
            "w2": glorot(k2, SIZES[1:]),
            "b2": ns.nn.initializers.normal(0.01)(k3, (SIZES[2],))}


def loss(ns: Any) -> Any:
    def fn(params: dict[str, Any], x: Any, labels: Any) -> Any:
        hidden = ns.nn.relu(x @ params["w1"] + params["b1"])
        logp = ns.nn.log_softmax(hidden @ params["w2"] + params["b2"])
        return -ns.np.mean(ns.np.sum(ns.nn.one_hot(labels, SIZES[2]) * logp, axis=-1))
    return fn


def train(ns: Any, steps: int = 20) -> list[float]:
    @ns.lib.jit
    def step(params: dict[str, Any], x: Any, labels: Any) -> tuple[Any, Any]:
        value, grads = ns.lib.value_and_grad(loss(ns))(params, x, labels)
        return ns.lib.tree.map(lambda p, g: p - 0.5 * g, params, grads), value

    params = init(ns)
    key = ns.random.key(1)
    losses = []
    for _ in range(steps):
        key, kx, ky = ns.random.split(key, 3)
        x = ns.random.normal(kx, (32, SIZES[0]))
        labels = ns.random.randint(ky, (32,), 0, SIZES[2])
        params, value = step(params, x, labels)
        losses.append(float(value))
    return losses


def test_initial_parameters_equal_jax_bit_for_bit() -> None:
    ours, theirs = init(PLAIT), init(JAX)
    for name in theirs:
        np.testing.assert_array_equal(np.asarray(ours[name]), np.asarray(theirs[name]))


def test_classifier_trains_to_the_same_losses_as_under_jax() -> None:
    ours, theirs = train(PLAIT), train(JAX)
    np.testing.assert_allclose(ours, theirs, rtol=1e-5)
    assert theirs[-1] < theirs[0]

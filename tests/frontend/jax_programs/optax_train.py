"""A classifier trained with optax, written for JAX: ``python optax_train.py [name ...]``
prints, per optimizer (all of them unless named), the losses of 8 jitted training steps as
JSON."""

from __future__ import annotations

import json
import sys
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import optax


def _init(key: Any) -> dict[str, Any]:
    k1, k2 = jax.random.split(key)
    return {"w1": jax.random.normal(k1, (16, 32)) * 0.1, "b1": jnp.zeros(32),
            "w2": jax.random.normal(k2, (32, 4)) * 0.1, "b2": jnp.zeros(4)}


def _loss(params: dict[str, Any], x: Any, y: Any) -> Any:
    h = jax.nn.relu(x @ params["w1"] + params["b1"])
    logits = h @ params["w2"] + params["b2"]
    return optax.softmax_cross_entropy_with_integer_labels(logits, y).mean()


def optimizers() -> dict[str, Any]:
    """A spread of optax's optimizers and wrappers."""
    schedule = optax.warmup_cosine_decay_schedule(0.0, 1e-2, 3, 20)
    return {
        "adam": optax.adam(1e-2),
        "adamw_clipped": optax.chain(optax.clip_by_global_norm(1.0),
                                     optax.adamw(schedule, weight_decay=1e-3)),
        "sgd_nesterov": optax.sgd(0.1, momentum=0.9, nesterov=True),
        "adafactor": optax.adafactor(1e-2),
        "lamb": optax.lamb(1e-2),
        "multi_steps": optax.MultiSteps(optax.adam(1e-2), every_k_schedule=2),
        "masked": optax.masked(optax.adam(1e-2), {"w1": True, "b1": False,
                                                 "w2": True, "b2": False}),
        "inject_hyperparams": optax.inject_hyperparams(optax.adam)(learning_rate=1e-2),
        "schedule_free": optax.contrib.schedule_free_adamw(1e-2),
        "lbfgs": optax.lbfgs(),
    }


def train(name: str, opt: Any, steps: int = 8) -> list[float]:
    """The losses of ``steps`` jitted steps of ``opt`` on a fixed random problem."""
    rng = np.random.RandomState(0)
    x = rng.randn(64, 16).astype(np.float32)
    y = rng.randint(0, 4, size=64)
    params = _init(jax.random.PRNGKey(0))
    state = opt.init(params)

    @jax.jit
    def step(params: Any, state: Any) -> Any:
        loss, grads = jax.value_and_grad(_loss)(params, x, y)
        if name == "lbfgs":
            updates, state = opt.update(grads, state, params, value=loss, grad=grads,
                                        value_fn=lambda p: _loss(p, x, y))
        else:
            updates, state = opt.update(grads, state, params)
        return optax.apply_updates(params, updates), state, loss

    losses = []
    for _ in range(steps):
        params, state, loss = step(params, state)
        losses.append(float(loss))
    return losses


def main(names: list[str] | None = None) -> dict[str, list[float]]:
    """The losses of the optimizers named (all by default)."""
    return {name: train(name, opt) for name, opt in optimizers().items()
            if not names or name in names}


if __name__ == "__main__":
    print(json.dumps({"jax": jax.__version__, "losses": main(sys.argv[1:])}))

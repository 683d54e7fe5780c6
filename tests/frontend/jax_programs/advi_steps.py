"""Variational inference on a funnel density, after JAX's ``examples/advi.py``, written for
JAX: ``python advi_steps.py`` prints the bits of the variational parameters after each of
12 optimizer steps (JSON).  The program computes ``exp(log_std)`` in two places, so its
gradients round as JAX's only when the two are kept apart."""

from __future__ import annotations

import json
from functools import partial
from typing import Any

import jax
import jax.numpy as jnp
import jax.scipy.stats.norm as norm
import numpy as np
from jax.example_libraries import optimizers


def _sample(key: Any, mean: Any, log_std: Any) -> Any:
    return mean + jnp.exp(log_std) * jax.random.normal(key, mean.shape)


def _logpdf(x: Any, mean: Any, log_std: Any) -> Any:
    return jnp.sum(jax.vmap(norm.logpdf)(x, mean, jnp.exp(log_std)))


def _funnel(p: Any) -> Any:
    return norm.logpdf(p[0], 0, jnp.exp(p[1])) + norm.logpdf(p[1], 0, 1.35)


def _elbo(key: Any, mean: Any, log_std: Any) -> Any:
    x = _sample(key, mean, log_std)
    return _funnel(x) - _logpdf(x, mean, log_std)


@jax.jit
def _objective(params: Any, t: Any) -> Any:
    keys = jax.random.split(jax.random.key(t), 40)
    return -jnp.mean(jax.vmap(partial(_elbo), in_axes=(0, None, None))(keys, *params))


def main() -> list[str]:
    """The parameters' bytes, in hex, after each step."""
    opt_init, opt_update, get_params = optimizers.momentum(step_size=0.1, mass=0.9)
    state = opt_init((jnp.zeros(2), jnp.zeros(2)))

    @jax.jit
    def update(i: Any, state: Any) -> Any:
        return opt_update(i, jax.grad(_objective)(get_params(state), i), state)

    out = []
    for t in range(12):
        state = update(t, state)
        out.append("".join(np.asarray(p).tobytes().hex() for p in get_params(state)))
    return out


if __name__ == "__main__":
    print(json.dumps(main()))

"""Samplers of blackjax, written for JAX: ``python blackjax_samplers.py [name ...]`` prints,
per sampler (all of them unless named), the final position of a short run on a fixed
target as JSON."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import Any

import blackjax
import blackjax.smc.resampling as resampling
import jax
import jax.numpy as jnp
import numpy as np
import optax


def _logdensity(x: Any) -> Any:
    return -0.5 * jnp.sum((x - 1.0) ** 2 / jnp.array([1.0, 4.0]))


_X0 = np.zeros(2, np.float32)


def _chain(alg: Any, steps: int = 20, *init: Any) -> Any:
    state = alg.init(_X0, *init)
    step = jax.jit(alg.step)
    key = jax.random.key(0)
    for _ in range(steps):
        key, sub = jax.random.split(key)
        state, _ = step(sub, state)
    return state.position


def _nuts_window() -> Any:
    warmup = blackjax.window_adaptation(blackjax.nuts, _logdensity)
    key, warm_key = jax.random.split(jax.random.key(0))
    (state, params), _ = warmup.run(warm_key, _X0, num_steps=60)
    kernel = blackjax.nuts(_logdensity, **params).step

    def one_step(state: Any, key: Any) -> Any:
        state, _ = kernel(key, state)
        return state, state.position
    _, positions = jax.lax.scan(jax.jit(one_step), state, jax.random.split(key, 50))
    return jnp.concatenate([positions.mean(0), params["step_size"][None]])


def _sgld() -> Any:
    data = jax.random.normal(jax.random.key(2), (100, 2)) + 1.0
    grad_fn = blackjax.sgmcmc.grad_estimator(lambda x: -0.5 * jnp.sum(x ** 2),
                                             lambda x, d: -0.5 * jnp.sum((x - d) ** 2), 100)
    sgld, pos = blackjax.sgld(grad_fn), jnp.asarray(_X0)
    for i in range(10):
        pos = jax.jit(sgld.step)(jax.random.key(i), pos, data[i * 10:(i + 1) * 10], 1e-3)
    return pos


def _meanfield_vi() -> Any:
    vi = blackjax.meanfield_vi(_logdensity, optax.adam(0.1), num_samples=5)
    state = vi.init(_X0)
    for i in range(20):
        state, _ = jax.jit(vi.step)(jax.random.key(i), state)
    return state.mu


def _tempered_smc() -> Any:
    params = dict(step_size=1e-1, inverse_mass_matrix=jnp.eye(2), num_integration_steps=5)
    smc = blackjax.tempered_smc(lambda x: -0.5 * jnp.sum(x ** 2),
                                lambda x: -2.0 * jnp.sum((x - 1) ** 2),
                                blackjax.hmc.build_kernel(), blackjax.hmc.init,
                                blackjax.smc.extend_params(params), resampling.systematic,
                                num_mcmc_steps=2)
    state = smc.init(jax.random.normal(jax.random.key(3), (50, 2)))
    for lam in (0.25, 0.5, 1.0):
        state, _ = jax.jit(smc.step)(jax.random.key(int(lam * 4)), state, lam)
    return state.particles.mean(0)


def samplers() -> dict[str, Callable[[], Any]]:
    """A spread of blackjax's algorithms, each a function giving numbers to compare."""
    return {
        "nuts_window": _nuts_window,
        "hmc": lambda: _chain(blackjax.hmc(_logdensity, step_size=0.2,
                                           inverse_mass_matrix=jnp.ones(2),
                                           num_integration_steps=8)),
        "rmh": lambda: _chain(blackjax.rmh(
            _logdensity, blackjax.mcmc.random_walk.normal(jnp.ones(2) * 0.5))),
        "barker": lambda: _chain(blackjax.barker_proposal(_logdensity, step_size=0.5)),
        "mala": lambda: _chain(blackjax.mala(_logdensity, step_size=0.3)),
        "ghmc": lambda: _chain(blackjax.ghmc(_logdensity, step_size=0.2,
                                             momentum_inverse_scale=jnp.ones(2), alpha=0.5,
                                             delta=0.1), 10, jax.random.key(9)),
        "elliptical_slice": lambda: _chain(blackjax.elliptical_slice(
            lambda x: -0.5 * jnp.sum((x - 1) ** 2), mean=jnp.zeros(2), cov=jnp.eye(2))),
        "sgld": _sgld,
        "meanfield_vi": _meanfield_vi,
        "tempered_smc": _tempered_smc,
        "pathfinder": lambda: blackjax.vi.pathfinder.approximate(
            jax.random.key(5), _logdensity, _X0, num_samples=20)[0].position,
    }


def main(names: list[str] | None = None) -> dict[str, list[float]]:
    """The numbers of the samplers named (all by default)."""
    return {name: np.asarray(run(), np.float64).tolist() for name, run in samplers().items()
            if not names or name in names}


if __name__ == "__main__":
    print(json.dumps({"jax": jax.__version__, "results": main(sys.argv[1:])}))

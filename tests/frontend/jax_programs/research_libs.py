"""Research libraries written for JAX (einops, gymnax, evosax, dynamax, ott-jax, e3nn-jax
and GPJax): ``python research_libs.py [name ...]`` prints, per use (all of them unless
named), numbers to compare as JSON."""

from __future__ import annotations

import json
import sys
import warnings
from collections.abc import Callable
from typing import Any

import e3nn_jax as e3nn
import einops
import evosax.algorithms as evo
import gpjax as gpx
import gymnax
import jax
import jax.numpy as jnp
import numpy as np
import optax
from dynamax.hidden_markov_model import GaussianHMM
from dynamax.linear_gaussian_ssm import LinearGaussianSSM
from ott.geometry import pointcloud
from ott.problems.linear import linear_problem
from ott.solvers.linear import sinkhorn

_X: Any = np.linspace(-1.0, 1.0, 2 * 3 * 4, dtype=np.float32).reshape(2, 3, 4)


def _flat(tree: Any) -> list[float]:
    return [float(v) for leaf in jax.tree_util.tree_leaves(tree)
            for v in np.ravel(np.asarray(leaf, np.float64))]


def _einops() -> list[float]:
    x = jnp.asarray(_X)
    y = einops.rearrange(x, "b h w -> b (h w)")
    z = einops.reduce(x, "b h w -> h", "max")
    r = einops.repeat(x[0], "h w -> h w c", c=2)
    e = einops.einsum(x, x, "b h w, b h v -> b w v")
    packed, shapes = einops.pack([x[0], x[1, :, :2]], "h *")
    grad = jax.jit(jax.grad(lambda t: jnp.sum(einops.rearrange(t, "b h w -> w h b") ** 3)))(x)
    return [*_flat(y), *_flat(z), *_flat(r), *_flat(e), *_flat(packed),
            *_flat([list(s) for s in shapes]), *_flat(grad)]


def _gymnax() -> list[float]:
    env, params = gymnax.make("CartPole-v1")

    def rollout(key: Any) -> Any:
        key, reset_key = jax.random.split(key)
        obs, state = env.reset(reset_key, params)

        def step(carry: Any, _: Any) -> Any:
            obs, state, key = carry
            key, act_key, step_key = jax.random.split(key, 3)
            action = env.action_space(params).sample(act_key)
            obs, state, reward, done, _, _ = env.step(step_key, state, action, params)
            return (obs, state, key), (obs, reward, done)
        _, (observations, rewards, dones) = jax.lax.scan(step, (obs, state, key), None, 20)
        return observations, rewards, dones
    keys = jax.random.split(jax.random.PRNGKey(0), 3)
    return _flat(jax.jit(jax.vmap(rollout))(keys))


def _evosax() -> list[float]:
    solution = jnp.zeros(4)
    strategy = evo.CMA_ES(population_size=8, solution=solution)
    params = strategy.default_params
    key = jax.random.PRNGKey(1)
    state = strategy.init(key, solution, params)
    means = []
    for i in range(5):
        ask_key, tell_key = jax.random.split(jax.random.fold_in(key, i))
        population, state = strategy.ask(ask_key, state, params)
        fitness = jnp.sum((population - 1.0) ** 2, axis=1)
        state, _ = strategy.tell(tell_key, population, fitness, state, params)
        means.append(state.mean)
    return _flat(means)


def _dynamax() -> list[float]:
    lgssm = LinearGaussianSSM(state_dim=2, emission_dim=1)
    params, _ = lgssm.initialize(jax.random.PRNGKey(2))
    _, emissions = lgssm.sample(params, jax.random.PRNGKey(3), num_timesteps=12)
    filtered = lgssm.filter(params, emissions)
    smoothed = lgssm.smoother(params, emissions)
    hmm = GaussianHMM(num_states=2, emission_dim=1)
    hmm_params, props = hmm.initialize(jax.random.PRNGKey(4))
    _, hmm_emissions = hmm.sample(hmm_params, jax.random.PRNGKey(5), num_timesteps=20)
    fitted, log_probs = hmm.fit_em(hmm_params, props, hmm_emissions, num_iters=3, verbose=False)
    return [float(filtered.marginal_loglik), *_flat(filtered.filtered_means),
            *_flat(smoothed.smoothed_means), *_flat(log_probs),
            *_flat(fitted.emissions.means)]


def _ott() -> list[float]:
    x = jnp.asarray(_X.reshape(6, 4))
    y = jnp.asarray(_X.reshape(6, 4)[::-1] * 0.5 + 0.1)
    geom = pointcloud.PointCloud(x, y, epsilon=0.1)
    out = jax.jit(sinkhorn.Sinkhorn())(linear_problem.LinearProblem(geom))

    def cost(x: Any) -> Any:
        g = pointcloud.PointCloud(x, y, epsilon=0.1)
        return sinkhorn.Sinkhorn()(linear_problem.LinearProblem(g)).reg_ot_cost
    return [float(out.reg_ot_cost), *_flat(out.matrix), float(out.converged),
            *_flat(jax.jit(jax.grad(cost))(x))]


def _e3nn() -> list[float]:
    x = e3nn.normal("0e + 1o + 2e", jax.random.PRNGKey(6), (3,))
    tp = e3nn.tensor_product(x, x, filter_ir_out="0e + 1o")
    sh = e3nn.spherical_harmonics("1o + 2e", jnp.asarray(_X[0, :, :3]), normalize=True)
    rotated = x.transform_by_angles(0.3, -0.2, 0.7)
    grad = jax.jit(jax.grad(lambda v: jnp.sum(
        e3nn.spherical_harmonics("2e", v, normalize=True).array ** 2)))(jnp.asarray(_X[0, :, :3]))
    return [*_flat(tp.array), *_flat(sh.array), *_flat(rotated.array), *_flat(grad)]


def _gpjax() -> list[float]:
    x = np.linspace(-2.0, 2.0, 16, dtype=np.float32)[:, None]
    data = gpx.Dataset(X=jnp.asarray(x), y=jnp.asarray(np.sin(2.0 * x) + 0.1 * np.cos(7.0 * x)))
    prior = gpx.gps.Prior(mean_function=gpx.mean_functions.Zero(), kernel=gpx.kernels.RBF())
    posterior = prior * gpx.likelihoods.Gaussian()
    fitted, history = gpx.fit(model=posterior,
                              objective=lambda m, d: -gpx.objectives.conjugate_mll(m, d),
                              train_data=data, optim=optax.adam(0.05), num_iters=30,
                              verbose=False)
    latent = fitted.predict(jnp.linspace(-2.5, 2.5, 5)[:, None], train_data=data)
    predictive = fitted.likelihood(latent)
    kernel = gpx.kernels.Matern32() + gpx.kernels.Periodic() * gpx.kernels.Linear()
    sparse = gpx.variational_families.CollapsedVariationalGaussian(
        model=posterior, inducing_inputs=jnp.linspace(-2.0, 2.0, 4)[:, None])
    return [*_flat(history), *_flat(predictive.mean), *_flat(predictive.stddev()),
            *_flat(kernel.gram(jnp.asarray(x[:5])).as_matrix()),
            float(jax.jit(gpx.objectives.collapsed_elbo)(sparse, data))]


def uses() -> dict[str, Callable[[], list[float]]]:
    """Each use's numbers."""
    return {"einops": _einops, "gymnax": _gymnax, "evosax": _evosax, "dynamax": _dynamax,
            "ott": _ott, "e3nn": _e3nn, "gpjax": _gpjax}


def main(names: list[str] | None = None) -> dict[str, list[float]]:
    """The numbers of the uses named (all by default)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return {name: run() for name, run in uses().items() if not names or name in names}


if __name__ == "__main__":
    print(json.dumps({"jax": jax.__version__, "results": main(sys.argv[1:])}))

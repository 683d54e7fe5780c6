"""TensorFlow Probability's JAX substrate, written for JAX: ``python tfp_models.py
[name ...]`` prints, per use (all of them unless named), numbers to compare as JSON."""

from __future__ import annotations

import json
import sys
import warnings
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from tensorflow_probability.substrates import jax as tfp_jax

tfp: Any = tfp_jax
tfd: Any = tfp.distributions
tfb: Any = tfp.bijectors

_LOC: Any = np.array([0.0, 1.0, -1.0], np.float32)
_SCALE: Any = np.array([1.0, 0.5, 2.0], np.float32)
_DATA: Any = np.linspace(-2.0, 2.0, 12, dtype=np.float32)


def _flat(tree: Any) -> list[float]:
    return [float(v) for leaf in jax.tree_util.tree_leaves(tree)
            for v in np.ravel(np.asarray(leaf, np.float64))]


def _distributions() -> list[float]:
    key = jax.random.PRNGKey(0)
    normal = tfd.Normal(_LOC, _SCALE)
    gamma = tfd.Gamma(concentration=np.float32(2.0), rate=np.float32(1.5))
    beta = tfd.Beta(np.float32(2.0), np.float32(3.0))
    student = tfd.StudentT(df=np.float32(4.0), loc=np.float32(0.0), scale=np.float32(1.0))
    mvn = tfd.MultivariateNormalTriL(loc=_LOC, scale_tril=np.tril(
        np.eye(3, dtype=np.float32) + 0.1 * np.ones((3, 3), np.float32)))
    categorical = tfd.Categorical(logits=_LOC)
    dirichlet = tfd.Dirichlet(np.array([1.0, 2.0, 3.0], np.float32))
    mixture = tfd.MixtureSameFamily(tfd.Categorical(logits=np.zeros(3, np.float32)),
                                    tfd.Normal(_LOC, _SCALE))
    independent = tfd.Independent(tfd.Normal(_LOC, _SCALE), reinterpreted_batch_ndims=1)
    return [*_flat(normal.log_prob(0.3)), *_flat(normal.cdf(0.3)), *_flat(normal.entropy()),
            *_flat(normal.sample(2, seed=key)), float(gamma.log_prob(1.2)),
            *_flat(gamma.sample(3, seed=key)), float(beta.log_prob(0.4)),
            *_flat(beta.sample(3, seed=key)), float(student.log_prob(0.7)),
            float(mvn.log_prob(_LOC + 0.2)), *_flat(mvn.sample(2, seed=key)),
            float(categorical.log_prob(1)), *_flat(categorical.sample(4, seed=key)),
            float(dirichlet.log_prob(np.array([0.2, 0.3, 0.5], np.float32))),
            float(mixture.log_prob(0.1)), float(independent.log_prob(_LOC)),
            *_flat(tfd.kl_divergence(normal, tfd.Normal(0.0, 1.0)))]


def _bijectors() -> list[float]:
    chain = tfb.Chain([tfb.Shift(1.0), tfb.Scale(2.0), tfb.Exp()])
    y = chain.forward(_LOC)
    ildj = chain.inverse_log_det_jacobian(y, event_ndims=0)
    softplus = tfb.Softplus()
    sigmoid = tfb.Sigmoid()
    transformed = tfd.TransformedDistribution(tfd.Normal(0.0, 1.0), tfb.Exp())
    cholesky = tfb.FillScaleTriL()
    tril = cholesky.forward(np.array([0.1, 0.2, 0.3, 0.4, 0.5, 0.6], np.float32))
    return [*_flat(y), *_flat(ildj), *_flat(softplus.inverse(np.float32(1.3))),
            *_flat(sigmoid.forward_log_det_jacobian(_LOC, event_ndims=0)),
            float(transformed.log_prob(1.5)), *_flat(tril)]


def _gradients_and_jit() -> list[float]:
    def nll(params: Any) -> Any:
        loc, log_scale = params
        return -jnp.sum(tfd.Normal(loc, jnp.exp(log_scale)).log_prob(_DATA))
    params = (np.float32(0.3), np.float32(-0.2))
    grads = jax.jit(jax.grad(nll))(params)
    batched = jax.vmap(lambda c: tfd.Gamma(c, 1.0).log_prob(2.0))(
        np.array([0.5, 1.0, 3.0], np.float32))
    sample_grad = jax.grad(lambda c: jnp.sum(tfd.Gamma(c, 1.0).sample(
        4, seed=jax.random.PRNGKey(1))))(np.float32(2.0))
    return [*_flat(grads), *_flat(batched), float(sample_grad)]


def _hmc() -> list[float]:
    target = tfd.MultivariateNormalDiag(loc=_LOC, scale_diag=_SCALE)
    kernel = tfp.mcmc.HamiltonianMonteCarlo(target.log_prob, step_size=0.3,
                                            num_leapfrog_steps=4)
    adaptive = tfp.mcmc.SimpleStepSizeAdaptation(kernel, num_adaptation_steps=20)

    @jax.jit
    def run(key: Any) -> Any:
        return tfp.mcmc.sample_chain(num_results=40, num_burnin_steps=20,
                                     current_state=jnp.zeros(3), kernel=adaptive,
                                     trace_fn=lambda _, r: r.inner_results.is_accepted,
                                     seed=key)
    samples, accepted = run(jax.random.PRNGKey(2))
    return [*_flat(samples[-5:]), float(jnp.mean(accepted))]


def _nuts_and_structural() -> list[float]:
    model = tfd.JointDistributionSequential([
        tfd.Normal(0.0, 1.0),
        lambda mu: tfd.Independent(tfd.Normal(mu * jnp.ones(4), 0.5),
                                   reinterpreted_batch_ndims=1)])
    sample = model.sample(seed=jax.random.PRNGKey(3))
    lp = model.log_prob(sample)
    kernel = tfp.mcmc.NoUTurnSampler(lambda mu: model.log_prob([mu, sample[1]]), step_size=0.4)

    @jax.jit
    def run(key: Any) -> Any:
        return tfp.mcmc.sample_chain(num_results=20, num_burnin_steps=10,
                                     current_state=jnp.float32(0.0), kernel=kernel,
                                     trace_fn=None, seed=key)
    return [*_flat(sample), float(lp), *_flat(run(jax.random.PRNGKey(4)))]


def _gp_hmm_lbfgs() -> list[float]:
    x = np.linspace(-1.0, 1.0, 6, dtype=np.float32)[:, None]
    y = np.sin(3.0 * x[:, 0])
    kernel = tfp.math.psd_kernels.ExponentiatedQuadratic(np.float32(1.0), np.float32(0.5))
    gp = tfd.GaussianProcess(kernel, index_points=x, observation_noise_variance=0.01)
    posterior = tfd.GaussianProcessRegressionModel(
        kernel, index_points=np.array([[0.1], [0.7]], np.float32), observation_index_points=x,
        observations=y, observation_noise_variance=0.01)
    hmm = tfd.HiddenMarkovModel(
        initial_distribution=tfd.Categorical(probs=np.array([0.8, 0.2], np.float32)),
        transition_distribution=tfd.Categorical(probs=np.array(
            [[0.7, 0.3], [0.2, 0.8]], np.float32)),
        observation_distribution=tfd.Normal(np.array([0.0, 2.0], np.float32), 1.0),
        num_steps=5)
    obs = np.array([0.1, 1.9, 2.2, -0.3, 0.4], np.float32)

    def quadratic(v: Any) -> Any:
        return jnp.sum((v - _LOC) ** 2 * _SCALE), 2.0 * (v - _LOC) * _SCALE
    found = tfp.optimizer.lbfgs_minimize(quadratic, initial_position=jnp.zeros(3),
                                         tolerance=1e-6)
    return [float(gp.log_prob(y)), *_flat(posterior.mean()), *_flat(posterior.stddev()),
            float(jax.jit(hmm.log_prob)(obs)),
            *_flat(hmm.posterior_marginals(obs).probs_parameter()),
            *_flat(hmm.posterior_mode(obs)), *_flat(found.position), float(found.converged)]


def uses() -> dict[str, Callable[[], list[float]]]:
    """Each use's numbers."""
    return {"distributions": _distributions, "bijectors": _bijectors,
            "gradients": _gradients_and_jit, "hmc": _hmc, "nuts": _nuts_and_structural,
            "gp_hmm_lbfgs": _gp_hmm_lbfgs}


def main(names: list[str] | None = None) -> dict[str, list[float]]:
    """The numbers of the uses named (all by default)."""
    with warnings.catch_warnings():
        # (TensorFlow Probability asks for int64 zeros, which x64 being off truncates.)
        warnings.filterwarnings("ignore", "Explicitly requested dtype int64", UserWarning)
        return {name: run() for name, run in uses().items() if not names or name in names}


if __name__ == "__main__":
    print(json.dumps({"jax": jax.__version__, "results": main(sys.argv[1:])}))

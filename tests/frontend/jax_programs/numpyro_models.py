"""NumPyro, written for JAX: ``python numpyro_models.py [name ...]`` prints, per case (all of
them unless named), numbers of a short inference run or of distributions on fixed inputs,
as JSON."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import numpyro
import numpyro.distributions as dist
from numpyro import handlers
from numpyro.infer import HMC, MCMC, NUTS, SA, SVI, Predictive, Trace_ELBO, TraceMeanField_ELBO
from numpyro.infer.autoguide import AutoDiagonalNormal, AutoMultivariateNormal, AutoNormal
from numpyro.infer.util import log_density

_X = np.asarray(jax.random.normal(jax.random.key(0), (50, 2)))
_Y = np.asarray(_X @ np.array([1.0, -2.0], np.float32) + 0.5
                + 0.1 * np.asarray(jax.random.normal(jax.random.key(1), (50,))))


def _regression(x: Any, y: Any = None) -> None:
    w = numpyro.sample("w", dist.Normal(0, 1).expand([2]).to_event(1))
    b = numpyro.sample("b", dist.Normal(0, 1))
    s = numpyro.sample("s", dist.HalfNormal(1.0))
    with numpyro.plate("data", x.shape[0]):
        numpyro.sample("y", dist.Normal(x @ w + b, s), obs=y)


def _subsampled(x: Any, y: Any = None) -> None:
    w = numpyro.sample("w", dist.Normal(0, 1).expand([2]).to_event(1))
    b = numpyro.sample("b", dist.Normal(0, 1))
    with numpyro.plate("data", x.shape[0], subsample_size=10) as idx:
        numpyro.sample("y", dist.Normal(jnp.asarray(x)[idx] @ w + b, 0.1),
                       obs=jnp.asarray(y)[idx])


def _posterior(kernel: Any, chains: int = 1, method: Any = "sequential",
               model_args: tuple[Any, ...] = (_X, _Y)) -> Any:
    mcmc = MCMC(kernel, num_warmup=40, num_samples=40, num_chains=chains,
                chain_method=method, progress_bar=False)
    mcmc.run(jax.random.key(0), *model_args)
    samples = mcmc.get_samples()
    return jnp.concatenate([jnp.ravel(samples[k].mean(0)) for k in sorted(samples)])


def _svi(guide: Any, loss: Any, model: Callable[..., None] = _regression,
         steps: int = 100) -> Any:
    svi = SVI(model, guide, numpyro.optim.Adam(0.05), loss)
    result = svi.run(jax.random.key(1), steps, _X, _Y, progress_bar=False)
    leaves = [jnp.ravel(v) for _, v in sorted(result.params.items())]
    return jnp.concatenate([result.losses[-1:], *leaves])


def _predictive() -> Any:
    guide = AutoNormal(_regression)
    svi = SVI(_regression, guide, numpyro.optim.Adam(0.05), Trace_ELBO())
    params = svi.run(jax.random.key(1), 50, _X, _Y, progress_bar=False).params
    predictive = Predictive(_regression, guide=guide, params=params, num_samples=20,
                            return_sites=["w", "y"])
    draws = predictive(jax.random.key(2), _X[:5])
    return jnp.concatenate([draws["y"].mean(0), draws["w"].mean(0)])


def _handlers() -> Any:
    seeded = handlers.seed(_regression, jax.random.key(3))
    tr = handlers.trace(seeded).get_trace(_X, _Y)
    fixed = {"w": jnp.array([0.9, -1.8]), "b": jnp.array(0.4), "s": jnp.array(0.3)}
    conditioned = handlers.trace(handlers.condition(seeded, fixed)).get_trace(_X, _Y)
    lp = conditioned["y"]["fn"].log_prob(conditioned["y"]["value"]).sum()
    dens, _ = log_density(_regression, (_X, _Y), {}, fixed)
    return jnp.stack([tr["w"]["value"][0], tr["b"]["value"], tr["s"]["value"], lp, dens])


def _distributions() -> Any:
    """log_prob of a sample of each of 16 common distributions, and the sample's sum."""
    cases = [dist.Normal(0.3, 1.5), dist.HalfNormal(2.0), dist.LogNormal(0.1, 0.7),
             dist.Gamma(2.0, 3.0), dist.Beta(2.0, 5.0), dist.Exponential(1.5),
             dist.StudentT(4.0, 0.0, 2.0), dist.Cauchy(0.0, 1.0), dist.Laplace(1.0, 0.5),
             dist.Uniform(-1.0, 2.0), dist.Dirichlet(jnp.array([1.0, 2.0, 3.0])),
             dist.Bernoulli(probs=0.3), dist.Categorical(logits=jnp.array([0.1, 0.5, -1.0])),
             dist.Poisson(3.0), dist.Binomial(10, 0.4),
             dist.MultivariateNormal(jnp.zeros(2), jnp.array([[2.0, 0.5], [0.5, 1.0]]))]
    out = []
    for i, d in enumerate(cases):
        x = d.sample(jax.random.key(10 + i), (4,))
        out += [jnp.sum(d.log_prob(x)), jnp.sum(x)]
    return jnp.stack(out)


def models() -> dict[str, Callable[[], Any]]:
    """The cases, each a function giving numbers to compare."""
    return {
        "nuts_vectorized": lambda: _posterior(NUTS(_regression), 2, "vectorized"),
        "hmc_vectorized": lambda: _posterior(
            HMC(_regression, num_steps=8, trajectory_length=None), 2, "vectorized"),
        "sa": lambda: _posterior(SA(_regression)),
        "svi_auto_normal": lambda: _svi(AutoNormal(_regression), Trace_ELBO()),
        "svi_diagonal_mean_field": lambda: _svi(AutoDiagonalNormal(_regression),
                                                TraceMeanField_ELBO()),
        "svi_multivariate_normal": lambda: _svi(AutoMultivariateNormal(_regression),
                                                Trace_ELBO(num_particles=2)),
        "svi_subsample": lambda: _svi(AutoNormal(_subsampled), Trace_ELBO(), _subsampled),
        "predictive": _predictive,
        "handlers": _handlers,
        "distributions": _distributions,
    }


def main(names: list[str] | None = None) -> dict[str, list[float]]:
    """The numbers of the cases named (all by default)."""
    return {name: np.asarray(run(), np.float64).tolist() for name, run in models().items()
            if not names or name in names}


if __name__ == "__main__":
    print(json.dumps({"jax": jax.__version__, "results": main(sys.argv[1:])}))

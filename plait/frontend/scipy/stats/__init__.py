"""``plait.scipy.stats``: probability distributions, one module per distribution (as
JAX 0.10.2's ``jax.scipy.stats``), each with the functions JAX defines for it and the
same ``loc``/``scale`` (and shape) parameters."""

from plait.frontend.scipy.stats import bernoulli as bernoulli
from plait.frontend.scipy.stats import beta as beta
from plait.frontend.scipy.stats import cauchy as cauchy
from plait.frontend.scipy.stats import gamma as gamma
from plait.frontend.scipy.stats import laplace as laplace
from plait.frontend.scipy.stats import logistic as logistic
from plait.frontend.scipy.stats import multivariate_normal as multivariate_normal
from plait.frontend.scipy.stats import norm as norm
from plait.frontend.scipy.stats import poisson as poisson
from plait.frontend.scipy.stats import t as t
from plait.frontend.scipy.stats import uniform as uniform

__all__ = ["bernoulli", "beta", "cauchy", "gamma", "laplace", "logistic",
           "multivariate_normal", "norm", "poisson", "t", "uniform"]

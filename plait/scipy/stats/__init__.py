"""``plait.scipy.stats``: probability distributions, one module per distribution
(see :mod:`plait.frontend.scipy.stats`)."""

from plait.scipy.stats import bernoulli as bernoulli
from plait.scipy.stats import beta as beta
from plait.scipy.stats import cauchy as cauchy
from plait.scipy.stats import gamma as gamma
from plait.scipy.stats import laplace as laplace
from plait.scipy.stats import logistic as logistic
from plait.scipy.stats import multivariate_normal as multivariate_normal
from plait.scipy.stats import norm as norm
from plait.scipy.stats import poisson as poisson
from plait.scipy.stats import t as t
from plait.scipy.stats import uniform as uniform

__all__ = ["bernoulli", "beta", "cauchy", "gamma", "laplace", "logistic",
           "multivariate_normal", "norm", "poisson", "t", "uniform"]

"""``plait.scipy.stats``: probability distributions, one module per distribution (as
JAX 0.10.2's ``jax.scipy.stats``), each with the functions JAX defines for it and the
same ``loc``/``scale`` (and shape) parameters; and JAX's ``gaussian_kde``, ``mode``,
``rankdata`` and ``sem``."""

from plait.frontend.scipy.stats import bernoulli as bernoulli
from plait.frontend.scipy.stats import beta as beta
from plait.frontend.scipy.stats import betabinom as betabinom
from plait.frontend.scipy.stats import binom as binom
from plait.frontend.scipy.stats import cauchy as cauchy
from plait.frontend.scipy.stats import chi2 as chi2
from plait.frontend.scipy.stats import dirichlet as dirichlet
from plait.frontend.scipy.stats import expon as expon
from plait.frontend.scipy.stats import gamma as gamma
from plait.frontend.scipy.stats import gennorm as gennorm
from plait.frontend.scipy.stats import geom as geom
from plait.frontend.scipy.stats import gumbel_l as gumbel_l
from plait.frontend.scipy.stats import gumbel_r as gumbel_r
from plait.frontend.scipy.stats import laplace as laplace
from plait.frontend.scipy.stats import logistic as logistic
from plait.frontend.scipy.stats import multinomial as multinomial
from plait.frontend.scipy.stats import multivariate_normal as multivariate_normal
from plait.frontend.scipy.stats import nbinom as nbinom
from plait.frontend.scipy.stats import norm as norm
from plait.frontend.scipy.stats import pareto as pareto
from plait.frontend.scipy.stats import poisson as poisson
from plait.frontend.scipy.stats import t as t
from plait.frontend.scipy.stats import truncnorm as truncnorm
from plait.frontend.scipy.stats import uniform as uniform
from plait.frontend.scipy.stats import vonmises as vonmises
from plait.frontend.scipy.stats import wrapcauchy as wrapcauchy
from plait.frontend.scipy.stats._core import mode as mode
from plait.frontend.scipy.stats._core import rankdata as rankdata
from plait.frontend.scipy.stats._core import sem as sem
from plait.frontend.scipy.stats.kde import gaussian_kde as gaussian_kde

__all__ = ["bernoulli", "beta", "betabinom", "binom", "cauchy", "chi2", "dirichlet", "expon",
           "gamma", "gaussian_kde", "gennorm", "geom", "gumbel_l", "gumbel_r", "laplace",
           "logistic", "mode", "multinomial", "multivariate_normal", "nbinom", "norm",
           "pareto", "poisson", "rankdata", "sem", "t", "truncnorm", "uniform", "vonmises",
           "wrapcauchy"]

"""``plait.scipy.stats``: probability distributions, one module per distribution, and
``gaussian_kde``, ``mode``, ``rankdata`` and ``sem`` (see
:mod:`plait.frontend.scipy.stats`)."""

from plait.frontend.scipy.stats._core import mode as mode
from plait.frontend.scipy.stats._core import rankdata as rankdata
from plait.frontend.scipy.stats._core import sem as sem
from plait.frontend.scipy.stats.kde import gaussian_kde as gaussian_kde
from plait.scipy.stats import bernoulli as bernoulli
from plait.scipy.stats import beta as beta
from plait.scipy.stats import betabinom as betabinom
from plait.scipy.stats import binom as binom
from plait.scipy.stats import cauchy as cauchy
from plait.scipy.stats import chi2 as chi2
from plait.scipy.stats import dirichlet as dirichlet
from plait.scipy.stats import expon as expon
from plait.scipy.stats import gamma as gamma
from plait.scipy.stats import gennorm as gennorm
from plait.scipy.stats import geom as geom
from plait.scipy.stats import gumbel_l as gumbel_l
from plait.scipy.stats import gumbel_r as gumbel_r
from plait.scipy.stats import laplace as laplace
from plait.scipy.stats import logistic as logistic
from plait.scipy.stats import multinomial as multinomial
from plait.scipy.stats import multivariate_normal as multivariate_normal
from plait.scipy.stats import nbinom as nbinom
from plait.scipy.stats import norm as norm
from plait.scipy.stats import pareto as pareto
from plait.scipy.stats import poisson as poisson
from plait.scipy.stats import t as t
from plait.scipy.stats import truncnorm as truncnorm
from plait.scipy.stats import uniform as uniform
from plait.scipy.stats import vonmises as vonmises
from plait.scipy.stats import wrapcauchy as wrapcauchy

__all__ = ["bernoulli", "beta", "betabinom", "binom", "cauchy", "chi2", "dirichlet", "expon",
           "gamma", "gaussian_kde", "gennorm", "geom", "gumbel_l", "gumbel_r", "laplace",
           "logistic", "mode", "multinomial", "multivariate_normal", "nbinom", "norm", "pareto",
           "poisson", "rankdata", "sem", "t", "truncnorm", "uniform", "vonmises", "wrapcauchy"]

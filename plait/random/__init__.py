"""``plait.random``: pseudo-random numbers from explicit keys, as ``jax.random``.

``key(seed)`` makes a typed key and ``PRNGKey(seed)`` a raw one (its ``uint32[2]``
data); ``split`` and ``fold_in`` derive new keys; the samplers (``uniform``,
``normal``, ...) draw from a key.  For the same key the values equal JAX's bit for
bit (threefry2x32 in both ``jax_threefry_partitionable`` modes, rbg and unsafe_rbg).
"""

# ``name as name`` marks a re-export for mypy --strict users.
from plait.frontend.random.discrete import binomial as binomial
from plait.frontend.random.discrete import geometric as geometric
from plait.frontend.random.discrete import multinomial as multinomial
from plait.frontend.random.discrete import poisson as poisson
from plait.frontend.random.distributions import choice as choice
from plait.frontend.random.distributions import double_sided_maxwell as double_sided_maxwell
from plait.frontend.random.distributions import lognormal as lognormal
from plait.frontend.random.distributions import maxwell as maxwell
from plait.frontend.random.distributions import multivariate_normal as multivariate_normal
from plait.frontend.random.distributions import orthogonal as orthogonal
from plait.frontend.random.distributions import pareto as pareto
from plait.frontend.random.distributions import permutation as permutation
from plait.frontend.random.distributions import rayleigh as rayleigh
from plait.frontend.random.distributions import triangular as triangular
from plait.frontend.random.distributions import wald as wald
from plait.frontend.random.distributions import weibull_min as weibull_min
from plait.frontend.random.gamma import ball as ball
from plait.frontend.random.gamma import beta as beta
from plait.frontend.random.gamma import chisquare as chisquare
from plait.frontend.random.gamma import dirichlet as dirichlet
from plait.frontend.random.gamma import f as f
from plait.frontend.random.gamma import gamma as gamma
from plait.frontend.random.gamma import generalized_normal as generalized_normal
from plait.frontend.random.gamma import loggamma as loggamma
from plait.frontend.random.gamma import t as t
from plait.frontend.random.keys import KeyArray as KeyArray
from plait.frontend.random.keys import PRNGKey as PRNGKey
from plait.frontend.random.keys import clone as clone
from plait.frontend.random.keys import fold_in as fold_in
from plait.frontend.random.keys import key as key
from plait.frontend.random.keys import key_data as key_data
from plait.frontend.random.keys import key_dtype as key_dtype
from plait.frontend.random.keys import key_impl as key_impl
from plait.frontend.random.keys import split as split
from plait.frontend.random.keys import wrap_key_data as wrap_key_data
from plait.frontend.random.samplers import bernoulli as bernoulli
from plait.frontend.random.samplers import bits as bits
from plait.frontend.random.samplers import categorical as categorical
from plait.frontend.random.samplers import cauchy as cauchy
from plait.frontend.random.samplers import exponential as exponential
from plait.frontend.random.samplers import gumbel as gumbel
from plait.frontend.random.samplers import laplace as laplace
from plait.frontend.random.samplers import logistic as logistic
from plait.frontend.random.samplers import normal as normal
from plait.frontend.random.samplers import rademacher as rademacher
from plait.frontend.random.samplers import randint as randint
from plait.frontend.random.samplers import truncated_normal as truncated_normal
from plait.frontend.random.samplers import uniform as uniform

__all__ = ["KeyArray", "PRNGKey", "clone", "fold_in", "key", "key_data", "key_dtype",
           "key_impl", "split", "wrap_key_data", "bernoulli", "bits", "categorical", "cauchy",
           "exponential", "gumbel", "laplace", "logistic", "normal", "rademacher", "randint",
           "truncated_normal", "uniform"]
__all__ += ["choice", "double_sided_maxwell", "lognormal", "maxwell", "multivariate_normal",
            "orthogonal", "pareto", "permutation", "rayleigh", "triangular", "wald",
            "weibull_min", "ball", "beta", "chisquare", "dirichlet", "f", "gamma",
            "generalized_normal", "loggamma", "t", "binomial", "geometric", "multinomial",
            "poisson"]

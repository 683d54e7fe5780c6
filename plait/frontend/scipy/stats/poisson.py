"""The Poisson distribution (``jax.scipy.stats.poisson``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from plait.frontend import numpy as pnp
from plait.frontend.core.array_base import Array
from plait.frontend.scipy._util import const, promote
from plait.frontend.scipy.special import gammaincc, gammaln, xlogy

__all__ = ["logpmf", "pmf", "cdf"]


def logpmf(k: Any, mu: Any, loc: Any = 0) -> Array:
    """The log of the probability of ``k`` (``-inf`` below ``loc`` and off the integers)."""
    k, mu, loc = promote("poisson.logpmf", k, mu, loc)
    x = k - loc
    log_probs = xlogy(x, mu) - gammaln(x + 1) - mu
    return pnp.where((x < const(k, 0)) | (pnp.round(k) != k), -np.inf, log_probs)


def pmf(k: Any, mu: Any, loc: Any = 0) -> Array:
    """The probability of ``k``."""
    return pnp.exp(logpmf(k, mu, loc))


def cdf(k: Any, mu: Any, loc: Any = 0) -> Array:
    """The cumulative distribution function at ``k``."""
    # (JAX names this function poisson.logpmf in its errors, too.)
    k, mu, loc = promote("poisson.logpmf", k, mu, loc)
    x = k - loc
    p = gammaincc(pnp.floor(1 + x), mu)
    return pnp.where(x < const(k, 0), const(k, 0), p)

"""The Bernoulli distribution (``jax.scipy.stats.bernoulli``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from plait.frontend import numpy as pnp
from plait.frontend.core.array_base import Array
from plait.frontend.scipy._util import const, promote
from plait.frontend.scipy.special import xlog1py, xlogy

__all__ = ["logpmf", "pmf", "cdf", "ppf"]


def logpmf(k: Any, p: Any, loc: Any = 0) -> Array:
    """The log of the probability of ``k`` (``-inf`` outside ``{loc, loc + 1}``)."""
    k, p, loc = promote("bernoulli.logpmf", k, p, loc)
    x = k - loc
    log_probs = xlogy(x, p) + xlog1py(const(k, 1) - x, -p)
    return pnp.where((x < const(k, 0)) | (x > const(k, 1)), -np.inf, log_probs)


def pmf(k: Any, p: Any, loc: Any = 0) -> Array:
    """The probability of ``k``."""
    return pnp.exp(logpmf(k, p, loc))


def cdf(k: Any, p: Any) -> Array:
    """The cumulative distribution function at ``k`` (NaN for a ``p`` outside ``[0, 1]``)."""
    k, p = promote("bernoulli.cdf", k, p)
    zero, one = const(k, 0), const(k, 1)
    invalid = pnp.isnan(k) | pnp.isnan(p) | (p < zero) | (p > one)
    conds = [invalid, k < zero, (k >= zero) & (k < one), k >= one]
    return pnp.select(conds, [np.nan, zero, one - p, one])


def ppf(q: Any, p: Any) -> Array:
    """The quantile function: 0 for ``q <= 1 - p``, else 1 (NaN for invalid ``q``, ``p``)."""
    q, p = promote("bernoulli.ppf", q, p)
    zero, one = const(q, 0), const(q, 1)
    invalid = pnp.isnan(q) | pnp.isnan(p) | (p < zero) | (p > one) | (q < zero) | (q > one)
    return pnp.where(invalid, np.nan, pnp.where(q <= one - p, zero, one))

"""The exponential distribution (``jax.scipy.stats.expon``): density ``exp(-y) / scale``
for ``y = (x - loc) / scale >= 0``."""

from __future__ import annotations

from typing import Any

import numpy as np

from plait.frontend import lax
from plait.frontend import numpy as pnp
from plait.frontend.core.array_base import Array
from plait.frontend.scipy._util import promote

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf"]


def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """The log of the probability density at ``x`` (``-inf`` below ``loc``)."""
    x, loc, scale = promote("expon.logpdf", x, loc, scale)
    log_probs = lax.neg((x - loc) / scale + lax.log(scale))
    return pnp.where(x < loc, -np.inf, log_probs)


def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """The probability density at ``x``."""
    return lax.exp(logpdf(x, loc, scale))


def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """The cumulative distribution function ``1 - exp(-y)``, through ``expm1``."""
    x, loc, scale = promote("expon.cdf", x, loc, scale)
    minus_y = (loc - x) / scale
    return pnp.where(x < loc, pnp.zeros_like(minus_y), lax.neg(lax.expm1(minus_y)))


def logcdf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """The log of the cumulative distribution function, ``log1p(-sf(x))``."""
    return lax.log1p(lax.neg(sf(x, loc, scale)))


def logsf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """The log of the survival function: ``-y`` (``0`` below ``loc``)."""
    # (JAX names this function expon.sf in its errors.)
    x, loc, scale = promote("expon.sf", x, loc, scale)
    minus_y = (loc - x) / scale
    return pnp.where(x < loc, pnp.zeros_like(minus_y), minus_y)


def sf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """The survival function ``1 - cdf(x)``."""
    return lax.exp(logsf(x, loc, scale))


def ppf(q: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """The quantile function ``loc - scale * log1p(-q)`` (NaN outside ``[0, 1]``)."""
    q, loc, scale = promote("expon.ppf", q, loc, scale)
    outside = pnp.isnan(q) | (q < 0) | (q > 1)
    return pnp.where(outside, np.nan, loc - scale * lax.log1p(lax.neg(q)))

"""The gamma distribution (``jax.scipy.stats.gamma``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from plait.frontend import lax
from plait.frontend import numpy as pnp
from plait.frontend.core.array_base import Array
from plait.frontend.scipy import special
from plait.frontend.scipy._util import const, promote

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"]


def logpdf(x: Any, a: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """The log of the probability density at ``x`` (``-inf`` below ``loc``)."""
    x, a, loc, scale = promote("gamma.logpdf", x, a, loc, scale)
    ok = x >= loc
    one = const(x, 1)
    # Below loc, y = 1 keeps the (discarded) branch and its derivative finite.
    y = pnp.where(ok, (x - loc) / scale, one)
    log_linear = special.xlogy(a - one, y) - y
    log_probs = log_linear - (special.gammaln(a) + lax.log(scale))
    return pnp.where(ok, log_probs, -np.inf)


def pdf(x: Any, a: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """The probability density at ``x``."""
    return lax.exp(logpdf(x, a, loc, scale))


def cdf(x: Any, a: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """The cumulative distribution function at ``x``."""
    x, a, loc, scale = promote("gamma.cdf", x, a, loc, scale)
    y = lax.clamp(const(x, 0), (x - loc) / scale, const(x, np.inf))
    return special.gammainc(a, y)


def logcdf(x: Any, a: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """The log of the cumulative distribution function."""
    return lax.log(cdf(x, a, loc, scale))


def sf(x: Any, a: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """The survival function ``1 - cdf(x)``."""
    x, a, loc, scale = promote("gamma.sf", x, a, loc, scale)
    y = (x - loc) / scale
    return pnp.where(y < const(y, 0), 1, special.gammaincc(a, y))


def logsf(x: Any, a: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """The log of the survival function."""
    return lax.log(sf(x, a, loc, scale))

"""The left-skewed Gumbel distribution (``jax.scipy.stats.gumbel_l``), of minima:
``sf = exp(-exp(z))`` for ``z = (x - loc) / scale``."""

from __future__ import annotations

from typing import Any

import numpy as np

from plait.frontend import lax
from plait.frontend import numpy as pnp
from plait.frontend.core.array_base import Array
from plait.frontend.scipy import special
from plait.frontend.scipy._util import const, promote

__all__ = ["logpdf", "pdf", "logcdf", "cdf", "ppf", "sf", "logsf"]


def _valid(scale: Array) -> Array:
    return scale > const(scale, 0)


def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """The log of the probability density, ``-log(scale) + z - exp(z)`` (NaN for
    non-positive ``scale``)."""
    x, loc, scale = promote("gumbel_l.logpdf", x, loc, scale)
    z = (x - loc) / scale
    value = special.xlogy(-1, scale) + (z - lax.exp(z))
    return pnp.where(_valid(scale), value, np.nan)


def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """The probability density at ``x``."""
    return lax.exp(logpdf(x, loc, scale))


def logcdf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """The log of the cumulative distribution function, ``log(1 - exp(-exp(z)))``."""
    x, loc, scale = promote("gumbel_l.logcdf", x, loc, scale)
    z = (x - loc) / scale
    value = lax.log(lax.neg(lax.expm1(lax.neg(lax.exp(z)))))
    return pnp.where(_valid(scale), value, np.nan)


def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """The cumulative distribution function ``1 - exp(-exp(z))``."""
    return lax.exp(logcdf(x, loc, scale))


def ppf(p: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """The quantile function ``loc + scale log(-log1p(-p))`` (NaN outside ``(0, 1)``)."""
    p, loc, scale = promote("gumbel_l.ppf", p, loc, scale)
    inside = (p > const(p, 0)) & (p < const(p, 1))
    value = loc + scale * lax.log(special.xlog1py(-1, lax.neg(p)))
    return pnp.where(inside, value, np.nan)


def sf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """The survival function ``exp(-exp(z))``."""
    return pnp.exp(logsf(x, loc, scale))


def logsf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """The log of the survival function, ``-exp(z)``."""
    x, loc, scale = promote("gumbel_l.logsf", x, loc, scale)
    z = (x - loc) / scale
    return pnp.where(_valid(scale), lax.neg(lax.exp(z)), np.nan)

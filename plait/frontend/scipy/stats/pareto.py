"""The Pareto distribution (``jax.scipy.stats.pareto``): density ``b / y^(b + 1)`` (over
``scale``) for ``y = (x - loc) / scale >= 1``."""

from __future__ import annotations

from typing import Any

import numpy as np

from plait.frontend import lax
from plait.frontend import numpy as pnp
from plait.frontend.core.array_base import Array
from plait.frontend.scipy._util import const, promote

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf"]


def logpdf(x: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """The log of the probability density at ``x`` (``-inf`` below ``loc + scale``)."""
    x, b, loc, scale = promote("pareto.logpdf", x, b, loc, scale)
    y = (x - loc) / scale
    log_probs = lax.neg(lax.log(scale / b) + (b + const(x, 1)) * lax.log(y))
    return pnp.where(x < loc + scale, -np.inf, log_probs)


def pdf(x: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """The probability density at ``x``."""
    return lax.exp(logpdf(x, b, loc, scale))


def cdf(x: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """The cumulative distribution function ``1 - y^-b`` (``0`` below ``loc + scale``)."""
    x, b, loc, scale = promote("pareto.cdf", x, b, loc, scale)
    y = (x - loc) / scale
    value = const(x, 1) - lax.pow(y, lax.neg(b))
    return pnp.where(x < loc + scale, const(x, 0), value)


def logcdf(x: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """The log of the cumulative distribution function, ``log1p(-y^-b)``."""
    x, b, loc, scale = promote("pareto.logcdf", x, b, loc, scale)
    y = (x - loc) / scale
    value = lax.log1p(lax.neg(lax.pow(y, lax.neg(b))))
    return pnp.where(x < loc + scale, -np.inf, value)


def logsf(x: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """The log of the survival function, ``-b log(y)`` (``0`` below ``loc + scale``)."""
    x, b, loc, scale = promote("pareto.logsf", x, b, loc, scale)
    y = (x - loc) / scale
    return pnp.where(x < loc + scale, const(x, 0), lax.neg(b * lax.log(y)))


def sf(x: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """The survival function ``y^-b``."""
    return lax.exp(logsf(x, b, loc, scale))


def ppf(q: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """The quantile function ``loc + scale (1 - q)^(-1/b)`` (NaN outside ``[0, 1]``)."""
    q, b, loc, scale = promote("pareto.ppf", q, b, loc, scale)
    one = const(q, 1)
    value = loc + scale * lax.pow(one - q, lax.neg(one / b))
    return pnp.where(pnp.isnan(q) | (q < 0) | (q > 1), np.nan, value)

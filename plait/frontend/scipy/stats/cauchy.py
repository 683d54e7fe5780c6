"""The Cauchy distribution (``jax.scipy.stats.cauchy``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from plait.frontend import lax
from plait.frontend.core.array_base import Array
from plait.frontend.scipy._util import const, promote

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "isf", "ppf"]


def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """The log of the probability density at ``x``."""
    x, loc, scale = promote("cauchy.logpdf", x, loc, scale)
    scaled_x = (x - loc) / scale
    normalize = lax.log(const(x, np.pi) * scale)
    return -(normalize + lax.log1p(scaled_x * scaled_x))


def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """The probability density at ``x``."""
    return lax.exp(logpdf(x, loc, scale))


def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """The cumulative distribution function ``1/2 + atan((x - loc) / scale) / pi``."""
    x, loc, scale = promote("cauchy.cdf", x, loc, scale)
    scaled_x = (x - loc) / scale
    return const(x, 0.5) + lax.div(const(x, 1.0), const(x, np.pi)) * lax.atan(scaled_x)


def logcdf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """The log of the cumulative distribution function."""
    return lax.log(cdf(x, loc, scale))


def sf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """The survival function ``1 - cdf(x)``."""
    x, loc, scale = promote("cauchy.sf", x, loc, scale)
    return cdf(-x, -loc, scale)


def logsf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """The log of the survival function."""
    x, loc, scale = promote("cauchy.logsf", x, loc, scale)
    return logcdf(-x, -loc, scale)


def isf(q: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """The inverse of :func:`sf`, ``loc + scale tan(pi/2 - pi q)``."""
    q, loc, scale = promote("cauchy.isf", q, loc, scale)
    unscaled = lax.tan(const(q, np.pi / 2) - const(q, np.pi) * q)
    return lax.add(lax.mul(unscaled, scale), loc)


def ppf(q: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """The quantile function ``loc + scale tan(pi q - pi/2)``."""
    q, loc, scale = promote("cauchy.ppf", q, loc, scale)
    unscaled = lax.tan(const(q, np.pi) * q - const(q, np.pi / 2))
    return lax.add(lax.mul(unscaled, scale), loc)

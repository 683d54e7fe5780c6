"""The normal distribution (``jax.scipy.stats.norm``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from plait.frontend import lax
from plait.frontend import numpy as pnp
from plait.frontend.core.array_base import Array
from plait.frontend.numpy._core import as_array, check_arraylike
from plait.frontend.scipy import special
from plait.frontend.scipy._util import const, promote

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "ppf", "logsf", "sf", "isf"]


def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """The log of the probability density at ``x``."""
    x, loc, scale = promote("norm.logpdf", x, loc, scale)
    scale_sqrd = lax.square(scale)
    log_normalizer = lax.log(const(x, 2 * np.pi) * scale_sqrd)
    quadratic = lax.square(x - loc) / scale_sqrd
    return lax.div(log_normalizer + quadratic, const(x, -2))


def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """The probability density at ``x``."""
    return lax.exp(logpdf(x, loc, scale))


def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """The cumulative distribution function at ``x``."""
    x, loc, scale = promote("norm.cdf", x, loc, scale)
    return special.ndtr((x - loc) / scale)


def logcdf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """The log of the cumulative distribution function, accurate in the lower tail."""
    x, loc, scale = promote("norm.logcdf", x, loc, scale)
    return special.log_ndtr((x - loc) / scale)


def ppf(q: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """The quantile function (inverse of :func:`cdf`), in the default float dtype.

    Raises:
      TypeError: ``q`` is not float32 or float64 (as JAX's ``ndtri``).
    """
    return pnp.asarray(special.ndtri(q) * scale + loc, float)


def logsf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """The log of the survival function ``1 - cdf``, accurate in the upper tail."""
    x, loc, scale = promote("norm.logsf", x, loc, scale)
    return logcdf(-x, -loc, scale)


def sf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """The survival function ``1 - cdf(x)``."""
    x, loc, scale = promote("norm.sf", x, loc, scale)
    return cdf(-x, -loc, scale)


def isf(q: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """The inverse of :func:`sf`."""
    check_arraylike("norm.isf", q)
    q = as_array(q)
    return ppf(lax.sub(const(q, 1), q), loc, scale)

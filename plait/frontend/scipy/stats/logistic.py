"""The logistic distribution (``jax.scipy.stats.logistic``)."""

from __future__ import annotations

from typing import Any

from plait.frontend import lax
from plait.frontend import numpy as pnp
from plait.frontend.core.array_base import Array
from plait.frontend.scipy._util import const, promote
from plait.frontend.scipy.special import expit, logit

__all__ = ["logpdf", "pdf", "cdf", "ppf", "sf", "isf"]


def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """The log of the probability density at ``x``."""
    x, loc, scale = promote("logistic.logpdf", x, loc, scale)
    x = (x - loc) / scale
    two = const(x, 2)
    half_x = x / two
    # -2 log(e^(x/2) + e^(-x/2)), which stays finite for large |x|.
    return lax.neg(two) * pnp.logaddexp(half_x, -half_x) - lax.log(scale)


def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """The probability density at ``x``."""
    return lax.exp(logpdf(x, loc, scale))


def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """The cumulative distribution function at ``x``."""
    x, loc, scale = promote("logistic.cdf", x, loc, scale)
    return expit((x - loc) / scale)


def ppf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """The quantile function (inverse of :func:`cdf`)."""
    x, loc, scale = promote("logistic.ppf", x, loc, scale)
    return lax.add(lax.mul(logit(x), scale), loc)


def sf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """The survival function ``1 - cdf(x)``."""
    x, loc, scale = promote("logistic.sf", x, loc, scale)
    return expit(-((x - loc) / scale))


def isf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """The inverse of :func:`sf`."""
    x, loc, scale = promote("logistic.isf", x, loc, scale)
    return lax.add(lax.mul(lax.neg(logit(x)), scale), loc)

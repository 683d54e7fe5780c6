"""The Laplace distribution (``jax.scipy.stats.laplace``)."""

from __future__ import annotations

from typing import Any

from plait.frontend import lax
from plait.frontend.core.array_base import Array
from plait.frontend.scipy._util import const, promote

__all__ = ["logpdf", "pdf", "cdf"]


def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """The log of the probability density at ``x``."""
    x, loc, scale = promote("laplace.logpdf", x, loc, scale)
    linear = lax.abs(x - loc) / scale
    return lax.neg(lax.add(linear, lax.log(const(x, 2) * scale)))


def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """The probability density at ``x``."""
    return lax.exp(logpdf(x, loc, scale))


def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """The cumulative distribution function at ``x``."""
    x, loc, scale = promote("laplace.cdf", x, loc, scale)
    half, one = const(x, 0.5), const(x, 1)
    diff = (x - loc) / scale
    return lax.select(diff <= const(x, 0), half * lax.exp(diff),
                      one - half * lax.exp(-diff))

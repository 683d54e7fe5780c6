"""The generalized normal distribution (``jax.scipy.stats.gennorm``): density
``beta / (2 Gamma(1 / beta)) exp(-|x|^beta)``."""

from __future__ import annotations

from typing import Any

from plait.frontend import lax
from plait.frontend.core.array_base import Array
from plait.frontend.scipy._util import promote

__all__ = ["logpdf", "pdf", "cdf"]


def logpdf(x: Any, beta: Any) -> Array:
    """The log of the probability density at ``x`` for the shape ``beta``."""
    x, beta = promote("gennorm.logpdf", x, beta)
    # (Python scalars, as JAX: they keep weakly typed arguments weakly typed.)
    return lax.log(0.5 * beta) - lax.lgamma(1 / beta) - lax.pow(lax.abs(x), beta)


def pdf(x: Any, beta: Any) -> Array:
    """The probability density at ``x``."""
    return lax.exp(logpdf(x, beta))


def cdf(x: Any, beta: Any) -> Array:
    """The cumulative distribution function ``(1 + sign(x) P(1/beta, |x|^beta)) / 2``."""
    x, beta = promote("gennorm.cdf", x, beta)
    mass = lax.igamma(1 / beta, lax.pow(lax.abs(x), beta))
    return 0.5 * (1 + lax.sign(x) * mass)

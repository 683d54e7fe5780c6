"""The chi-square distribution (``jax.scipy.stats.chi2``) with ``df`` degrees of freedom:
a gamma distribution of shape ``df / 2`` and scale ``2 * scale``."""

from __future__ import annotations

from typing import Any

import numpy as np

from plait.frontend import lax
from plait.frontend import numpy as pnp
from plait.frontend.core.array_base import Array
from plait.frontend.scipy import special
from plait.frontend.scipy._util import const, promote

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"]


def logpdf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """The log of the probability density at ``x`` (``-inf`` below ``loc``)."""
    x, df, loc, scale = promote("chi2.logpdf", x, df, loc, scale)
    one, two = const(x, 1), const(x, 2)
    y = (x - loc) / scale
    half_df = df / two
    kernel = (half_df - one) * lax.log(y) - y / two
    normalizer = lax.neg(lax.lgamma(half_df) + lax.log(two) * df / two)
    log_probs = normalizer - lax.log(scale) + kernel
    return pnp.where(x < loc, -np.inf, log_probs)


def pdf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """The probability density at ``x``."""
    return lax.exp(logpdf(x, df, loc, scale))


def _half_y(x: Array, loc: Array, scale: Array) -> Array:
    """``(x - loc) / (2 scale)``, clipped below at 0."""
    y = (x - loc) / (scale * const(scale, 2))
    return lax.clamp(const(x, 0), y, const(x, np.inf))


def cdf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """The cumulative distribution function: ``P(df / 2, y / 2)``."""
    x, df, loc, scale = promote("chi2.cdf", x, df, loc, scale)
    return special.gammainc(df / const(scale, 2), _half_y(x, loc, scale))


def logcdf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """The log of the cumulative distribution function."""
    return lax.log(cdf(x, df, loc, scale))


def sf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """The survival function: ``Q(df / 2, y / 2)``."""
    x, df, loc, scale = promote("chi2.sf", x, df, loc, scale)
    return special.gammaincc(df / const(scale, 2), _half_y(x, loc, scale))


def logsf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """The log of the survival function."""
    return lax.log(sf(x, df, loc, scale))

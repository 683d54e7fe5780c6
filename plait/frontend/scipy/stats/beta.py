"""The beta distribution (``jax.scipy.stats.beta``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from plait.frontend import lax
from plait.frontend import numpy as pnp
from plait.frontend.core.array_base import Array
from plait.frontend.scipy import special
from plait.frontend.scipy._util import const, promote

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"]


def logpdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """The log of the probability density at ``x`` (``-inf`` outside
    ``[loc, loc + scale]``, NaN for non-positive ``a``, ``b`` or ``scale``)."""
    x, a, b, loc, scale = promote("beta.logpdf", x, a, b, loc, scale)
    one = const(x, 1)
    zero = const(a, 0)
    y = (x - loc) / scale
    log_linear = special.xlogy(a - one, y) + special.xlog1py(b - one, -y)
    log_probs = -special.betaln(a, b) + log_linear - lax.log(scale)
    result = pnp.where((x > loc + scale) | (x < loc), -np.inf, log_probs)
    return pnp.where((a <= zero) | (b <= zero) | (scale <= zero), np.nan, result)


def pdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """The probability density at ``x``."""
    return lax.exp(logpdf(x, a, b, loc, scale))


def _unit(x: Array, loc: Array, scale: Array) -> Array:
    """``(x - loc) / scale`` clipped to ``[0, 1]``."""
    return lax.clamp(const(x, 0), (x - loc) / scale, const(x, 1))


def cdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """The cumulative distribution function at ``x``."""
    x, a, b, loc, scale = promote("beta.cdf", x, a, b, loc, scale)
    return special.betainc(a, b, _unit(x, loc, scale))


def logcdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """The log of the cumulative distribution function."""
    return lax.log(cdf(x, a, b, loc, scale))


def sf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """The survival function ``1 - cdf(x)``, computed as ``I_{1-x}(b, a)``."""
    x, a, b, loc, scale = promote("beta.sf", x, a, b, loc, scale)
    return special.betainc(b, a, 1 - _unit(x, loc, scale))


def logsf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """The log of the survival function."""
    return lax.log(sf(x, a, b, loc, scale))

"""The uniform distribution on ``[loc, loc + scale]`` (``jax.scipy.stats.uniform``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from plait.frontend import lax
from plait.frontend import numpy as pnp
from plait.frontend.core.array_base import Array
from plait.frontend.scipy._util import promote

__all__ = ["logpdf", "pdf", "cdf", "ppf"]


def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """The log of the probability density at ``x`` (``-inf`` outside the interval)."""
    x, loc, scale = promote("uniform.logpdf", x, loc, scale)
    log_probs = lax.neg(lax.log(scale))
    return pnp.where((x > loc + scale) | (x < loc), -np.inf, log_probs)


def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """The probability density at ``x``."""
    return lax.exp(logpdf(x, loc, scale))


def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """The cumulative distribution function at ``x``."""
    x, loc, scale = promote("uniform.cdf", x, loc, scale)
    zero, one = pnp.array(0, x.dtype), pnp.array(1, x.dtype)
    hi = loc + scale
    conds = [x < loc, x > hi, (x >= loc) & (x <= hi)]
    return pnp.select(conds, [zero, one, (x - loc) / scale])


def ppf(q: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """The quantile function ``loc + scale * q`` (NaN outside ``[0, 1]``)."""
    q, loc, scale = promote("uniform.ppf", q, loc, scale)
    return pnp.where(pnp.isnan(q) | (q < 0) | (q > 1), np.nan, loc + scale * q)

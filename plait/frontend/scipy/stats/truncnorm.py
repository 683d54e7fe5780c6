"""The truncated normal distribution (``jax.scipy.stats.truncnorm``): a normal of mean
``loc`` and deviation ``scale`` restricted to standardized bounds ``[a, b]`` (that is, to
``[loc + a scale, loc + b scale]``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from plait.frontend import lax
from plait.frontend import numpy as pnp
from plait.frontend.api.jit import jit
from plait.frontend.core.array_base import Array
from plait.frontend.scipy import special
from plait.frontend.scipy._util import promote
from plait.frontend.scipy.stats import norm

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"]

def _log_sub(x: Array, y: Array) -> Array:
    """``log(exp(x) - exp(y))`` for ``x >= y``, stably (a signed log-sum-exp)."""
    terms = pnp.array([x, y])
    signs = pnp.array([pnp.ones_like(x), lax.neg(pnp.ones_like(y))])
    return special.logsumexp(terms, b=signs, axis=0)


def _log_mass(a: Any, b: Any) -> Array:
    """The log of the standard normal's mass in ``[a, b]``: between two tails it is
    ``log1p(-ndtr(a) - ndtr(-b))``; inside one tail the difference of the two log-cdfs
    (of the mirrored bounds in the right tail), which keeps its precision far out."""
    a, b = pnp.broadcast_arrays(pnp.array(a), pnp.array(b))
    left, right = b <= 0, a > 0
    central = ~(left | right)
    lo = pnp.where(right, lax.neg(b), a)
    hi = pnp.where(right, lax.neg(a), b)
    tail = _log_sub(special.log_ndtr(hi), special.log_ndtr(lo))
    middle = pnp.log1p(lax.neg(special.ndtr(a)) - special.ndtr(lax.neg(b)))
    return pnp.where(central, middle, tail)


# As in JAX, each public function but pdf is jitted with its defaults inside: an omitted
# loc or scale is a constant of the program (XLA folds it), not a traced argument, so
# the compiled program, and its rounding, are JAX's.

@jit
def logpdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """The log of the probability density at ``x`` (``-inf`` outside the bounds, NaN
    when ``a >= b``)."""
    x, a, b, loc, scale = promote("truncnorm.logpdf", x, a, b, loc, scale)
    value = norm.logpdf(x, loc, scale) - _log_mass(a, b)
    z = (x - loc) / scale
    value = pnp.where((z < a) | (z > b), -np.inf, value)
    return pnp.where(a >= b, np.nan, value)


def pdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """The probability density at ``x``."""
    return lax.exp(logpdf(x, a, b, loc, scale))


@jit
def logcdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """The log of the cumulative distribution function (``-inf`` below the lower bound,
    ``0`` above the upper, NaN when ``a >= b``)."""
    x, a, b, loc, scale = promote("truncnorm.logcdf", x, a, b, loc, scale)
    x, a, b = pnp.broadcast_arrays(x, a, b)
    z = (x - loc) / scale
    log_total = _log_mass(a, b)
    below = _log_mass(a, z) - log_total
    above = _log_mass(z, b) - log_total
    # Near 1 the cdf is more accurate as one minus the upper mass.
    value = pnp.select([z >= b, z <= a, below > -0.1, z > a],
                       [0, -np.inf, pnp.log1p(lax.neg(pnp.exp(above))), below])
    return pnp.where(a >= b, np.nan, value)


@jit
def cdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """The cumulative distribution function at ``x``."""
    return lax.exp(logcdf(x, a, b, loc, scale))


@jit
def logsf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """The log of the survival function ``1 - cdf(x)``."""
    x, a, b, loc, scale = promote("truncnorm.logsf", x, a, b, loc, scale)
    # The survival function is the cdf of the mirrored distribution at -x.
    return logcdf(lax.neg(x), lax.neg(b), lax.neg(a), lax.neg(loc), scale)


@jit
def sf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """The survival function ``1 - cdf(x)``."""
    return lax.exp(logsf(x, a, b, loc, scale))

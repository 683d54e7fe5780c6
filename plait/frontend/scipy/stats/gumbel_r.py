"""The right-skewed Gumbel distribution (``jax.scipy.stats.gumbel_r``), of maxima:
``cdf = exp(-exp(-z))`` for ``z = (x - loc) / scale``."""

from __future__ import annotations

from typing import Any

import numpy as np

from plait.frontend import lax
from plait.frontend import numpy as pnp
from plait.frontend.api.custom_derivatives import custom_jvp
from plait.frontend.api.jit import jit
from plait.frontend.core.array_base import Array
from plait.frontend.scipy import special
from plait.frontend.scipy._util import const, promote

__all__ = ["logpdf", "pdf", "logcdf", "cdf", "ppf", "sf", "logsf"]


def _log1mexp_impl(x: Array) -> Array:
    # log(1 - exp(-x)), x >= 0: the expm1 form below log 2, the log1p form above.
    return pnp.where(x < pnp.log(2.0), pnp.log(lax.neg(pnp.expm1(lax.neg(x)))),
                     pnp.log1p(lax.neg(pnp.exp(lax.neg(x)))))


_log1mexp_impl.__name__ = _log1mexp_impl.__qualname__ = "log1mexp"
_log1mexp = custom_jvp(jit(_log1mexp_impl))
_log1mexp.defjvps(lambda g, ans, x: g / pnp.expm1(x))


def _valid(scale: Array) -> Array:
    return scale > const(scale, 0)


def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """The log of the probability density, ``-log(scale) - z - exp(-z)`` (NaN for
    non-positive ``scale``)."""
    x, loc, scale = promote("gumbel_r.logpdf", x, loc, scale)
    z = (x - loc) / scale
    value = special.xlogy(-1, scale) + lax.neg(z + lax.exp(lax.neg(z)))
    return pnp.where(_valid(scale), value, np.nan)


def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """The probability density at ``x``."""
    return lax.exp(logpdf(x, loc, scale))


def logcdf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """The log of the cumulative distribution function, ``-exp(-z)``."""
    x, loc, scale = promote("gumbel_r.logcdf", x, loc, scale)
    z = (x - loc) / scale
    return pnp.where(_valid(scale), lax.neg(lax.exp(lax.neg(z))), np.nan)


def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """The cumulative distribution function ``exp(-exp(-z))``."""
    return lax.exp(logcdf(x, loc, scale))


def ppf(p: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """The quantile function ``loc - scale log(-log p)`` (NaN outside ``(0, 1)``)."""
    p, loc, scale = promote("gumbel_r.ppf", p, loc, scale)
    inside = (p > const(p, 0)) & (p < const(p, 1))
    value = loc - scale * lax.log(special.xlogy(-1, p))
    return pnp.where(inside, value, np.nan)


def sf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """The survival function ``1 - exp(-exp(-z))``."""
    x, loc, scale = promote("gumbel_r.sf", x, loc, scale)
    minus_z = (loc - x) / scale
    value = const(x, 1) - lax.exp(lax.neg(lax.exp(minus_z)))
    return pnp.where(_valid(scale), value, np.nan)


def logsf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """The log of the survival function, ``log(1 - exp(-exp(-z)))`` computed stably."""
    x, loc, scale = promote("gumbel_r.logsf", x, loc, scale)
    minus_z = (loc - x) / scale
    return pnp.where(_valid(scale), _log1mexp(lax.exp(minus_z)), np.nan)

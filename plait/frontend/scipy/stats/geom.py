"""The geometric distribution (``jax.scipy.stats.geom``): the number of Bernoulli trials
up to the first success, ``P(k) = (1 - p)^(k - 1) p`` for ``k >= 1``."""

from __future__ import annotations

from typing import Any

import numpy as np

from plait.frontend import lax
from plait.frontend import numpy as pnp
from plait.frontend.core.array_base import Array
from plait.frontend.scipy import special
from plait.frontend.scipy._util import const, promote

__all__ = ["logpmf", "pmf"]


def logpmf(k: Any, p: Any, loc: Any = 0) -> Array:
    """The log of the probability of ``k`` (``-inf`` for ``k - loc < 1``; non-integer
    ``k`` is not rounded, as in JAX)."""
    k, p, loc = promote("geom.logpmf", k, p, loc)
    x = k - loc
    log_probs = special.xlog1py(x - const(k, 1), lax.neg(p)) + lax.log(p)
    return pnp.where(x <= const(k, 0), -np.inf, log_probs)


def pmf(k: Any, p: Any, loc: Any = 0) -> Array:
    """The probability of ``k``."""
    return pnp.exp(logpmf(k, p, loc))

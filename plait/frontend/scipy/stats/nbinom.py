"""The negative binomial distribution (``jax.scipy.stats.nbinom``): the number of failures
before the ``n``-th success, ``P(k) = C(k + n - 1, k) p^n (1 - p)^k``."""

from __future__ import annotations

from typing import Any

import numpy as np

from plait.frontend import lax
from plait.frontend import numpy as pnp
from plait.frontend.core.array_base import Array
from plait.frontend.scipy import special
from plait.frontend.scipy._util import const, promote

__all__ = ["logpmf", "pmf"]


def logpmf(k: Any, n: Any, p: Any, loc: Any = 0) -> Array:
    """The log of the probability of ``k`` (``-inf`` below ``loc``)."""
    k, n, p, loc = promote("nbinom.logpmf", k, n, p, loc)
    one = const(k, 1)
    y = k - loc
    log_comb = special.gammaln(y + n) - special.gammaln(n) - special.gammaln(y + one)
    log_linear = special.xlogy(n, p) + special.xlogy(y, one - p)
    return pnp.where(k < loc, -np.inf, log_comb + log_linear)


def pmf(k: Any, n: Any, p: Any, loc: Any = 0) -> Array:
    """The probability of ``k``."""
    return lax.exp(logpmf(k, n, p, loc))

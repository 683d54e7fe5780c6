"""The binomial distribution (``jax.scipy.stats.binom``): the number of successes in ``n``
trials, ``P(k) = C(n, k) p^k (1 - p)^(n - k)``."""

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
    """The log of the probability of ``k`` (``-inf`` outside ``[loc, loc + n]``; as in
    JAX, ``k`` is not rounded: between the integers this is the continuous extension)."""
    k, n, p, loc = promote("binom.logpmf", k, n, p, loc)
    y = k - loc
    zero = const(y, 0)
    # (Python scalars, as JAX: they keep weakly typed arguments weakly typed.)
    log_comb = special.gammaln(n + 1) - (special.gammaln(y + 1) + special.gammaln(n - y + 1))
    log_linear = special.xlogy(y, p) + special.xlog1py(n - y, lax.neg(p))
    # A certain outcome (no trials, or p at 0 or 1 at its end of the range) has log 1.
    certain = ((y == zero) & (n == zero)) | (log_linear == zero)
    log_probs = pnp.where(certain, 0.0, log_comb + log_linear)
    return pnp.where((k >= loc) & (k < loc + n + 1), log_probs, -np.inf)


def pmf(k: Any, n: Any, p: Any, loc: Any = 0) -> Array:
    """The probability of ``k``."""
    return lax.exp(logpmf(k, n, p, loc))

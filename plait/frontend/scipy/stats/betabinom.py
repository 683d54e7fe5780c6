"""The beta-binomial distribution (``jax.scipy.stats.betabinom``): a binomial over ``n``
trials whose success probability is beta(``a``, ``b``) distributed,
``P(k) = C(n, k) B(k + a, n - k + b) / B(a, b)``."""

from __future__ import annotations

from typing import Any

import numpy as np

from plait.frontend import lax
from plait.frontend import numpy as pnp
from plait.frontend.api.jit import jit
from plait.frontend.core.array_base import Array
from plait.frontend.scipy import special
from plait.frontend.scipy._util import const, promote

__all__ = ["logpmf", "pmf"]


# Jitted with its default inside, as JAX's: an omitted loc is a constant of the program.
@jit
def logpmf(k: Any, n: Any, a: Any, b: Any, loc: Any = 0) -> Array:
    """The log of the probability of ``floor(k)`` (``-inf`` outside ``[0, n]``, NaN for
    negative ``n`` or non-positive ``a`` or ``b``); one compiled program, as JAX's."""
    k, n, a, b, loc = promote("betabinom.logpmf", k, n, a, b, loc)
    y = lax.floor(k) - loc
    zero, one = const(y, 0), const(y, 1)
    # log C(n, y) = -log(n + 1) - log B(n - y + 1, y + 1)
    log_comb = lax.neg(lax.log1p(n) + special.betaln(n - y + one, y + one))
    log_probs = log_comb + (special.betaln(y + a, n - y + b) - special.betaln(a, b))
    log_probs = pnp.where((y == zero) & (n == zero), 0.0, log_probs)
    # (As JAX 0.10.2: the lower bound compares y = floor(k) - loc with -loc.)
    outside = (y < lax.neg(loc)) | (y > n) | (y + a <= zero)
    log_probs = pnp.where(outside, -np.inf, log_probs)
    return pnp.where((n < zero) | (a <= zero) | (b <= zero), np.nan, log_probs)


def pmf(k: Any, n: Any, a: Any, b: Any, loc: Any = 0) -> Array:
    """The probability of ``floor(k)``."""
    return lax.exp(logpmf(k, n, a, b, loc))

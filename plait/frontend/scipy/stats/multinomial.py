"""The multinomial distribution (``jax.scipy.stats.multinomial``): the counts ``x`` of
``n`` draws among categories of probabilities ``p``,
``P(x) = n! prod(p_i^x_i / x_i!)``."""

from __future__ import annotations

from typing import Any

import numpy as np

from plait.frontend import lax
from plait.frontend import numpy as pnp
from plait.frontend.core.array_base import Array
from plait.frontend.numpy._core import as_array, check_arraylike, promote_numeric
from plait.frontend.scipy import special
from plait.frontend.scipy._util import promote
from plait.ir import dtypes as dt

__all__ = ["logpmf", "pmf"]


def logpmf(x: Any, n: Any, p: Any) -> Array:
    """The log of the probability of the counts ``x`` (last axis: the categories), in
    ``p``'s (inexact) dtype; ``-inf`` unless the counts sum to ``n``.  As in JAX 0.10.2,
    that sum is over all of ``x``, so a batch of count vectors gets ``-inf``.

    Raises:
      TypeError: an argument is not an array or scalar.
      ValueError: ``x`` and ``n`` do not promote to an integer dtype.
    """
    p_arr, = promote("multinomial.logpmf", p)
    check_arraylike("multinomial.logpmf", x, n)
    x_arr, n_arr = (as_array(v) for v in promote_numeric("multinomial.logpmf", x, n))
    if not dt.is_integer(x_arr.dtype):
        raise ValueError(f"x and n must be of integer type; got x.dtype={x_arr.dtype}, "
                         f"n.dtype={n_arr.dtype}")
    x_arr = x_arr.astype(p_arr.dtype)
    n_arr = n_arr.astype(p_arr.dtype)
    terms = special.xlogy(x_arr, p_arr) - special.gammaln(x_arr + 1)
    log_probs = special.gammaln(n_arr + 1) + pnp.sum(terms, axis=-1)
    return pnp.where(pnp.equal(pnp.sum(x_arr), n_arr), log_probs, -np.inf)


def pmf(x: Any, n: Any, p: Any) -> Array:
    """The probability of the counts ``x``."""
    return lax.exp(logpmf(x, n, p))

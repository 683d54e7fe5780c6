"""The Dirichlet distribution (``jax.scipy.stats.dirichlet``) on the simplex: density
``prod(x_i^(alpha_i - 1)) / B(alpha)``, the points along the first axis of ``x``."""

from __future__ import annotations

from typing import Any

import numpy as np

from plait.frontend import lax
from plait.frontend import numpy as pnp
from plait.frontend.core.array_base import Array
from plait.frontend.numpy._core import as_array, check_arraylike, promote_dtypes_inexact
from plait.frontend.scipy import special
from plait.frontend.scipy._util import const

__all__ = ["logpdf", "pdf"]


def logpdf(x: Any, alpha: Any) -> Array:
    """The log density at ``x``, whose first axis holds the ``K`` coordinates of each
    point (or ``K - 1`` of them: the last is then one minus their sum); ``alpha`` has
    shape ``(K,)``.  ``-inf`` off the open simplex (a coordinate not positive, or the
    coordinates not summing to 1 within ``1e-6``).

    Raises:
      TypeError: ``x`` or ``alpha`` is not an array or scalar.
      ValueError: ``alpha`` is not one-dimensional, or ``x`` has neither ``K`` nor
        ``K - 1`` coordinates.
      IndexError: ``x`` is a scalar (as in JAX).
    """
    check_arraylike("dirichlet.logpdf", x, alpha)
    x_arr, alpha_arr = (as_array(v) for v in
                        promote_dtypes_inexact("dirichlet.logpdf", x, alpha))
    if alpha_arr.ndim != 1:
        raise ValueError(f"`alpha` must be one-dimensional; got alpha.shape={alpha_arr.shape}")
    if x_arr.ndim == 0:
        raise IndexError("dirichlet.logpdf: `x` must have at least one dimension, the "
                         "coordinates of each point along its first axis")
    k = alpha_arr.shape[0]
    if x_arr.shape[0] not in (k, k - 1):
        raise ValueError("`x` must have either the same number of entries as `alpha` or one "
                         f"entry fewer; got x.shape={x_arr.shape}, alpha.shape={alpha_arr.shape}")
    one = const(x_arr, 1)
    if x_arr.shape[0] != k:
        last = one - x_arr.sum(0, keepdims=True)
        x_arr = pnp.concatenate([x_arr, last], axis=0)
    log_beta = pnp.sum(special.gammaln(alpha_arr)) - special.gammaln(pnp.sum(alpha_arr))
    if x_arr.ndim > 1:
        alpha_arr = lax.broadcast_in_dim(alpha_arr, alpha_arr.shape + (1,) * (x_arr.ndim - 1),
                                         (0,))
    log_probs = pnp.sum(special.xlogy(alpha_arr - one, x_arr), axis=0) - log_beta
    on_simplex = pnp.all(x_arr > 0, axis=0) & (abs(pnp.sum(x_arr, axis=0) - 1) < 1e-6)
    return pnp.where(on_simplex, log_probs, -np.inf)


def pdf(x: Any, alpha: Any) -> Array:
    """The density at ``x`` (see :func:`logpdf`)."""
    return lax.exp(logpdf(x, alpha))

"""The multivariate normal distribution (``jax.scipy.stats.multivariate_normal``)."""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from plait.frontend import lax
from plait.frontend import numpy as pnp
from plait.frontend.core.array_base import Array
from plait.frontend.lax import linalg
from plait.frontend.numpy._core import as_array, check_arraylike, promote_dtypes_inexact

__all__ = ["logpdf", "pdf"]

_LOG_2PI = float(np.log(2 * np.pi))


def logpdf(x: Any, mean: Any, cov: Any, allow_singular: bool | None = None) -> Array:
    """The log density at ``x`` (``[..., n]``) of the normal distribution with ``mean``
    (``[..., n]`` or a scalar) and covariance ``cov`` (``[..., n, n]``, or a scalar
    variance), through a Cholesky factorization of ``cov``.

    Raises:
      NotImplementedError: ``allow_singular=True`` (a singular ``cov`` needs an
        eigendecomposition, which plait does not have yet).
      ValueError: ``cov``'s shape does not fit ``mean``'s.
    """
    if allow_singular:
        raise NotImplementedError(
            "multivariate_normal.logpdf with allow_singular=True (it needs an "
            "eigendecomposition, which plait does not have yet)")
    check_arraylike("multivariate_normal.logpdf", x, mean, cov)
    x, mean, cov = promote_dtypes_inexact("multivariate_normal.logpdf", x, mean, cov)
    return _logpdf(as_array(x), as_array(mean), as_array(cov))


def _logpdf(x: Array, mean: Array, cov: Array) -> Array:
    if not mean.shape:
        return (-1 / 2 * pnp.square(x - mean) / cov
                - 1 / 2 * (pnp.log(2 * np.pi) + pnp.log(cov)))
    n = mean.shape[-1]
    if not cov.shape:
        y = x - mean
        return (-1 / 2 * pnp.einsum("...i,...i->...", y, y) / cov
                - n / 2 * (pnp.log(2 * np.pi) + pnp.log(cov)))
    if cov.ndim < 2 or cov.shape[-2:] != (n, n):
        raise ValueError("multivariate_normal.logpdf got incompatible shapes")
    factor = linalg.cholesky(cov)
    # y = L^-1 (x - mean), so that y.y = (x - mean)^T cov^-1 (x - mean).
    solve = pnp.vectorize(functools.partial(linalg.triangular_solve, lower=True,
                                            transpose_a=True), signature="(n,n),(n)->(n)")
    y = solve(factor, x - mean)
    return (-1 / 2 * pnp.einsum("...i,...i->...", y, y) - n / 2 * pnp.log(2 * np.pi)
            - lax.log(pnp.diagonal(factor, axis1=-1, axis2=-2)).sum(-1))


def pdf(x: Any, mean: Any, cov: Any) -> Array:
    """The density at ``x`` (see :func:`logpdf`)."""
    return lax.exp(logpdf(x, mean, cov))

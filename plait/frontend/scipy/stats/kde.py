"""Gaussian kernel density estimation (``jax.scipy.stats.gaussian_kde``, as
``scipy.stats.gaussian_kde``): a pytree, so an estimate passes through ``jit``, ``vmap``
and ``grad`` like any container of arrays."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any, TypeVar

import numpy as np

from plait.frontend import numpy as pnp
from plait.frontend.api.jit import jit
from plait.frontend.api.vmap import vmap
from plait.frontend.core.array_base import Array
from plait.frontend.core.tree_util import register_pytree_node_class
from plait.frontend.numpy._core import as_array, check_arraylike, dtype_of
from plait.frontend.numpy._core import promote_dtypes_inexact as _promote_inexact
from plait.frontend.random.distributions import choice, multivariate_normal
from plait.frontend.random.keys import split
from plait.frontend.scipy import linalg, special
from plait.ir import dtypes as dt

__all__ = ["gaussian_kde"]

F = TypeVar("F", bound=Callable[..., Any])
BwMethod = None | str | Array | Callable[[Any], Array]


def _inexact(*args: Any) -> list[Array]:
    return [as_array(v) for v in _promote_inexact("gaussian_kde", *args)]


@register_pytree_node_class
@dataclass(frozen=True, init=False, slots=True)
class gaussian_kde:  # noqa: N801  (JAX's name)
    """A Gaussian kernel density estimate of the ``d``-dimensional samples ``dataset``
    (shape ``(d, n)``, or ``(n,)`` for one dimension), optionally weighted.

    The kernel's covariance is the samples' (weighted) covariance times the square of
    the bandwidth factor ``bw_method``: ``'scott'`` (the default,
    ``neff^(-1 / (d + 4))``), ``'silverman'`` (``(neff (d + 2) / 4)^(-1 / (d + 4))``), a
    scalar, or a callable taking the (partly built) estimate.  ``neff`` is the effective
    number of samples, ``1 / sum(weights^2)``.

    Raises:
      TypeError: ``dataset`` or ``weights`` is not an array.
      NotImplementedError: complex ``dataset``.
      ValueError: ``dataset`` has fewer than two elements, ``weights`` is not a vector of
        ``n`` entries, or ``bw_method`` is none of the above.
    """

    neff: Any
    dataset: Any
    weights: Any
    covariance: Any
    inv_cov: Any

    def __init__(self, dataset: Any, bw_method: BwMethod = None, weights: Any = None) -> None:
        check_arraylike("gaussian_kde", dataset)
        data = pnp.atleast_2d(dataset)
        if dt.is_complex(data.dtype):
            raise NotImplementedError("gaussian_kde does not support complex data")
        if not data.size > 1:
            raise ValueError("`dataset` input should have multiple elements.")
        d, n = data.shape
        if weights is not None:
            check_arraylike("gaussian_kde", weights)
            data, w = _inexact(data, weights)
            w = pnp.atleast_1d(w)
            w = w / pnp.sum(w)
            if w.ndim != 1:
                raise ValueError("`weights` input should be one-dimensional.")
            if len(w) != n:
                raise ValueError("`weights` input should be of length n")
        else:
            data, = _inexact(data)
            w = pnp.full(n, 1.0 / n, dtype=data.dtype)
        self._set("dataset", data)
        self._set("weights", w)
        neff = self._set("neff", 1 / pnp.sum(w ** 2))
        if bw_method is None:
            bw_method = "scott"
        factor: Any
        if isinstance(bw_method, str) and bw_method == "scott":
            factor = pnp.power(neff, -1.0 / (d + 4))
        elif isinstance(bw_method, str) and bw_method == "silverman":
            factor = pnp.power(neff * (d + 2) / 4.0, -1.0 / (d + 4))
        elif pnp.isscalar(bw_method) and not isinstance(bw_method, str):
            factor = bw_method
        elif callable(bw_method):
            factor = bw_method(self)
        else:
            raise ValueError(
                "`bw_method` should be 'scott', 'silverman', a scalar, or a callable.")
        data_cov = pnp.atleast_2d(pnp.cov(data, rowvar=True, bias=False, aweights=w))
        data_inv_cov = pnp.linalg.inv(data_cov)
        self._set("covariance", data_cov * factor ** 2)
        self._set("inv_cov", data_inv_cov / factor ** 2)

    def _set(self, name: str, value: Any) -> Any:
        object.__setattr__(self, name, value)
        return value

    def tree_flatten(self) -> tuple[tuple[Any, ...], None]:
        """The leaves ``(neff, dataset, weights, covariance, inv_cov)``, no aux data."""
        return (self.neff, self.dataset, self.weights, self.covariance, self.inv_cov), None

    @classmethod
    def tree_unflatten(cls, aux_data: None, children: Any) -> gaussian_kde:
        """An estimate made of the leaves of :meth:`tree_flatten` (not recomputed)."""
        del aux_data
        kde = cls.__new__(cls)
        for name, value in zip(("neff", "dataset", "weights", "covariance", "inv_cov"),
                               children):
            kde._set(name, value)
        return kde

    @property
    def d(self) -> int:
        """The number of dimensions."""
        return int(self.dataset.shape[0])

    @property
    def n(self) -> int:
        """The number of samples."""
        return int(self.dataset.shape[1])

    def evaluate(self, points: Any) -> Array:
        """The estimated density at ``points`` (shape ``(d, m)``; ``(m,)`` in one
        dimension, or ``(d,)`` for one point).

        Raises:
          TypeError: ``points`` is not an array.
          ValueError: ``points`` has another dimension than the data.
          NotImplementedError: complex ``points``.
        """
        check_arraylike("evaluate", points)
        pts = self._reshape_points(points)
        result: Array = _kernel_sums(self.dataset.T, self.weights[:, None], pts.T,
                                     self.inv_cov, in_log=False)
        return result[:, 0]

    def __call__(self, points: Any) -> Array:
        """The estimated density at ``points`` (see :meth:`evaluate`)."""
        return self.evaluate(points)

    def integrate_gaussian(self, mean: Any, cov: Any) -> Array:
        """The integral of the estimate times the normal density of ``mean`` and ``cov``.

        Raises:
          ValueError: ``mean`` or ``cov`` does not have the data's dimension.
        """
        mean = pnp.atleast_1d(pnp.squeeze(mean))
        cov = pnp.atleast_2d(cov)
        if mean.shape != (self.d,):
            raise ValueError(f"mean does not have dimension {self.d}")
        if cov.shape != (self.d, self.d):
            raise ValueError(f"covariance does not have dimension {self.d}")
        chol = linalg.cho_factor(self.covariance + cov)
        norm = 1.0 / (pnp.sqrt(2 * np.pi) ** self.d * pnp.prod(pnp.diag(chol[0])))
        return _convolve(chol, norm, self.dataset, self.weights, mean)

    def integrate_box_1d(self, low: Any, high: Any) -> Array:
        """The estimate's mass between the scalars ``low`` and ``high`` (one dimension).

        Raises:
          ValueError: the data are not one-dimensional, or a limit is not a scalar.
        """
        result: Array = _integrate_box_1d(self, low, high)
        return result

    def integrate_kde(self, other: gaussian_kde) -> Array:
        """The integral of the product of this estimate and ``other``.

        Raises:
          ValueError: the two have different dimensions.
        """
        if other.d != self.d:
            raise ValueError("KDEs are not the same dimensionality")
        chol = linalg.cho_factor(self.covariance + other.covariance)
        norm = 1.0 / (pnp.sqrt(2 * np.pi) ** self.d * pnp.prod(pnp.diag(chol[0])))
        small, large = (self, other) if self.n < other.n else (other, self)
        per_point = vmap(partial(_convolve, chol, norm, large.dataset, large.weights),
                         in_axes=1)(small.dataset)
        return pnp.sum(per_point * small.weights)

    def resample(self, key: Any, shape: tuple[int, ...] = ()) -> Array:
        """Samples drawn from the estimate with the PRNG ``key``, shape ``(d, *shape)``
        for ``shape`` of at most one dimension (as JAX's, the normal noise is transposed
        whole: for more dimensions its axes come out reversed)."""
        result: Array = _resample(self, key, shape=tuple(shape))
        return result

    def pdf(self, x: Any) -> Array:
        """The estimated density at ``x`` (see :meth:`evaluate`)."""
        return self.evaluate(x)

    def logpdf(self, x: Any) -> Array:
        """The log of the estimated density at ``x``, by a log-sum-exp over the samples
        (accurate far from them, where :meth:`evaluate` underflows)."""
        check_arraylike("logpdf", x)
        pts = self._reshape_points(x)
        result: Array = _kernel_sums(self.dataset.T, self.weights[:, None], pts.T,
                                     self.inv_cov, in_log=True)
        return result[:, 0]

    def integrate_box(self, low_bounds: Any, high_bounds: Any, maxpts: Any = None) -> Array:
        """Not supported (as in JAX): only :meth:`integrate_box_1d`.

        Raises:
          NotImplementedError: always.
        """
        del low_bounds, high_bounds, maxpts
        raise NotImplementedError(
            "only 1D box integrations are supported; use `integrate_box_1d`")

    def set_bandwidth(self, bw_method: BwMethod = None) -> None:
        """Not supported (as in JAX): the estimate is immutable; build a new one.

        Raises:
          NotImplementedError: always.
        """
        del bw_method
        raise NotImplementedError("dynamically changing the bandwidth method is not supported")

    def _reshape_points(self, points: Any) -> Array:
        if dt.is_complex(dtype_of(points)):
            raise NotImplementedError("gaussian_kde does not support complex coordinates")
        pts = pnp.atleast_2d(points)
        d, m = pts.shape
        if d != self.d:
            if d == 1 and m == self.d:
                pts = pnp.reshape(pts, (self.d, 1))
            else:
                raise ValueError(f"points have dimension {d}, dataset has dimension {self.d}")
        return pts


def _convolve(chol: tuple[Array, bool], norm: Array, target: Array, weights: Array,
              mean: Array) -> Array:
    """``norm * sum_i w_i exp(-(t_i - mean)^T S^-1 (t_i - mean) / 2)``, ``S`` factored
    in ``chol``."""
    diff = target - mean[:, None]
    alpha = linalg.cho_solve(chol, diff)
    exponent = 0.5 * pnp.sum(diff * alpha, axis=0)
    return norm * pnp.sum(pnp.exp(-exponent) * weights)


def _integrate_box_1d_impl(kde: gaussian_kde, low: Any, high: Any) -> Array:
    if kde.d != 1:
        raise ValueError("integrate_box_1d() only handles 1D pdfs")
    if np.ndim(low) != 0 or np.ndim(high) != 0:
        raise ValueError("the limits of integration in integrate_box_1d must be scalars")
    sigma = pnp.squeeze(pnp.sqrt(kde.covariance))
    lo = pnp.squeeze((low - kde.dataset) / sigma)
    hi = pnp.squeeze((high - kde.dataset) / sigma)
    return pnp.sum(kde.weights * (special.ndtr(hi) - special.ndtr(lo)))


def _resample_impl(kde: gaussian_kde, key: Any, *, shape: tuple[int, ...]) -> Array:
    index_key, noise_key = split(key)
    index = choice(index_key, kde.n, shape=shape, p=kde.weights)
    noise = multivariate_normal(
        noise_key, pnp.zeros(kde.d, kde.covariance.dtype), kde.covariance, shape=shape,
        dtype=kde.dataset.dtype).T
    samples: Array = kde.dataset[:, index] + noise
    return samples


def _kernel_sums_impl(points: Any, values: Any, xi: Any, precision: Any, *,
                      in_log: bool) -> Array:
    """For each row of ``xi``, the sum over the rows of ``points`` of ``values`` times
    the normal density of precision ``precision`` (the log of the sum with ``in_log``)."""
    points, values, xi, precision = (as_array(v) for v in _promote_inexact(
        "gaussian_kde", points, values, xi, precision))
    d = points.shape[1]
    if xi.shape[1] != d:
        raise ValueError("points and xi must have same trailing dim")
    if precision.shape != (d, d):
        raise ValueError("precision matrix must match data dims")
    whitening = linalg.cholesky(precision, lower=True)
    points = pnp.dot(points, whitening)
    xi = pnp.dot(xi, whitening)
    log_norm = pnp.sum(pnp.log(pnp.diag(whitening))) - 0.5 * d * pnp.log(2 * np.pi)

    def kernel(x_test: Array, x_train: Array, y_train: Array) -> Array:
        exponent: Array = log_norm - 0.5 * pnp.sum(pnp.square(x_train - x_test))
        if in_log:
            return pnp.log(y_train) + exponent
        return y_train * pnp.exp(exponent)

    def at_point(x: Array) -> Array:
        terms = vmap(kernel, in_axes=(None, 0, 0))(x, points, values)
        if in_log:
            return special.logsumexp(terms, axis=0)
        return pnp.sum(terms, axis=0)

    result: Array = vmap(at_point)(xi)
    return result


def _named(f: F, name: str) -> F:
    f.__name__ = f.__qualname__ = name
    return f


_integrate_box_1d = jit(_named(_integrate_box_1d_impl, "integrate_box_1d"))
_resample = jit(_named(_resample_impl, "resample"), static_argnames=("shape",))
_kernel_sums = jit(_named(_kernel_sums_impl, "_gaussian_kernel_eval"),
                   static_argnames=("in_log",))

"""``roots``, ``poly`` and ``polyfit``: the polynomial functions that need linear
algebra (the eigenvalues of a companion matrix, a least-squares fit), with JAX's
semantics."""

from __future__ import annotations

from typing import Any

import numpy as np

from plait.frontend.api.eager_programs import compiled_when_eager
from plait.frontend.core.array_base import Array
from plait.frontend.core.tracing import has_value
from plait.frontend.lax.ops import sort_key_val
from plait.frontend.numpy._core import check_arraylike, promote_dtypes_inexact
from plait.frontend.numpy.creation import arange, asarray, ones
from plait.frontend.numpy.linalg_eig import eigvals
from plait.frontend.numpy.linalg_factored import inv, lstsq
from plait.frontend.numpy.linalg_ops import dot, outer
from plait.frontend.numpy.manipulation import atleast_1d
from plait.frontend.numpy.matrices import diag
from plait.frontend.numpy.polynomials import vander
from plait.frontend.numpy.rearranging import roll
from plait.frontend.numpy.reductions import all as np_all
from plait.frontend.numpy.reductions import argmin
from plait.frontend.numpy.signal import convolve
from plait.frontend.numpy.ufuncs import sqrt, where
from plait.ir import dtypes as dt
from plait.ir.errors import ConcretizationTypeError

__all__ = ["roots", "poly", "polyfit"]


def _complex_dtype(dtype: np.dtype[Any]) -> np.dtype[Any]:
    if dt.is_complex(dtype):
        return dtype
    return np.dtype(np.complex128) if dtype == dt.float64 else np.dtype(np.complex64)


def _roots_no_zeros(p: Array) -> Array:
    # The eigenvalues of the companion matrix are the roots.
    if p.size < 2:
        return asarray([], dtype=_complex_dtype(p.dtype))
    companion = diag(ones((p.size - 2,), p.dtype), -1)
    companion = companion.at[0, :].set(-p[1:] / p[0])
    return eigvals(companion)


def roots(p: Any, *, strip_zeros: bool = True) -> Array:
    """The roots of the polynomial with coefficients ``p`` (highest power first), as the
    eigenvalues of its companion matrix.  Leading zeros are stripped (``p`` must then be
    concrete); with ``strip_zeros=False`` they give NaN roots instead, under ``jit`` too."""
    check_arraylike("roots", p)
    (arr,) = promote_dtypes_inexact("roots", p)
    coeffs = atleast_1d(arr)
    if coeffs.ndim != 1:
        raise ValueError("Input must be a rank-1 array.")
    if coeffs.size < 2:
        return asarray([], dtype=_complex_dtype(coeffs.dtype))
    leading = where(np_all(coeffs == 0), len(coeffs), argmin(coeffs == 0))
    if strip_zeros:
        if not has_value(leading):
            raise ConcretizationTypeError(
                "roots: the number of leading zero coefficients must be known; to use roots "
                "within a jit-compiled function, pass strip_zeros=False, but be aware that "
                "leading zeros will result in some returned roots being set to NaN.")
        return _roots_no_zeros(coeffs[int(leading):])
    # All-zero coefficients would make LAPACK fail: use ones (every root is NaN anyway).
    safe = where(len(coeffs) == leading, 1.0, coeffs).astype(coeffs.dtype)
    found = _roots_no_zeros(roll(safe, -leading))
    found = sort_key_val(found == 0, found)[1]  # the spurious zero roots go last
    keep = arange(found.size) < found.size - leading
    return where(keep, found, complex(np.nan, np.nan)).astype(found.dtype)


@compiled_when_eager(("deg", "rcond", "full", "cov"))
def polyfit(x: Any, y: Any, deg: int, rcond: float | None = None, full: bool = False,
            w: Any = None, cov: bool | str = False) -> Any:
    """The least-squares polynomial of degree ``deg`` through ``(x, y)`` (``y`` one column
    or several), highest power first; with ``full`` also the residuals, rank, singular
    values and ``rcond``; with ``cov`` also the coefficients' covariance."""
    check_arraylike("polyfit", x, y, *(() if w is None else (w,)))
    xs, ys = asarray(x), asarray(y)
    order = int(deg) + 1
    if deg < 0:
        raise ValueError("expected deg >= 0")
    if xs.ndim != 1:
        raise TypeError("expected 1D vector for x")
    if xs.size == 0:
        raise TypeError("expected non-empty vector for x")
    if ys.ndim < 1 or ys.ndim > 2:
        raise TypeError("expected 1D or 2D array for y")
    if xs.shape[0] != ys.shape[0]:
        raise TypeError("expected x and y to have same length")
    if rcond is None:
        rcond = len(xs) * float(np.finfo(dt.canonicalize(np.float64) if not dt.is_inexact(
            xs.dtype) else xs.dtype).eps)
    lhs, rhs = vander(xs, order), ys
    if w is not None:
        (weights,) = promote_dtypes_inexact("polyfit", w)
        weights = asarray(weights)
        if weights.ndim != 1:
            raise TypeError("expected a 1-d array for weights")
        if weights.shape[0] != ys.shape[0]:
            raise TypeError("expected w and y to have the same length")
        lhs = lhs * weights[:, None]
        rhs = rhs * (weights[:, None] if rhs.ndim == 2 else weights)
    scale = sqrt((lhs * lhs).sum(axis=0))
    lhs = lhs / scale[None, :]
    c, resids, rank, s = lstsq(lhs, rhs, rcond)
    c = (c.T / scale[None, :]).T if c.ndim > 1 else c / scale
    if full:
        return c, resids, rank, s, asarray(rcond)
    if not cov:
        return c
    base = inv(dot(lhs.T, lhs)) / outer(scale, scale)
    if cov == "unscaled":
        fac = asarray(1.0)
    else:
        if len(xs) <= order:
            raise ValueError("the number of data points must exceed order to scale the "
                             "covariance matrix")
        fac = resids / (len(xs) - order)
    if ys.ndim == 1:
        return c, base * atleast_1d(fac)[None]
    return c, base[:, :, None] * atleast_1d(fac)[None, None, :]


def poly(seq_of_zeros: Any) -> Array:
    """The coefficients (highest power first) of the monic polynomial with the given
    roots, or with a square matrix's eigenvalues as roots.

    Raises:
      ValueError: the input is neither 1-d nor a non-empty square matrix.
    """
    check_arraylike("poly", seq_of_zeros)
    zeros = atleast_1d(promote_dtypes_inexact("poly", seq_of_zeros)[0])
    if zeros.ndim == 2 and zeros.shape[0] == zeros.shape[1] and zeros.shape[0]:
        zeros = eigvals(zeros)
    if zeros.ndim != 1:
        raise ValueError("input must be 1d or non-empty square 2d array.")
    if not zeros.shape[0]:
        return ones((), zeros.dtype)
    coeffs = ones((1,), zeros.dtype)
    for k in range(zeros.shape[0]):
        coeffs = convolve(coeffs, asarray([1, -zeros[k]], zeros.dtype), mode="full")
    return coeffs

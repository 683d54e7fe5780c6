"""Polynomials as coefficient arrays, highest power first: ``polyval``, ``polyadd``,
``polysub``, ``polymul``, ``polydiv``, ``polyder``, ``polyint``; and the Vandermonde
matrix ``vander``.

As in JAX, ``polyadd``/``polysub`` keep the input dtype while ``polymul``,
``polydiv``, ``polyder`` and ``polyint`` compute in an inexact dtype.
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from plait.frontend import lax
from plait.frontend.api.eager_programs import compiled_when_eager
from plait.frontend.core.array_base import Array
from plait.frontend.core.tracing import has_value
from plait.frontend.numpy._core import (
    as_array,
    check_arraylike,
    promote_dtypes,
    promote_dtypes_inexact,
    shape,
)
from plait.frontend.numpy.arithmetic import power
from plait.frontend.numpy.creation import arange, full, zeros
from plait.frontend.numpy.manipulation import atleast_1d, concatenate, flip, stack
from plait.frontend.numpy.reductions import prod
from plait.frontend.numpy.ufuncs import maximum, negative, true_divide
from plait.ir.errors import ConcretizationTypeError

__all__ = ["polyval", "polyadd", "polysub", "polymul", "polydiv", "polyder", "polyint",
           "vander"]


def _arrays(name: str, *args: Any) -> list[Array]:
    check_arraylike(name, *args)
    return [as_array(a) for a in promote_dtypes(name, *args)]


def _inexact_arrays(name: str, *args: Any) -> list[Array]:
    check_arraylike(name, *args)
    return [as_array(a) for a in promote_dtypes_inexact(name, *args)]


@compiled_when_eager(("unroll",))
def polyval(p: Any, x: Any, *, unroll: int = 16) -> Array:
    """The polynomial with coefficients ``p`` (along its first axis) evaluated at ``x``
    by Horner's rule; ``unroll`` is accepted for JAX compatibility (plait always
    unrolls the loop)."""
    p_arr, x_arr = _arrays("polyval", p, x)
    out_shape = np.broadcast_shapes(p_arr.shape[1:], x_arr.shape)
    y = lax.full(out_shape, 0, x_arr.dtype)
    for i in range(p_arr.shape[0]):
        y = y * x_arr + p_arr[i]
    return y


def polyadd(a1: Any, a2: Any) -> Array:
    """The sum of two polynomials (the shorter one aligned to the end of the longer)."""
    a1_arr, a2_arr = _arrays("polyadd", a1, a2)
    if a2_arr.shape[0] <= a1_arr.shape[0]:
        return a1_arr.at[-a2_arr.shape[0]:].add(a2_arr)
    return a2_arr.at[-a1_arr.shape[0]:].add(a1_arr)


def polysub(a1: Any, a2: Any) -> Array:
    """The difference of two polynomials."""
    a1_arr, a2_arr = _arrays("polysub", a1, a2)
    return polyadd(a1_arr, negative(a2_arr))


def _trim_leading_zeros(a: Array, name: str = "polymul", tol: float = 0.0) -> Array:
    """``a`` without its leading coefficients of magnitude at most ``tol`` (below it,
    when ``tol`` is positive); concrete coefficients only."""
    if not has_value(a):
        raise ConcretizationTypeError(
            f"{name}: trim_leading_zeros=True needs concrete coefficients (the length of the "
            "result depends on their values); it cannot be used inside a transformation.")
    host = np.abs(np.asarray(a))
    nonzero = np.flatnonzero(~(host < tol) if tol else host)
    return a[int(nonzero[0]):] if nonzero.size else a[:0]


def _convolve_full(x: Array, y: Array) -> Array:
    """The full discrete convolution of two non-empty 1-d arrays (as ``jnp.convolve``)."""
    if x.shape[0] < y.shape[0]:
        x, y = y, x
    n = y.shape[0]
    out = lax.conv_general_dilated(x[None, None, :], flip(y)[None, None, :], (1,),
                                   [(n - 1, n - 1)])
    return out[0, 0]


def polymul(a1: Any, a2: Any, *, trim_leading_zeros: bool = False) -> Array:
    """The product of two polynomials (1-d coefficient arrays), in an inexact dtype;
    ``trim_leading_zeros`` (concrete inputs only) drops leading zero coefficients.

    Raises:
      ValueError: an input that is not one-dimensional.
    """
    a1_arr, a2_arr = _inexact_arrays("polymul", a1, a2)
    if trim_leading_zeros and (len(a1_arr) > 1 or len(a2_arr) > 1):
        a1_arr, a2_arr = _trim_leading_zeros(a1_arr), _trim_leading_zeros(a2_arr)
    if len(a1_arr) == 0:
        a1_arr = zeros(1, dtype=a2_arr.dtype)
    if len(a2_arr) == 0:
        a2_arr = zeros(1, dtype=a1_arr.dtype)
    if a1_arr.ndim != 1 or a2_arr.ndim != 1:
        raise ValueError("convolve() only support 1-dimensional inputs.")
    return _convolve_full(a1_arr, a2_arr)


def polydiv(u: Any, v: Any, *, trim_leading_zeros: bool = False) -> tuple[Array, Array]:
    """The quotient and remainder of the polynomial division ``u / v`` (1-d coefficient
    arrays, highest power first), in an inexact dtype.  The remainder keeps the length
    of ``u`` unless ``trim_leading_zeros`` (concrete inputs only) drops its leading
    coefficients smaller than the square root of the dtype's epsilon.

    Raises:
      TypeError: a 0-d input (it has no length) or a non-array argument.
      ValueError: an input of more than one dimension.
      IndexError: an empty ``v``.
    """
    check_arraylike("polydiv", u, v)
    u_arr, v_arr = _inexact_arrays("polydiv", u, v)
    if u_arr.ndim == 0 or v_arr.ndim == 0:
        raise TypeError("len() of unsized object")
    if u_arr.ndim != 1 or v_arr.ndim != 1:
        raise ValueError(f"polydiv: u and v must be one-dimensional, got shapes {u_arr.shape} "
                         f"and {v_arr.shape}")
    if v_arr.shape[0] == 0:
        raise IndexError("index is out of bounds for axis 0 with size 0")
    m, n = u_arr.shape[0] - 1, v_arr.shape[0] - 1
    inverse = true_divide(1.0, v_arr[0])
    rem = u_arr
    quotient = []
    for k in range(m - n + 1):
        d = inverse * rem[k]
        quotient.append(d)
        rem = rem.at[k:k + n + 1].add(negative(d) * v_arr)
    q = stack(quotient) if quotient else zeros(1, dtype=u_arr.dtype)
    if trim_leading_zeros:
        eps = float(np.finfo(rem.dtype).eps)
        rem = _trim_leading_zeros(rem, "polydiv", float(np.sqrt(eps)))
    return q, rem


def _order(m: Any, what: str) -> int:
    order = operator.index(m)
    if order < 0:
        raise ValueError(f"Order of {what} must be positive" +
                         (" (see polyder)" if what == "integral" else ""))
    return order


def polyder(p: Any, m: int = 1) -> Array:
    """The coefficients of the ``m``-th derivative of the polynomial ``p``.

    Raises:
      ValueError: a negative ``m``.
    """
    p_arr, = _inexact_arrays("polyder", p)
    m = _order(m, "derivative")
    if m == 0:
        return p_arr
    # The falling factorials (k)(k-1)...(k-m+1) for k = m .. len(p) - 1.
    grid = arange(m, len(p_arr), dtype=p_arr.dtype)[None] - \
        arange(m, dtype=p_arr.dtype)[:, None]
    coeff = prod(grid, axis=0)
    return p_arr[:-m] * coeff[::-1]


def polyint(p: Any, m: int = 1, k: Any = None) -> Array:
    """The coefficients of the ``m``-th integral of the polynomial ``p``, with the
    integration constants ``k`` (a scalar, or one per integration).

    Raises:
      ValueError: a negative ``m``, or ``k`` of another length than 1 or ``m``.
    """
    p_arr, k_arr = _inexact_arrays("polyint", p, 0 if k is None else k)
    m = _order(m, "integral")
    k_arr = atleast_1d(k_arr)
    if len(k_arr) == 1:
        k_arr = full((m,), k_arr[0])
    if shape(k_arr) != (m,):
        raise ValueError("k must be a scalar or a rank-1 array of length 1 or m.")
    if m == 0:
        return p_arr
    # Divide by the rising products (j+1)(j+2)...(j+m) of each coefficient's power j.
    grid = arange(len(p_arr) + m, dtype=p_arr.dtype)[None] - \
        arange(m, dtype=p_arr.dtype)[:, None]
    coeff = prod(maximum(1, grid), axis=0)[::-1]
    return true_divide(concatenate((p_arr, k_arr)), coeff)


def vander(x: Any, N: int | None = None, increasing: bool = False) -> Array:
    """The Vandermonde matrix of the 1-d ``x``: columns ``x**(N-1), ..., x**0`` (or
    increasing powers), ``N`` defaulting to ``len(x)``.

    Raises:
      ValueError: ``x`` not one-dimensional, or a negative ``N``.
    """
    check_arraylike("vander", x)
    arr = as_array(x)
    if arr.ndim != 1:
        raise ValueError("x must be a one-dimensional array")
    n = arr.shape[0] if N is None else operator.index(N)
    if n < 0:
        raise ValueError("N must be nonnegative")
    powers = lax.iota(arr.dtype, n)
    if not increasing:
        powers = lax.sub(lax.full((), n - 1, arr.dtype), powers)
    return power(arr[:, None], powers[None, :])

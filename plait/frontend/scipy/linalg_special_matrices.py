"""SciPy's special matrices in ``plait.scipy.linalg``, as JAX 0.10.2's ``jax.scipy.linalg``
builds them.

Two kinds:

* matrices built from array arguments (``toeplitz``, ``hankel``, ``circulant``,
  ``leslie``, ``companion``, ``fiedler``, ``fiedler_companion``,
  ``convolution_matrix``): they broadcast over leading (batch) dimensions, keep the
  argument's dtype (``companion`` and ``fiedler_companion`` make it inexact), and work
  under ``jit``, ``vmap`` and ``grad``.  ``toeplitz`` and ``hankel`` gather their
  diagonals with a convolution (``conv_general_dilated_patches``), as JAX does, so an
  infinite entry spreads NaNs the way it does in JAX;
* matrices of a static order ``n`` (``hilbert``, ``invhilbert``, ``pascal``,
  ``invpascal``, ``helmert``, ``hadamard``, ``dft``): compiled per ``n`` (``n`` is a
  Python int, as in JAX), in the default float (complex, int) dtype -- except ``pascal``,
  which is float32 even with x64 on, as in JAX.
"""

from __future__ import annotations

import math
import operator
from typing import Any

import numpy as np

from plait.frontend import lax
from plait.frontend import numpy as pnp
from plait.frontend.api.jit import jit
from plait.frontend.core.array_base import Array
from plait.frontend.core.x64_warnings import check_user_dtype
from plait.frontend.numpy._core import check_arraylike, promote_dtypes, promote_dtypes_inexact
from plait.frontend.scipy.special import comb
from plait.ir import dtypes as dt
from plait.ir.primitives import Precision

__all__ = ["toeplitz", "hankel", "circulant", "leslie", "companion", "fiedler",
           "fiedler_companion", "convolution_matrix", "hilbert", "invhilbert", "pascal",
           "invpascal", "helmert", "hadamard", "dft"]


def _patches(v: Array, width: int) -> Array:
    """The ``len(v) - width + 1`` windows of ``width`` consecutive entries of ``v``, one a
    row (a grouped convolution with a one-hot kernel, as JAX computes them)."""
    out: Array = lax.conv_general_dilated_patches(
        v.reshape((1, v.shape[0], 1)), (width,), (1,), "VALID",
        dimension_numbers=("NTC", "IOT", "NTC"), precision=Precision.HIGHEST)[0]
    return out


def _toeplitz_core(c: Array, r: Array) -> Array:
    m, n = c.shape[0], r.shape[0]
    if m == 0 or n == 0:
        return pnp.empty((m, n), dtype=pnp.promote_types(c.dtype, r.dtype))
    return pnp.flip(_patches(pnp.concatenate((c[::-1], r[1:])), n), axis=0)


def _hankel_core(c: Array, r: Array) -> Array:
    m, n = c.shape[0], r.shape[0]
    if m == 0 or n == 0:
        return pnp.empty((m, n), dtype=pnp.result_type(c, r))
    return _patches(pnp.concatenate((c, r[1:])), n)


def toeplitz(c: Any, r: Any = None) -> Array:
    """The Toeplitz matrix with first column ``c`` and first row ``r`` (``r[0]`` is
    ignored; ``r`` defaults to ``conj(c)``): ``A[i, j] = c[i - j]`` for ``i >= j`` and
    ``r[j - i]`` above the diagonal.  ``c`` ``(..., N)`` and ``r`` ``(..., M)`` broadcast
    over their leading dimensions, giving ``(..., N, M)``; scalars count as length 1.

    Raises:
      TypeError: ``c`` or ``r`` is a list or another non-array.
    """
    if r is None:
        check_arraylike("toeplitz", c)
        r = pnp.conjugate(pnp.asarray(c))
    else:
        check_arraylike("toeplitz", c, r)
    out: Array = pnp.vectorize(_toeplitz_core, signature="(m),(n)->(m,n)")(
        pnp.atleast_1d(pnp.asarray(c)), pnp.atleast_1d(pnp.asarray(r)))
    return out


def hankel(c: Any, r: Any = None) -> Array:
    """The Hankel matrix with first column ``c`` and last row ``r`` (``r[0]`` is ignored;
    ``r`` defaults to zeros): ``H[i, j] = v[i + j]`` with ``v = concatenate([c, r[1:]])``.
    ``c`` ``(..., N)`` and ``r`` ``(..., M)`` broadcast over their leading dimensions,
    giving ``(..., N, M)``.

    Raises:
      TypeError: ``c`` or ``r`` is a list or another non-array.
      ValueError: ``c`` or ``r`` is a scalar.
    """
    if r is None:
        check_arraylike("hankel", c)
        c = pnp.asarray(c)
        r = pnp.zeros_like(c)
    else:
        check_arraylike("hankel", c, r)
        c, r = pnp.asarray(c), pnp.asarray(r)
    if c.ndim == 0:
        raise ValueError("hankel: c must be at least 1-dimensional, got a scalar.")
    if r.ndim == 0:
        raise ValueError("hankel: r must be at least 1-dimensional, got a scalar.")
    if c.ndim < r.ndim:
        c = lax.expand_dims(c, range(r.ndim - c.ndim))
    elif r.ndim < c.ndim:
        r = lax.expand_dims(r, range(c.ndim - r.ndim))
    out: Array = pnp.vectorize(_hankel_core, signature="(m),(n)->(m,n)")(c, r)
    return out


def _circulant_core(c: Array) -> Array:
    n = c.shape[0]
    idx = (pnp.arange(n)[:, None] - pnp.arange(n)[None, :]) % n
    return c[idx]


def circulant(c: Any) -> Array:
    """The circulant matrix with first column ``c``: ``A[i, j] = c[(i - j) % N]``;
    ``(..., N)`` gives ``(..., N, N)``.

    Raises:
      TypeError: ``c`` is a list or another non-array.
    """
    check_arraylike("circulant", c)
    out: Array = pnp.vectorize(_circulant_core, signature="(n)->(n,n)")(
        pnp.atleast_1d(pnp.asarray(c)))
    return out


def _leslie_core(f: Array, s: Array) -> Array:
    f, s = promote_dtypes("leslie", f, s)
    return pnp.diag(s, k=-1).at[0].set(f)


def leslie(f: Any, s: Any) -> Array:
    """The Leslie matrix of fecundities ``f`` ``(..., N)`` (its first row) and survival
    rates ``s`` ``(..., N - 1)`` (its first subdiagonal), zero elsewhere: ``(..., N, N)``.

    Raises:
      TypeError: ``f`` or ``s`` is a list or another non-array.
      ValueError: ``N < 2``, or ``s``'s length is not ``N - 1``.
    """
    check_arraylike("leslie", f, s)
    f_arr, s_arr = pnp.atleast_1d(f), pnp.atleast_1d(s)
    if f_arr.shape[-1] < 2:
        raise ValueError("The length of f along the last axis must be at least 2; "
                         f"got shape {f_arr.shape}.")
    if s_arr.shape[-1] != f_arr.shape[-1] - 1:
        raise ValueError(
            "Incorrect lengths for f and s. The length of s along the last axis must be one "
            f"less than the length of f; got f shape {f_arr.shape} and s shape "
            f"{s_arr.shape}.")
    out: Array = pnp.vectorize(_leslie_core, signature="(n),(m)->(n,n)")(f_arr, s_arr)
    return out


def _companion_core(a: Array) -> Array:
    first_row = -a[1:] / a[0]
    m = a.shape[0] - 1
    return pnp.eye(m, m, k=-1, dtype=first_row.dtype).at[0].set(first_row)


def companion(a: Any) -> Array:
    """The companion matrix of the polynomial with coefficients ``a`` ``(..., N)``
    (highest degree first): ``(..., N - 1, N - 1)``, first row ``-a[1:] / a[0]``, ones on
    the first subdiagonal.  Integers become floating; a zero ``a[0]`` gives infinities or
    NaNs (no check, as in JAX).

    Raises:
      ValueError: ``N < 2``.
    """
    (x,) = promote_dtypes_inexact("companion", a)
    x = pnp.atleast_1d(x)
    if x.shape[-1] < 2:
        raise ValueError("The length of `a` along the last axis must be at least 2; "
                         f"got shape {x.shape}.")
    out: Array = pnp.vectorize(_companion_core, signature="(n)->(m,m)")(x)
    return out


def fiedler(a: Any) -> Array:
    """The symmetric Fiedler matrix ``F[i, j] = |a[i] - a[j]|`` of ``a`` ``(..., N)``:
    ``(..., N, N)``, in ``a``'s dtype.

    Raises:
      TypeError: ``a`` is a list or another non-array.
    """
    check_arraylike("fiedler", a)
    arr = pnp.atleast_1d(a)
    return pnp.abs(arr[..., None] - arr[..., None, :])


def _fiedler_companion_core(a: Array) -> Array:
    n = a.shape[0] - 1
    if n == 0:
        return pnp.empty((0, 0), dtype=a.dtype)
    a = a / a[0]
    if n == 1:
        return -a[1:].reshape(1, 1)
    # The pentadiagonal pattern, written as masks over the full (n, n) grid.
    i = pnp.arange(n)[:, None]
    j = pnp.arange(n)[None, :]
    above = -a[pnp.minimum(i + 2, n)]  # row i (even): -a[i + 2] at column i + 1
    below = -a[pnp.minimum(i + 1, n)]  # row i (even, >= 2): -a[i + 1] at column i - 1
    even, odd = i % 2 == 0, i % 2 == 1
    one, zero = pnp.array(1, dtype=a.dtype), pnp.array(0, dtype=a.dtype)
    masks = [(i == 0) & (j == 0), (i == 1) & (j == 0), (j == i + 1) & even,
             (j == i + 2) & even, (j == i - 1) & even & (i >= 2), (j == i - 2) & odd & (i >= 3)]
    return pnp.select(masks, [-a[1], one, above, one, below, one], default=zero)


def fiedler_companion(a: Any) -> Array:
    """The Fiedler companion matrix (pentadiagonal, with the roots of the polynomial
    ``a`` as eigenvalues) of coefficients ``a`` ``(..., N)`` (highest degree first):
    ``(..., N - 1, N - 1)``.  Integers become floating; a zero ``a[0]`` is not checked.

    Raises:
      ValueError: ``a``'s last axis is empty.
    """
    (x,) = promote_dtypes_inexact("fiedler_companion", a)
    x = pnp.atleast_1d(x)
    if x.shape[-1] == 0:
        raise ValueError("fiedler_companion requires the last axis of 'a' to have nonzero "
                         f"length, but got an array of shape {x.shape}.")
    out: Array = pnp.vectorize(_fiedler_companion_core, signature="(n)->(m,m)")(x)
    return out


def convolution_matrix(a: Any, n: int, mode: str = "full") -> Array:
    """The Toeplitz matrix ``A`` with ``A @ v == convolve(a, v, mode)`` for ``v`` of length
    ``n``: ``(..., k, n)`` for ``a`` ``(..., m)``, ``k`` being ``m + n - 1`` ('full'),
    ``max(m, n)`` ('same') or ``max(m, n) - min(m, n) + 1`` ('valid').

    Raises:
      TypeError: ``n`` is not an integer, or ``a`` is a list.
      ValueError: ``n < 1``, ``a`` is a scalar or empty, or ``mode`` is unknown.
    """
    n = operator.index(n)
    if n <= 0:
        raise ValueError(f"n must be a positive integer; got {n}.")
    check_arraylike("convolution_matrix", a)
    arr = pnp.asarray(a)
    if arr.ndim == 0:
        raise ValueError("convolution_matrix: a must be at least 1-dimensional, got a scalar.")
    m = arr.shape[-1]
    if m < 1:
        raise ValueError(f"len(a) must be at least 1; got shape {arr.shape}.")
    if mode not in ("full", "valid", "same"):
        raise ValueError(f"mode must be one of 'full', 'valid', 'same'; got {mode!r}.")
    widths = [(0, 0)] * (arr.ndim - 1) + [(0, n - 1)]
    padded = pnp.pad(arr, widths)
    padded_rev = pnp.pad(pnp.flip(arr, axis=-1), widths)
    total = m + n - 1
    if mode == "same":
        trim = min(n, m) - 1
        head, tail = trim // 2, trim - trim // 2
    elif mode == "valid":
        head = tail = min(n, m) - 1
    else:
        head = tail = 0
    col0 = lax.slice_in_dim(padded, head, total - tail, axis=-1)
    row0 = lax.slice_in_dim(padded_rev, total - n - head, total - head, axis=-1)
    return toeplitz(col0, row0)


# --- Matrices of a static order n -------------------------------------------------------

def _hilbert(n: int) -> Array:
    a = lax.broadcasted_iota(dt.canonicalize(dt.float64), (n, 1), 0)
    out: Array = 1 / (a + a.T + 1)
    return out


_hilbert_jit = jit(_hilbert, static_argnums=0)


def hilbert(n: int) -> Array:
    """The ``(n, n)`` Hilbert matrix ``H[i, j] = 1 / (i + j + 1)`` (0-based), in the
    default float dtype."""
    return _hilbert_jit(n)


def _invhilbert(n: int) -> Array:
    a = pnp.arange(n, dtype=dt.canonicalize(dt.float64))
    i, j = a[:, None], a[None, :]
    s = i + j
    out: Array = ((-1.0) ** s * (s + 1.0) * comb(n + i, n - j - 1) * comb(n + j, n - i - 1)
                  * comb(s, i) ** 2)
    return out


_invhilbert_jit = jit(_invhilbert, static_argnums=0)


def invhilbert(n: int) -> Array:
    """The inverse of the ``(n, n)`` Hilbert matrix from its closed form in binomial
    coefficients (computed in floating point through ``gammaln``, so only approximately
    integral; SciPy's ``exact=True`` is not supported, as in JAX)."""
    return _invhilbert_jit(n)


def _binom(n: Array, k: Array) -> Array:
    return lax.exp(lax.lgamma(n + 1.0) - lax.lgamma(n - k + 1.0) - lax.lgamma(k + 1.0))


_KINDS = ["symmetric", "lower", "upper"]


def _pascal(n: int, kind: str) -> Array:
    a = pnp.arange(n, dtype=np.float32)
    lower = _binom(a[:, None], a[None, :])
    if kind == "lower":
        return lower
    if kind == "upper":
        return lower.T
    return pnp.dot(lower, lower.T)


_pascal_jit = jit(_pascal, static_argnums=(0, 1))


def pascal(n: int, kind: str | None = None) -> Array:
    """The ``(n, n)`` Pascal matrix: binomial coefficients ``C(i, j)`` ('lower'), their
    transpose ('upper') or their product ``L L^T`` ('symmetric', the default), computed
    through ``lgamma`` in float32 (even with x64 on, as in JAX), so only approximately
    integral.

    Raises:
      ValueError: ``kind`` is not 'symmetric', 'lower' or 'upper'.
    """
    kind = "symmetric" if kind is None else kind
    if kind not in _KINDS:
        raise ValueError(f"Expected kind to be on of: {_KINDS}; got {kind}")
    return _pascal_jit(n, kind)


def _invpascal(n: int, kind: str) -> Array:
    a = pnp.arange(n, dtype=dt.canonicalize(dt.float64))
    i, j = a[:, None], a[None, :]
    lower_inv: Array = ((-1.0) ** (i - j)) * _binom(i, j)
    if kind == "lower":
        return lower_inv
    if kind == "upper":
        return lower_inv.T
    return pnp.dot(lower_inv.T, lower_inv)


_invpascal_jit = jit(_invpascal, static_argnums=(0, 1))


def invpascal(n: int, kind: str | None = None) -> Array:
    """The inverse of :func:`pascal`'s matrix of the same ``kind``: ``(-1)^(i-j) C(i, j)``
    ('lower'), its transpose ('upper'), or ``U^-1 L^-1`` ('symmetric', the default), in
    the default float dtype (SciPy's ``exact=True`` is not supported, as in JAX).

    Raises:
      ValueError: ``kind`` is not 'symmetric', 'lower' or 'upper'.
    """
    kind = "symmetric" if kind is None else kind
    if kind not in _KINDS:
        raise ValueError(f"Expected kind to be one of: {_KINDS}; got {kind}")
    return _invpascal_jit(n, kind)


def _helmert(n: int, full: bool) -> Array:
    i = pnp.arange(n - 1)[:, None]
    j = pnp.arange(n)[None, :]
    k = i + 1
    kf = k.astype(dt.canonicalize(dt.float64))
    denom = pnp.sqrt(kf * (kf + 1))
    h = pnp.where(j <= i, 1.0 / denom, pnp.where(j == k, -kf / denom, pnp.zeros_like(denom)))
    if full:
        first = pnp.full((1, n), 1.0 / pnp.sqrt(n), dtype=h.dtype)
        h = pnp.concatenate([first, h], axis=0)
    return h


_helmert_jit = jit(_helmert, static_argnums=(0, 1))


def helmert(n: int, full: bool = False) -> Array:
    """The Helmert matrix of order ``n``: ``(n - 1, n)`` rows of orthonormal contrasts
    (row ``k - 1`` is ``(1, ..., 1, -k, 0, ..., 0) / sqrt(k (k + 1))``), with a first row
    of ``1 / sqrt(n)`` prepended if ``full`` (``(n, n)``, orthogonal).

    Raises:
      ValueError: ``n < 1``.
    """
    if n < 1:
        raise ValueError(f"n must be a positive integer; got {n}.")
    return _helmert_jit(n, bool(full))


def _hadamard(n: int, dtype: Any) -> Array:
    h = pnp.ones((1, 1), dtype=dtype)
    for _ in range(int(math.log2(n))):
        h = pnp.block([[h, h], [h, -h]])
    return h


_hadamard_jit = jit(_hadamard, static_argnums=(0, 1))


def hadamard(n: int, dtype: Any = int) -> Array:
    """The ``(n, n)`` Hadamard matrix of Sylvester's construction (``H H^T = n I``), for
    ``n`` a power of 2, in ``dtype`` (the default int unless given).

    Raises:
      ValueError: ``n`` is not a positive power of 2.
    """
    if n < 1 or not math.log2(n).is_integer():
        raise ValueError(f"n must be a positive power of 2; got {n}.")
    return _hadamard_jit(n, dtype)


def _dft(n: int, scale: str | None, dtype: Any) -> Array:
    a = pnp.arange(n, dtype=dtype)
    omegas = pnp.exp(-2j * np.pi * a[:, None] * a[None, :] / n)
    if scale == "sqrtn":
        omegas = omegas / pnp.sqrt(n)
    elif scale == "n":
        omegas = omegas / n
    return omegas


_dft_jit = jit(_dft, static_argnums=(0, 1, 2))


def dft(n: int, scale: str | None = None, *, dtype: Any = None) -> Array:
    """The ``(n, n)`` discrete Fourier transform matrix ``W[i, j] = exp(-2 pi i j / n)``
    (times ``1 / sqrt(n)`` with ``scale='sqrtn'``, ``1 / n`` with ``scale='n'``), in the
    default complex dtype unless ``dtype`` (complex) is given.

    Raises:
      ValueError: ``scale`` is not None, 'sqrtn' or 'n', or ``dtype`` is not complex.
    """
    if scale is not None and scale not in ("sqrtn", "n"):
        raise ValueError(f"scale must be None, 'sqrtn', or 'n'; got {scale!r}.")
    if dtype is None:
        dtype = dt.canonicalize(dt.complex128)
    else:
        dtype = check_user_dtype(dtype, "dft")
        if not dt.is_complex(dtype):
            raise ValueError(f"dtype must be a complex floating-point type; got {dtype}.")
    return _dft_jit(n, scale, dtype)

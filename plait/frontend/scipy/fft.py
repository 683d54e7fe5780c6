"""``plait.scipy.fft``: the discrete cosine transform of type 2 and its inverse
(``dct``, ``dctn``, ``idct``, ``idctn``), with JAX 0.10.2's signatures and semantics.

Each transform is one complex FFT of the same length: the even-indexed points in
order followed by the odd-indexed ones reversed, then a twiddle by
``exp(-i pi k / 2N)``.  ``norm`` is ``None``/``'backward'`` (SciPy's default scaling)
or ``'ortho'``.  Integers and bools become ``float32``; a complex input is transformed
as its real and imaginary parts.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

from plait.frontend import lax
from plait.frontend import numpy as pnp
from plait.frontend.core.array_base import Array
from plait.frontend.numpy import fft as pfft
from plait.frontend.numpy._core import (
    as_array,
    canonical_axis,
    check_arraylike,
    promote_dtypes_inexact,
)
from plait.ir import dtypes as dt

__all__ = ["dct", "dctn", "idct", "idctn"]


def _input(name: str, x: Any, type: int, norm: str | None) -> Array:
    check_arraylike(name, x)
    if type != 2:
        raise NotImplementedError(f"Only DCT type 2 is implemented, but got type={type!r}.")
    if norm is not None and norm not in ("backward", "ortho"):
        raise ValueError(f"plait.scipy.fft.{name}: norm={norm!r} is not implemented; "
                         "expected None, 'backward' or 'ortho'")
    return as_array(promote_dtypes_inexact(name, x)[0])


def _resize(x: Array, axis: int, n: int | None) -> Array:
    """``x`` cut or zero-padded to ``n`` points along ``axis``."""
    if n is None:
        return x
    n = operator.index(n)
    if n < 1:
        raise ValueError(f"expected a positive number of points, but got n={n}")
    widths = [(0, n - x.shape[axis] if a == axis else 0, 0) for a in range(x.ndim)]
    return lax.pad(x, np.zeros((), x.dtype), widths)


def _even_odd_order(n: int) -> np.ndarray:
    """The points in the order the FFT reads them: ``0, 2, 4, ..., 5, 3, 1``."""
    return np.concatenate([np.arange(0, n, 2), np.arange(1, n, 2)[::-1]])


def _along(v: np.ndarray, axis: int, nd: int) -> np.ndarray:
    return v.reshape([-1 if a == axis else 1 for a in range(nd)])


def _ortho_factor(n: int, dtype: np.dtype[Any]) -> np.ndarray:
    """The orthonormal scaling of each coefficient: ``1/sqrt(4N)`` for the first,
    ``1/sqrt(2N)`` for the rest."""
    f = np.full(n, 1.0 / np.sqrt(2.0 * n))
    f[0] = 1.0 / np.sqrt(4.0 * n)
    return f.astype(dtype)


def _real_dct(x: Array, axis: int, norm: str | None) -> Array:
    n = x.shape[axis]
    v = pnp.take(x, _even_odd_order(n), axis=axis)
    spectrum = pfft.fft(v, axis=axis)
    real = dt.canonicalize(np.float64 if spectrum.dtype == dt.complex128 else np.float32)
    twiddle = np.exp(-0.5j * np.pi * np.arange(n) / n).astype(spectrum.dtype)
    out = 2 * pnp.real(spectrum * _along(twiddle, axis, x.ndim))
    if norm == "ortho":
        out = out * _along(_ortho_factor(n, real), axis, x.ndim)
    return out


def _real_idct(x: Array, axis: int, norm: str | None) -> Array:
    n = x.shape[axis]
    complex_dtype = dt.canonicalize(np.complex128 if x.dtype == dt.float64 else np.complex64)
    # The coefficients as the inverse FFT wants them: the first halved (SciPy's backward
    # scaling; 'ortho' undone first), each turned back by the forward twiddle.
    weight = np.ones(n)
    weight[0] = 0.5
    if norm == "ortho":
        weight = weight / _ortho_factor(n, np.dtype(np.float64))
    untwiddle = (weight * np.exp(0.5j * np.pi * np.arange(n) / n)).astype(complex_dtype)
    spectrum = x.astype(complex_dtype) * _along(untwiddle, axis, x.ndim)
    v = pnp.real(pfft.ifft(spectrum, axis=axis))
    return pnp.take(v, np.argsort(_even_odd_order(n)), axis=axis)


def _by_parts(f: Any, x: Array, *args: Any) -> Array:
    if pnp.iscomplexobj(x):
        return lax.complex(f(pnp.real(x), *args), f(pnp.imag(x), *args))
    return f(x, *args)  # type: ignore[no-any-return]  # f: an untyped transform


def dct(x: Any, type: int = 2, n: int | None = None, axis: int = -1,
        norm: str | None = None) -> Array:
    """The type-2 discrete cosine transform of ``x`` along ``axis``, of ``x`` first cut
    or zero-padded to ``n`` points if ``n`` is given.

    Raises:
      NotImplementedError: ``type`` other than 2.
      ValueError: ``norm`` other than ``None``, ``'backward'`` or ``'ortho'``.
    """
    a = _input("dct", x, type, norm)
    ax = canonical_axis(axis, a.ndim)

    def one(r: Array) -> Array:
        return _real_dct(_resize(r, ax, n), ax, norm)
    return _by_parts(one, a)


def idct(x: Any, type: int = 2, n: int | None = None, axis: int = -1,
         norm: str | None = None) -> Array:
    """The inverse of :func:`dct` (a type-3 transform, scaled) along ``axis``, of ``x``
    first cut or zero-padded to ``n`` points if ``n`` is given.

    Raises:
      NotImplementedError: ``type`` other than 2.
      ValueError: ``norm`` other than ``None``, ``'backward'`` or ``'ortho'``.
    """
    a = _input("idct", x, type, norm)
    ax = canonical_axis(axis, a.ndim)

    def one(r: Array) -> Array:
        return _real_idct(_resize(r, ax, n), ax, norm)
    return _by_parts(one, a)


def _axes_and_sizes(x: Array, s: Sequence[int] | None,
                    axes: Sequence[int] | None) -> tuple[tuple[int, ...], dict[int, int]]:
    sizes: list[int] | None = None
    if s is not None:
        sizes = [operator.index(s)] if not isinstance(s, Sequence) else list(s)
        if len(sizes) > x.ndim:
            raise ValueError(f"s must have at most x.ndim ({x.ndim}) elements, got "
                             f"{len(sizes)}")
    if axes is None:
        ax = tuple(range(x.ndim - len(sizes), x.ndim)) if sizes is not None \
            else tuple(range(x.ndim))
    elif isinstance(axes, Sequence):
        ax = tuple(canonical_axis(a, x.ndim) for a in axes)
        if len(set(ax)) != len(ax):
            raise ValueError(f"repeated axis: {ax}")
    else:
        ax = (canonical_axis(axes, x.ndim),)
    return ax, ({} if sizes is None else dict(zip(ax, sizes)))


def _multi(name: str, one: Any, x: Any, type: int, s: Sequence[int] | None,
           axes: Sequence[int] | None, norm: str | None) -> Array:
    a = _input(name, x, type, norm)
    ax, sizes = _axes_and_sizes(a, s, axes)

    def apply(r: Array) -> Array:
        for i in ax:
            r = _resize(r, i, sizes.get(i))
        for i in ax:
            r = one(r, i, norm)
        return r
    if not ax:
        return pnp.asarray(x)
    return _by_parts(apply, a)


def dctn(x: Any, type: int = 2, s: Sequence[int] | None = None,
         axes: Sequence[int] | None = None, norm: str | None = None) -> Array:
    """The type-2 discrete cosine transform of ``x`` along each of ``axes`` (all by
    default, the last ``len(s)`` if ``s`` is given), ``x`` first cut or zero-padded to
    the sizes ``s``.

    Raises:
      NotImplementedError: ``type`` other than 2.
      ValueError: an unknown ``norm``, a repeated axis, or more sizes than dimensions.
    """
    return _multi("dctn", _real_dct, x, type, s, axes, norm)


def idctn(x: Any, type: int = 2, s: Sequence[int] | None = None,
          axes: Sequence[int] | None = None, norm: str | None = None) -> Array:
    """The inverse of :func:`dctn` along each of ``axes`` (see :func:`dctn`)."""
    return _multi("idctn", _real_idct, x, type, s, axes, norm)

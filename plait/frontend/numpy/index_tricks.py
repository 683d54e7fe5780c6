"""Index arrays and grids: ``tril_indices``, ``diag_indices``, ``indices``, ``ix_``,
``unravel_index``, ``ravel_multi_index``, ``mgrid``/``ogrid``, ``r_``/``c_``,
``s_``/``index_exp``.

Shapes and sizes are static (Python ints), as in ``jax.numpy``: an index array
whose length depends on them is built on the host and becomes a constant.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

from plait.frontend import lax
from plait.frontend.core.array_base import Array
from plait.frontend.core.promotion import result_type
from plait.frontend.core.x64_warnings import check_user_dtype
from plait.frontend.numpy import arithmetic, composite_ufuncs, reductions, ufuncs
from plait.frontend.numpy._core import ndim, shape
from plait.frontend.numpy.creation import arange, asarray, linspace
from plait.frontend.numpy.manipulation import (
    concatenate,
    expand_dims,
    reshape,
    stack,
    transpose,
)
from plait.ir import dtypes as dt

__all__ = ["tril_indices", "triu_indices", "tril_indices_from", "triu_indices_from",
           "diag_indices", "diag_indices_from", "indices", "ix_", "unravel_index",
           "ravel_multi_index", "mgrid", "ogrid", "r_", "c_", "s_", "index_exp"]

s_ = np.s_
"""``s_[1:3, ::2]`` is the index tuple itself (NumPy's object, as ``jnp.s_`` is)."""
index_exp = np.index_exp
"""Like :data:`s_`, but always a tuple (NumPy's object, as ``jnp.index_exp`` is)."""


def _static(x: Any) -> int:
    # operator.index raises JAX's TracerIntegerConversionError for a traced value.
    return operator.index(x)


def _host_indices(arrays: tuple[np.ndarray, ...]) -> tuple[Array, ...]:
    return tuple(asarray(a.astype(np.int64)) for a in arrays)


def tril_indices(n: int, k: int = 0, m: int | None = None) -> tuple[Array, Array]:
    """Row and column indices of the lower triangle (diagonal ``k`` and below) of an
    ``n`` by ``m`` matrix."""
    rows, cols = _host_indices(np.tril_indices(
        _static(n), _static(k), None if m is None else _static(m)))
    return rows, cols


def triu_indices(n: int, k: int = 0, m: int | None = None) -> tuple[Array, Array]:
    """Row and column indices of the upper triangle (diagonal ``k`` and above)."""
    rows, cols = _host_indices(np.triu_indices(
        _static(n), _static(k), None if m is None else _static(m)))
    return rows, cols


def _matrix_shape(arr: Any, name: str) -> tuple[int, int]:
    s = shape(arr)
    if len(s) != 2:
        raise ValueError(f"{name}: expected a 2-d input array, but got shape {tuple(s)}")
    return s[0], s[1]


def tril_indices_from(arr: Any, k: int = 0) -> tuple[Array, Array]:
    """:func:`tril_indices` for the shape of the 2-d ``arr``."""
    n, m = _matrix_shape(arr, "tril_indices_from")
    return tril_indices(n, k, m)


def triu_indices_from(arr: Any, k: int = 0) -> tuple[Array, Array]:
    """:func:`triu_indices` for the shape of the 2-d ``arr``."""
    n, m = _matrix_shape(arr, "triu_indices_from")
    return triu_indices(n, k, m)


def diag_indices(n: int, ndim: int = 2) -> tuple[Array, ...]:
    """``ndim`` copies of ``arange(n)``: the indices of the main diagonal."""
    n, nd = _static(n), _static(ndim)
    if n < 0:
        raise ValueError(f"n argument to diag_indices must be nonnegative, got {n}")
    if nd < 0:
        raise ValueError(f"ndim argument to diag_indices must be nonnegative, got {nd}")
    return (arange(n),) * nd


def diag_indices_from(arr: Any) -> tuple[Array, ...]:
    """:func:`diag_indices` for ``arr``, at least 2-d with all dimensions equal."""
    s = shape(arr)
    if len(s) < 2:
        raise ValueError(f"diag_indices_from: expected an array of at least 2 dimensions, "
                         f"but got shape {tuple(s)}")
    if len(set(s)) != 1:
        raise ValueError(f"diag_indices_from: expected all dimensions of equal length, "
                         f"but got shape {tuple(s)}")
    return diag_indices(s[0], len(s))


def indices(dimensions: Sequence[int], dtype: Any = None,
            sparse: bool = False) -> Array | tuple[Array, ...]:
    """The index of each position of a grid of shape ``dimensions``, stacked on a first
    axis (or, with ``sparse``, one broadcastable array per axis)."""
    dims = tuple(_static(d) for d in dimensions)
    d = dt.canonicalize(dt.int64) if dtype is None else check_user_dtype(dtype, "indices")
    if not dt.is_integer(d):
        raise TypeError(f"indices: expected an integer dtype, but got {d}")
    out = []
    for axis, size in enumerate(dims):
        grid = lax.iota(d, size)
        if sparse:
            out.append(lax.reshape(grid, tuple(size if a == axis else 1
                                               for a in range(len(dims)))))
        else:
            out.append(lax.broadcast_in_dim(grid, dims, (axis,)))
    if sparse:
        return tuple(out)
    return stack(out) if out else asarray(np.zeros((0,), d))


def ix_(*args: Any) -> tuple[Array, ...]:
    """An open mesh from 1-d sequences: argument ``i`` reshaped to ``(1, ..., n, ..., 1)``."""
    out = []
    for i, a in enumerate(args):
        a = asarray(a)
        if ndim(a) != 1:
            raise ValueError(f"ix_: expected 1-d arguments, but argument {i} has shape "
                             f"{tuple(shape(a))}")
        if dt.is_bool(a.dtype):
            raise TypeError("ix_: boolean arguments are not supported (an index array with "
                            "a data-dependent size); pass integer indices, e.g. "
                            "nonzero(mask, size=...)")
        out.append(reshape(a, tuple(-1 if k == i else 1 for k in range(len(args)))))
    return tuple(out)


def unravel_index(indices: Any, shape: Any) -> tuple[Array, ...]:
    """The coordinates in an array of ``shape`` of flat ``indices``; as in JAX, indices
    out of bounds are clipped (and negative ones count from the end, once)."""
    try:
        dims = [_static(s) for s in shape]
    except TypeError:
        dims = [_static(shape)]
    flat = asarray(indices)
    if not dt.is_integer(flat.dtype):
        raise TypeError(f"unravel_index: expected integer indices, but got {flat.dtype}")
    coords: list[Any] = [0] * len(dims)
    rest: Any = flat
    for i in reversed(range(len(dims))):
        rest, coords[i] = composite_ufuncs.divmod(rest, dims[i])
    # What is left over says whether the index ran past either end.
    past_end = ufuncs.greater(rest, 0)
    before_start = (asarray(False) if dt.is_unsigned(flat.dtype)
                    else ufuncs.less(rest, -1))
    return tuple(ufuncs.where(past_end, d - 1, ufuncs.where(before_start, 0, c))
                 for d, c in zip(dims, coords))


def ravel_multi_index(multi_index: Sequence[Any], dims: Sequence[int], mode: str = "raise",
                      order: str = "C", *, dtype: Any = None) -> Array:
    """The flat index of each coordinate tuple in an array of shape ``dims``, of
    ``dtype`` (by default the coordinates' integer dtype).

    ``mode`` is ``'raise'`` (only outside ``jit``: coordinates must be concrete),
    ``'wrap'`` or ``'clip'``; ``order`` is ``'C'`` or ``'F'``.

    Raises:
      ValueError: ``dtype`` is not an integer dtype, or too narrow for ``dims``' size.
    """
    if len(multi_index) != len(dims):
        raise ValueError(f"ravel_multi_index: expected {len(dims)} index arrays for dims "
                         f"{tuple(dims)}, but got {len(multi_index)}")
    sizes = tuple(_static(d) for d in dims)
    if mode not in ("raise", "wrap", "clip"):
        raise ValueError(f"ravel_multi_index: expected mode 'raise', 'wrap' or 'clip', "
                         f"but got {mode!r}")
    if order not in ("C", "F"):
        raise ValueError(f"ravel_multi_index: expected order 'C' or 'F', but got {order!r}")
    coords = [asarray(i) for i in multi_index]
    for c in coords:
        if not dt.is_integer(c.dtype):
            raise TypeError("ravel_multi_index: only int indices permitted, but got "
                            f"{c.dtype}")
    out_dtype = result_type(int, *coords) if dtype is None else \
        check_user_dtype(dtype, "ravel_multi_index")
    if not dt.is_integer(out_dtype):
        raise ValueError(f"ravel_multi_index: expected an integer dtype, but got {out_dtype}")
    if int(np.prod(sizes)) - 1 > np.iinfo(out_dtype).max:
        raise ValueError(f"ravel_multi_index: dtype {out_dtype} cannot hold the flat indices "
                         f"of dims {sizes}; pass a wider dtype= (such as "
                         f"np.min_scalar_type({int(np.prod(sizes))}))")
    if mode == "raise":
        for k, (c, d) in enumerate(zip(coords, sizes)):
            # Needs values: under jit, bool() of a tracer raises JAX's concretization error.
            if bool(reductions.any(ufuncs.logical_or(ufuncs.less(c, 0),
                                                ufuncs.greater_equal(c, d)))):
                raise ValueError(f"ravel_multi_index: invalid entry in coordinates array "
                                 f"{k}: expected values in [0, {d}) for dims {sizes}")
    elif mode == "clip":
        coords = [ufuncs.clip(c, 0, d - 1) for c, d in zip(coords, sizes)]
    else:
        coords = [arithmetic.remainder(c, d) for c, d in zip(coords, sizes)]
    axes = range(len(sizes)) if order == "C" else reversed(range(len(sizes)))
    strides = {}
    stride = 1
    for a in reversed(list(axes)):
        strides[a] = stride
        stride *= sizes[a]
    total: Any = asarray(0, out_dtype)
    for a, c in enumerate(coords):
        total = ufuncs.add(total, ufuncs.multiply(c.astype(out_dtype), strides[a]))
    return asarray(total)


class _Grid:
    """``mgrid[...]`` / ``ogrid[...]``: grids from slices (a complex step is a count)."""

    def __init__(self, sparse: bool, name: str) -> None:
        self._sparse = sparse
        self._name = name

    def __getitem__(self, key: slice | tuple[slice, ...]) -> Any:
        if isinstance(key, slice):
            return _axis(key, self._name)
        axes = [_axis(s, self._name) for s in key]
        common = result_type(*axes)  # one dtype for all axes (the shapes differ)
        axes = [lax.convert_element_type(a, common) for a in axes]
        n = len(axes)
        if self._sparse:
            return [reshape(a, tuple(-1 if k == i else 1 for k in range(n)))
                    for i, a in enumerate(axes)]
        full = tuple(int(shape(a)[0]) for a in axes)
        return stack([lax.broadcast_in_dim(a, full, (i,)) for i, a in enumerate(axes)])


def _axis(s: Any, name: str) -> Array:
    if not isinstance(s, slice):
        raise TypeError(f"{name}: expected slices such as 0:5 or 0:1:5j, but got {s!r}")
    start = 0 if s.start is None else s.start
    step = 1 if s.step is None else s.step
    if isinstance(step, complex):
        count = int(abs(step))
        return linspace(start, s.stop, count)
    return arange(start, s.stop, step)


class _Concatenator:
    """``r_[...]`` / ``c_[...]``: slices (as in ``mgrid``), scalars and arrays
    concatenated along an axis, after a NumPy string directive if one leads:
    ``"axis,ndmin,trans1d"``, or ``"r"``/``"c"`` (a 1-d result as a row / column)."""

    def __init__(self, axis: int, ndmin: int, trans1d: int, name: str) -> None:
        self._defaults = (axis, ndmin, trans1d)
        self._name = name

    def __getitem__(self, key: Any) -> Array:
        items = key if isinstance(key, tuple) else (key,)
        axis, ndmin, trans1d = self._defaults
        matrix = -1
        if items and isinstance(items[0], str):
            directive, items = items[0], items[1:]
            if directive in ("r", "c"):
                matrix = 0 if directive == "r" else 1
            else:
                axis, ndmin, trans1d = _directive(directive, (axis, ndmin, trans1d))
        parts = []
        for item in items:
            if isinstance(item, str):
                raise ValueError(f"{self._name}: a string directive must come first, but "
                                 f"got {item!r} later")
            part = _axis(item, self._name) if isinstance(item, slice) else asarray(item)
            own_ndim = 0 if isinstance(item, slice) else ndim(part)
            part = _with_ndmin(part, ndmin)
            if trans1d != -1 and ndmin > own_ndim:
                # NumPy's rule: the item's own axes go where trans1d says, by a rotation.
                shift = ndmin - abs(ndmin + trans1d + 1) % ndmin
                order = list(range(ndmin))
                part = transpose(part, order[shift:] + order[:shift])
            parts.append(part)
        out = concatenate(parts, axis=axis)
        if matrix != -1 and ndim(out) == 1:
            out = expand_dims(out, matrix)
        return out

    def __len__(self) -> int:
        return 0


def _directive(text: str, defaults: tuple[int, int, int]) -> tuple[int, int, int]:
    fields = text.split(",")[:3]
    try:
        values = [int(f) for f in fields]
    except ValueError:
        raise ValueError(f"could not understand directive {text!r}: expected "
                         "'axis[,ndmin[,trans1d]]', 'r' or 'c'") from None
    axis, ndmin, trans1d = values + list(defaults[len(values):])
    return axis, ndmin, trans1d


def _with_ndmin(a: Array, ndmin: int) -> Array:
    s = tuple(shape(a))
    return a if len(s) >= ndmin else reshape(a, (1,) * (ndmin - len(s)) + s)


r_ = _Concatenator(axis=0, ndmin=1, trans1d=-1, name="r_")
"""``r_[1:4, 0, x]``: concatenation along the first axis (NumPy's ``r_``)."""
c_ = _Concatenator(axis=-1, ndmin=2, trans1d=0, name="c_")
"""``c_[x, y]``: 1-d inputs as columns, concatenated along the last axis (NumPy's ``c_``)."""

mgrid = _Grid(sparse=False, name="mgrid")
"""``mgrid[0:3, 0:2]``: a dense grid, stacked on a first axis."""
ogrid = _Grid(sparse=True, name="ogrid")
"""``ogrid[0:3, 0:2]``: an open grid, one broadcastable array per axis."""

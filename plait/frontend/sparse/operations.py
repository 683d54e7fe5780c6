"""The functions of ``jax.experimental.sparse`` over BCOO arrays (JAX 0.10.2's names and
signatures): products, reductions, reshaping, and constructors (``empty``, ``eye``,
``random_bcoo``)."""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Sequence
from typing import Any, Literal, overload

import numpy as np

from plait.frontend import lax
from plait.frontend import numpy as pnp
from plait.frontend.api.vmap import vmap
from plait.frontend.core.array_base import Array
from plait.frontend.core.dtype_queries import iinfo
from plait.frontend.random import samplers
from plait.frontend.random.distributions import choice
from plait.frontend.random.keys import split
from plait.frontend.sparse import convert, convolution, indexing, products, restructure
from plait.frontend.sparse.base import JAXSparse
from plait.frontend.sparse.bcoo import BCOO, bcoo_fromdense, bcoo_sort_indices, wrap
from plait.frontend.sparse.bcsr import BCSR
from plait.frontend.sparse.coo import COO
from plait.frontend.sparse.csr import CSC, CSR
from plait.frontend.sparse.layout import Shape
from plait.ir import dtypes as dt

__all__ = ["bcoo_extract", "bcoo_dot_general", "bcoo_dot_general_sampled",
           "bcoo_multiply_dense", "bcoo_multiply_sparse", "bcoo_reduce_sum",
           "bcoo_broadcast_in_dim", "bcoo_concatenate", "bcoo_squeeze", "bcoo_slice",
           "bcoo_dynamic_slice", "bcoo_rev", "bcoo_gather", "bcoo_conv_general_dilated",
           "bcoo_eliminate_zeros", "bcoo_reshape", "empty", "eye", "random_bcoo"]


def bcoo_extract(sparr: BCOO, arr: Any, *, assume_unique: bool | None = None) -> BCOO:
    """The elements of dense ``arr`` at ``sparr``'s indices, as a BCOO array with those
    indices.  With ``assume_unique`` false (the default for indices not known unique),
    a duplicated index gets its value once, at its first occurrence.

    Raises:
      TypeError: ``sparr`` is not a BCOO array.
      ValueError: ``arr`` does not have ``sparr``'s shape.
    """
    if not isinstance(sparr, BCOO):
        raise TypeError("First argument to bcoo_extract should be a BCOO array. Got "
                        f"type(sparr)={type(sparr)}")
    a = pnp.asarray(arr)
    if tuple(a.shape) != sparr.shape:
        raise ValueError(f"shape mismatch: sparr.shape={sparr.shape} a.shape={tuple(a.shape)}")
    unique = sparr.unique_indices if assume_unique is None else assume_unique
    data = convert.extract(sparr.indices, a, assume_unique=unique)
    return BCOO((data, sparr.indices), shape=sparr.shape, indices_sorted=sparr.indices_sorted,
                unique_indices=sparr.unique_indices)


def bcoo_dot_general(lhs: BCOO | Any, rhs: BCOO | Any, *, dimension_numbers: Any,
                     precision: Any = None, preferred_element_type: Any = None,
                     out_sharding: Any = None) -> BCOO | Array:
    """``lax.dot_general`` with sparse operands: dense if either operand is dense, a BCOO
    array if both are sparse.  (``precision`` and ``out_sharding`` are ignored, as in
    JAX.)

    Raises:
      TypeError: the operands do not fit ``dimension_numbers``.
      NotImplementedError: a contraction over dense dimensions, or batch dimensions that
        are not BCOO batch dimensions.
    """
    del precision, out_sharding
    pet = None if preferred_element_type is None else np.dtype(preferred_element_type)
    if isinstance(lhs, BCOO) and isinstance(rhs, BCOO):
        return wrap(products.spdot_general(lhs._buffers, rhs._buffers, dimension_numbers, pet))
    if isinstance(lhs, BCOO):
        return products.dot_general(lhs._buffers, pnp.asarray(rhs), dimension_numbers, pet)
    if isinstance(rhs, BCOO):
        return products.rdot_general(pnp.asarray(lhs), rhs._buffers, dimension_numbers, pet)
    return lax.dot_general(lhs, rhs, dimension_numbers, preferred_element_type=pet)


def bcoo_dot_general_sampled(A: Any, B: Any, indices: Any, *,  # noqa: N803  (JAX's names)
                             dimension_numbers: Any) -> Array:
    """The data of ``lax.dot_general(A, B)`` at the BCOO ``indices``."""
    return products.dot_general_sampled(A, B, indices, dimension_numbers)


def bcoo_multiply_dense(sp_mat: BCOO, v: Any) -> Array:
    """The data of ``sp_mat * v`` with ``sp_mat``'s indices (``v`` dense, broadcasting to
    ``sp_mat.shape``).

    Raises:
      NotImplementedError: ``v`` broadcasts to a larger shape.
    """
    return products.multiply_dense(sp_mat._buffers, v)


def bcoo_multiply_sparse(lhs: BCOO, rhs: BCOO) -> BCOO:
    """``lhs * rhs`` elementwise, both sparse.

    Raises:
      TypeError: the ranks differ.
      NotImplementedError: the numbers of dense dimensions differ.
    """
    return wrap(products.multiply_sparse(lhs._buffers, rhs._buffers))


def bcoo_reduce_sum(mat: BCOO, *, axes: Sequence[int]) -> BCOO:
    """``mat`` summed over ``axes`` (non-negative).

    Raises:
      ValueError: an axis is out of range.
    """
    return wrap(restructure.reduce_sum(mat._buffers, axes))


def bcoo_broadcast_in_dim(mat: BCOO, *, shape: Shape, broadcast_dimensions: Sequence[int],
                          sharding: Any = None) -> BCOO:
    """``lax.broadcast_in_dim`` of ``mat`` (``sharding`` ignored, as in JAX).

    Raises:
      ValueError: ``broadcast_dimensions`` mixes batch, sparse and dense dimensions.
      NotImplementedError: sparse dimensions of size other than 1 would be added.
    """
    del sharding
    return wrap(restructure.broadcast_in_dim(mat._buffers, tuple(shape),
                                             broadcast_dimensions))


def bcoo_concatenate(operands: Sequence[BCOO], *, dimension: int) -> BCOO:
    """``lax.concatenate`` of BCOO arrays along a batch or sparse dimension.

    Raises:
      ValueError: an operand is not a BCOO array, or the layouts differ.
      NotImplementedError: ``dimension`` is a dense dimension.
    """
    dimension = operator.index(dimension)
    if not all(isinstance(op, BCOO) for op in operands):
        raise ValueError("bcoo_concatenate: expected operands to be a sequence of BCOO "
                         f"arrays. Got {operands}")
    return wrap(restructure.concatenate([op._buffers for op in operands], dimension))


def bcoo_squeeze(arr: BCOO, *, dimensions: Sequence[int]) -> BCOO:
    """``arr`` without its size-1 ``dimensions``.

    Raises:
      ValueError: a dimension does not have size 1.
    """
    return wrap(restructure.squeeze(arr._buffers, dimensions))


def bcoo_slice(mat: BCOO, *, start_indices: Sequence[int], limit_indices: Sequence[int],
               strides: Sequence[int] | None = None) -> BCOO:
    """``lax.slice`` of ``mat``.

    Raises:
      TypeError: ``mat`` is not a BCOO array.
      ValueError: the bounds or strides do not fit.
    """
    if not isinstance(mat, BCOO):
        raise TypeError(f"bcoo_slice: input should be BCOO array, got type(mat)={type(mat)}")
    return wrap(restructure.slice_(mat._buffers, start_indices, limit_indices, strides))


def bcoo_dynamic_slice(mat: BCOO, start_indices: Sequence[Any],
                       slice_sizes: Sequence[int]) -> BCOO:
    """``lax.dynamic_slice`` of ``mat``: starts may be traced (the window is clamped into
    the array), sizes are static; ``nse`` shrinks to the window's size.

    Raises:
      TypeError: ``mat`` is not a BCOO array, or a size exceeds its dimension.
      ValueError: the number of starts or sizes is not ``mat.ndim``.
    """
    if not isinstance(mat, BCOO):
        raise TypeError(f"bcoo_dynamic_slice: input should be BCOO array, got "
                        f"type(mat)={type(mat)}")
    return wrap(indexing.dynamic_slice(mat._buffers, start_indices, slice_sizes))


def bcoo_rev(operand: BCOO, dimensions: Sequence[int]) -> BCOO:
    """``lax.rev`` of ``operand``: the ``dimensions`` reversed.

    Raises:
      ValueError: a dimension is out of range or repeated.
    """
    return wrap(indexing.rev(operand._buffers, dimensions))


def bcoo_gather(operand: BCOO, start_indices: Any, dimension_numbers: Any,
                slice_sizes: Sequence[int], *, unique_indices: bool = False,
                indices_are_sorted: bool = False, mode: Any = None,
                fill_value: Any = None) -> BCOO:
    """``lax.gather`` of ``operand`` at dense ``start_indices`` (the ``'promise_in_bounds'``
    mode only, as in JAX).

    Raises:
      NotImplementedError: another ``mode``, or batching dimensions.
    """
    return wrap(indexing.gather(operand._buffers, start_indices, dimension_numbers,
                                slice_sizes, mode=mode, unique_indices=unique_indices,
                                indices_are_sorted=indices_are_sorted,
                                fill_value=fill_value))


def bcoo_conv_general_dilated(lhs: BCOO | Any, rhs: BCOO | Any, *, window_strides: Any,
                              padding: Any, lhs_dilation: Any = None, rhs_dilation: Any = None,
                              dimension_numbers: Any = None, feature_group_count: int = 1,
                              batch_group_count: int = 1, precision: Any = None,
                              preferred_element_type: Any = None,
                              out_sharding: Any = None) -> BCOO:
    """``lax.conv_general_dilated`` with sparse operands, in the one case JAX supports: a
    one-dimensional convolution of operands of shape ``(1, 1, n)`` with unit strides and
    dilations.

    Raises:
      NotImplementedError: any other convolution.
      TypeError: an operand is neither a BCOO array nor a dense one.
    """
    del out_sharding
    for x in (lhs, rhs):
        if not isinstance(x, BCOO | Array | np.ndarray):
            raise TypeError(f"bcoo_conv_general_dilated: input of type {type(x)} not "
                            "recognized.")

    def buffers(x: Any) -> Any:
        return x._buffers if isinstance(x, BCOO) else pnp.asarray(x)
    return wrap(convolution.conv_general_dilated(
        buffers(lhs), buffers(rhs), window_strides=window_strides, padding=padding,
        lhs_dilation=lhs_dilation, rhs_dilation=rhs_dilation,
        dimension_numbers=dimension_numbers, feature_group_count=feature_group_count,
        batch_group_count=batch_group_count, precision=precision,
        preferred_element_type=preferred_element_type))


def bcoo_eliminate_zeros(mat: BCOO, nse: int | None = None) -> BCOO:
    """``mat`` with its explicit zeros dropped and duplicates summed, with ``nse`` stored
    elements (needed under ``jit``; by default as many as remain)."""
    return mat.sum_duplicates(nse=nse, remove_zeros=True)


def bcoo_reshape(mat: BCOO, *, new_sizes: Sequence[int],
                 dimensions: Sequence[int] | None = None, sharding: Any = None) -> BCOO:
    """``lax.reshape`` of ``mat``, batch, sparse and dense dimensions kept apart
    (``sharding`` ignored, as in JAX).

    Raises:
      ValueError: the new shape mixes kinds of dimensions.
    """
    del sharding
    return wrap(restructure.reshape(mat._buffers, new_sizes, dimensions))


@overload
def empty(shape: Sequence[int], dtype: Any = None, index_dtype: Any = "int32",
          sparse_format: Literal["bcoo"] = "bcoo", **kwds: Any) -> BCOO: ...
@overload
def empty(shape: Sequence[int], dtype: Any = None, index_dtype: Any = "int32",
          sparse_format: str = "bcoo", **kwds: Any) -> JAXSparse: ...
def empty(shape: Sequence[int], dtype: Any = None, index_dtype: Any = "int32",
          sparse_format: str = "bcoo", **kwds: Any) -> JAXSparse:
    """A sparse array of zeros in ``sparse_format`` (``'bcoo'``, ``'bcsr'``, ``'coo'``,
    ``'csr'``, ``'csc'``); the batched formats take ``n_batch``, ``n_dense`` and ``nse``
    (padding entries per batch element).

    Raises:
      ValueError: an unknown format (JAX's message), or a layout that does not fit.
      TypeError: a keyword the format does not take.
    """
    formats: dict[str, Any] = {"bcsr": BCSR, "bcoo": BCOO, "coo": COO, "csr": CSR, "csc": CSC}
    if sparse_format not in formats:
        raise ValueError(f"sparse_format={sparse_format!r} not recognized; must be one of "
                         f"{list(formats)}")
    if sparse_format == "bcoo":
        return _bcoo_empty(shape, dtype, index_dtype, **kwds)
    out: JAXSparse = formats[sparse_format]._empty(tuple(shape), dtype=dtype,
                                                   index_dtype=index_dtype, **kwds)
    return out


def _bcoo_empty(shape: Sequence[int], dtype: Any = None, index_dtype: Any = "int32", *,
                n_batch: int = 0, n_dense: int = 0, nse: int = 0) -> BCOO:
    shape = tuple(operator.index(s) for s in shape)
    n_sparse = len(shape) - n_dense - n_batch
    if n_sparse < 0 or n_dense < 0 or n_batch < 0 or nse < 0:
        raise ValueError(f"Invalid inputs: shape={shape}, n_dense={n_dense}, "
                         f"n_batch={n_batch}, nse={nse}")
    batch, sparse, dense = (shape[:n_batch], shape[n_batch:n_batch + n_sparse],
                            shape[n_batch + n_sparse:])
    data = pnp.zeros((*batch, nse, *dense), dtype)
    indices = pnp.full((*batch, nse, n_sparse), pnp.array(sparse, index_dtype), index_dtype)
    return BCOO((data, indices), shape=shape, indices_sorted=True, unique_indices=True)


@overload
def eye(N: int, M: int | None = None, k: int = 0, dtype: Any = None,  # noqa: N803  (JAX's)
        index_dtype: Any = "int32", sparse_format: Literal["bcoo"] = "bcoo",
        **kwds: Any) -> BCOO: ...
@overload
def eye(N: int, M: int | None = None, k: int = 0, dtype: Any = None,  # noqa: N803  (JAX's)
        index_dtype: Any = "int32", sparse_format: str = "bcoo", **kwds: Any) -> JAXSparse: ...
def eye(N: int, M: int | None = None, k: int = 0, dtype: Any = None,  # noqa: N803  (JAX's)
        index_dtype: Any = "int32", sparse_format: str = "bcoo", **kwds: Any) -> JAXSparse:
    """The 2-D sparse identity: ones on the ``k``-th diagonal of an ``N`` by ``M`` array,
    in ``sparse_format`` (``'bcoo'``, which takes ``n_batch`` and ``n_dense``, ``'coo'``,
    ``'csr'`` or ``'csc'``; JAX has no BCSR identity either).

    Raises:
      KeyError: an unknown format (as JAX's).
      ValueError: a layout that does not fit.
    """
    formats: dict[str, Any] = {"bcoo": BCOO, "coo": COO, "csr": CSR, "csc": CSC}
    if sparse_format not in formats:
        raise KeyError(sparse_format)
    n = operator.index(N)
    m = n if M is None else operator.index(M)
    if sparse_format == "bcoo":
        return _bcoo_eye(n, m, operator.index(k), dtype, index_dtype, **kwds)
    out: JAXSparse = formats[sparse_format]._eye(M=m, N=n, k=operator.index(k), dtype=dtype,
                                                 index_dtype=index_dtype, **kwds)
    return out


def _bcoo_eye(n: int, m: int, k: int, dtype: Any, index_dtype: Any, *, n_batch: int = 0,
              n_dense: int = 0) -> BCOO:
    n_sparse = 2 - n_batch - n_dense
    if n_sparse < 0 or n_dense < 0 or n_batch < 0:
        raise ValueError(f"Invalid inputs: shape={(n, m)}, n_dense={n_dense}, "
                         f"n_batch={n_batch}")
    diag_size = min(n, m - k) if k > 0 else min(n + k, m)
    if diag_size <= 0:
        return _bcoo_empty((n, m), dtype=dtype, index_dtype=index_dtype, n_batch=n_batch,
                           n_dense=n_dense)
    if n_dense > 0 or n_batch > 1:
        # These layouts store every zero: convert the dense identity.
        return bcoo_fromdense(pnp.eye(n, m, k, dtype=dtype), n_batch=n_batch,
                              n_dense=n_dense, index_dtype=index_dtype)
    if n_batch == 0:
        data = pnp.ones(diag_size, dtype=dtype)
        idx = pnp.arange(diag_size, dtype=index_dtype)
        indices = pnp.column_stack([idx - min(k, 0), idx + max(k, 0)])
    else:
        data = pnp.ones(n, dtype=dtype)
        indices = pnp.arange(n, dtype=index_dtype) + k
        if k < 0:
            data = data.at[:-k].set(0)
            indices = indices.at[:-k].set(m)
        elif k > 0:
            data = data.at[m - k:].set(0)
            # (JAX 0.10.2 pads only the first of these entries; the others point past
            # the last column, out of bounds too.)
            indices = indices.at[m - k].set(m)
        data, indices = data[:, None], indices[:, None, None]
    return BCOO((data, indices), shape=(n, m), indices_sorted=True, unique_indices=True)


def random_bcoo(key: Any, shape: Sequence[int], *, dtype: Any = None,
                indices_dtype: Any = None, nse: float = 0.2, n_batch: int = 0,
                n_dense: int = 0, unique_indices: bool = True, sorted_indices: bool = False,
                generator: Callable[..., Array] = samplers.uniform, **kwds: Any) -> BCOO:
    """A random BCOO array: ``nse`` stored elements per batch element (a fraction of the
    sparse size when below 1) at random indices (distinct with ``unique_indices``),
    values drawn by ``generator(key, shape=, dtype=, **kwds)``; the keys are split as
    JAX's, so the array is JAX's.

    Raises:
      ValueError: the layout does not fit ``shape``, ``nse`` is out of range, or
        ``indices_dtype`` cannot hold the sparse size.
    """
    shape = tuple(operator.index(s) for s in shape)
    n_batch, n_dense = operator.index(n_batch), operator.index(n_dense)
    if n_batch < 0 or n_dense < 0 or n_batch + n_dense > len(shape):
        raise ValueError(f"Invalid n_batch={n_batch}, n_dense={n_dense} for shape={shape}")
    n_sparse = len(shape) - n_batch - n_dense
    batch_shape = shape[:n_batch]
    sparse_shape = shape[n_batch:n_batch + n_sparse]
    dense_shape = shape[n_batch + n_sparse:]
    sparse_size = math.prod(sparse_shape)
    if not 0 <= nse < sparse_size:
        raise ValueError(f"got nse={nse}, expected to be between 0 and {sparse_size}")
    n_stored = (math.ceil(nse * sparse_size) if 0 < nse < 1
                else operator.index(nse))  # type: ignore[arg-type]  # a float raises, as in JAX
    idx_dtype = dt.canonicalize(np.int64 if indices_dtype is None else indices_dtype)
    if sparse_size > iinfo(idx_dtype).max:
        raise ValueError(f"indices_dtype={idx_dtype} does not have enough range to "
                         f"generate sparse indices of size {sparse_size}.")

    def one_indices(k: Any) -> Array:
        if not sparse_shape:
            return pnp.zeros((n_stored, n_sparse), idx_dtype)
        flat = choice(k, sparse_size, shape=(n_stored,),
                      replace=not unique_indices).astype(idx_dtype)
        return pnp.column_stack(pnp.unravel_index(flat, sparse_shape))
    keys = split(key, math.prod(batch_shape) + 1)
    data = generator(keys[0], shape=(*batch_shape, n_stored, *dense_shape),
                     dtype=dt.canonicalize(np.float64 if dtype is None else dtype), **kwds)
    indices = vmap(one_indices)(keys[1:]).reshape(*batch_shape, n_stored, n_sparse)
    mat = BCOO((data, indices), shape=shape)
    return bcoo_sort_indices(mat) if sorted_indices else mat


"""BCOO buffers to and from dense arrays, and the bookkeeping of their indices: sorting,
summing duplicates, dropping explicit zeros, changing the number of stored elements.

Each operation is a composition of ``plait.numpy`` and ``plait.lax`` functions (batch
dimensions are ``vmap``\\ s of the one-element case), so ``jit``, ``vmap``, ``grad``
and ``jvp`` apply to them as to any other plait code.  The results are JAX 0.10.2's:
the same stored entries, in the same order.
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from plait.frontend import lax
from plait.frontend import numpy as pnp
from plait.frontend.core.array_base import Array
from plait.frontend.core.tracing import Tracer, has_value
from plait.frontend.sparse.layout import (
    Layout,
    Shape,
    SparseBuffers,
    SparseInfo,
    nfold_vmap,
    sparse_fill,
    validate,
    validate_indices,
)
from plait.ir.errors import ConcretizationTypeError, IncompatibleShapesError

__all__ = ["todense", "extract", "fromdense", "count_stored", "concrete_nse", "unique_rows",
           "sort_indices", "sum_duplicates", "eliminate_zeros", "adjust_nse", "set_nse"]


def todense(m: SparseBuffers) -> Array:
    """The dense array ``m`` stands for: duplicates summed, padding entries dropped."""
    data, indices, info = m
    n_batch, n_sparse, _, _ = validate(data, indices, info.shape)
    inner_shape = info.shape[n_batch:]

    def one(d: Array, i: Array) -> Array:
        out = pnp.zeros(inner_shape, d.dtype)
        if n_sparse == 0:
            return out.at[()].add(pnp.sum(d, 0, dtype=d.dtype))
        return out.at[tuple(i[:, k] for k in range(n_sparse))].add(d, mode="drop")
    # (Batch dimensions both buffers share have size 1 in the result: broadcast them.)
    return pnp.broadcast_to(nfold_vmap(one, n_batch)(data, indices), info.shape)


def _extract_one(i: Array, a: Array) -> Array:
    n_sparse = i.shape[-1]
    if n_sparse == 0:
        return pnp.broadcast_to(a[None], (i.shape[0], *a.shape))
    return a.at[tuple(i[:, k] for k in range(n_sparse))].get(mode="fill", fill_value=0)


def extract(indices: Array, arr: Any, *, assume_unique: bool = True) -> Array:
    """The BCOO data of ``arr`` at ``indices`` (0 at padding entries).

    Without ``assume_unique``, a value is extracted once per distinct index, at its first
    occurrence, and the duplicates get 0: the result, with ``indices``, stands for the
    part of ``arr`` the indices cover, exactly.

    Raises:
      TypeError, ValueError: ``indices`` do not fit ``arr`` (see :func:`validate_indices`).
    """
    arr = pnp.asarray(arr)
    n_batch, n_sparse, _, nse = validate_indices(indices, arr.shape)
    sparse_shape = arr.shape[n_batch:n_batch + n_sparse]

    def one(i: Array, a: Array) -> Array:
        if assume_unique:
            return _extract_one(i, a)
        if n_sparse == 0:
            return pnp.zeros((nse, *a.shape), a.dtype).at[:1].set(a[None])
        uniq, first, _, _ = unique_rows(i, sparse_shape)
        vals = _extract_one(uniq, a)
        return pnp.zeros_like(vals).at[first].add(vals)
    return nfold_vmap(one, n_batch)(indices, arr)


def count_stored(mat: Array, n_batch: int, n_dense: int) -> Any:
    """The largest number of nonzero sparse elements of one batch element of ``mat``."""
    # A concrete array is counted on the host: inside a trace (vmap's, say), plait
    # stages even operations on constants, and their results would be unknown.
    xp: Any = pnp if isinstance(mat, Tracer) else np
    mask = xp.asarray(mat) != 0
    if n_dense > 0:
        mask = xp.any(mask, axis=tuple(range(mat.ndim - n_dense, mat.ndim)))
    return xp.max(xp.sum(mask, axis=tuple(range(n_batch, mask.ndim))), initial=0)


def concrete_nse(nse: Any, message: str) -> int:
    """``nse`` as a Python int; ``message`` says why a traced one cannot be.

    Raises:
      ConcretizationTypeError: ``nse`` is traced.
    """
    if not has_value(nse):
        raise ConcretizationTypeError(
            f"Abstract tracer value encountered where concrete value is expected: {message}")
    return operator.index(int(nse))


def fromdense(mat: Any, *, nse: int, n_batch: int, n_dense: int,
              index_dtype: Any) -> SparseBuffers:
    """The BCOO buffers of the nonzero elements of ``mat``, in row-major order, padded
    (or truncated) to ``nse`` per batch element.

    Raises:
      ValueError: ``n_batch`` or ``n_dense`` is negative, or they exceed ``mat.ndim``.
      IncompatibleShapesError: ``nse`` is negative.
    """
    mat = pnp.asarray(mat)
    n_sparse = mat.ndim - n_batch - n_dense
    if n_batch < 0 or n_dense < 0 or n_sparse < 0:
        raise ValueError(f"BCOO.fromdense: expected n_batch >= 0, n_dense >= 0 and "
                         f"n_batch + n_dense <= mat.ndim={mat.ndim}, but got "
                         f"n_batch={n_batch}, n_dense={n_dense}")
    if nse < 0:
        raise IncompatibleShapesError(f"BCOO.fromdense: expected nse >= 0, but got nse={nse}")
    index_dtype = np.dtype(index_dtype)
    if not np.issubdtype(index_dtype, np.integer):
        raise TypeError(f"BCOO.fromdense: expected an integer index_dtype, but got "
                        f"{index_dtype}")
    mask = mat != 0
    if n_dense > 0:
        mask = pnp.any(mask, axis=tuple(range(mat.ndim - n_dense, mat.ndim)))
    if n_sparse == 0:
        indices = pnp.zeros((*mask.shape, nse, 0), index_dtype)
    else:
        def nonzero(m: Array) -> Array:
            return pnp.stack(pnp.nonzero(m, size=nse, fill_value=m.shape), axis=1)
        indices = nfold_vmap(nonzero, n_batch, broadcasted=False)(mask).astype(index_dtype)
    data = extract(indices, mat)
    # With no sparse dimensions every stored element is the whole block: keep the first.
    true_nse = pnp.sum(mask, axis=tuple(range(n_batch, mask.ndim)))[..., None]
    keep = lax.broadcasted_iota(true_nse.dtype, (1,) * n_batch + (nse,), n_batch) < true_nse
    keep = keep[(slice(None),) * (n_batch + 1) + (None,) * n_dense]
    data = pnp.where(keep, data, 0)
    return SparseBuffers(data, indices, SparseInfo(tuple(mat.shape), True, True))


def unique_rows(indices: Array, sparse_shape: Shape
                ) -> tuple[Array, Array, Array, Array]:
    """The distinct rows of one batch element's ``indices`` (``nse`` by ``n_sparse``,
    ``n_sparse > 0``), out-of-bound rows taken as the padding row.

    Returns ``(unique, first, inverse, count)``: the distinct rows in lexicographic
    order, padded with padding rows to ``nse``; where each first occurs; the position in
    ``unique`` of each row; and the number of distinct in-bound rows.
    """
    nse, n_sparse = indices.shape
    fill = pnp.array(sparse_shape, indices.dtype)
    rows = pnp.where(pnp.any(indices >= fill, axis=1, keepdims=True), fill, indices)
    *keys, perm = lax.sort((*(rows[:, k] for k in range(n_sparse)),
                            lax.iota(np.int32, nse)), num_keys=n_sparse)
    ordered = pnp.stack(keys, axis=1)
    starts = pnp.ones(nse, bool).at[1:].set(pnp.any(ordered[1:] != ordered[:-1], axis=1))
    where_start = pnp.nonzero(starts, size=nse)[0]
    n_unique = pnp.sum(starts)
    valid = pnp.arange(nse) < n_unique
    unique = pnp.where(valid[:, None], ordered[where_start], fill)
    inverse = pnp.zeros(nse, int).at[perm].set(pnp.cumsum(starts) - 1)
    count = n_unique - pnp.any(rows == fill).astype(n_unique.dtype)
    return unique, perm[where_start], inverse, count


def sort_indices(m: SparseBuffers) -> SparseBuffers:
    """``m`` with each batch element's entries in lexicographic order of their indices."""
    data, indices, info = m
    n_batch, n_sparse, _, nse = validate(data, indices, info.shape)
    if n_sparse == 0:
        return m

    def sort_one(i: Array) -> tuple[Array, Array]:
        *cols, perm = lax.sort((*(i[:, k] for k in range(n_sparse)), lax.iota(i.dtype, nse)),
                               num_keys=n_sparse)
        return pnp.stack(cols, axis=1), perm
    indices, perm = nfold_vmap(sort_one, n_batch, broadcasted=False)(indices)
    data = nfold_vmap(lambda d, p: d[p], n_batch)(data, perm)
    return SparseBuffers(data, indices, info._replace(indices_sorted=True))


def adjust_nse(indices: Array, nse: int, shape: Shape) -> Array:
    """``indices`` truncated or padded (with padding rows) to ``nse`` entries."""
    layout = validate_indices(indices, shape)
    if nse <= layout.nse:
        return indices[..., :nse, :]
    fill = lax.broadcast_in_dim(sparse_fill(shape, layout, indices.dtype),
                                (*indices.shape[:-2], nse - layout.nse, layout.n_sparse),
                                (indices.ndim - 1,))
    return lax.concatenate([indices, fill], indices.ndim - 2)


def _batch_shape(data: Array, indices: Array, layout: Layout) -> Shape:
    return tuple(max(a, b) for a, b in zip(data.shape[:layout.n_batch],
                                           indices.shape[:layout.n_batch]))


def sum_duplicates(m: SparseBuffers, nse: int | None) -> SparseBuffers:
    """``m`` with duplicate indices summed into one entry each, sorted, padding last, and
    ``nse`` entries per batch element (by default as many as the most distinct indices
    of a batch element; fewer drops entries).

    Raises:
      ValueError: ``nse`` is ``None`` and the indices are traced.
    """
    data, indices, info = m
    layout = validate(data, indices, info.shape)
    n_batch, n_sparse = layout.n_batch, layout.n_sparse
    if n_sparse == 0:
        # Every entry is the same (empty) index: one entry holds the sum.
        unique = pnp.zeros((*indices.shape[:n_batch], 1, 0), indices.dtype)
        inverse = pnp.zeros((*indices.shape[:n_batch], 1), int)
        data = pnp.sum(data, n_batch, keepdims=True, dtype=data.dtype)
        nse = 1 if nse is None else nse
    else:
        sparse_shape = info.shape[n_batch:n_batch + n_sparse]
        unique, _, inverse, count = nfold_vmap(lambda i: unique_rows(i, sparse_shape),
                                               n_batch, broadcasted=False)(indices)
        if nse is None:
            if not has_value(count):
                raise ValueError("bcoo_sum_duplicates: nse must be specified when using the "
                                 "function within jit, vmap, and other transformations "
                                 "requiring abstract evaluation.")
            nse = int(pnp.max(count))
    unique = adjust_nse(unique, nse, info.shape)
    out = pnp.zeros((*_batch_shape(data, indices, layout), nse, *data.shape[n_batch + 1:]),
                    data.dtype)
    out = nfold_vmap(lambda o, where, d: o.at[where].add(d, mode="drop"),
                     n_batch)(out, inverse, data)
    return SparseBuffers(out, unique, SparseInfo(info.shape, True, True))


def eliminate_zeros(m: SparseBuffers, nse: int | None) -> SparseBuffers:
    """:func:`sum_duplicates` after turning the entries whose data are all zero into
    padding (an entry shared by broadcast batch elements only if zero in all)."""
    data, indices, info = m
    layout = validate(data, indices, info.shape)
    zero = pnp.all(data == 0, axis=tuple(range(layout.n_batch + 1, data.ndim)))
    shared = tuple(d for d, s in enumerate(indices.shape[:layout.n_batch]) if s == 1)
    zero = pnp.all(zero, axis=shared, keepdims=True)
    fill = sparse_fill(info.shape, layout, indices.dtype)
    indices = nfold_vmap(lambda i, z: pnp.where(z[:, None], fill[None, :], i),
                         layout.n_batch)(indices, zero)
    return sum_duplicates(SparseBuffers(data, indices, SparseInfo(info.shape)), nse)


def set_nse(m: SparseBuffers, nse: int) -> SparseBuffers:
    """``m`` with ``nse`` entries: truncated (dropping data) or padded."""
    data, indices, info = m
    layout = validate(data, indices, info.shape)
    n_batch = layout.n_batch
    if nse == layout.nse:
        return m
    if nse < layout.nse:
        data = data[(slice(None),) * n_batch + (slice(nse),)]
    else:
        pad = [(0, 0)] * data.ndim
        pad[n_batch] = (0, nse - layout.nse)
        data = pnp.pad(data, pad)
    return SparseBuffers(data, adjust_nse(indices, nse, info.shape), info)

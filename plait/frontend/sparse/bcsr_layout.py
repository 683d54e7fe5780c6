"""The BCSR layout: what a batched compressed-row array's buffers are, their checks, and
their conversion to and from BCOO buffers, through which every BCSR operation reuses the
BCOO machinery (:mod:`.convert`, :mod:`.restructure`, :mod:`.products`), as JAX 0.10.2's
``bcsr`` module does.

A BCSR array of shape ``batch + (rows, columns) + dense`` is three buffers:

* ``data``: ``batch + (nse,) + dense``, the stored values, row by row;
* ``indices``: ``batch + (nse,)``, the column of each stored value;
* ``indptr``: ``batch + (rows + 1,)``, where each row's values start (``indptr[-1]`` is
  where the stored values end: the entries after it are padding).

A batch dimension of a buffer may have size 1 (shared by every batch element).  The
BCOO indices of a matrix are the row of each entry (its position among the row starts;
``rows`` for padding) beside its column; back, the row starts are the running count of
the entries of each row (the BCOO entries sorted first).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

from plait.frontend import numpy as pnp
from plait.frontend.core.array_base import Array
from plait.frontend.sparse import convert
from plait.frontend.sparse.layout import (
    Shape,
    SparseBuffers,
    SparseInfo,
    nfold_vmap,
    validate_indices,
)

__all__ = ["BCSRLayout", "validate_bcsr_indices", "validate_bcsr", "bcsr_to_bcoo_indices",
           "bcoo_to_bcsr_indices", "to_bcoo_buffers", "from_bcoo_buffers", "fromdense",
           "todense", "extract"]


class BCSRLayout(NamedTuple):
    """How the dimensions of a BCSR array split between its buffers (two are sparse)."""

    n_batch: int
    n_dense: int
    nse: int


def _compatible(batch: Sequence[int], shape: Sequence[int]) -> bool:
    """Whether buffer batch dimensions fit the array's (each equal, or 1: broadcast)."""
    return len(batch) == len(shape) and all(b in (1, s) for b, s in zip(batch, shape))


def validate_bcsr_indices(indices: Any, indptr: Any, shape: Sequence[int]) -> BCSRLayout:
    """The layout of BCSR ``indices`` and ``indptr`` for an array of ``shape``.

    Raises:
      TypeError: a buffer is not of an integer dtype.
      ValueError: the buffers' shapes do not fit ``shape``.
    """
    shape = tuple(shape)
    for name, buf in (("indices", indices), ("indptr", indptr)):
        if not np.issubdtype(buf.dtype, np.integer):
            raise TypeError(f"BCSR: expected {name} of an integer dtype, but got {buf.dtype}")
    if indices.ndim < 1:
        raise ValueError("BCSR: expected indices of shape batch + (nse,), but got shape ()")
    nse, n_batch = indices.shape[-1], indices.ndim - 1
    n_dense = len(shape) - n_batch - 2
    if n_dense < 0:
        raise ValueError(f"BCSR: indices of shape {tuple(indices.shape)} have {n_batch} batch "
                         f"dimensions; with the 2 sparse dimensions, more than the "
                         f"{len(shape)} of shape={shape}")
    if not _compatible(indices.shape[:n_batch], shape[:n_batch]):
        raise ValueError("indices batch dimensions not compatible for "
                         f"indices.shape={tuple(indices.shape)}, shape={shape}")
    if not _compatible(indptr.shape[:n_batch], shape[:n_batch]):
        raise ValueError("indptr batch dimensions not compatible for "
                         f"indptr.shape={tuple(indptr.shape)}, shape={shape}")
    if tuple(indptr.shape[n_batch:]) != (shape[n_batch] + 1,):
        raise ValueError("indptr shape must match the matrix shape plus 1: expected "
                         f"{(shape[n_batch] + 1,)} after the batch dimensions, but got "
                         f"indptr.shape={tuple(indptr.shape)} for shape={shape}")
    return BCSRLayout(n_batch, n_dense, nse)


def validate_bcsr(data: Any, indices: Any, indptr: Any, shape: Sequence[int]) -> BCSRLayout:
    """The layout of BCSR buffers for an array of ``shape`` (see
    :func:`validate_bcsr_indices`).

    Raises:
      ValueError: the shape of ``data`` does not fit the indices and ``shape``.
    """
    layout = validate_bcsr_indices(indices, indptr, shape)
    n_batch, n_dense, nse = layout
    shape = tuple(shape)
    if not _compatible(data.shape[:n_batch], shape[:n_batch]):
        raise ValueError("data batch dimensions not compatible for "
                         f"data.shape={tuple(data.shape)}, shape={shape}")
    if tuple(data.shape[n_batch:]) != (nse, *shape[n_batch + 2:]):
        raise ValueError(f"Invalid data.shape={tuple(data.shape)} for nse={nse}, "
                         f"n_batch={n_batch}, n_dense={n_dense}: expected "
                         f"{(nse, *shape[n_batch + 2:])} after the batch dimensions")
    return layout


def _rows_and_columns(indices: Array, indptr: Array) -> tuple[Array, Array]:
    """The BCOO row and column of each entry of one matrix: an entry's row is the number
    of row starts at or before it, less one (entries past the last are padding)."""
    starts = pnp.zeros_like(indices).at[indptr].add(1)
    return pnp.cumsum(starts) - 1, indices


def bcsr_to_bcoo_indices(indices: Array, indptr: Array, shape: Sequence[int]) -> Array:
    """The BCOO indices (``batch + (nse, 2)``) of BCSR ``indices`` and ``indptr``."""
    n_batch = validate_bcsr_indices(indices, indptr, shape).n_batch
    rows, columns = nfold_vmap(_rows_and_columns, n_batch)(indices, indptr)
    return pnp.stack((rows, columns), axis=indices.ndim)


def bcoo_to_bcsr_indices(indices: Array, shape: Sequence[int], index_dtype: Any
                         ) -> tuple[Array, Array]:
    """The BCSR ``indices`` and ``indptr`` (of ``index_dtype``) of BCOO ``indices`` sorted
    by row within each batch element; rows out of bounds are not counted.

    Raises:
      ValueError: the indices do not have 2 sparse dimensions.
    """
    layout = validate_indices(indices, shape)
    if layout.n_sparse != 2:
        raise ValueError("Must have 2 sparse dimensions to be converted to BCSR, but got "
                         f"n_sparse={layout.n_sparse}")
    n_rows = tuple(shape)[layout.n_batch]

    def row_starts(rows: Array) -> Array:
        counts = pnp.bincount(rows, length=n_rows).astype(index_dtype)
        return pnp.zeros(n_rows + 1, index_dtype).at[1:].set(pnp.cumsum(counts))
    indptr = nfold_vmap(row_starts, layout.n_batch, broadcasted=False)(indices[..., 0])
    return indices[..., 1], indptr


def to_bcoo_buffers(data: Array, indices: Array, indptr: Array, shape: Shape) -> SparseBuffers:
    """The BCOO buffers of a BCSR array (no sorted or unique flags, as JAX's)."""
    return SparseBuffers(data, bcsr_to_bcoo_indices(indices, indptr, shape),
                         SparseInfo(tuple(shape)))


def from_bcoo_buffers(m: SparseBuffers) -> tuple[Array, Array, Array]:
    """The BCSR buffers of a BCOO array with 2 sparse dimensions, its entries sorted
    first unless known sorted; the index dtype is kept.

    Raises:
      NotImplementedError: ``m`` does not have 2 sparse dimensions.
    """
    n_sparse = m.layout.n_sparse
    if n_sparse != 2:
        raise NotImplementedError(f"BCSR.from_bcoo requires n_sparse=2; got n_sparse={n_sparse}")
    if not m.info.indices_sorted:
        m = convert.sort_indices(m)
    indices, indptr = bcoo_to_bcsr_indices(m.indices, m.shape, m.indices.dtype)
    return m.data, indices, indptr


def fromdense(mat: Array, *, nse: int, n_batch: int, n_dense: int, index_dtype: Any
              ) -> tuple[Array, Array, Array]:
    """The BCSR buffers of the nonzero elements of ``mat``, row by row, padded (or
    truncated) to ``nse`` per batch element.

    Raises:
      ValueError: ``mat`` would not have 2 sparse dimensions, or a count is negative.
      TypeError: ``index_dtype`` is not an integer dtype.
    """
    if mat.ndim - n_batch - n_dense != 2:
        raise ValueError("bcsr_fromdense: must have 2 sparse dimensions: expected "
                         f"n_batch + n_dense == mat.ndim - 2 == {mat.ndim - 2}, but got "
                         f"n_batch={n_batch}, n_dense={n_dense}")
    m = convert.fromdense(mat, nse=nse, n_batch=n_batch, n_dense=n_dense,
                          index_dtype=index_dtype)
    indices, indptr = bcoo_to_bcsr_indices(m.indices, m.shape, index_dtype)
    return m.data, indices, indptr


def todense(data: Array, indices: Array, indptr: Array, shape: Shape) -> Array:
    """The dense array of BCSR buffers (duplicates summed, padding dropped)."""
    return convert.todense(to_bcoo_buffers(data, indices, indptr, shape))


def extract(indices: Array, indptr: Array, mat: Array) -> Array:
    """The BCSR data of dense ``mat`` at ``indices`` and ``indptr`` (0 at padding).

    Raises:
      TypeError, ValueError: the buffers do not fit ``mat`` (see
        :func:`validate_bcsr_indices`).
    """
    return convert.extract(bcsr_to_bcoo_indices(indices, indptr, mat.shape), mat)

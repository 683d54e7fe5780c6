"""BCOO arrays rearranged: transposed, summed over axes, broadcast, concatenated,
squeezed, sliced, reshaped, and moved between layouts (``n_batch``, ``n_dense``).

Batch and dense dimensions live in the buffers' shapes, so most of these are the dense
operation on ``data`` and ``indices``; sparse dimensions live in the index values,
which are rewritten.  Results are JAX 0.10.2's, entry for entry.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from functools import partial
from typing import Any

import numpy as np

from plait.frontend import lax
from plait.frontend import numpy as pnp
from plait.frontend.api.make_jaxpr import eval_shape
from plait.frontend.core.arguments import ShapeDtypeStruct
from plait.frontend.core.array_base import Array
from plait.frontend.sparse.convert import set_nse, sum_duplicates
from plait.frontend.sparse.layout import (
    Shape,
    SparseBuffers,
    SparseEfficiencyError,
    SparseEfficiencyWarning,
    SparseInfo,
    nfold_vmap,
    sparse_fill,
    tuple_replace,
    validate,
)

__all__ = ["split_permutation", "transpose", "reduce_sum", "broadcast_in_dim", "concatenate",
           "squeeze", "slice_", "reshape", "update_layout"]


def split_permutation(m: SparseBuffers, permutation: Any
                      ) -> tuple[list[int], list[int], list[int]]:
    """``permutation`` of ``m``'s dimensions as permutations of its batch, sparse and dense
    dimensions.

    Raises:
      TypeError: it is not a permutation of the dimensions.
      NotImplementedError: it moves a dimension between batch, sparse and dense.
    """
    if not isinstance(permutation, tuple | list | np.ndarray):
        raise TypeError("transpose permutation must be a tuple/list/ndarray, got "
                        f"{type(permutation)}.")
    permutation = [int(p) for p in permutation]
    if sorted(permutation) != list(range(len(m.shape))):
        raise TypeError("transpose permutation isn't a permutation of operand dimensions, "
                        f"got permutation {tuple(permutation)} for shape {m.shape}.")
    n_batch, n_sparse, n_dense, _ = m.layout
    batch = permutation[:n_batch]
    sparse = [p - n_batch for p in permutation[n_batch:n_batch + n_sparse]]
    dense = [p - n_batch - n_sparse for p in permutation[n_batch + n_sparse:]]
    if sorted(batch) != list(range(n_batch)):
        raise NotImplementedError("transpose permutation cannot permute batch axes with "
                                  f"non-batch axes; got permutation {tuple(permutation)}, "
                                  f"with n_batch={n_batch}.")
    if sorted(dense) != list(range(n_dense)):
        raise NotImplementedError("transpose permutation cannot permute dense axes with "
                                  f"non-dense axes; got permutation {tuple(permutation)}, "
                                  f"with n_dense={n_dense}.")
    return batch, sparse, dense


def transpose(m: SparseBuffers, permutation: Sequence[int]) -> SparseBuffers:
    """``m`` with its dimensions permuted (within batch, sparse and dense ones; see
    :func:`split_permutation`).  The indices stay unique, not sorted."""
    batch, sparse, dense = split_permutation(m, permutation)
    shape = tuple(m.shape[p] for p in permutation)
    info = SparseInfo(shape, unique_indices=m.info.unique_indices)
    if list(permutation) == list(range(len(m.shape))):
        return SparseBuffers(m.data, m.indices, info)
    n_batch = len(batch)
    indices = pnp.transpose(m.indices[..., np.array(sparse, dtype=int)],
                            (*batch, n_batch, n_batch + 1))
    data = pnp.transpose(m.data, (*batch, n_batch, *(d + n_batch + 1 for d in dense)))
    return SparseBuffers(data, indices, info)


def reduce_sum(m: SparseBuffers, axes: Sequence[int]) -> SparseBuffers:
    """``m`` summed over ``axes``: dense axes in ``data``; a sparse axis by dropping its
    index column (the duplicates that leaves stand for the sum); a batch axis by
    merging its elements into one, with more stored entries.

    Raises:
      ValueError: an axis is out of range.
    """
    data, indices, info = m
    shape = info.shape
    if not all(0 <= a < len(shape) for a in axes):
        raise ValueError(f"bcoo_reduce_sum: expected axes in [0, {len(shape)}), but got "
                         f"axes={tuple(axes)}")
    layout = validate(data, indices, shape)
    n_batch, n_sparse, _, nse = layout
    axes = sorted(set(axes))
    data = pnp.sum(data, tuple(a - n_sparse + 1 for a in axes if a >= n_batch + n_sparse))
    if n_sparse:
        # Padding entries are dropped: their indices will not say so any more.
        in_bounds = pnp.all(indices < sparse_fill(shape, layout, indices.dtype), axis=-1)
        in_bounds = lax.expand_dims(in_bounds, tuple(range(in_bounds.ndim, data.ndim)))
        data = pnp.where(in_bounds, data, 0)
    kept = [i for i in range(n_sparse) if i + n_batch not in axes]
    if kept:
        indices = indices[..., np.array(kept)]
    else:
        indices = pnp.zeros(tuple_replace(indices.shape, n_batch + 1, 0), indices.dtype)
    batch_axes = [a for a in axes if a < n_batch]
    for a in batch_axes:
        if data.shape[a] == 1 and indices.shape[a] == 1:
            data = data * shape[a]
        elif data.shape[a] == 1:
            data = lax.broadcast_in_dim(data, tuple_replace(data.shape, a, shape[a]),
                                        tuple(range(data.ndim)))
        elif indices.shape[a] == 1:
            # (JAX 0.10.2 fails an assertion here.)  Shared indices: sum the data.
            data = pnp.sum(data, a, keepdims=True)
    new_batch = [d for d in range(n_batch) if d not in batch_axes]
    new_batch_shape = tuple(data.shape[d] for d in new_batch)
    new_nse = nse * math.prod(data.shape[a] for a in batch_axes)
    data = lax.reshape(data, (*new_batch_shape, new_nse, *data.shape[n_batch + 1:]),
                       (*new_batch, *batch_axes, *range(n_batch, data.ndim)))
    indices = lax.reshape(indices, (*new_batch_shape, new_nse, *indices.shape[n_batch + 1:]),
                          (*new_batch, *batch_axes, *range(n_batch, indices.ndim)))
    out_shape = tuple(s for i, s in enumerate(shape) if i not in axes)
    return SparseBuffers(data, indices, SparseInfo(out_shape))


def broadcast_in_dim(m: SparseBuffers, shape: Shape,
                     broadcast_dimensions: Sequence[int]) -> SparseBuffers:
    """``lax.broadcast_in_dim`` of ``m``: new leading dimensions are batch dimensions,
    new trailing ones dense (when ``m`` has dense dimensions).

    Raises:
      ValueError: ``broadcast_dimensions`` does not have one entry per dimension, or
        mixes batch, sparse and dense dimensions.
      NotImplementedError: new sparse dimensions of size other than 1 would be needed.
    """
    data, indices, info = m
    shape = tuple(shape)
    if len(info.shape) != len(broadcast_dimensions):
        raise ValueError(f"spinfo.shape={info.shape} and broadcast_dimensions="
                         f"{tuple(broadcast_dimensions)} must have the same length")
    n_batch, n_sparse, n_dense, nse = validate(data, indices, info.shape)
    dims = list(broadcast_dimensions)
    batch_dims = dims[:n_batch]
    sparse_dims = dims[n_batch:n_batch + n_sparse]
    dense_dims = dims[n_batch + n_sparse:]
    if max(batch_dims, default=0) > min(sparse_dims, default=len(shape)):
        raise ValueError("Cannot mix batch and sparse dimensions during broadcast_in_dim")
    if max(sparse_dims, default=0) > min(dense_dims, default=len(shape)):
        raise ValueError("Cannot mix sparse and dense dimensions during broadcast_in_dim")
    new_n_batch = min(dims[n_batch:], default=len(shape))
    new_n_dense = n_dense and len(shape) - min(dims[-n_dense:])
    new_n_sparse = len(shape) - new_n_batch - new_n_dense
    if (math.prod(info.shape[n_batch:n_batch + n_sparse])
            != math.prod(shape[new_n_batch:new_n_batch + new_n_sparse])):
        raise NotImplementedError("Adding sparse dimensions with lengths != 1")
    if (new_n_batch, new_n_dense) != (n_batch, n_dense):
        data = lax.broadcast_in_dim(
            data, (*shape[:new_n_batch], nse, *shape[new_n_batch + new_n_sparse:]),
            (*batch_dims, new_n_batch, *(b + 1 - new_n_sparse for b in dense_dims)))
        indices = lax.broadcast_in_dim(indices, (*shape[:new_n_batch], nse, n_sparse),
                                       (*batch_dims, new_n_batch, new_n_batch + 1))
    if new_n_sparse != n_sparse:
        columns = np.array(sparse_dims, dtype=int) - new_n_batch
        indices = pnp.zeros((*indices.shape[:-1], new_n_sparse),
                            indices.dtype).at[..., columns].set(indices)
    return SparseBuffers(data, indices, SparseInfo(shape))


def concatenate(operands: Sequence[SparseBuffers], dimension: int) -> SparseBuffers:
    """``lax.concatenate`` of sparse arrays along a batch or sparse dimension.

    Raises:
      TypeError: the shapes do not concatenate (``lax.concatenate``'s error).
      ValueError: the operands' layouts differ.
      NotImplementedError: ``dimension`` is dense, or batch dimensions are broadcast.
    """
    out = eval_shape(partial(lax.concatenate, dimension=dimension),
                     [ShapeDtypeStruct(op.shape, op.data.dtype) for op in operands])
    layouts = [op.layout for op in operands]
    if len({lay.n_dense for lay in layouts}) > 1:
        raise ValueError("bcoo_concatenate requires inputs to have matching nse dimensions.")
    n_batches = {lay.n_batch for lay in layouts}
    # ``x[None]`` gives a leading batch dimension of size 1: align with the others.
    if len(n_batches) != 1 and max(n_batches) == 1:
        if all(op.shape[0] == 1 for op, lay in zip(operands, layouts) if lay.n_batch == 0):
            operands = [update_layout(op, n_batch=1) if lay.n_batch == 0 else op
                        for op, lay in zip(operands, layouts)]
        elif all(op.shape[0] == 1 for op, lay in zip(operands, layouts) if lay.n_batch == 1):
            operands = [update_layout(op, n_batch=0) if lay.n_batch == 1 else op
                        for op, lay in zip(operands, layouts)]
        layouts = [op.layout for op in operands]
        n_batches = {lay.n_batch for lay in layouts}
    if len(n_batches) != 1:
        raise ValueError("bcoo_concatenate requires inputs to have matching batch dimensions.")
    n_batch, n_sparse = layouts[0].n_batch, layouts[0].n_sparse

    def batch_shapes(shapes: list[tuple[int, ...]]) -> set[tuple[int, ...]]:
        return {tuple(s[d] for d in range(n_batch) if d != dimension) for s in shapes}
    if (len(batch_shapes([tuple(op.indices.shape) for op in operands])) != 1
            or len(batch_shapes([tuple(op.data.shape) for op in operands])) != 1):
        raise NotImplementedError("concatenation of arrays with broadcasted batch indices")
    if dimension < n_batch:
        nse = max(lay.nse for lay in layouts)
        operands = [set_nse(op, nse) for op in operands]
        indices = lax.concatenate([op.indices for op in operands], dimension)
        data = lax.concatenate([op.data for op in operands], dimension)
    elif dimension < n_batch + n_sparse:
        offsets = np.cumsum([0] + [op.shape[dimension] for op in operands[:-1]])
        data = lax.concatenate([op.data for op in operands], n_batch)
        indices = lax.concatenate(
            [op.indices.at[..., dimension - n_batch].add(np.asarray(off, op.indices.dtype))
             for op, off in zip(operands, offsets)], n_batch)
    else:
        raise NotImplementedError("Concatenation along dense dimensions.")
    return SparseBuffers(data, indices, SparseInfo(tuple(out.shape)))


def squeeze(m: SparseBuffers, dimensions: Sequence[int]) -> SparseBuffers:
    """``m`` without the size-1 ``dimensions``.

    Raises:
      ValueError: a dimension does not have size 1.
    """
    ndim = len(m.shape)
    dims = tuple(d % ndim if -ndim <= d < ndim else d for d in dimensions)
    if any(not 0 <= d < ndim or m.shape[d] != 1 for d in dims):
        raise ValueError("cannot select an axis to squeeze out which has size not equal to "
                         f"one, got shape={m.shape} and dimensions={tuple(dimensions)}")
    n_batch, n_sparse, _, _ = m.layout
    batch_dims = tuple(d for d in dims if d < n_batch)
    kept_sparse = np.array([i for i in range(n_sparse) if i + n_batch not in dims], dtype=int)
    dense_dims = tuple(d - n_sparse + 1 for d in dims if d >= n_batch + n_sparse)
    data = lax.squeeze(m.data, batch_dims + dense_dims)
    indices = lax.squeeze(m.indices[..., kept_sparse], batch_dims)
    shape = tuple(s for i, s in enumerate(m.shape) if i not in dims)
    return SparseBuffers(data, indices, m.info._replace(shape=shape))


def slice_(m: SparseBuffers, start_indices: Sequence[int], limit_indices: Sequence[int],
           strides: Sequence[int] | None) -> SparseBuffers:
    """``lax.slice`` of ``m``: stored elements outside the slice become padding.

    Raises:
      ValueError: the bounds or strides do not fit ``m``.
    """
    ndim = len(m.shape)
    starts = [int(i) for i in start_indices]
    limits = [int(i) for i in limit_indices]
    steps = [1] * ndim if strides is None else [int(i) for i in strides]
    if not len(starts) == len(limits) == len(steps) == ndim:
        raise ValueError(f"bcoo_slice: indices must have size mat.ndim={ndim}")
    if any(s <= 0 for s in steps):
        raise ValueError(f"strides must be a sequence of positive integers; got {steps}")
    if not all(0 <= s <= e <= n for s, e, n in zip(starts, limits, m.shape)):
        raise ValueError(f"bcoo_slice: invalid indices. Got start_indices={starts}, "
                         f"limit_indices={limits} and shape={m.shape}")
    data, indices, _ = m
    n_batch, n_sparse, _, nse = m.layout
    batch = range(n_batch)
    data_slices = [slice(None) if data.shape[i] != m.shape[i]
                   else slice(starts[i], limits[i], steps[i]) for i in batch]
    index_slices = [slice(None) if indices.shape[i] != m.shape[i]
                    else slice(starts[i], limits[i], steps[i]) for i in batch]
    dense = range(n_batch + n_sparse, ndim)
    data = data[(*data_slices, slice(None), *(slice(starts[i], limits[i], steps[i])
                                              for i in dense))]
    indices = indices[(*index_slices, slice(None), slice(None))]
    shape = tuple((e - s + k - 1) // k for s, e, k in zip(starts, limits, steps))
    if n_sparse:
        sp = slice(n_batch, n_batch + n_sparse)

        def row(values: list[int]) -> Array:
            return lax.expand_dims(pnp.array(values[sp], indices.dtype), range(n_batch + 1))
        lo, hi, step = row(starts), row(limits), row(steps)
        keep = pnp.all((indices >= lo) & (indices < hi) & ((indices - lo) % step == 0),
                       axis=-1, keepdims=True)
        indices = pnp.where(keep, (indices - lo + step - 1) // step, (hi - lo + step - 1) // step)
        keep_data = lax.expand_dims(keep[..., 0], range(n_batch + 1, data.ndim))
        data = pnp.where(keep_data, data, 0)
        new_nse = math.prod(shape[sp])
        if nse > new_nse:
            data, indices, _ = sum_duplicates(SparseBuffers(data, indices, SparseInfo(shape)),
                                              new_nse)
    return SparseBuffers(data, indices, SparseInfo(shape))


def reshape(m: SparseBuffers, new_sizes: Sequence[int],
            dimensions: Sequence[int] | None = None) -> SparseBuffers:
    """``lax.reshape`` of ``m``, when the new shape keeps batch, sparse and dense
    dimensions apart.

    Raises:
      ValueError: the new shape mixes batch and sparse, or sparse and dense, dimensions.
      NotImplementedError: batch dimensions are broadcast.
    """
    data, indices, info = m
    n_batch, n_sparse, _, nse = m.layout
    new_sizes = tuple(int(s) for s in new_sizes)
    # (JAX's test, as it is: broadcast indices alone fail in the reshape below.)
    if tuple(indices.shape[:n_batch]) != tuple(data.shape[:n_batch]) != info.shape[:n_batch]:
        raise NotImplementedError("reshape of arrays with broadcasted batch dimensions.")
    batch_shape = info.shape[:n_batch]
    sparse_shape = info.shape[n_batch:n_batch + n_sparse]
    batch_perm, sparse_perm, dense_perm = split_permutation(
        m, tuple(range(len(info.shape))) if dimensions is None else dimensions)
    batch_size, sparse_size = math.prod(batch_shape), math.prod(sparse_shape)
    cumulative = np.cumprod(new_sizes)
    if batch_size != 1 and batch_size not in cumulative:
        raise ValueError("bcoo_reshape: new shape cannot mix batch and sparse dimensions; "
                         f"got shape={info.shape} new_shape={new_sizes} with n_batch={n_batch}")
    if sparse_size != 1 and batch_size * sparse_size not in cumulative:
        raise ValueError("bcoo_reshape: new shape cannot mix sparse and dense dimensions; "
                         f"got shape={info.shape} new_shape={new_sizes} with "
                         f"n_dense={len(info.shape) - n_batch - n_sparse}")
    i1 = int(cumulative.searchsorted(batch_size, side="right"))
    i2 = int(cumulative.searchsorted(batch_size * sparse_size, side="right"))
    new_batch, new_sparse, new_dense = new_sizes[:i1], new_sizes[i1:i2], new_sizes[i2:]
    data = lax.reshape(data, (*new_batch, nse, *new_dense),
                       (*batch_perm, n_batch, *(p + n_batch + 1 for p in dense_perm)))
    indices = lax.reshape(indices, (*new_batch, nse, n_sparse),
                          (*batch_perm, n_batch, n_batch + 1))
    if not new_sparse:
        indices = pnp.zeros((*new_batch, nse, 0), indices.dtype)
    elif sparse_shape:
        columns = tuple(indices[..., i] for i in sparse_perm)
        flat = pnp.ravel_multi_index(columns, tuple(sparse_shape[i] for i in sparse_perm),
                                     mode="clip")
        out_of_bounds = pnp.any(indices >= pnp.array(sparse_shape, indices.dtype), axis=-1,
                                keepdims=True)
        new_columns = pnp.unravel_index(flat, new_sparse)
        indices = pnp.concatenate([c[..., None] for c in new_columns], axis=-1)
        indices = pnp.where(out_of_bounds, pnp.array(new_sparse, indices.dtype), indices)
    return SparseBuffers(data, indices, SparseInfo(new_sizes))


def update_layout(m: SparseBuffers, *, n_batch: int | None = None, n_dense: int | None = None,
                  on_inefficient: str | None = "error") -> SparseBuffers:
    """``m`` with ``n_batch`` batch and ``n_dense`` dense dimensions (by default its own).

    Raises:
      ValueError: the numbers are negative or exceed the rank, or ``on_inefficient`` is
        not ``'error'``, ``'warn'`` or ``None``.
      SparseEfficiencyError: with ``on_inefficient='error'``, the new layout stores many
        explicit zeros (new batch or dense dimensions of size above 1).
    """
    layout = m.layout
    shape = m.shape
    n_batch = layout.n_batch if n_batch is None else int(n_batch)
    n_dense = layout.n_dense if n_dense is None else int(n_dense)
    if (n_batch, n_dense) == (layout.n_batch, layout.n_dense):
        return m
    n_sparse = len(shape) - n_batch - n_dense
    if on_inefficient not in ("error", "warn", None):
        raise ValueError(f"on_inefficient={on_inefficient!r}; expected one of "
                         "['error', 'warn', None].")
    if n_batch < 0:
        raise ValueError(f"n_batch must be non-negative; got {n_batch}")
    if n_dense < 0:
        raise ValueError(f"n_dense must be non-negative; got {n_dense}")
    if n_sparse < 0:
        raise ValueError(f"sum of n_batch={n_batch} and n_dense={n_dense} cannot be larger "
                         f"than mat.ndim={len(shape)}.")

    def inefficient(msg: str) -> None:
        if on_inefficient == "error":
            raise SparseEfficiencyError(msg + " To disable this error, set the on_inefficient "
                                        "argument of bcoo_update_layout to 'warn' or None.")
        if on_inefficient == "warn":
            warnings.warn(msg + " To disable this warning, set the on_inefficient argument "
                          "of bcoo_update_layout to None.", SparseEfficiencyWarning,
                          stacklevel=3)
    if n_dense > layout.n_dense and any(
            d > 1 for d in shape[len(shape) - n_dense:len(shape) - layout.n_dense]):
        inefficient(f"For matrix of shape {shape}, increasing n_dense from {layout.n_dense} "
                    f"to {n_dense} results in inefficient storage.")
    if n_batch > layout.n_batch and any(d > 1 for d in shape[layout.n_batch:n_batch]):
        inefficient(f"For matrix of shape {shape}, increasing n_batch from {layout.n_batch} "
                    f"to {n_batch} results in inefficient storage.")
    data, indices = m.data, m.indices
    cur_batch, cur_dense = layout.n_batch, layout.n_dense
    if n_dense < cur_dense:
        data, indices = _dense_to_sparse(data, indices, cur_batch, cur_dense - n_dense)
        cur_dense = n_dense
    if n_batch < cur_batch:
        data, indices = _batch_to_sparse(data, indices, n_batch, cur_batch - n_batch)
        cur_batch = n_batch
    if n_dense > cur_dense:
        data, indices = _sparse_to_dense(data, indices, cur_batch, n_dense - cur_dense,
                                         shape[len(shape) - n_dense:])
        cur_dense = n_dense
    if n_batch > cur_batch:
        data, indices = _sparse_to_batch(data, indices, cur_batch, n_batch, shape, n_dense)
    return SparseBuffers(data, indices, SparseInfo(shape))


def _dense_to_sparse(data: Array, indices: Array, n_batch: int, n: int
                     ) -> tuple[Array, Array]:
    """The first ``n`` dense dimensions made sparse: each stored block becomes one entry
    per element of those dimensions."""
    def one(d: Array, i: Array) -> tuple[Array, Array]:
        new_d = d.reshape(math.prod(d.shape[:n]), *d.shape[n:])
        grids = pnp.meshgrid(*(pnp.arange(s, dtype=i.dtype) for s in d.shape[:n]),
                             indexing="ij")
        new_i = pnp.column_stack([pnp.broadcast_to(i, (new_d.shape[0], i.size)),
                                  *map(pnp.ravel, grids)])
        return new_d, new_i
    data, indices = nfold_vmap(one, n_batch + 1)(data, indices)
    data = data.reshape(*data.shape[:n_batch], math.prod(data.shape[n_batch:n_batch + 2]),
                        *data.shape[n_batch + 2:])
    indices = indices.reshape(*indices.shape[:n_batch],
                              math.prod(indices.shape[n_batch:n_batch + 2]),
                              *indices.shape[n_batch + 2:])
    return data, indices


def _batch_to_sparse(data: Array, indices: Array, n_batch: int, n: int
                     ) -> tuple[Array, Array]:
    """The last ``n`` batch dimensions made sparse, their positions leading index columns."""
    def one(d: Array, i: Array) -> tuple[Array, Array]:
        nse = i.shape[-2]
        new_d = d.reshape(math.prod(d.shape[:n + 1]), *d.shape[n + 1:])
        grids = pnp.meshgrid(*(pnp.arange(s, dtype=i.dtype) for s in (*i.shape[:n], nse)),
                             indexing="ij")
        new_i = i.reshape(math.prod(i.shape[:n + 1]), *i.shape[n + 1:])
        return new_d, pnp.column_stack((*(g.ravel() for g in grids[:-1]), new_i))
    return nfold_vmap(one, n_batch)(data, indices)


def _sparse_to_dense(data: Array, indices: Array, n_batch: int, n: int,
                     dense_shape: Shape) -> tuple[Array, Array]:
    """The last ``n`` sparse dimensions made dense: each entry a block with one value."""
    def one(d: Array, i: Array) -> tuple[Array, Array]:
        new_d = pnp.zeros(dense_shape, d.dtype).at[tuple(i[-n:])].set(d)
        return new_d, i[:-n]
    return nfold_vmap(one, n_batch + 1)(data, indices)


def _sparse_to_batch(data: Array, indices: Array, n_batch: int, new_n_batch: int,
                     shape: Shape, n_dense: int) -> tuple[Array, Array]:
    """The first sparse dimensions made batch dimensions, each entry moved to its batch
    element (the other elements of its slot hold zeros)."""
    n = new_n_batch - n_batch

    def one(d: Array, i: Array) -> tuple[Array, Array]:
        nse = i.shape[-2]
        where = (*(i[:, j] for j in range(n)), pnp.arange(nse))
        new_i = pnp.broadcast_to(i[:, n:], (*shape[n_batch:new_n_batch], nse, i.shape[-1] - n))
        new_d = pnp.zeros((*shape[n_batch:new_n_batch], nse, *d.shape[d.ndim - n_dense:]),
                          d.dtype).at[where].set(d)
        return new_d, new_i
    return nfold_vmap(one, n_batch)(data, indices)

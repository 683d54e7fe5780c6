"""BCOO arrays indexed: reversed (``lax.rev``), sliced at traced starts
(``lax.dynamic_slice``) and gathered (``lax.gather``), with the ``sparsify`` rules of the
three primitives, which make ``M[i]``, ``M[::-1]`` and ``M[idx]`` work on a BCOO array.

As in :mod:`.restructure`, batch and dense dimensions are indexed in the buffers' shapes;
sparse dimensions in the index values, where an element falling outside a slice becomes
padding.  Results are JAX 0.10.2's, entry for entry.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from plait.frontend import lax
from plait.frontend import numpy as pnp
from plait.frontend.api.make_jaxpr import eval_shape
from plait.frontend.api.vmap import vmap
from plait.frontend.core.arguments import ShapeDtypeStruct
from plait.frontend.core.array_base import Array
from plait.frontend.sparse.convert import sum_duplicates
from plait.frontend.sparse.layout import SparseBuffers, SparseInfo
from plait.frontend.sparse.restructure import reshape, squeeze, transpose, update_layout
from plait.frontend.sparse.sparsify import SparseValue, fresh, sparse_rules
from plait.ir import primitives as P
from plait.ir.primitives.indexing import GatherDimensionNumbers, GatherScatterMode

__all__ = ["rev", "dynamic_slice", "gather"]


def _stand_in(m: SparseBuffers) -> ShapeDtypeStruct:
    return ShapeDtypeStruct(m.shape, m.data.dtype)


def rev(m: SparseBuffers, dimensions: Sequence[int]) -> SparseBuffers:
    """``lax.rev`` of ``m``: the ``dimensions`` reversed.

    Raises:
      ValueError: a dimension is out of range or repeated (``lax.rev``'s checks).
    """
    dims = [int(d) for d in dimensions]
    eval_shape(lambda x: lax.rev(x, dims), _stand_in(m))  # lax.rev's checks and errors
    n_batch, n_sparse, _, _ = m.layout
    batch = [d for d in dims if d < n_batch]
    sparse = [d - n_batch for d in dims if n_batch <= d < n_batch + n_sparse]
    dense = [d + 1 - n_sparse for d in dims if d >= n_batch + n_sparse]
    data, indices = m.data, m.indices
    if batch:
        indices = lax.rev(indices, batch)
    if batch or dense:
        data = lax.rev(data, batch + dense)
    if sparse:
        sizes = np.array(m.shape[n_batch:n_batch + n_sparse])
        flip = np.zeros(n_sparse, bool)
        flip[sparse] = True
        # i -> size - 1 - i in the reversed columns; padding rows (i >= size) land below
        # zero, and are put back to the padding row.
        flipped = pnp.where(pnp.asarray(flip), pnp.asarray(sizes - 1, indices.dtype) - indices,
                            indices)
        indices = pnp.where(flipped < 0, pnp.asarray(sizes, indices.dtype), flipped)
    return SparseBuffers(data, indices, SparseInfo(m.shape))


def _check_slice_sizes(m: SparseBuffers, starts: Sequence[Any], sizes: Sequence[int]) -> None:
    if len(starts) != len(m.shape) or len(sizes) != len(m.shape):
        raise ValueError(f"bcoo_dynamic_slice: expected {len(m.shape)} start indices and "
                         f"slice sizes (mat.ndim), but got {len(starts)} and {len(sizes)}")
    if not all(0 <= s <= n for s, n in zip(sizes, m.shape)):
        raise TypeError("slice_sizes must be less than or equal to operand shape, "
                        f"got slice_sizes {tuple(sizes)} for operand shape {m.shape}")
    eval_shape(lambda x, *i: lax.dynamic_slice(x, i, sizes), _stand_in(m),
               *(ShapeDtypeStruct(np.shape(s), pnp.asarray(s).dtype) for s in starts))


def dynamic_slice(m: SparseBuffers, start_indices: Sequence[Any],
                  slice_sizes: Sequence[int]) -> SparseBuffers:
    """``lax.dynamic_slice`` of ``m``, starts possibly traced: the window is clamped into
    the array (a negative start of a sparse dimension counts from its end), stored
    elements outside it become padding, and ``nse`` shrinks to the window's size.

    Raises:
      ValueError: the number of starts or sizes is not ``m``'s rank.
      TypeError: a size exceeds its dimension, or a start is not an integer scalar.
    """
    sizes = tuple(int(s) for s in slice_sizes)
    _check_slice_sizes(m, start_indices, sizes)
    starts = [pnp.asarray(s) for s in start_indices]
    n_batch, n_sparse, _, nse = m.layout
    zero = pnp.zeros((), starts[0].dtype if starts else np.int32)

    def batch_window(buf: Array) -> tuple[list[Any], list[int]]:
        # A broadcast batch dimension (size 1) is shared: kept whole.
        whole = [buf.shape[i] != m.shape[i] for i in range(n_batch)]
        return ([zero if w else s for w, s in zip(whole, starts)],
                [1 if w else s for w, s in zip(whole, sizes)])
    data_starts, data_sizes = batch_window(m.data)
    index_starts, index_sizes = batch_window(m.indices)
    data = lax.dynamic_slice(m.data, [*data_starts, zero, *starts[n_batch + n_sparse:]],
                             [*data_sizes, nse, *sizes[n_batch + n_sparse:]])
    indices = lax.dynamic_slice(m.indices, [*index_starts, zero, zero],
                                [*index_sizes, nse, n_sparse])
    if not n_sparse:
        return SparseBuffers(data, indices, SparseInfo(sizes))
    sp = slice(n_batch, n_batch + n_sparse)
    sparse_shape = pnp.asarray(m.shape[sp], indices.dtype)
    size = pnp.asarray(sizes[sp], indices.dtype)
    lo = pnp.stack([s.astype(indices.dtype) for s in starts[sp]])
    lo = pnp.clip(pnp.where(lo < 0, lo + sparse_shape, lo), 0, sparse_shape - size)
    lo, size = (lax.expand_dims(a, range(n_batch + 1)) for a in (lo, size))
    keep = pnp.all((indices >= lo) & (indices < lo + size), axis=-1, keepdims=True)
    indices = pnp.where(keep, indices - lo, size)
    data = pnp.where(lax.expand_dims(keep[..., 0], range(n_batch + 1, data.ndim)), data, 0)
    out = SparseBuffers(data, indices, SparseInfo(sizes))
    window = math.prod(sizes[sp])
    if nse > window:
        # (sorted and unique now, but not flagged so: JAX's flags)
        out = sum_duplicates(out, window)._replace(info=SparseInfo(sizes))
    return out


def gather(m: SparseBuffers, start_indices: Any, dimension_numbers: GatherDimensionNumbers,
           slice_sizes: Sequence[int], *, mode: Any = None, **params: Any) -> SparseBuffers:
    """``lax.gather`` of ``m`` at dense ``start_indices``: one :func:`dynamic_slice` per
    index vector (under ``vmap``), the slices laid out as ``lax.gather`` lays them.

    Raises:
      NotImplementedError: ``mode`` is not ``'promise_in_bounds'`` (the default), or the
        dimension numbers have batching dimensions.
      TypeError, ValueError: ``lax.gather``'s checks of the arguments.
    """
    parsed = (GatherScatterMode.PROMISE_IN_BOUNDS if mode is None
              else GatherScatterMode.from_any(mode))
    if parsed != GatherScatterMode.PROMISE_IN_BOUNDS:
        raise NotImplementedError(f"bcoo_gather: mode={mode} not yet supported.")
    dn = dimension_numbers
    if dn.operand_batching_dims or dn.start_indices_batching_dims:
        raise NotImplementedError("bcoo_gather: gather dimension numbers with batching "
                                  "dimensions are not supported")
    start_indices = pnp.asarray(start_indices)
    out_aval = eval_shape(lambda x, i: lax.gather(x, i, dn, slice_sizes, **params),
                          _stand_in(m), ShapeDtypeStruct(start_indices.shape,
                                                         start_indices.dtype))
    ndim = len(m.shape)
    sizes = list(m.shape)
    mapped = [False] * ndim
    columns: list[Any] = [pnp.zeros((), start_indices.dtype)] * ndim
    for i, d in enumerate(dn.start_index_map):
        columns[d], sizes[d], mapped[d] = start_indices[..., i].ravel(), slice_sizes[d], True
    collapsed = tuple(dn.collapsed_slice_dims)
    window = tuple(s for d, s in enumerate(sizes) if d not in collapsed)

    def one(*starts: Any) -> tuple[Array, Array]:
        s = squeeze(dynamic_slice(m, starts, sizes), collapsed)
        return s.data, s.indices
    data, indices = vmap(one, in_axes=tuple(0 if b else None for b in mapped))(*columns)
    count = int(np.prod(start_indices.shape[:-1], dtype=np.int64))
    out = SparseBuffers(data, indices, SparseInfo((count, *window)))
    out = reshape(out, (*start_indices.shape[:-1], *window), None)
    if out.shape:
        offsets = tuple(dn.offset_dims)
        batch_dims = tuple(d for d in range(len(out_aval.shape)) if d not in offsets)
        perm = np.zeros(len(out.shape), int)
        perm[np.array(batch_dims + offsets, int)] = np.arange(len(out.shape))
        if set(perm[:len(batch_dims)].tolist()) != set(range(len(batch_dims))):
            # The permutation would move sparse dimensions into the batch ones.
            out = update_layout(out, n_batch=0, on_inefficient=None)
        out = transpose(out, perm.tolist())
    out = reshape(out, out_aval.shape, None)
    return out._replace(data=out.data.astype(out_aval.dtype))


# -- sparsify rules ------------------------------------------------------------------------

def _rev_rule(x: SparseValue, *, dimensions: Sequence[int]) -> list[Any]:
    return [fresh(rev(x.buffers, dimensions))]


def _dense_operands(what: str, xs: Sequence[Any]) -> None:
    if any(type(x) is SparseValue for x in xs):
        raise NotImplementedError(f"sparse rule for {what} with sparse indices is not "
                                  "implemented.")


def _dynamic_slice_rule(x: SparseValue, *starts: Any, slice_sizes: Sequence[int]
                        ) -> list[Any]:
    _dense_operands("dynamic_slice", starts)
    return [fresh(dynamic_slice(x.buffers, starts, slice_sizes))]


def _gather_rule(x: Any, indices: Any, *, dimension_numbers: GatherDimensionNumbers,
                 slice_sizes: Sequence[int], **params: Any) -> list[Any]:
    _dense_operands("gather", [indices])
    return [fresh(gather(x.buffers, indices, dimension_numbers, slice_sizes, **params))]


sparse_rules[P.rev_p] = _rev_rule
sparse_rules[P.dynamic_slice_p] = _dynamic_slice_rule
sparse_rules[P.gather_p] = _gather_rule

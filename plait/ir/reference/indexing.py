"""Reference rules of ``gather`` and the scatters (XLA semantics, in NumPy).

Both compute, for every element of the output (gather) or of the updates
(scatter), the operand position it reads or writes, with NumPy's broadcasting
index grids; the out-of-bounds policy is applied to each window's start.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from plait.ir import primitives as P
from plait.ir.interpreter import eval_jaxpr
from plait.ir.jaxpr import Jaxpr
from plait.ir.primitives.indexing import (
    GatherDimensionNumbers,
    GatherScatterMode,
    ScatterDimensionNumbers,
    default_fill_value,
    window_sizes,
)
from plait.ir.reference.elementwise import _def


def _starts(operand_shape: Sequence[int], sizes: Sequence[int], index_map: Sequence[int],
            operand_batching: Sequence[int], index_batching: Sequence[int],
            vectors: np.ndarray, batch: Sequence[np.ndarray],
            clamp: bool) -> tuple[list[Any], np.ndarray]:
    """The start of each window in every operand dimension, and whether it is in bounds.

    ``vectors`` holds the index vectors (last axis), ``batch`` the index grids of
    the indices' batch dimensions.
    """
    starts: list[Any] = [0] * len(operand_shape)
    ok = np.ones(vectors.shape[:-1], bool)
    for k, d in enumerate(index_map):
        s = vectors[..., k]
        hi = operand_shape[d] - sizes[d]
        ok &= (s >= 0) & (s <= hi)
        starts[d] = np.clip(s, 0, hi) if clamp else s
    for od, idim in zip(operand_batching, index_batching):
        starts[od] = batch[idim]
    return starts, ok


def _gather(operand: np.ndarray, indices: np.ndarray, *,
            dimension_numbers: GatherDimensionNumbers, slice_sizes: tuple[int, ...],
            indices_are_sorted: bool, unique_indices: bool, mode: GatherScatterMode,
            fill_value: Any) -> np.ndarray:
    dn = dimension_numbers
    kept = [d for d in range(operand.ndim)
            if d not in dn.collapsed_slice_dims and d not in dn.operand_batching_dims]
    rank = len(kept) + indices.ndim - 1
    batch_pos = [d for d in range(rank) if d not in dn.offset_dims]
    sizes = iter(slice_sizes[d] for d in kept)
    bsizes = iter(indices.shape[:-1])
    out_shape = tuple(next(sizes) if d in dn.offset_dims else next(bsizes) for d in range(rank))
    if 0 in out_shape:
        return np.zeros(out_shape, operand.dtype)
    grid = np.indices(out_shape, sparse=True)
    batch = [grid[d] for d in batch_pos]
    vectors = indices.astype(np.int64)[tuple(batch)]
    starts, ok = _starts(operand.shape, slice_sizes, dn.start_index_map,
                         dn.operand_batching_dims, dn.start_indices_batching_dims,
                         vectors, batch, clamp=True)
    for d, o in zip(kept, dn.offset_dims):
        starts[d] = starts[d] + grid[o]
    out = operand[tuple(np.broadcast_to(s, out_shape) for s in starts)]
    if mode == GatherScatterMode.FILL_OR_DROP:
        if fill_value is None:
            fill_value = default_fill_value(operand.dtype)
        out = np.where(ok, out, np.asarray(fill_value).astype(operand.dtype))
    return np.asarray(out)


_def(P.gather_p, _gather)


_COMBINE: dict[Any, Callable[..., Any]] = {
    P.scatter_add_p: np.add.at, P.scatter_sub_p: np.subtract.at,
    P.scatter_mul_p: np.multiply.at, P.scatter_min_p: np.minimum.at,
    P.scatter_max_p: np.maximum.at,
}


def _scatter_rule(prim: Any) -> Callable[..., np.ndarray]:
    def rule(operand: np.ndarray, indices: np.ndarray, updates: np.ndarray, *,
             dimension_numbers: ScatterDimensionNumbers, indices_are_sorted: bool,
             unique_indices: bool, mode: GatherScatterMode, update_jaxpr: Jaxpr | None,
             update_consts: tuple[()]) -> np.ndarray:
        dn = dimension_numbers
        out = np.array(operand)
        if updates.size == 0:
            return out
        grid = np.indices(updates.shape, sparse=True)
        batch = [grid[d] for d in range(updates.ndim) if d not in dn.update_window_dims]
        vectors = indices.astype(np.int64)[tuple(batch)]
        sizes = window_sizes(dn, operand.ndim, updates.shape)
        starts, ok = _starts(operand.shape, sizes, dn.scatter_dims_to_operand_dims,
                             dn.operand_batching_dims, dn.scatter_indices_batching_dims,
                             vectors, batch, clamp=mode == GatherScatterMode.CLIP)
        window = [d for d in range(operand.ndim)
                  if d not in dn.inserted_window_dims and d not in dn.operand_batching_dims]
        for d, u in zip(window, dn.update_window_dims):
            starts[d] = starts[d] + grid[u]
        if mode == GatherScatterMode.CLIP:
            ok = np.ones_like(ok)
        keep = np.broadcast_to(ok, updates.shape)
        where = tuple(np.broadcast_to(s, updates.shape)[keep] for s in starts)
        values = updates[keep]
        combine = _COMBINE.get(prim)
        if combine is not None:
            combine(out, where, values)
        elif update_jaxpr is None:
            out[where] = values
        else:  # scatter_apply: the combiner runs once per update, in order
            for pos, v in zip(zip(*where), values):
                out[pos] = eval_jaxpr(update_jaxpr, [], out[pos], v)[0]
        return out
    return rule


for _p in P.SCATTERS:
    _def(_p, _scatter_rule(_p))

"""The BCOO layout: what a sparse array's buffers are, and the checks and helpers every
sparse operation shares.

A BCOO array of shape ``batch + sparse + dense`` is two buffers:

* ``data``: ``batch + (nse,) + dense``, the stored values;
* ``indices``: ``batch + (nse, n_sparse)``, the sparse coordinates of each value.

A batch dimension of either buffer may have size 1 (shared by every batch element).
An index row equal to the sparse shape (or anywhere out of bounds) marks a padding
entry, which every operation ignores; duplicate rows stand for the sum of their values.

The operations of this package work on :class:`SparseBuffers` (the two buffers and
:class:`SparseInfo`); :class:`~plait.frontend.sparse.bcoo.BCOO` wraps them for users.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, NamedTuple, TypeVar

import numpy as np

from plait.frontend import lax
from plait.frontend import numpy as pnp
from plait.frontend.api.vmap import vmap
from plait.frontend.core.array_base import Array

__all__ = ["Shape", "SparseInfo", "SparseBuffers", "Layout", "SparseEfficiencyError",
           "SparseEfficiencyWarning", "CuSparseEfficiencyWarning", "validate",
           "validate_indices", "broadcasting_vmap", "nfold_vmap", "remaining",
           "tuple_replace", "sparse_fill"]

Shape = tuple[int, ...]
R = TypeVar("R")


class SparseEfficiencyError(ValueError):
    """A layout change would store many explicit zeros (``bcoo_update_layout`` with
    ``on_inefficient='error'``)."""


class SparseEfficiencyWarning(UserWarning):
    """The warning form of :class:`SparseEfficiencyError`."""


class CuSparseEfficiencyWarning(SparseEfficiencyWarning):
    """JAX warns with this when a GPU sparse kernel is unavailable; plait runs on the CPU
    and never does, but JAX programs may filter it."""


class SparseInfo(NamedTuple):
    """The static part of a BCOO array (the aux data of its pytree)."""

    shape: Shape
    indices_sorted: bool = False
    unique_indices: bool = False


class Layout(NamedTuple):
    """How the dimensions of a BCOO array split between its buffers."""

    n_batch: int
    n_sparse: int
    n_dense: int
    nse: int


class SparseBuffers(NamedTuple):
    """A BCOO array as the operations of this package take and return it."""

    data: Array
    indices: Array
    info: SparseInfo

    @property
    def shape(self) -> Shape:
        return self.info.shape

    @property
    def layout(self) -> Layout:
        return validate(self.data, self.indices, self.info.shape)


def validate_indices(indices: Any, shape: Sequence[int]) -> Layout:
    """The layout of BCOO ``indices`` for an array of ``shape``.

    Raises:
      TypeError: ``indices`` are not integers.
      ValueError: their shape does not fit ``shape``.
    """
    shape = tuple(shape)
    if not np.issubdtype(indices.dtype, np.integer):
        raise TypeError(f"BCOO: expected indices of an integer dtype, but got {indices.dtype}")
    if len(indices.shape) < 2:
        raise ValueError("BCOO: expected indices of shape batch + (nse, n_sparse), but got "
                         f"shape {tuple(indices.shape)}")
    nse, n_sparse = indices.shape[-2:]
    n_batch = len(indices.shape) - 2
    n_dense = len(shape) - n_batch - n_sparse
    if n_dense < 0:
        raise ValueError(f"BCOO: indices of shape {tuple(indices.shape)} have {n_batch} batch "
                         f"and {n_sparse} sparse dimensions, more than the {len(shape)} of "
                         f"shape={shape}")
    if any(s1 not in (1, s2) for s1, s2 in zip(indices.shape[:n_batch], shape[:n_batch])):
        raise ValueError("indices batch dimensions not compatible for "
                         f"indices.shape={tuple(indices.shape)}, shape={shape}")
    return Layout(n_batch, n_sparse, n_dense, nse)


def validate(data: Any, indices: Any, shape: Sequence[int]) -> Layout:
    """The layout of BCOO buffers for an array of ``shape`` (see :func:`validate_indices`).

    Raises:
      ValueError: the shape of ``data`` does not fit the indices and ``shape``.
    """
    layout = validate_indices(indices, shape)
    n_batch, n_sparse, n_dense, nse = layout
    shape = tuple(shape)
    if any(s1 not in (1, s2) for s1, s2 in zip(data.shape[:n_batch], shape[:n_batch])):
        raise ValueError("data batch dimensions not compatible for "
                         f"data.shape={tuple(data.shape)}, shape={shape}")
    if tuple(data.shape[n_batch:]) != (nse,) + shape[n_batch + n_sparse:]:
        raise ValueError(f"Invalid data.shape={tuple(data.shape)} for nse={nse}, "
                         f"n_batch={n_batch}, n_dense={n_dense}: expected "
                         f"{(nse,) + shape[n_batch + n_sparse:]} after the batch dimensions")
    return layout


def sparse_fill(shape: Sequence[int], layout: Layout, dtype: Any) -> Array:
    """The index row of padding entries: the sparse shape."""
    return pnp.array(shape[layout.n_batch:layout.n_batch + layout.n_sparse], dtype)


def remaining(items: Sequence[int], *taken: Sequence[int]) -> list[int]:
    """``items`` not in any of ``taken``, in order."""
    gone = {i for t in taken for i in t}
    return [i for i in items if i not in gone]


def tuple_replace(tup: Sequence[Any], index: int, value: Any) -> tuple[Any, ...]:
    return tuple(value if i == index else t for i, t in enumerate(tup))


def broadcasting_vmap(fun: Callable[..., R], in_axes: int | Sequence[int | None] = 0,
                      out_axes: Any = 0) -> Callable[..., R]:
    """``vmap`` over the leading axis of the arguments mapped in ``in_axes`` (0 or
    ``None``), where an axis of size 1 is shared rather than mapped: batch dimensions of
    BCOO buffers may be broadcast."""
    def batched(*args: Any) -> R:
        axes = [in_axes] * len(args) if isinstance(in_axes, int) else list(in_axes)
        sizes = [a.shape[0] for a, ax in zip(args, axes) if ax is not None]
        size = max(sizes)
        if size > 1:
            if any(s not in (1, size) for s in sizes):
                raise ValueError(f"BCOO: batch dimensions of sizes {sizes} do not broadcast")
            shared = [ax is not None and a.shape[0] == 1 for a, ax in zip(args, axes)]
            args = tuple(lax.squeeze(a, (0,)) if s else a for a, s in zip(args, shared))
            axes = [None if s else ax for ax, s in zip(axes, shared)]
        return vmap(fun, in_axes=tuple(axes), out_axes=out_axes)(*args)
    return batched


def nfold_vmap(fun: Callable[..., R], n: int, *, broadcasted: bool = True,
               in_axes: int | Sequence[int | None] = 0) -> Callable[..., R]:
    """``fun`` mapped over ``n`` leading axes of its (positional, array) arguments
    (``in_axes``: 0, or ``None`` for an argument passed whole); with ``broadcasted``, an
    axis of size 1 is shared by every element rather than mapped."""
    axes = in_axes if isinstance(in_axes, int) else tuple(in_axes)
    for _ in range(n):
        fun = broadcasting_vmap(fun, axes) if broadcasted else vmap(fun, in_axes=axes)
    return fun

"""``ragged_dot`` and ``ragged_dot_general``: matrix products over groups of
consecutive slices along one "ragged" dimension (mixture-of-experts layers), as
``jax.lax.ragged_dot`` and ``jax.lax.ragged_dot_general``.

Built the way JAX 0.10.2 lowers them off TPU: the operand is spread over a new
leading group dimension, each group keeping only its own slices, and one
``dot_general`` contracts (or keeps) the group dimension, so the numbers are JAX's
and every transformation comes from those of the masking and the product.  (JAX
stages one ``ragged_dot_general`` equation instead; see ``docs/numpy.md``.)

The three modes, by the kind of the lhs ragged dimension (``g`` groups):

- non-contracting ``m``: ``[b.., m, k] x [g, b.., k, n] -> [b.., m, n]``, each row
  multiplied by its group's matrix;
- contracting ``k``: ``[b.., m, k] x [b.., k, n] -> [g, b.., m, n]``, one product
  per group over its own stretch of ``k``;
- batch ``b``: an ordinary batched product (JAX ignores the group sizes there).
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from typing import Any

from plait.frontend.core.array_base import Array
from plait.frontend.core.promotion import promote_types
from plait.frontend.lax.names import RaggedDotDimensionNumbers
from plait.frontend.lax.ops import (
    _dtype_of,
    _shape_of,
    bitwise_and,
    broadcast_in_dim,
    broadcasted_iota,
    convert_element_type,
    cumsum,
    dot_general,
    full,
    le,
    lt,
    select,
    sub,
    transpose,
)
from plait.ir import dtypes as dt
from plait.ir.errors import ArgumentError

__all__ = ["ragged_dot", "ragged_dot_general"]


class _Mode(enum.Enum):
    NONCONTRACTING = "non-contracting"
    CONTRACTING = "contracting"
    BATCH = "batch"


_BASIC = RaggedDotDimensionNumbers((((1,), (1,)), ((), ())), (0,), (0,))


def ragged_dot(lhs: Any, rhs: Any, group_sizes: Any, precision: Any = None,
               preferred_element_type: Any = None, group_offset: Any = None,
               out_sharding: Any = None) -> Array:
    """``out[i] = lhs[i] @ rhs[g]`` for the rows ``i`` of group ``g``: ``lhs`` is
    ``[m, k]``, ``rhs`` ``[groups, k, n]``, ``group_sizes`` ``[groups]`` integers (the
    groups take consecutive rows; rows past their sum give zeros).

    Raises:
      ArgumentError: the shapes do not fit (a ``TypeError``).
      NotImplementedError: ``group_offset`` or ``out_sharding`` is given.
    """
    ls, rs, gs = _shape_of(lhs), _shape_of(rhs), _shape_of(group_sizes)
    if len(ls) != 2 or len(rs) != 3 or len(gs) != 1 or ls[1] != rs[1] or gs[0] != rs[0]:
        raise ArgumentError(f"ragged_dot: expected lhs [m, k], rhs [groups, k, n] and "
                            f"group_sizes [groups], but got lhs {list(ls)}, rhs {list(rs)}, "
                            f"group_sizes {list(gs)}")
    return ragged_dot_general(lhs, rhs, group_sizes, _BASIC, precision, preferred_element_type,
                              group_offset, out_sharding)


def ragged_dot_general(lhs: Any, rhs: Any, group_sizes: Any,
                       ragged_dot_dimension_numbers: RaggedDotDimensionNumbers,
                       precision: Any = None, preferred_element_type: Any = None,
                       group_offset: Any = None, out_sharding: Any = None) -> Array:
    """A ``dot_general`` whose lhs has one ragged dimension split into consecutive
    groups of ``group_sizes`` (``[g]``, or ``[prefix.., g]`` with one set of sizes
    per index of the batch and outer dimensions before the ragged one), as
    ``jax.lax.ragged_dot_general``; see the module docstring for the three modes.

    Raises:
      ArgumentError: the dimension numbers, shapes or group sizes do not fit (a
        ``TypeError``).
      NotImplementedError: ``group_offset`` or ``out_sharding`` is given.
    """
    if group_offset is not None:
        raise NotImplementedError("ragged_dot_general: group_offset is not implemented (JAX "
                                  "supports it on TPU only)")
    if out_sharding is not None:
        raise NotImplementedError("ragged_dot_general: out_sharding is not implemented")
    dims = ragged_dot_dimension_numbers
    if not isinstance(dims, RaggedDotDimensionNumbers):
        raise ArgumentError(f"ragged_dot_general: expected a lax.RaggedDotDimensionNumbers, "
                            f"but got {type(dims).__name__}")
    ls, rs = _shape_of(lhs), _shape_of(rhs)
    mode, ragged = _mode(len(ls), dims)
    (lc, rc), (lb, rb) = dims.dot_dimension_numbers
    for kind, left, right in (("contracting", lc, rc), ("batch", lb, rb)):
        for i, j in zip(left, right, strict=True):
            if ls[i] != rs[j]:
                raise ArgumentError(f"ragged_dot_general: expected {kind} dimensions of equal "
                                    f"sizes, but got lhs {list(ls)} dimension {i} and rhs "
                                    f"{list(rs)} dimension {j}")
    prefix = _prefix(mode, len(ls), ragged, lb, lc)
    sizes = _group_sizes(group_sizes, [ls[i] for i in prefix])
    groups = _shape_of(sizes)[-1]
    _check_group_dims(mode, dims.rhs_group_dimensions, rs, rb, rc, groups)
    common = promote_types(_dtype_of(lhs), _dtype_of(rhs))  # (JAX promotes f16 @ f32)
    lhs, rhs = convert_element_type(lhs, common), convert_element_type(rhs, common)

    def product(a: Any, b: Any, dn: Any) -> Array:
        return dot_general(a, b, dn, precision=precision,
                           preferred_element_type=preferred_element_type)

    def up(ds: Sequence[int]) -> list[int]:
        return [d + 1 for d in ds]

    if mode is _Mode.BATCH:
        return product(lhs, rhs, dims.dot_dimension_numbers)
    spread = _spread(lhs, ragged, sizes, prefix)
    if mode is _Mode.NONCONTRACTING:
        return product(spread, rhs, ((up(lc) + [0], list(rc) + [dims.rhs_group_dimensions[0]]),
                                     (up(lb), list(rb))))
    rhs_ragged = rc[list(lc).index(ragged)]
    rhs_spread = _spread(rhs, rhs_ragged, sizes, _prefix(mode, len(rs), rhs_ragged, rb, rc))
    return product(spread, rhs_spread, ((up(lc), up(rc)), ([0] + up(lb), [0] + up(rb))))


def _mode(rank: int, dims: RaggedDotDimensionNumbers) -> tuple[_Mode, int]:
    if len(dims.lhs_ragged_dimensions) != 1:
        raise ArgumentError(f"ragged_dot_general: expected exactly one lhs ragged dimension, "
                            f"but got {list(dims.lhs_ragged_dimensions)}")
    ragged = dims.lhs_ragged_dimensions[0]
    if not 0 <= ragged < rank:
        raise ArgumentError(f"ragged_dot_general: expected the lhs ragged dimension in "
                            f"[0, {rank}) for an lhs of rank {rank}, but got {ragged}")
    (lc, _), (lb, _) = dims.dot_dimension_numbers
    if ragged in lc:
        return _Mode.CONTRACTING, ragged
    if ragged in lb:
        return _Mode.BATCH, ragged
    return _Mode.NONCONTRACTING, ragged


def _prefix(mode: _Mode, rank: int, ragged: int, batch: Sequence[int],
            contract: Sequence[int]) -> list[int]:
    """The dimensions a ``[prefix.., g]`` group-size array indexes (JAX's order)."""
    free = [d for d in range(rank) if d not in contract and d not in batch]
    if mode is _Mode.NONCONTRACTING:
        return list(batch) + free[:free.index(ragged)]
    if mode is _Mode.CONTRACTING:
        return list(batch) + list(contract)[:list(contract).index(ragged)]
    return list(batch)[:list(batch).index(ragged)]


def _group_sizes(group_sizes: Any, prefix_shape: list[int]) -> Any:
    """Check the group sizes and broadcast ``[g]`` to ``[prefix.., g]``."""
    shape, dtype = _shape_of(group_sizes), _dtype_of(group_sizes)
    if not dt.is_integer(dtype):
        raise ArgumentError(f"ragged_dot_general: expected integer group_sizes, but got "
                            f"{dtype.name}")
    if len(shape) == 0:
        raise ArgumentError("ragged_dot_general: expected group_sizes of rank 1 or more, but "
                            "got a scalar")
    want = (*prefix_shape, shape[-1])
    if len(shape) == 1 and not prefix_shape:
        return group_sizes
    if len(shape) == 1:
        return broadcast_in_dim(group_sizes, want, (len(want) - 1,))
    if tuple(shape) != want:
        raise ArgumentError(f"ragged_dot_general: expected group_sizes of shape {list(want)} "
                            f"(the batch and outer dimensions before the ragged one, then the "
                            f"groups), but got {list(shape)}")
    return group_sizes


def _check_group_dims(mode: _Mode, group_dims: Sequence[int], rs: Sequence[int],
                      rb: Sequence[int], rc: Sequence[int], groups: int) -> None:
    if mode is not _Mode.NONCONTRACTING:
        if group_dims:
            raise ArgumentError(f"ragged_dot_general: expected no rhs group dimension when the "
                                f"lhs ragged dimension is {mode.value}, but got "
                                f"{list(group_dims)}")
        return
    if len(group_dims) != 1:
        raise ArgumentError(f"ragged_dot_general: expected exactly one rhs group dimension "
                            f"when the lhs ragged dimension is non-contracting, but got "
                            f"{list(group_dims)}")
    g = group_dims[0]
    if not 0 <= g < len(rs) or g in rb or g in rc:
        raise ArgumentError(f"ragged_dot_general: expected the rhs group dimension to be a "
                            f"free dimension of the rhs (rank {len(rs)}, batch {list(rb)}, "
                            f"contracting {list(rc)}), but got {g}")
    if rs[g] != groups:
        raise ArgumentError(f"ragged_dot_general: expected rhs group dimension {g} of size "
                            f"{groups} (the number of groups), but got {rs[g]}")


def _spread(x: Any, dim: int, sizes: Any, prefix: Sequence[int]) -> Array:
    """``x`` (shape ``S``) spread to ``[g, *S]``: entry ``j`` keeps the slices of
    ``dim`` in group ``j`` (per index of the ``prefix`` dimensions) and zeros."""
    shape = (_shape_of(sizes)[-1], *_shape_of(x))
    # sizes is [prefix.., g]; broadcast_in_dim wants its target dimensions increasing
    order = sorted(range(len(prefix)), key=lambda i: prefix[i])
    perm = [len(prefix)] + order
    if perm != list(range(len(perm))):
        sizes = transpose(sizes, perm)
    target = [0] + [prefix[i] + 1 for i in order]
    ends = cumsum(sizes, axis=0)
    starts = sub(ends, sizes)
    at = broadcasted_iota(_dtype_of(sizes), shape, dim + 1)
    mine = bitwise_and(le(broadcast_in_dim(starts, shape, target), at),
                       lt(at, broadcast_in_dim(ends, shape, target)))
    spread = broadcast_in_dim(x, shape, range(1, len(shape)))
    return select(mine, spread, full(shape, 0, _dtype_of(x)))

"""``ragged_dot``: one matrix product per group of consecutive rows (mixture-of-experts
layers), as ``jax.lax.ragged_dot``.

Built the way JAX 0.10.2 lowers it off TPU: the rows of ``lhs`` are masked per group
and one ``dot_general`` contracts the group dimension too, so the numbers are JAX's
and every transformation comes from those of the masking and the product.  (JAX
stages one ``ragged_dot_general`` equation instead; see ``docs/numpy.md``.)
"""

from __future__ import annotations

from typing import Any

import numpy as np

from plait.frontend.core.array_base import Array
from plait.frontend.core.promotion import promote_types
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
)
from plait.ir import dtypes as dt
from plait.ir.errors import ArgumentError

__all__ = ["ragged_dot"]


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
    if group_offset is not None:
        raise NotImplementedError("ragged_dot: group_offset is not implemented (JAX supports "
                                  "it on TPU only)")
    if out_sharding is not None:
        raise NotImplementedError("ragged_dot: out_sharding is not implemented")
    ls, rs, gs = _shape_of(lhs), _shape_of(rhs), _shape_of(group_sizes)
    if len(ls) != 2 or len(rs) != 3 or len(gs) != 1 or ls[1] != rs[1] or gs[0] != rs[0]:
        raise ArgumentError(f"ragged_dot: expected lhs [m, k], rhs [groups, k, n] and "
                            f"group_sizes [groups], but got lhs {list(ls)}, rhs {list(rs)}, "
                            f"group_sizes {list(gs)}")
    if not dt.is_integer(_dtype_of(group_sizes)):
        raise ArgumentError(f"ragged_dot: expected integer group_sizes, but got "
                            f"{_dtype_of(group_sizes).name}")
    groups, (m, k) = rs[0], ls
    sizes = convert_element_type(group_sizes, np.int32)
    ends = cumsum(sizes, axis=0)
    starts = sub(ends, sizes)
    shape = (groups, m, k)
    row = broadcasted_iota(np.int32, shape, 1)
    mine = (le(broadcast_in_dim(starts, shape, (0,)), row),
            lt(row, broadcast_in_dim(ends, shape, (0,))))
    common = promote_types(_dtype_of(lhs), _dtype_of(rhs))  # (JAX promotes f16 @ f32)
    lhs, rhs = convert_element_type(lhs, common), convert_element_type(rhs, common)
    spread = broadcast_in_dim(lhs, shape, (1, 2))
    masked = select(bitwise_and(*mine), spread, full(shape, 0, common))
    return dot_general(masked, rhs, (((2, 0), (1, 0)), ((), ())), precision=precision,
                       preferred_element_type=preferred_element_type)

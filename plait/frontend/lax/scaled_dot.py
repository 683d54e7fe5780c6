"""``scaled_dot``: ``(lhs * lhs_scale) @ (rhs * rhs_scale)`` with block scales along the
contracted dimensions (the quantized matrix products of float8 models), as
``jax.lax.scaled_dot``.

Built as JAX 0.10.2 computes it where the platform has no native kernel (its
``xla.scaled_dot`` composite): each scale is repeated over its block of the contracted
dimension, operands and scales are rounded to bfloat16 and multiplied, and one
``dot_general`` contracts them in ``preferred_element_type`` (bfloat16 by default).
(JAX stages one ``scaled_dot`` equation, which has no derivative; plait stages its
operations, which differentiate.)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from plait.frontend.core.array_base import Array
from plait.frontend.core.host_values import value_aval
from plait.frontend.core.x64_warnings import check_user_dtype
from plait.frontend.lax.ops import (
    broadcast_in_dim,
    convert_element_type,
    dot_general,
    full,
    mul,
    reshape,
)
from plait.ir import dtypes as dt

__all__ = ["scaled_dot"]


def _check_scale(side: str, shape: tuple[int, ...], scale: tuple[int, ...],
                 contracting: Sequence[int]) -> None:
    for i, size in enumerate(shape):
        if i in contracting:
            if size % scale[i] != 0:
                raise TypeError(f"{side} contracting dim {i} of size {size} must be divisible "
                                f"by its scale's dim size {scale[i]}.")
            if size // scale[i] < 2:
                raise TypeError(f"The ratio of {side} contracting dim {i} to its scale's dim "
                                f"size ({size // scale[i]}) must be at least 2.")
        elif scale[i] != size:
            raise TypeError(f"{side} dim {i} of size {size} does not match scale dim size "
                            f"{scale[i]}.")


def _check(lhs: tuple[int, ...], rhs: tuple[int, ...], lhs_scale: tuple[int, ...] | None,
           rhs_scale: tuple[int, ...] | None, dimension_numbers: Any) -> None:
    (lc, rc), (lb, rb) = dimension_numbers
    ranks = {len(lhs), len(rhs)} | {len(s) for s in (lhs_scale, rhs_scale) if s is not None}
    if len(ranks) != 1:
        raise TypeError(f"All input tensors must have the same rank. Got lhs rank: {len(lhs)} "
                        f"rhs rank: {len(rhs)} lhs_scale rank: "
                        f"{'N/A' if lhs_scale is None else len(lhs_scale)} rhs_scale rank: "
                        f"{'N/A' if rhs_scale is None else len(rhs_scale)}.")
    if len(lb) != len(rb):
        raise TypeError(f"LHS and RHS must have the same number of batch dimensions, got "
                        f"{len(lb)} and {len(rb)}.")
    if len(lc) != len(rc):
        raise TypeError(f"LHS and RHS must have the same number of contracting dimensions, "
                        f"got {len(lc)} and {len(rc)}.")
    for i, j in zip(lb, rb):
        sizes = {lhs[i], rhs[j]} | {s[k] for s, k in ((lhs_scale, i), (rhs_scale, j))
                                    if s is not None}
        if len(sizes) != 1:
            raise TypeError(f"All input tensors must have the same batch dimension size for "
                            f"batch dims ({i}, {j}).")
    for i, j in zip(lc, rc):
        if lhs[i] != rhs[j]:
            raise TypeError(f"LHS contracting dim {i} of size {lhs[i]} does not match RHS "
                            f"contracting dim {j} of size {rhs[j]}.")
    if lhs_scale is not None:
        _check_scale("LHS", lhs, lhs_scale, lc)
    if rhs_scale is not None:
        _check_scale("RHS", rhs, rhs_scale, rc)


def _repeat_blocks(scale: Any, shape: tuple[int, ...], contracting: Sequence[int]) -> Array:
    """``scale`` with each entry repeated over its block of the contracted dimensions."""
    for i in contracting:
        current = value_aval(scale).shape
        if current[i] != shape[i]:
            block = shape[i] // current[i]
            widened = (*current[:i + 1], block, *current[i + 1:])
            kept = [d for d in range(len(widened)) if d != i + 1]
            scale = broadcast_in_dim(scale, widened, kept)
            scale = reshape(scale, (*current[:i], shape[i], *current[i + 1:]))
    out: Array = scale
    return out


def scaled_dot(lhs: Any, rhs: Any, *, lhs_scale: Any = None, rhs_scale: Any = None,
               dimension_numbers: Any = None, preferred_element_type: Any = None) -> Array:
    """``(lhs * lhs_scale) @ (rhs * rhs_scale)`` by ``dimension_numbers`` (as
    ``dot_general``'s; by default, a batched matrix product over the last two dimensions),
    each scale of an operand's rank with its contracted dimensions a divisor (at most
    half) of the operand's: every scale entry multiplies its block.  A missing scale is
    1.  The product is computed in bfloat16 and returned as ``preferred_element_type``
    (bfloat16 by default).

    Raises:
      TypeError: operands of rank below 2 with the default dimension numbers, or shapes
        that do not fit (the message names the dimension).
    """
    ls, rs = value_aval(lhs).shape, value_aval(rhs).shape
    if dimension_numbers is None:
        if len(ls) < 2:
            raise TypeError("scaled_dot does not support 0-rank and 1-rank operands.")
        n = len(ls)
        dimension_numbers = (((n - 1,), (n - 2,)), (tuple(range(n - 2)), tuple(range(n - 2))))
    _check(ls, rs, None if lhs_scale is None else value_aval(lhs_scale).shape,
           None if rhs_scale is None else value_aval(rhs_scale).shape, dimension_numbers)
    (lc, rc), _ = dimension_numbers
    out_dtype = check_user_dtype(dt.bfloat16 if preferred_element_type is None
                                 else preferred_element_type, "scaled_dot")

    def scaled(x: Any, shape: tuple[int, ...], scale: Any, contracting: Sequence[int]) -> Any:
        if scale is None:  # (JAX's stand-in: ones, in float8_e8m0fnu)
            ones = tuple(1 if d in contracting else s for d, s in enumerate(shape))
            scale = convert_element_type(full(ones, 1.0, dt.bfloat16),
                                         np.dtype(dt.float8_e8m0fnu))
        scale = convert_element_type(_repeat_blocks(scale, shape, contracting), dt.bfloat16)
        return mul(convert_element_type(x, dt.bfloat16), scale)

    return dot_general(scaled(lhs, ls, lhs_scale, lc), scaled(rhs, rs, rhs_scale, rc),
                       dimension_numbers, preferred_element_type=out_dtype)

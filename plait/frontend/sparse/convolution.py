"""The convolution of sparse arrays (JAX 0.10.2's ``bcoo_conv_general_dilated``) and its
``sparsify`` rule.

JAX supports one case, and so does plait: a one-dimensional convolution of a single
image with a single kernel (operand shapes ``(1, 1, n)`` and ``(1, 1, k)``), unit
strides and dilations, either operand sparse.  Every pair of stored elements (one of
each operand) contributes its product at output position ``i - j + padding_low``, so
the result stores ``nse(lhs) * nse(rhs)`` elements (duplicates not summed).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from plait.frontend import lax
from plait.frontend import numpy as pnp
from plait.frontend.api.make_jaxpr import make_jaxpr
from plait.frontend.core.arguments import ShapeDtypeStruct
from plait.frontend.core.array_base import Array
from plait.frontend.sparse.layout import SparseBuffers, SparseInfo
from plait.frontend.sparse.restructure import update_layout
from plait.frontend.sparse.sparsify import SparseValue, fresh, sparse_rules
from plait.ir import primitives as P

__all__ = ["conv_general_dilated"]


def _flat(x: SparseBuffers | Array, index_dtype: Any) -> tuple[Array, Array, int]:
    """An operand of shape ``(1, 1, n)`` as the data and positions of its stored elements
    (out-of-bounds ones zeroed), and ``n``."""
    if isinstance(x, SparseBuffers):
        m = update_layout(x, n_batch=2, n_dense=0, on_inefficient=None)
        data, indices = lax.squeeze(m.data, (0, 1)), lax.squeeze(m.indices, (0, 1))[:, 0]
        return pnp.where(indices < m.shape[-1], data, 0), indices, m.shape[-1]
    data = lax.squeeze(x, (0, 1))
    return data, lax.iota(index_dtype, data.shape[0]), data.shape[0]


def _shape_dtype(x: SparseBuffers | Array) -> ShapeDtypeStruct:
    return ShapeDtypeStruct(x.shape, x.data.dtype if isinstance(x, SparseBuffers) else x.dtype)


def conv_general_dilated(lhs: SparseBuffers | Array, rhs: SparseBuffers | Array,
                         **params: Any) -> SparseBuffers:
    """``lax.conv_general_dilated(lhs, rhs, **params)`` with either operand sparse, for the
    one case JAX supports (see the module docstring).

    Raises:
      NotImplementedError: the convolution is another case.
      TypeError, ValueError: ``lax.conv_general_dilated``'s checks of the arguments.
    """
    # The dense function's own checks, and its padding resolved ('SAME' to numbers).
    traced = make_jaxpr(lambda a, b: lax.conv_general_dilated(a, b, **params))(
        _shape_dtype(lhs), _shape_dtype(rhs))
    p = traced.jaxpr.eqns[-1].params
    spatial = len(lhs.shape) - 2
    if p["lhs_dilation"] != (1,) * spatial:
        raise NotImplementedError("bcoo convolution with lhs_dilation.")
    if p["rhs_dilation"] != (1,) * spatial:
        raise NotImplementedError("bcoo convolution with rhs_dilation.")
    if p["window_strides"] != (1,) * spatial:
        raise NotImplementedError("bcoo convolution with non-unit window_strides.")
    if p["batch_group_count"] != 1 or p["feature_group_count"] != 1:
        raise NotImplementedError("bcoo convolution with non-unit group counts.")
    if spatial != 1 or tuple(lhs.shape[:2]) != (1, 1) or tuple(rhs.shape[:2]) != (1, 1):
        raise NotImplementedError("bcoo convolution: expected operands of shape (1, 1, n), "
                                  f"but got shapes {tuple(lhs.shape)} and {tuple(rhs.shape)}")
    sparse = [x for x in (lhs, rhs) if isinstance(x, SparseBuffers)]
    index_dtype = sparse[0].indices.dtype if sparse else np.dtype(np.int32)
    (low, high), = p["padding"]
    lhs_data, lhs_pos, n = _flat(lhs, index_dtype)
    rhs_data, rhs_pos, k = _flat(rhs, index_dtype)
    data = (lhs_data[:, None] * rhs_data[None, :]).ravel()
    positions = (lhs_pos[:, None] + (low - rhs_pos)[None, :]).ravel()
    # Positions left of the output hold products that fall off it: zeroed at position 0.
    before = positions < 0
    positions = pnp.where(before, 0, positions)
    data = pnp.where(before, 0, data)
    size = max(0, n + int(low) + int(high) - k + 1)
    return SparseBuffers(lax.expand_dims(data, (0, 1)),
                         lax.expand_dims(positions, (0, 1, 3)), SparseInfo((1, 1, size)))


def _conv_rule(lhs: Any, rhs: Any, **params: Any) -> list[Any]:
    def buffers(x: Any) -> Any:
        return x.buffers if type(x) is SparseValue else x
    return [fresh(conv_general_dilated(buffers(lhs), buffers(rhs), **_conv_args(params)))]


def _conv_args(params: dict[str, Any]) -> dict[str, Any]:
    """An equation's parameters as ``lax.conv_general_dilated``'s keyword arguments."""
    names: Sequence[str] = ("window_strides", "padding", "lhs_dilation", "rhs_dilation",
                            "dimension_numbers", "feature_group_count", "batch_group_count",
                            "precision", "preferred_element_type")
    return {n: params[n] for n in names if n in params}


sparse_rules[P.conv_general_dilated_p] = _conv_rule

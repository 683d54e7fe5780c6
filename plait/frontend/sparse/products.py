"""Products with BCOO arrays: ``dot_general`` of a sparse and a dense array (either way
round), of two sparse arrays, a dense ``dot_general`` sampled at sparse indices, and
elementwise products.

As JAX 0.10.2 computes them: a sparse-dense contraction gathers the rows of the dense
operand each stored element meets, multiplies, and scatter-adds into the result, so the
sums are taken in the same order as JAX's and give the same numbers.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import partial
from typing import Any

import numpy as np

from plait.frontend import lax
from plait.frontend import numpy as pnp
from plait.frontend.api.make_jaxpr import eval_shape
from plait.frontend.core.arguments import ShapeDtypeStruct
from plait.frontend.core.array_base import Array
from plait.frontend.sparse.convert import extract, sum_duplicates
from plait.frontend.sparse.layout import (
    Shape,
    SparseBuffers,
    SparseInfo,
    nfold_vmap,
    remaining,
    tuple_replace,
    validate,
    validate_indices,
)
from plait.frontend.sparse.restructure import update_layout
from plait.ir.primitives import Precision

__all__ = ["DimensionNumbers", "dot_general_shape", "dot_general", "rdot_general",
           "dot_general_sampled", "spdot_general", "multiply_dense", "multiply_sparse"]

DimensionNumbers = tuple[tuple[tuple[int, ...], tuple[int, ...]],
                         tuple[tuple[int, ...], tuple[int, ...]]]


def _normalized(dimension_numbers: Any) -> DimensionNumbers:
    (lc, rc), (lb, rb) = dimension_numbers
    def ints(ds: Any) -> tuple[int, ...]:
        return tuple(int(d) for d in np.atleast_1d(ds))  # (JAX accepts a bare int)
    return (ints(lc), ints(rc)), (ints(lb), ints(rb))


def dot_general_shape(lhs_shape: Shape, lhs_dtype: Any, rhs_shape: Shape, rhs_dtype: Any,
                      dimension_numbers: DimensionNumbers,
                      preferred_element_type: Any = None) -> ShapeDtypeStruct:
    """The result type of the dense ``lax.dot_general``; its errors for bad operands.

    Raises:
      TypeError: the dimension numbers do not fit the shapes.
    """
    out: ShapeDtypeStruct = eval_shape(
        partial(lax.dot_general, dimension_numbers=dimension_numbers,
                preferred_element_type=preferred_element_type),
        ShapeDtypeStruct(lhs_shape, lhs_dtype), ShapeDtypeStruct(rhs_shape, rhs_dtype))
    return out


def dot_general(lhs: SparseBuffers, rhs: Array, dimension_numbers: Any,
                preferred_element_type: Any = None) -> Array:
    """``lax.dot_general`` of sparse ``lhs`` and dense ``rhs``.

    Raises:
      TypeError: the operands do not fit the dimension numbers.
      NotImplementedError: a batch dimension of ``lhs`` is not one of its BCOO batch
        dimensions, or a contracting dimension is dense.
    """
    dims = _normalized(dimension_numbers)
    (lhs_contract, rhs_contract), (lhs_batch, rhs_batch) = dims
    data, indices, info = lhs
    n_batch, n_sparse, _, _ = validate(data, indices, info.shape)
    out = dot_general_shape(info.shape, data.dtype, rhs.shape, rhs.dtype, dims,
                            preferred_element_type)
    if lhs_batch and max(lhs_batch) >= n_batch:
        raise NotImplementedError(
            "bcoo_dot_general batch dimensions must be among the batch dimensions in the "
            f"sparse representation.\ngot lhs_batch={lhs_batch}, n_batch={n_batch}")
    if any(d >= n_batch + n_sparse for d in lhs_contract):
        raise NotImplementedError("bcoo_dot_general: contracting over dense dimensions.")
    contract_b = [(lc, rc) for lc, rc in zip(lhs_contract, rhs_contract) if lc < n_batch]
    contract_s = [(lc, rc) for lc, rc in zip(lhs_contract, rhs_contract) if lc >= n_batch]
    lhs_contract_b = [lc for lc, _ in contract_b]
    lhs_contract_s = [lc - n_batch for lc, _ in contract_s]

    # Batch dimensions in the order: dot batch, free, contracted (the last ones reach the
    # per-element product below); sparse index columns: contracted first.
    if lhs_batch or lhs_contract_b:
        perm = [*lhs_batch, *remaining(range(n_batch), lhs_batch, lhs_contract_b),
                *lhs_contract_b]
        data = pnp.transpose(data, [*perm, *range(n_batch, data.ndim)])
        indices = pnp.transpose(indices, [*perm, *range(n_batch, indices.ndim)])
    if lhs_contract_s:
        indices = indices[..., np.array([*lhs_contract_s,
                                         *remaining(range(n_sparse), lhs_contract_s)])]
    rhs = pnp.transpose(rhs, [*rhs_batch, *(rc for _, rc in contract_b),
                              *(rc for _, rc in contract_s),
                              *remaining(range(rhs.ndim), rhs_batch, rhs_contract)])
    n_contract_s = len(lhs_contract_s)
    product_batch = list(range(len(contract_b) + bool(contract_s)))

    def one(out_array: Array, d: Array, i: Array, r: Array) -> Array:
        cols = [i[..., k] for k in range(n_sparse)]
        right, out_cols = cols[:n_contract_s], cols[n_contract_s:]
        if right:
            if i.ndim > 2:  # contracted batch dimensions: index those of ``r`` too
                grids = pnp.meshgrid(*(pnp.arange(n) for n in i.shape[:-1]), indexing="ij")
                right = [*grids[:i.ndim - 2], *right]
            r = r.at[tuple(right)].get(mode="fill", fill_value=0)
        prod = lax.dot_general(d, r, (([], []), (product_batch, product_batch)),
                               preferred_element_type=preferred_element_type)
        if out_cols:
            return out_array.at[tuple(out_cols)].add(prod, mode="drop")
        return pnp.sum(prod, tuple(range(prod.ndim - out_array.ndim)), dtype=out_array.dtype)

    n_mapped = n_batch - len(contract_b)
    # rhs gets size-1 axes for the free batch dimensions of lhs: shared, not mapped.
    rhs = lax.expand_dims(rhs, range(len(rhs_batch), n_mapped))
    return nfold_vmap(one, n_mapped)(pnp.zeros(out.shape, out.dtype), data, indices, rhs)


def rdot_general(lhs: Array, rhs: SparseBuffers, dimension_numbers: Any,
                 preferred_element_type: Any = None) -> Array:
    """``lax.dot_general`` of dense ``lhs`` and sparse ``rhs`` (see :func:`dot_general`)."""
    (lc, rc), (lb, rb) = _normalized(dimension_numbers)
    result = dot_general(rhs, lhs, ((rc, lc), (rb, lb)), preferred_element_type)
    n_swap = len(rhs.shape) - len(lc)
    return lax.transpose(result, (*range(len(lb)), *range(n_swap, result.ndim),
                                  *range(len(lb), n_swap)))


def dot_general_sampled(a: Array, b: Array, indices: Array,
                        dimension_numbers: Any) -> Array:
    """The BCOO data of ``lax.dot_general(a, b)`` at ``indices``: only the sampled
    elements are computed in the cases JAX computes them alone (outer products and
    matrix products of matrices), the whole product otherwise.

    Raises:
      TypeError, ValueError: the operands or ``indices`` do not fit.
    """
    dims = _normalized(dimension_numbers)
    (lhs_contract, rhs_contract), (lhs_batch, rhs_batch) = dims
    a, b, indices = pnp.asarray(a), pnp.asarray(b), pnp.asarray(indices)
    out = dot_general_shape(a.shape, a.dtype, b.shape, b.dtype, dims)
    validate_indices(indices, out.shape)
    n_batch = indices.ndim - 2
    if (not (lhs_contract or rhs_contract or lhs_batch or rhs_batch) and a.ndim == b.ndim == 1
            and indices.shape[-1] + n_batch == 2):
        return _sampled_outer(a, b, indices)
    if (len(lhs_contract) == 1 and not lhs_batch and a.ndim == b.ndim == 2
            and indices.shape[-1] + n_batch == 2):
        return _sampled_matmul(a, b, indices, dims)
    return extract(indices, lax.dot_general(a, b, dims, precision=Precision.HIGHEST))


def _sampled_outer(a: Array, b: Array, indices: Array) -> Array:
    n_batch = indices.ndim - 2
    if n_batch == 0:
        return (a.at[indices[:, 0]].get(mode="fill", fill_value=0)
                * b.at[indices[:, 1]].get(mode="fill", fill_value=0))
    if n_batch == 1:
        return a[:, None] * b.at[indices[..., 0]].get(mode="fill", fill_value=0)
    outer = a[:, None, None] * b[None, :, None]
    return lax.broadcast_in_dim(outer, (a.shape[0], b.shape[0], indices.shape[-2]), (0, 1, 2))


def _sampled_matmul(a: Array, b: Array, indices: Array, dims: DimensionNumbers) -> Array:
    (lhs_contract, rhs_contract), _ = dims
    n_batch = indices.ndim - 2
    # Each operand's free dimension becomes a batch dimension of the product.
    lhs_free = [1] if lhs_contract[0] == 0 else [0]
    rhs_free = [1] if rhs_contract[0] == 0 else [0]
    both = (slice(None), slice(None))
    if n_batch == 0:
        a = a.at[tuple_replace(both, lhs_free[0], indices[:, 0])].get(mode="fill",
                                                                      fill_value=0)
        b = b.at[tuple_replace(both, rhs_free[0], indices[:, 1])].get(mode="fill",
                                                                      fill_value=0)
        return lax.dot_general(a, b, ((lhs_contract, rhs_contract), (lhs_free, rhs_free)),
                               precision=Precision.HIGHEST)
    if n_batch == 1:
        b = b.at[tuple_replace(both, rhs_free[0], indices[..., 0])].get(mode="fill",
                                                                        fill_value=0)
        contract = (2,) if rhs_contract[0] == 1 else rhs_contract
        return lax.dot_general(a, b, ((lhs_contract, contract), (lhs_free, rhs_free)),
                               precision=Precision.HIGHEST)
    full = lax.dot_general(a, b, dims, precision=Precision.HIGHEST)
    return lax.broadcast_in_dim(lax.expand_dims(full, (2,)), (*full.shape, indices.shape[-2]),
                                (0, 1, 2))


def spdot_general(lhs: SparseBuffers, rhs: SparseBuffers, dimension_numbers: Any,
                  preferred_element_type: Any = None) -> SparseBuffers:
    """``lax.dot_general`` of two sparse arrays, sparse: every pair of stored elements
    whose contracted indices agree contributes, duplicates summed.

    Raises:
      TypeError: the operands do not fit the dimension numbers.
      NotImplementedError: an operand has dense dimensions, a batch dimension is not a
        BCOO batch dimension, or a contracting dimension is not a sparse one.
      ValueError: ``rhs`` has free batch dimensions while ``lhs`` has free sparse ones.
    """
    dims = _normalized(dimension_numbers)
    (lhs_contract, rhs_contract), (lhs_batch, rhs_batch) = dims
    lay_l, lay_r = lhs.layout, rhs.layout
    out = dot_general_shape(lhs.shape, lhs.data.dtype, rhs.shape, rhs.data.dtype, dims,
                            preferred_element_type)
    if lay_l.n_dense or lay_r.n_dense:
        raise NotImplementedError("bcoo_spdot_general with dense dimensions.")
    if ((lhs_batch and max(lhs_batch) >= lay_l.n_batch)
            or (rhs_batch and max(rhs_batch) >= lay_r.n_batch)):
        raise NotImplementedError("bcoo_spdot_general: batch_dims must correspond to batch "
                                  "dimensions of the sparse representation.")
    for contract, lay in ((lhs_contract, lay_l), (rhs_contract, lay_r)):
        if contract and (min(contract) < lay.n_batch
                         or max(contract) >= lay.n_batch + lay.n_sparse):
            raise NotImplementedError("bcoo_spdot_general only supports contraction of "
                                      "sparse indices.")
    if lay_r.n_batch > len(rhs_batch) and lay_l.n_sparse > len(lhs_contract):
        raise ValueError("bcoo_spdot_general: cannot have unused batch dims on rhs with "
                         "unused sparse dims on lhs.")
    out_nse = ((lay_l.nse if lay_l.n_sparse > len(lhs_contract) else 1)
               * (lay_r.nse if lay_r.n_sparse > len(rhs_contract) else 1))
    out_n_batch = lay_l.n_batch + lay_r.n_batch - len(lhs_batch)
    out_nse = min(out_nse, math.prod(out.shape[out_n_batch:]))

    def batch_first(m: SparseBuffers, batch: Sequence[int], n_batch: int
                    ) -> tuple[Array, Array]:
        perm = [*batch, *remaining(range(n_batch), batch)]
        return (pnp.transpose(m.data, [*perm, *range(n_batch, m.data.ndim)]),
                pnp.transpose(m.indices, [*perm, *range(n_batch, m.indices.ndim)]))
    lhs_data, lhs_indices = batch_first(lhs, lhs_batch, lay_l.n_batch)
    rhs_data, rhs_indices = batch_first(rhs, rhs_batch, lay_r.n_batch)
    one = partial(_spdot_one, lhs_shape=lhs.shape[lay_l.n_batch:],
                  rhs_shape=rhs.shape[lay_r.n_batch:],
                  lhs_contract=[d - lay_l.n_batch for d in lhs_contract],
                  rhs_contract=[d - lay_r.n_batch for d in rhs_contract], out_nse=out_nse,
                  dtype=out.dtype)
    # Mapped innermost first: the free batch dimensions of rhs, of lhs, then the dot batch.
    f = nfold_vmap(one, lay_r.n_batch - len(rhs_batch), in_axes=(None, None, 0, 0))
    f = nfold_vmap(f, lay_l.n_batch - len(lhs_batch), in_axes=(0, 0, None, None))
    f = nfold_vmap(f, len(lhs_batch))
    data, indices = f(lhs_data, lhs_indices, rhs_data, rhs_indices)
    return SparseBuffers(data, indices, SparseInfo(tuple(out.shape)))


def _spdot_one(lhs_data: Array, lhs_indices: Array, rhs_data: Array, rhs_indices: Array, *,
               lhs_shape: Shape, rhs_shape: Shape, lhs_contract: list[int],
               rhs_contract: list[int], out_nse: int, dtype: Any) -> tuple[Array, Array]:
    out_shape = (*(s for i, s in enumerate(lhs_shape) if i not in lhs_contract),
                 *(s for i, s in enumerate(rhs_shape) if i not in rhs_contract))

    def columns(indices: Array, cols: Sequence[int]) -> Array:
        return indices[:, np.array(cols, dtype=int)]
    lhs_i, rhs_i = columns(lhs_indices, lhs_contract), columns(rhs_indices, rhs_contract)
    lhs_j = columns(lhs_indices, remaining(range(len(lhs_shape)), lhs_contract))
    rhs_j = columns(rhs_indices, remaining(range(len(rhs_shape)), rhs_contract))
    # Every pair of stored elements: those whose contracted indices agree (both in
    # bounds) give a product at their free indices.
    overlap = pnp.all(lhs_i[:, None] == rhs_i[None, :], axis=-1)
    lhs_ok = pnp.all(lhs_i < pnp.array([lhs_shape[d] for d in lhs_contract], lhs_i.dtype),
                     axis=-1)
    rhs_ok = pnp.all(rhs_i < pnp.array([rhs_shape[d] for d in rhs_contract], rhs_i.dtype),
                     axis=-1)
    data = pnp.where(overlap & lhs_ok[:, None] & rhs_ok[None, :],
                     lhs_data[:, None] * rhs_data[None, :], 0).ravel().astype(dtype)
    n_l = lhs_j.shape[-1]
    indices = pnp.zeros((lhs_data.shape[0], rhs_data.shape[0], n_l + rhs_j.shape[-1]),
                        pnp.result_type(lhs_indices, rhs_indices))
    indices = indices.at[:, :, :n_l].set(lhs_j[:, None])
    indices = indices.at[:, :, n_l:].set(rhs_j[None, :])
    indices = indices.reshape(data.shape[0], indices.shape[-1])
    out = sum_duplicates(SparseBuffers(data, indices, SparseInfo(out_shape)), out_nse)
    return out.data, out.indices


def multiply_dense(m: SparseBuffers, v: Any) -> Array:
    """The data of ``m * v`` (elementwise, with ``m``'s indices), ``v`` dense.

    Raises:
      NotImplementedError: ``v`` broadcasts to more than ``m``'s shape.
    """
    data, indices, info = m
    v = pnp.asarray(v)
    shape = info.shape
    if v.ndim == 0:
        return lax.mul(data, v)
    if tuple(v.shape) == shape:
        # (Products distribute over duplicates: no need to merge them first.)
        return lax.mul(data, extract(indices, v))
    if lax.broadcast_shapes(tuple(v.shape), shape) != shape:
        raise NotImplementedError(
            "multiplication between sparse and dense is only implemented for cases where "
            f"the output shape matches the sparse matrix shape. Got shape={shape}, "
            f"v.shape={tuple(v.shape)}")
    v = lax.expand_dims(v, range(len(shape) - v.ndim))
    layout = validate(data, indices, shape)

    def one(d: Array, i: Array, w: Array) -> Array:
        where = tuple(i[:, k] if s != 1 else 0 for k, s in enumerate(w.shape[:i.shape[1]]))
        return d * w[where]
    return nfold_vmap(one, layout.n_batch)(data, indices, v)


def multiply_sparse(lhs: SparseBuffers, rhs: SparseBuffers) -> SparseBuffers:
    """``lhs * rhs`` elementwise, both sparse: an entry per pair of stored elements at the
    same index (the other pairs are padding).

    Raises:
      TypeError: the arrays differ in rank.
      NotImplementedError: they differ in the number of dense dimensions.
    """
    lay_l, lay_r = lhs.layout, rhs.layout
    if len(lhs.shape) != len(rhs.shape):
        raise TypeError("bcoo_multiply_sparse: arrays must have same number of dimensions, "
                        f"got {lhs.shape}, {rhs.shape}")
    if lay_l.n_dense != lay_r.n_dense:
        raise NotImplementedError("bcoo_multiply_sparse: arrays with differing numbers of "
                                  f"dense dimensions: {lay_l}, {lay_r}")
    out_shape = tuple(lax.broadcast_shapes(lhs.shape, rhs.shape))
    n_batch = min(lay_l.n_batch, lay_r.n_batch)
    one = partial(_multiply_sparse_one, lhs_shape=lhs.shape[n_batch:],
                  rhs_shape=rhs.shape[n_batch:])
    data, indices = nfold_vmap(one, n_batch)(lhs.data, lhs.indices, rhs.data, rhs.indices)
    return SparseBuffers(data, indices, SparseInfo(out_shape))


def _multiply_sparse_one(lhs_data: Array, lhs_indices: Array, rhs_data: Array,
                         rhs_indices: Array, *, lhs_shape: Shape, rhs_shape: Shape
                         ) -> tuple[Array, Array]:
    lhs = SparseBuffers(lhs_data, lhs_indices, SparseInfo(lhs_shape))
    rhs = SparseBuffers(rhs_data, rhs_indices, SparseInfo(rhs_shape))
    # One of the two has no batch dimensions left: unbatch the other.
    if lhs.layout.n_batch:
        lhs = update_layout(lhs, n_batch=0)
    elif rhs.layout.n_batch:
        rhs = update_layout(rhs, n_batch=0)
    n_sparse = lhs.layout.n_sparse
    dims = np.array([i for i, (s1, s2) in enumerate(zip(lhs_shape[:n_sparse],
                                                        rhs_shape[:n_sparse]))
                     if s1 != 1 and s2 != 1], dtype=int)
    nse_l, nse_r = lhs.layout.nse, rhs.layout.nse
    same = pnp.all(lhs.indices[:, None, dims] == rhs.indices[None, :, dims], axis=-1)
    i_l, i_r = pnp.nonzero(same, size=nse_l * nse_r, fill_value=(nse_l, nse_r))
    data = (lhs.data.at[i_l].get(mode="fill", fill_value=0)
            * rhs.data.at[i_r].get(mode="fill", fill_value=0))
    indices = pnp.maximum(
        lhs.indices.at[i_l].get(mode="fill", fill_value=max(lhs_shape, default=0)),
        rhs.indices.at[i_r].get(mode="fill", fill_value=max(rhs_shape, default=0)))
    return data, indices

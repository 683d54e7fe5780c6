"""The BCSR array (JAX 0.10.2's ``jax.experimental.sparse.BCSR``: batched compressed
rows) and the functions of JAX's ``bcsr`` module, with their ``sparsify`` rules.

Each function converts the BCSR buffers to BCOO ones (:mod:`.bcsr_layout`), applies the
BCOO operation, and converts back, as JAX does: the results are JAX's values, and the
BCSR buffers JAX's.  A :class:`BCSR` is a pytree (children ``data``, ``indices``,
``indptr``), so it passes through ``jit``, ``vmap`` and ``grad``.  Its operators are
those JAX's BCSR has: ``@`` both ways and indexing, through :func:`~.bcoo.sparsify`
with the rules registered here (JAX's ``sparse_rules_bcsr``: zero-preserving unary
functions, ``dot_general``, ``broadcast_in_dim``, ``concatenate``, ``stack``,
``todense`` and custom-JVP calls); the others raise ``NotImplementedError``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

from plait.frontend import lax
from plait.frontend import numpy as pnp
from plait.frontend.core.array_base import Array
from plait.frontend.core.tracing import Tracer
from plait.frontend.core.tree_util import register_pytree_node_class
from plait.frontend.numpy._core import check_arraylike
from plait.frontend.sparse import bcsr_layout, convert, products, restructure
from plait.frontend.sparse.base import JAXSparse
from plait.frontend.sparse.bcoo import BCOO, mapped_shape, sparsify, wrap
from plait.frontend.sparse.control_flow import custom_call_rule
from plait.frontend.sparse.layout import Shape, SparseBuffers, SparseInfo
from plait.frontend.sparse.sparsify import (
    ZERO_PRESERVING_LINEAR,
    ZERO_PRESERVING_UNARY,
    SparseRule,
    SparseValue,
    format_rules,
    refuse_dense_power,
    todense_p,
)
from plait.ir import primitives as P
from plait.ir.primitive import Primitive as IRPrimitive

__all__ = ["BCSR", "bcsr_fromdense", "bcsr_todense", "bcsr_extract", "bcsr_dot_general",
           "bcsr_broadcast_in_dim", "bcsr_concatenate", "bcsr_sum_duplicates",
           "bcsr_eliminate_zeros"]

_TRACED_NSE = ("The error arose for the nse argument of bcsr_fromdense. In order for "
               "BCSR.fromdense() to be used in traced/compiled code, you must pass a concrete "
               "value to the nse (number of stored elements) argument.")


@register_pytree_node_class
class BCSR(JAXSparse):
    """A sparse array in batched compressed-row format, as JAX's ``BCSR``.

    ``BCSR((data, indices, indptr), shape=shape)``: ``data`` of shape
    ``batch + (nse,) + dense`` holds the stored values row by row, ``indices`` of shape
    ``batch + (nse,)`` their columns, and ``indptr`` of shape ``batch + (rows + 1,)``
    where each row's values start.  The two dimensions after the batch ones are sparse.

    Raises:
      TypeError: ``indices`` or ``indptr`` are not integers.
      ValueError: the buffers' shapes do not fit ``shape``.
    """

    data: Array
    indices: Array
    indptr: Array
    shape: Shape
    indices_sorted: bool
    unique_indices: bool

    def __init__(self, args: tuple[Any, Any, Any], *, shape: Sequence[int],
                 indices_sorted: bool = False, unique_indices: bool = False) -> None:
        super().__init__(args, shape=shape)
        data, indices, indptr = args
        self.data, self.indices, self.indptr = (pnp.asarray(data), pnp.asarray(indices),
                                                pnp.asarray(indptr))
        self.indices_sorted = indices_sorted
        self.unique_indices = unique_indices
        bcsr_layout.validate_bcsr(self.data, self.indices, self.indptr, self.shape)

    @property
    def _info(self) -> SparseInfo:
        return SparseInfo(self.shape, self.indices_sorted, self.unique_indices)

    @property
    def nse(self) -> int:
        """The number of stored elements (per batch element)."""
        return int(self.indices.shape[-1])

    @property
    def n_batch(self) -> int:
        return self.indices.ndim - 1

    @property
    def n_sparse(self) -> int:
        return 2

    @property
    def n_dense(self) -> int:
        return self.data.ndim - self.indices.ndim

    def __repr__(self) -> str:
        try:
            extra = f", nse={self.nse}"
            if self.n_batch:
                extra += f", n_batch={self.n_batch}"
            if self.n_dense:
                extra += f", n_dense={self.n_dense}"
            text = f"BCSR({self.dtype}{list(self.shape)}{extra})"
        except (AttributeError, IndexError, TypeError):  # (placeholder children)
            text = "BCSR(<invalid>)"
        if isinstance(self.data, Tracer):
            text = f"{type(self.data).__name__}[{text}]"
        return text

    def transpose(self, axes: Sequence[int] | None = None) -> Any:
        """Not implemented for BCSR (as in JAX): convert to BCOO first.

        Raises:
          NotImplementedError: always.
        """
        raise NotImplementedError("Transpose is not implemented for BCSR arrays; convert "
                                  "with to_bcoo() first")

    def tree_flatten(self) -> tuple[tuple[Array, Array, Array], SparseInfo]:
        return (self.data, self.indices, self.indptr), self._info

    @classmethod
    def tree_unflatten(cls, aux: SparseInfo, children: Sequence[Any]) -> BCSR:
        obj = object.__new__(cls)
        obj.data, obj.indices, obj.indptr = children
        obj.shape = _mapped_shape(aux.shape, obj.data, obj.indices, obj.indptr)
        obj.indices_sorted, obj.unique_indices = aux.indices_sorted, aux.unique_indices
        return obj

    @classmethod
    def _empty(cls, shape: Sequence[int], *, dtype: Any = None, index_dtype: Any = "int32",
               n_dense: int = 0, n_batch: int = 0, nse: int = 0) -> BCSR:
        """A BCSR array of zeros: ``nse`` padding entries per batch element (the public
        form is ``sparse.empty(..., sparse_format='bcsr')``).

        Raises:
          ValueError: a count is negative, or the layout does not leave 2 sparse
            dimensions.
        """
        shape = tuple(shape)
        if n_dense < 0 or n_batch < 0 or nse < 0:
            raise ValueError(f"Invalid inputs: shape={shape}, n_dense={n_dense}, "
                             f"n_batch={n_batch}, nse={nse}")
        if len(shape) - n_dense - n_batch != 2:
            raise ValueError("BCSR sparse.empty: must have 2 sparse dimensions, but got "
                             f"shape={shape} with n_batch={n_batch}, n_dense={n_dense}")
        batch, dense = shape[:n_batch], shape[n_batch + 2:]
        rows, columns = shape[n_batch:n_batch + 2]
        data = pnp.zeros((*batch, nse, *dense), dtype)
        indices = pnp.full((*batch, nse), pnp.array(columns), index_dtype)
        indptr = pnp.zeros((*batch, rows + 1), index_dtype)
        return cls((data, indices, indptr), shape=shape)

    def sum_duplicates(self, nse: int | None = None, remove_zeros: bool = True) -> BCSR:
        """The array with duplicate indices summed, sorted, and (with ``remove_zeros``)
        explicit zeros dropped; ``nse`` entries (needed under ``jit``).

        Raises:
          ValueError: ``nse`` is not given and the array is traced.
        """
        if remove_zeros:
            return bcsr_eliminate_zeros(self, nse=nse)
        return bcsr_sum_duplicates(self, nse=nse)

    @classmethod
    def fromdense(cls, mat: Any, *, nse: int | None = None, index_dtype: Any = np.int32,
                  n_dense: int = 0, n_batch: int = 0) -> BCSR:
        """The BCSR array of the nonzero elements of ``mat`` (see :func:`bcsr_fromdense`)."""
        return bcsr_fromdense(mat, nse=nse, index_dtype=index_dtype, n_dense=n_dense,
                              n_batch=n_batch)

    def todense(self) -> Array:
        """The dense array (duplicates summed)."""
        return bcsr_todense(self)

    def to_bcoo(self) -> BCOO:
        """The same array in BCOO format (the same entries, in the same order)."""
        return wrap(self._bcoo_buffers)

    @property
    def _bcoo_buffers(self) -> SparseBuffers:
        return bcsr_layout.to_bcoo_buffers(self.data, self.indices, self.indptr, self.shape)

    @classmethod
    def from_bcoo(cls, arr: BCOO) -> BCSR:
        """The BCSR array of a BCOO array with 2 sparse dimensions (its entries sorted
        first unless known sorted; the index dtype kept).

        Raises:
          TypeError: ``arr`` is not a BCOO array.
          NotImplementedError: ``arr`` does not have 2 sparse dimensions.
        """
        if not isinstance(arr, BCOO):
            raise TypeError(f"BCSR.from_bcoo: expected a BCOO array, but got {type(arr)}")
        return _from_buffers(arr._buffers)

    @classmethod
    def from_scipy_sparse(cls, mat: Any, *, index_dtype: Any = None, n_dense: int = 0,
                          n_batch: int = 0) -> BCSR:
        """The BCSR array of a 2-D ``scipy.sparse`` array (its CSR form's entries as they
        are stored).

        Raises:
          NotImplementedError: ``n_dense`` or ``n_batch`` is nonzero.
          ValueError: ``mat`` is not 2-D.
        """
        if n_dense != 0 or n_batch != 0:
            raise NotImplementedError("BCSR from_scipy_sparse with nonzero n_dense/n_batch.")
        if mat.ndim != 2:
            raise ValueError(f"BCSR from_scipy_sparse requires 2D array; {mat.ndim}D is given.")
        mat = mat.tocsr()
        index_dtype = index_dtype or np.int32
        return cls((pnp.asarray(mat.data), pnp.asarray(mat.indices).astype(index_dtype),
                    pnp.asarray(mat.indptr).astype(index_dtype)), shape=mat.shape)

    def __matmul__(self, other: Any) -> Any:
        return _matmul(self, other)

    def __rmatmul__(self, other: Any) -> Any:
        return _rmatmul(self, other)

    def __getitem__(self, index: Any) -> Any:
        """NumPy indexing made sparse: only what the BCSR rules keep sparse (``m[:]``,
        ``m[None]``); anything else raises ``NotImplementedError`` (as in JAX)."""
        return sparsify(lambda x: x[index])(self)


class _Shaped(NamedTuple):
    """A stand-in with only a shape (the BCOO indices a BCSR array's stand for)."""

    shape: tuple[int, ...]


def _mapped_shape(shape: Shape, data: Any, indices: Any, indptr: Any) -> Shape:
    """The shape of a BCSR array rebuilt from children whose rank differs from the
    recorded layout (``vmap`` maps pytree leaves): BCOO's rule (see
    :func:`~.bcoo.mapped_shape`), for the BCOO indices the BCSR ones stand for."""
    index_shape, ptr_shape = getattr(indices, "shape", None), getattr(indptr, "shape", None)
    if index_shape is None or ptr_shape is None or not 1 <= len(index_shape) == len(ptr_shape):
        return shape  # (not arrays: a tree of placeholders)
    batch = tuple(max(i, p) for i, p in zip(index_shape[:-1], ptr_shape[:-1]))
    return mapped_shape(shape, data, _Shaped((*batch, index_shape[-1], 2)))


def _from_buffers(m: SparseBuffers) -> BCSR:
    """The BCSR array of BCOO buffers (no flags, as JAX's ``BCSR.from_bcoo``)."""
    return BCSR(bcsr_layout.from_bcoo_buffers(m), shape=m.shape)


def bcsr_fromdense(mat: Any, *, nse: int | None = None, n_batch: int = 0, n_dense: int = 0,
                   index_dtype: Any = np.int32) -> BCSR:
    """The BCSR array of the nonzero elements of ``mat``, row by row, with ``n_batch``
    batch and ``n_dense`` dense dimensions (2 sparse ones remain) and ``nse`` stored
    elements per batch element (by default the largest count; fewer drop elements,
    more are padding).

    Raises:
      ConcretizationTypeError: ``nse`` is not given and ``mat`` is traced.
      ValueError: the layout does not leave 2 sparse dimensions.
      TypeError: ``index_dtype`` is not an integer dtype.
    """
    mat = pnp.asarray(mat)
    nse_value = convert.count_stored(mat, n_batch, n_dense) if nse is None else nse
    data, indices, indptr = bcsr_layout.fromdense(
        mat, nse=convert.concrete_nse(nse_value, _TRACED_NSE), n_batch=n_batch,
        n_dense=n_dense, index_dtype=index_dtype)
    return BCSR((data, indices, indptr), shape=mat.shape)


def bcsr_todense(mat: BCSR) -> Array:
    """The dense array of ``mat``: its stored elements placed, duplicates summed."""
    return bcsr_layout.todense(mat.data, mat.indices, mat.indptr, mat.shape)


def bcsr_extract(indices: Any, indptr: Any, mat: Any) -> Array:
    """The BCSR data of dense ``mat`` at ``indices`` and ``indptr`` (0 at padding).

    Raises:
      TypeError: an argument is not an array, or the buffers are not integers.
      ValueError: the buffers do not fit ``mat``'s shape.
    """
    check_arraylike("bcsr_extract", indices, indptr, mat)
    return bcsr_layout.extract(pnp.asarray(indices), pnp.asarray(indptr), pnp.asarray(mat))


def _ints(dims: Any) -> tuple[int, ...]:
    return tuple(int(d) for d in np.atleast_1d(dims))  # (JAX accepts a bare int)


def bcsr_dot_general(lhs: BCSR | Array, rhs: Array, *, dimension_numbers: Any,
                     precision: Any = None, preferred_element_type: Any = None,
                     out_sharding: Any = None) -> Array:
    """``lax.dot_general`` of a BCSR ``lhs`` and a dense ``rhs`` (or of two dense
    operands); the result is dense.  (``precision`` and ``out_sharding`` are ignored, as
    in JAX.)

    Raises:
      NotImplementedError: ``rhs`` is not a dense array or ``lhs`` neither BCSR nor
        dense (as in JAX); a batch dimension of ``lhs`` is not one of its BCSR batch
        dimensions; or a contracting dimension is dense.
      TypeError: the operands do not fit ``dimension_numbers``.
    """
    del precision, out_sharding
    dense = (np.ndarray, Array)
    if isinstance(rhs, dense) and isinstance(lhs, dense):
        return lax.dot_general(lhs, rhs, dimension_numbers,
                               preferred_element_type=preferred_element_type)
    if not (isinstance(rhs, dense) and isinstance(lhs, BCSR)):
        raise NotImplementedError(
            "bcsr_dot_general currently implemented for BCSR lhs and ndarray rhs, but got "
            f"lhs of type {type(lhs).__name__} and rhs of type {type(rhs).__name__}")
    rhs = pnp.asarray(rhs)
    (lhs_contract, rhs_contract), (lhs_batch, rhs_batch) = dimension_numbers
    dims = ((_ints(lhs_contract), _ints(rhs_contract)), (_ints(lhs_batch), _ints(rhs_batch)))
    pet = None if preferred_element_type is None else np.dtype(preferred_element_type)
    # (the dense product's errors first, as in JAX, then the sparse layout's)
    products.dot_general_shape(lhs.shape, lhs.dtype, rhs.shape, rhs.dtype, dims, pet)
    if dims[1][0] and max(dims[1][0]) >= lhs.n_batch:
        raise NotImplementedError(
            "bcsr_dot_general batch dimensions must be among the batch dimensions in the "
            f"sparse representation.\ngot lhs_batch={dims[1][0]}, n_batch={lhs.n_batch}")
    if any(d >= lhs.n_batch + 2 for d in dims[0][0]):
        raise NotImplementedError("bcsr_dot_general: contracting over dense dimensions.")
    return products.dot_general(lhs._bcoo_buffers, rhs, dims, pet)


def bcsr_broadcast_in_dim(mat: BCSR, *, shape: Shape, broadcast_dimensions: Sequence[int],
                          sharding: Any = None) -> BCSR:
    """``lax.broadcast_in_dim`` of ``mat`` (``sharding`` ignored, as in JAX): new leading
    dimensions are batch dimensions, new trailing ones dense.

    Raises:
      ValueError: ``broadcast_dimensions`` does not fit, or mixes batch, sparse and dense
        dimensions.
      NotImplementedError: the result would not have 2 sparse dimensions.
    """
    del sharding
    _check_operands([mat], "bcsr_broadcast_in_dim")
    return _from_buffers(restructure.broadcast_in_dim(mat._bcoo_buffers, tuple(shape),
                                                      broadcast_dimensions))


def bcsr_concatenate(operands: Sequence[BCSR], *, dimension: int) -> BCSR:
    """``lax.concatenate`` of BCSR arrays along a batch or sparse dimension; the arrays
    must have the same layout.

    Raises:
      ValueError: an operand is not a BCSR array, or the layouts differ.
      TypeError: the shapes do not concatenate.
      NotImplementedError: ``dimension`` is a dense dimension.
    """
    _check_operands(operands, "bcsr_concatenate")
    return _from_buffers(restructure.concatenate([op._bcoo_buffers for op in operands],
                                                 int(dimension)))


def _check_operands(operands: Sequence[Any], what: str) -> None:
    if not all(isinstance(op, BCSR) for op in operands):
        raise ValueError(f"{what}: expected BCSR arrays, but got operands of types "
                         f"{[type(op).__name__ for op in operands]}")


def bcsr_sum_duplicates(mat: BCSR, nse: int | None = None) -> BCSR:
    """``mat`` with duplicate indices summed into one entry each, sorted, padding last,
    with ``nse`` stored elements (needed under ``jit``; by default the number of
    distinct indices; fewer drop elements).

    Raises:
      ValueError: ``nse`` is not given and ``mat`` is traced.
    """
    return BCSR.from_bcoo(mat.to_bcoo().sum_duplicates(nse=nse, remove_zeros=False))


def bcsr_eliminate_zeros(mat: BCSR, nse: int | None = None) -> BCSR:
    """:func:`bcsr_sum_duplicates` after dropping the explicit zeros of ``mat``."""
    return BCSR.from_bcoo(mat.to_bcoo().sum_duplicates(nse=nse, remove_zeros=True))


_matmul = sparsify(pnp.matmul)
_rmatmul = sparsify(lambda a, b: pnp.matmul(b, a))

# -- sparsify rules (JAX's sparse_rules_bcsr) ---------------------------------------------

_rules: dict[IRPrimitive, SparseRule] = {}
format_rules[BCSR] = _rules


def _user(x: Any) -> Any:
    """An interpreter value as the public functions take it (a BCOO value as BCOO)."""
    return wrap(x.buffers) if type(x) is SparseValue else x


def _unary(prim: IRPrimitive, linear: bool) -> SparseRule:
    def rule(x: BCSR, **params: Any) -> list[Any]:
        if not linear and not x.unique_indices:
            # (a nonlinear function of the data of duplicates is not that of their sum)
            x = x.sum_duplicates(nse=x.nse, remove_zeros=False)
        return [BCSR((prim.bind(x.data, **params), x.indices, x.indptr), shape=x.shape,
                     indices_sorted=x.indices_sorted, unique_indices=x.unique_indices)]
    return rule


for _p in ZERO_PRESERVING_UNARY:
    _rules[_p] = _unary(_p, linear=False)
for _p in ZERO_PRESERVING_LINEAR:
    _rules[_p] = _unary(_p, linear=True)


def _integer_pow(x: BCSR, *, y: int) -> Sequence[Any]:
    refuse_dense_power(y)
    return _unary(P.integer_pow_p, linear=False)(x, y=y)


def _dot_general(lhs: Any, rhs: Any, **params: Any) -> list[Any]:
    return [bcsr_dot_general(_user(lhs), _user(rhs), **params)]


def _broadcast_in_dim(x: BCSR, **params: Any) -> list[Any]:
    return [bcsr_broadcast_in_dim(x, **params)]


def _concatenate(*xs: Any, dimension: int) -> list[Any]:
    return [bcsr_concatenate([_user(x) for x in xs], dimension=dimension)]


def _stack(*xs: Any, axis: int) -> list[Any]:
    ops = [_user(x) for x in xs]
    _check_operands(ops, "bcsr_concatenate")
    base = ops[0].shape
    new_shape = (*base[:axis], 1, *base[axis:])
    dims = [d if d < axis else d + 1 for d in range(len(base))]
    return [bcsr_concatenate([bcsr_broadcast_in_dim(x, shape=new_shape,
                                                    broadcast_dimensions=dims) for x in ops],
                             dimension=axis)]


def _todense(x: BCSR) -> list[Any]:
    return [x.todense()]


_rules[P.integer_pow_p] = _integer_pow
_rules[P.dot_general_p] = _dot_general
_rules[P.broadcast_in_dim_p] = _broadcast_in_dim
_rules[P.concatenate_p] = _concatenate
_rules[P.stack_p] = _stack
_rules[todense_p] = _todense
_rules[P.custom_jvp_call_p] = custom_call_rule

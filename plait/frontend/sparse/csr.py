"""The CSR and CSC matrices (JAX 0.10.2's ``jax.experimental.sparse.CSR``/``CSC``): a 2-D
sparse array held as ``data`` (the stored values), ``indices`` (their columns, for CSR)
and ``indptr`` (where each row's entries start in them, and where the last ends).

A CSC matrix is the CSR matrix of its transpose, with the same buffers: ``CSR.T`` is a
CSC matrix and ``CSC.T`` a CSR one, without copying.  Each operation converts the
compressed indices to COO rows (as JAX: an entry's row is the number of ``indptr``
values not past it, less one) and reuses :mod:`.coo`'s compositions, whose derivatives
are those of JAX's primitives.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeVar

import numpy as np

from plait.frontend import numpy as pnp
from plait.frontend.core.array_base import Array
from plait.frontend.core.tree_util import register_pytree_node_class
from plait.frontend.sparse.base import JAXSparse, Shape
from plait.frontend.sparse.coo import (
    buffers_matmat,
    buffers_matvec,
    buffers_todense,
    check_dense_matrix,
    check_index_dtype,
    check_indices,
    check_operand,
    fromdense_nonzeros,
    matmul_operands,
    static_nse,
    stored_values,
)

__all__ = ["CSR", "CSC", "csr_fromdense", "csr_todense", "csr_matvec", "csr_matmat"]

C = TypeVar("C", bound="_Compressed")


def csr_to_coo(indices: Array, indptr: Array) -> tuple[Array, Array]:
    """The COO row and column of each entry of CSR buffers (JAX's formula, so that
    malformed ``indptr`` give JAX's rows too)."""
    return pnp.cumsum(pnp.zeros_like(indices).at[indptr].add(1)) - 1, indices


def _check_csr(name: str, data: Array, indices: Array, indptr: Array, shape: Shape) -> None:
    # JAX's asserts (the abstract evaluation of its CSR primitives).
    if len(shape) != 2:
        raise AssertionError(f"{name}: expected a 2-D matrix, but got shape {shape}")
    if not data.ndim == indices.ndim == indptr.ndim == 1:
        raise AssertionError(f"{name}: expected 1-D data, indices and indptr, but got shapes "
                             f"{tuple(data.shape)}, {tuple(indices.shape)} and "
                             f"{tuple(indptr.shape)}")
    if data.shape != indices.shape:
        raise AssertionError(f"{name}: expected data and indices of one length, but got "
                             f"{data.shape[0]} and {indices.shape[0]}")
    if indices.dtype != indptr.dtype:
        raise AssertionError(f"{name}: expected indices and indptr of one dtype, but got "
                             f"{indices.dtype} and {indptr.dtype}")
    if indptr.shape[0] != shape[0] + 1:
        raise AssertionError(f"{name}: expected indptr of length {shape[0] + 1} (rows + 1) for "
                             f"shape {shape}, but got {indptr.shape[0]}")
    check_indices(name, indices, indptr)


def _rows_indptr(row: Array, n_rows: int, index_dtype: np.dtype[Any]) -> Array:
    """The ``indptr`` of entries in the rows ``row`` (sorted; ``n_rows`` for none)."""
    counts = pnp.bincount(row, length=n_rows).astype(index_dtype)
    return pnp.zeros(n_rows + 1, index_dtype).at[1:].set(pnp.cumsum(counts))


class _Compressed(JAXSparse):
    """The buffers, pytree and constructors CSR and CSC share: a CSC matrix is stored as
    the CSR matrix of its transpose."""

    data: Array
    indices: Array
    indptr: Array
    _compressed_axis: int
    """The dimension ``indptr`` runs along."""

    def __init__(self, args: tuple[Any, Any, Any], *, shape: Sequence[int]) -> None:
        super().__init__(args, shape=shape)
        data, indices, indptr = args
        self.data, self.indices, self.indptr = (pnp.asarray(data), pnp.asarray(indices),
                                                pnp.asarray(indptr))

    @property
    def _bufs(self) -> tuple[Array, Array, Array]:
        return self.data, self.indices, self.indptr

    @property
    def nse(self) -> int:
        """The number of stored elements."""
        return int(self.data.size)

    def tree_flatten(self) -> tuple[tuple[Array, Array, Array], Shape]:
        return self._bufs, self.shape

    @classmethod
    def tree_unflatten(cls: type[C], aux: Shape, children: Sequence[Any]) -> C:
        obj = object.__new__(cls)
        obj.data, obj.indices, obj.indptr = children
        obj.shape = aux
        return obj

    @classmethod
    def _empty(cls: type[C], shape: Sequence[int], *, dtype: Any = None,
               index_dtype: Any = "int32") -> C:
        """An all-zero matrix with no stored elements (``sparse.empty``'s case).

        Raises:
          ValueError: ``shape`` is not 2-D.
        """
        shape = tuple(shape)
        if len(shape) != 2:
            raise ValueError(f"{cls.__name__} must have ndim=2; got shape={shape}")
        return cls((pnp.empty(0, dtype), pnp.empty(0, index_dtype),
                    pnp.zeros(shape[cls._compressed_axis] + 1, index_dtype)), shape=shape)

    def _check_axes(self, axes: Sequence[int] | None) -> None:
        if axes is not None:  # (JAX asserts)
            raise AssertionError(f"{type(self).__name__}.transpose: expected axes=None, but "
                                 f"got {axes}")


@register_pytree_node_class
class CSR(_Compressed):
    """A 2-D sparse matrix in compressed-row format, as JAX's ``CSR``.

    ``CSR((data, indices, indptr), shape=shape)``: the entries of row ``i`` are
    ``data[indptr[i]:indptr[i + 1]]``, in the columns ``indices[indptr[i]:indptr[i + 1]]``;
    duplicates are summed.  The buffers are not checked here (as in JAX) but by the
    operations.

    JAX recommends BCOO over this format, which supports little beyond conversions and
    products with dense arrays.
    """

    _compressed_axis = 0

    @classmethod
    def fromdense(cls, mat: Any, *, nse: int | None = None, index_dtype: Any = np.int32
                  ) -> CSR:
        """The CSR matrix of the nonzeros of ``mat`` (see :func:`csr_fromdense`)."""
        return csr_fromdense(mat, nse=nse, index_dtype=index_dtype)

    @classmethod
    def _eye(cls, N: int, M: int, k: int, *, dtype: Any = None,  # noqa: N803  (JAX's)
             index_dtype: Any = "int32") -> CSR:
        """Ones on the ``k``-th diagonal of an ``N`` by ``M`` matrix (``sparse.eye``'s CSR
        case)."""
        diag_size = min(N, M - k) if k > 0 else min(N + k, M)
        if diag_size <= 0:
            return cls._empty((N, M), dtype=dtype, index_dtype=index_dtype)
        idx = pnp.arange(diag_size, dtype=index_dtype)
        indptr = _rows_indptr(idx - min(k, 0), N, np.dtype(index_dtype))
        return cls((pnp.ones(diag_size, dtype=dtype), idx + max(k, 0), indptr), shape=(N, M))

    def todense(self) -> Array:
        """The dense matrix (duplicates summed)."""
        return csr_todense(self)

    def transpose(self, axes: Sequence[int] | None = None) -> CSC:
        """The transposed matrix: the CSC matrix of the same buffers.

        Raises:
          AssertionError: ``axes`` is given (as in JAX).
        """
        self._check_axes(axes)
        return CSC(self._bufs, shape=self.shape[::-1])

    @property
    def T(self) -> CSC:
        """The transposed matrix (a CSC matrix)."""
        return self.transpose()

    def __matmul__(self, other: Any) -> Array:
        """The product with a dense vector or matrix (their dtypes promoted).

        Raises:
          NotImplementedError: ``other`` is sparse, or not 1-D or 2-D.
        """
        data, other = matmul_operands(self.data, other)
        return _product("CSR.__matmul__", data, self.indices, self.indptr, other, self.shape,
                        False, other.ndim)


@register_pytree_node_class
class CSC(_Compressed):
    """A 2-D sparse matrix in compressed-column format, as JAX's ``CSC``.

    ``CSC((data, indices, indptr), shape=shape)``: the entries of column ``j`` are
    ``data[indptr[j]:indptr[j + 1]]``, in the rows ``indices[indptr[j]:indptr[j + 1]]``.
    """

    _compressed_axis = 1

    @classmethod
    def fromdense(cls, mat: Any, *, nse: int | None = None, index_dtype: Any = np.int32
                  ) -> CSC:
        """The CSC matrix of the nonzeros of the 2-D ``mat``, in column-major order (see
        :func:`csr_fromdense`, applied to the transpose)."""
        mat = pnp.asarray(mat)
        # (Counted before transposing: a transpose of a constant is staged under jit.)
        nse = static_nse("csr_fromdense", nse, mat)
        return csr_fromdense(mat.T, nse=nse, index_dtype=index_dtype).T

    @classmethod
    def _eye(cls, N: int, M: int, k: int, *, dtype: Any = None,  # noqa: N803  (JAX's)
             index_dtype: Any = "int32") -> CSC:
        """Ones on the ``k``-th diagonal of an ``N`` by ``M`` matrix (``sparse.eye``'s CSC
        case)."""
        return CSR._eye(M, N, -k, dtype=dtype, index_dtype=index_dtype).T

    def todense(self) -> Array:
        """The dense matrix (duplicates summed)."""
        return csr_todense(self.T).T

    def transpose(self, axes: Sequence[int] | None = None) -> CSR:
        """The transposed matrix: the CSR matrix of the same buffers.

        Raises:
          AssertionError: ``axes`` is given (as in JAX).
        """
        self._check_axes(axes)
        return CSR(self._bufs, shape=self.shape[::-1])

    @property
    def T(self) -> CSR:
        """The transposed matrix (a CSR matrix)."""
        return self.transpose()

    def __matmul__(self, other: Any) -> Array:
        """The product with a dense vector or matrix (their dtypes promoted).

        Raises:
          NotImplementedError: ``other`` is sparse, or not 1-D or 2-D.
        """
        data, other = matmul_operands(self.data, other)
        return _product("CSC.__matmul__", data, self.indices, self.indptr, other,
                        self.shape[::-1], True, other.ndim)


def _product(name: str, data: Array, indices: Array, indptr: Array, operand: Any,
             shape: Shape, transpose: bool, ndim: int) -> Array:
    """The product of the CSR buffers' matrix of ``shape`` (transposed with
    ``transpose``) and a dense vector (``ndim`` 1) or matrix (``ndim`` 2)."""
    operand = pnp.asarray(operand)
    _check_csr(name, data, indices, indptr, shape)
    check_operand(name, data, operand, shape, transpose, ndim)
    row, col = csr_to_coo(indices, indptr)
    if ndim == 1:
        return buffers_matvec(data, row, col, operand, shape, transpose)
    return buffers_matmat(data, row, col, operand, shape, transpose)


def csr_todense(mat: CSR) -> Array:
    """The dense matrix of ``mat``: duplicates summed, out-of-bound entries dropped.

    Raises:
      AssertionError: the buffers do not fit together or ``mat.shape``.
      TypeError: the indices are not integers.
    """
    data, indices, indptr = mat._bufs
    _check_csr("csr_todense", data, indices, indptr, mat.shape)
    row, col = csr_to_coo(indices, indptr)
    return buffers_todense(data, row, col, mat.shape)


def csr_fromdense(mat: Any, *, nse: int | None = None, index_dtype: Any = np.int32) -> CSR:
    """The CSR matrix of the nonzeros of the 2-D ``mat``, in row-major order, with ``nse``
    stored elements: by default the number of nonzeros, fewer drop the last ones, more
    are padding (zeros in column 0, after the last row's entries).

    Raises:
      ConcretizationTypeError: ``nse`` is not given and ``mat`` is traced.
      AssertionError: ``mat`` is not 2-D.
      TypeError: ``nse`` or ``index_dtype`` is not an integer (type).
      ValueError: ``nse`` is negative, or ``mat`` is a bool array.
    """
    mat = pnp.asarray(mat)
    n = static_nse("csr_fromdense", nse, mat)
    index_dtype = check_index_dtype("csr_fromdense", index_dtype)
    check_dense_matrix("csr_fromdense", mat)
    n_rows = mat.shape[0]
    row, col, keep = fromdense_nonzeros(mat, n)
    indices = col.astype(index_dtype)
    indptr = _rows_indptr(pnp.where(keep, row, n_rows), n_rows, index_dtype)
    # JAX's tangent reads the dense tangent where its todense would place each entry.
    data = stored_values(mat, row, col, keep, csr_to_coo(indices, indptr)[0])
    return CSR((data, indices, indptr), shape=mat.shape)


def csr_matvec(mat: CSR, v: Any, transpose: bool = False) -> Array:
    """The product of ``mat`` (transposed with ``transpose``) and the vector ``v``, of the
    data's dtype (``mat @ v`` promotes them).

    Raises:
      AssertionError: the buffers do not fit together, or ``v`` is not a vector of the
        data's dtype and the matrix's width (height with ``transpose``).
      TypeError: the indices are not integers.
    """
    return _product("csr_matvec", mat.data, mat.indices, mat.indptr, v, mat.shape, transpose, 1)


def csr_matmat(mat: CSR, B: Any, *, transpose: bool = False) -> Array:  # noqa: N803  (JAX's)
    """The product of ``mat`` (transposed with ``transpose``) and the matrix ``B``, of the
    data's dtype (``mat @ B`` promotes them).

    Raises:
      AssertionError: the buffers do not fit together, or ``B`` is not a matrix of the
        data's dtype with as many rows as ``mat`` has columns (rows with ``transpose``).
      TypeError: the indices are not integers.
    """
    return _product("csr_matmat", mat.data, mat.indices, mat.indptr, B, mat.shape, transpose, 2)

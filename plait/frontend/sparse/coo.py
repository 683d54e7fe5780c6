"""The COO matrix (JAX 0.10.2's ``jax.experimental.sparse.COO``): a 2-D sparse array held
as three 1-D buffers, ``data`` (the stored values) and their ``row`` and ``col`` indices.

Duplicate entries stand for the sum of their values.  As in JAX, indices follow NumPy's
rules: a negative index counts from the end, and an entry whose index is out of bounds
is dropped by ``todense`` and the products (while the products read the dense operand
at the nearest in-bound index, as XLA's gather does).

JAX defines a primitive for each operation, with hand-written derivative rules; here each
is a composition of ``plait.numpy`` functions, written so that its derivatives are
JAX's: the scatters that place entries promise in-bound indices, so that their transposes
read cotangents at clamped indices as JAX's rules do, and :func:`stored_values` carries
JAX's tangent rule for the values ``fromdense`` extracts (padding entries included).
One exception: the reverse-mode derivative by the data of a product with the
*transposed* matrix (``transpose=True``, hence every ``CSC @ x``) is the derivative
here, where JAX 0.10.2's rule reads the cotangent at the columns and the operand at the
rows as if the matrix were not transposed (its forward mode is right).

The helpers on raw buffers (``buffers_todense``, ``buffers_matvec``, ...) are shared with
:mod:`.csr`, whose formats convert their indices to rows and columns and reuse them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

from plait.frontend import lax
from plait.frontend import numpy as pnp
from plait.frontend.api.custom_derivatives import custom_jvp
from plait.frontend.core.array_base import Array
from plait.frontend.core.tree_util import register_pytree_node_class
from plait.frontend.numpy._core import promote_dtypes
from plait.frontend.sparse.base import JAXSparse, Shape
from plait.frontend.sparse.convert import concrete_nse, count_stored
from plait.ir import dtypes as dt

__all__ = ["COO", "COOInfo", "coo_fromdense", "coo_todense", "coo_matvec", "coo_matmat"]


class COOInfo(NamedTuple):
    """The static part of a COO matrix (the aux data of its pytree)."""

    shape: Shape
    rows_sorted: bool = False
    cols_sorted: bool = False


# -- checks ---------------------------------------------------------------------------------
# JAX checks these with bare asserts in its primitives' abstract evaluation (or fails
# further in), so the exception types are JAX's; the messages say what was expected.


def check_index_dtype(name: str, index_dtype: Any) -> np.dtype[Any]:
    """``index_dtype`` as a NumPy dtype.

    Raises:
      TypeError: it is not an integer dtype (JAX accepts it, then fails at the first use
        of the indices).
    """
    dtype: np.dtype[Any] = np.dtype(index_dtype)
    if not np.issubdtype(dtype, np.integer):
        raise TypeError(f"{name}: expected an integer index_dtype, but got {dtype}")
    return dtype


def check_indices(name: str, *indices: Array) -> None:
    """Raises TypeError unless every one of ``indices`` has an integer dtype."""
    for idx in indices:
        if not np.issubdtype(idx.dtype, np.integer):
            raise TypeError(f"{name}: expected indices of an integer dtype, but got "
                            f"{idx.dtype}")


def static_nse(name: str, nse: Any, default_for: Array | None = None) -> int:
    """``nse`` as a Python int; with ``nse=None``, the number of nonzeros of
    ``default_for``.

    Raises:
      ConcretizationTypeError: ``nse`` (or the array counted) is traced.
      TypeError: ``nse`` is not an integer.
      ValueError: ``nse`` is negative.
    """
    message = (f"The error arose for the nse argument of {name}. In order for {name} to be "
               "used in traced/compiled code, you must pass a concrete value to the nse "
               "(number of stored elements) argument.")
    if nse is None:
        assert default_for is not None
        nse = count_stored(default_for, 0, 0)
    if isinstance(nse, int):
        value = int(nse)
    else:
        dtype = getattr(nse, "dtype", None)
        if dtype is None or not np.issubdtype(dtype, np.integer):
            raise TypeError(f"{name}: expected an integer nse, but got {nse!r}")
        value = concrete_nse(nse, message)
    if value < 0:
        raise ValueError(f"{name}: expected nse >= 0, but got nse={value}")
    return value


def check_dense_matrix(name: str, mat: Array) -> None:
    """Raises AssertionError unless ``mat`` is 2-D (JAX's assert), ValueError for a bool
    ``mat`` (which JAX 0.10.2 fails to lower)."""
    if mat.ndim != 2:
        raise AssertionError(f"{name}: expected a 2-D array, but got shape "
                             f"{tuple(mat.shape)}")
    if mat.dtype == np.bool_:
        raise ValueError(f"{name}: bool arrays are not supported (as in JAX 0.10.2, whose "
                         "lowering fails); convert the array to a numeric dtype first")


def check_operand(name: str, data: Array, operand: Array, shape: Shape, transpose: bool,
                  ndim: int) -> None:
    """Raises AssertionError unless the dense ``operand`` of a product with a sparse matrix
    of ``shape`` and ``data`` has ``ndim`` dimensions, the data's dtype and the length
    the product needs."""
    what = "v" if ndim == 1 else "B"
    if operand.ndim != ndim:
        raise AssertionError(f"{name}: expected a {ndim}-D {what}, but got shape "
                             f"{tuple(operand.shape)}")
    if operand.dtype != data.dtype:
        raise AssertionError(f"{name}: expected {what} of dtype {data.dtype} (the matrix "
                             f"data's), but got {operand.dtype}; mat @ {what} promotes them")
    length = shape[0] if transpose else shape[1]
    if operand.shape[0] != length:
        raise AssertionError(f"{name}: expected {what} of length {length} along its first "
                             f"dimension for a {shape[0]}x{shape[1]} matrix"
                             f"{' (transposed)' if transpose else ''}, but got shape "
                             f"{tuple(operand.shape)}")


def _check_coo_product(name: str, mat: COO) -> None:
    if not mat.data.shape == mat.row.shape == mat.col.shape:
        raise AssertionError(f"{name}: expected data, row and col of one shape, but got "
                             f"{tuple(mat.data.shape)}, {tuple(mat.row.shape)} and "
                             f"{tuple(mat.col.shape)}")
    if mat.row.dtype != mat.col.dtype:
        raise AssertionError(f"{name}: expected row and col of one dtype, but got "
                             f"{mat.row.dtype} and {mat.col.dtype}")
    if len(mat.shape) != 2:
        raise AssertionError(f"{name}: expected a 2-D matrix, but got shape {mat.shape}")


# -- operations on buffers ------------------------------------------------------------------


def buffers_todense(data: Array, row: Array, col: Array, shape: Shape) -> Array:
    """The dense matrix of COO buffers: duplicates summed, out-of-bound entries dropped.

    (The scatter promises in-bound indices: it drops the others all the same, and its
    transpose reads the cotangent at clamped indices, as JAX's ``coo_todense`` rule.)
    """
    return pnp.zeros(shape, data.dtype).at[row, col].add(data, mode="promise_in_bounds")


def buffers_matvec(data: Array, row: Array, col: Array, v: Array, shape: Shape,
                   transpose: bool) -> Array:
    """The product of the COO buffers' matrix (transposed with ``transpose``) and ``v``."""
    if transpose:
        row, col = col, row
    dv = data * v[col]
    return pnp.zeros(shape[1] if transpose else shape[0], dv.dtype).at[row].add(
        dv, mode="promise_in_bounds")


def buffers_matmat(data: Array, row: Array, col: Array, b: Array, shape: Shape,
                   transpose: bool) -> Array:
    """The product of the COO buffers' matrix (transposed with ``transpose``) and ``b``."""
    if transpose:
        row, col = col, row
    db = data[:, None] * b[col]
    return pnp.zeros((shape[1] if transpose else shape[0], b.shape[1]), db.dtype).at[row].add(
        db, mode="promise_in_bounds")


def _stored_values_fun(mat: Array, row: Array, col: Array, keep: Array,
                       tangent_row: Array) -> Array:
    del tangent_row  # (where the tangent rule reads)
    return pnp.where(keep, mat[row, col], pnp.zeros((), mat.dtype))


_stored_values = custom_jvp(_stored_values_fun)


@_stored_values.defjvp
def _stored_values_jvp(primals: tuple[Any, ...], tangents: tuple[Any, ...]
                       ) -> tuple[Array, Array]:
    mat, row, col, keep, tangent_row = primals
    # JAX's rule: the tangent at every entry, padding included (which JAX's fromdense
    # places at row 0, column 0 for COO, past the last row for CSR).
    return _stored_values(mat, row, col, keep, tangent_row), tangents[0][tangent_row, col]


def stored_values(mat: Array, row: Array, col: Array, keep: Array,
                  tangent_row: Array) -> Array:
    """``mat[row, col]`` where ``keep``, else 0: the data of ``fromdense``.

    Its derivative is JAX's: the tangent of ``mat`` read at ``(tangent_row, col)``
    everywhere, padding entries included.
    """
    if not dt.is_inexact(mat.dtype):
        return _stored_values_fun(mat, row, col, keep, tangent_row)
    out: Array = _stored_values(mat, row, col, keep, tangent_row)
    return out


def fromdense_nonzeros(mat: Array, nse: int) -> tuple[Array, Array, Array]:
    """The row and column indices (``int32``, or ``int64`` under x64) of the first ``nse``
    nonzeros of the 2-D ``mat`` in row-major order, padded with ``(0, 0)``, and which
    entries are real (not padding)."""
    row, col = pnp.nonzero(mat, size=nse)
    keep = pnp.arange(nse) < pnp.sum(mat != 0)
    return row, col, keep


# -- the class ------------------------------------------------------------------------------


@register_pytree_node_class
class COO(JAXSparse):
    """A 2-D sparse matrix in coordinate format, as JAX's ``COO``.

    ``COO((data, row, col), shape=shape)``: entry ``i`` holds ``data[i]`` at
    ``(row[i], col[i])``; duplicates are summed.  ``rows_sorted`` (``cols_sorted``)
    records that the entries are sorted by row (column).  The buffers are not checked
    here (as in JAX) but by the operations.

    JAX recommends BCOO over this format, which supports little beyond conversions and
    products with dense arrays.
    """

    data: Array
    row: Array
    col: Array
    _rows_sorted: bool
    _cols_sorted: bool

    def __init__(self, args: tuple[Any, Any, Any], *, shape: Sequence[int],
                 rows_sorted: bool = False, cols_sorted: bool = False) -> None:
        super().__init__(args, shape=shape)
        data, row, col = args
        self.data, self.row, self.col = pnp.asarray(data), pnp.asarray(row), pnp.asarray(col)
        self._rows_sorted = rows_sorted
        self._cols_sorted = cols_sorted

    @property
    def _info(self) -> COOInfo:
        return COOInfo(self.shape, self._rows_sorted, self._cols_sorted)

    @property
    def _bufs(self) -> tuple[Array, Array, Array]:
        return self.data, self.row, self.col

    @property
    def nse(self) -> int:
        """The number of stored elements."""
        return int(self.data.size)

    def tree_flatten(self) -> tuple[tuple[Array, Array, Array], COOInfo]:
        return self._bufs, self._info

    @classmethod
    def tree_unflatten(cls, aux: COOInfo, children: Sequence[Any]) -> COO:
        obj = object.__new__(cls)
        obj.data, obj.row, obj.col = children
        obj.shape = aux.shape
        obj._rows_sorted, obj._cols_sorted = aux.rows_sorted, aux.cols_sorted
        return obj

    @classmethod
    def fromdense(cls, mat: Any, *, nse: int | None = None, index_dtype: Any = np.int32
                  ) -> COO:
        """The COO matrix of the nonzeros of ``mat`` (see :func:`coo_fromdense`)."""
        return coo_fromdense(mat, nse=nse, index_dtype=index_dtype)

    @classmethod
    def _empty(cls, shape: Sequence[int], *, dtype: Any = None,
               index_dtype: Any = "int32") -> COO:
        """An all-zero matrix with no stored elements (``sparse.empty``'s COO case).

        Raises:
          ValueError: ``shape`` is not 2-D.
        """
        shape = tuple(shape)
        if len(shape) != 2:
            raise ValueError(f"COO must have ndim=2; got shape={shape}")
        data = pnp.empty(0, dtype)
        index = pnp.empty(0, index_dtype)
        return cls((data, index, index), shape=shape, rows_sorted=True, cols_sorted=True)

    @classmethod
    def _eye(cls, N: int, M: int, k: int, *, dtype: Any = None,  # noqa: N803  (JAX's)
             index_dtype: Any = "int32") -> COO:
        """Ones on the ``k``-th diagonal of an ``N`` by ``M`` matrix (``sparse.eye``'s COO
        case)."""
        diag_size = min(N, M - k) if k > 0 else min(N + k, M)
        if diag_size <= 0:
            return cls._empty((N, M), dtype=dtype, index_dtype=index_dtype)
        data = pnp.ones(diag_size, dtype=dtype)
        idx = pnp.arange(diag_size, dtype=index_dtype)
        return cls((data, idx - min(k, 0), idx + max(k, 0)), shape=(N, M), rows_sorted=True,
                   cols_sorted=True)

    def _sort_indices(self) -> COO:
        """The matrix with its entries sorted by row, then column (``self`` if the rows
        are sorted already)."""
        if self._rows_sorted:
            return self
        row, col, data = lax.sort((self.row, self.col, self.data), num_keys=2)
        return type(self)((data, row, col), shape=self.shape, rows_sorted=True)

    def todense(self) -> Array:
        """The dense matrix (duplicates summed)."""
        return coo_todense(self)

    def transpose(self, axes: Sequence[int] | None = None) -> COO:
        """The transposed matrix: rows and columns (and their sorted flags) swapped.

        Raises:
          NotImplementedError: ``axes`` is given (as in JAX).
        """
        if axes is not None:
            raise NotImplementedError("axes argument to transpose()")
        return COO((self.data, self.col, self.row), shape=self.shape[::-1],
                   rows_sorted=self._cols_sorted, cols_sorted=self._rows_sorted)

    @property
    def T(self) -> COO:
        """The transposed matrix."""
        return self.transpose()

    def __matmul__(self, other: Any) -> Array:
        """The product with a dense vector or matrix (their dtypes promoted).

        Raises:
          NotImplementedError: ``other`` is sparse, or not 1-D or 2-D.
        """
        data, other = matmul_operands(self.data, other)
        promoted = COO((data, self.row, self.col), shape=self.shape,
                       rows_sorted=self._rows_sorted, cols_sorted=self._cols_sorted)
        if other.ndim == 1:
            return coo_matvec(promoted, other)
        return coo_matmat(promoted, other)


def matmul_operands(data: Array, other: Any) -> tuple[Array, Array]:
    """The data and the dense operand of ``mat @ other``, promoted to one dtype.

    Raises:
      NotImplementedError: ``other`` is sparse, or not 1-D or 2-D (as in JAX).
    """
    if isinstance(other, JAXSparse):
        raise NotImplementedError("matmul between two sparse objects.")
    other = pnp.asarray(other)
    if other.ndim not in (1, 2):
        raise NotImplementedError(f"matmul with object of shape {tuple(other.shape)}")
    data, other = promote_dtypes("matmul", data, other)
    return data, other


# -- the functions --------------------------------------------------------------------------


def coo_todense(mat: COO) -> Array:
    """The dense matrix of ``mat``: duplicates summed, out-of-bound entries dropped.

    Raises:
      ValueError: the buffers are not 1-D of one length.
      TypeError: the indices are not integers.
    """
    data, row, col = mat._bufs
    if not data.ndim == row.ndim == col.ndim == 1 or not data.shape == row.shape == col.shape:
        raise ValueError(f"coo_todense: expected 1-D data, row and col of one length, but "
                         f"got shapes {tuple(data.shape)}, {tuple(row.shape)} and "
                         f"{tuple(col.shape)}")
    check_indices("coo_todense", row, col)
    return buffers_todense(data, row, col, mat.shape)


def coo_fromdense(mat: Any, *, nse: int | None = None, index_dtype: Any = np.int32) -> COO:
    """The COO matrix of the nonzeros of the 2-D ``mat``, in row-major order (rows
    sorted), with ``nse`` stored elements: by default the number of nonzeros, fewer drop
    the last ones, more are padding (zeros at ``(0, 0)``).

    Raises:
      ConcretizationTypeError: ``nse`` is not given and ``mat`` is traced.
      AssertionError: ``mat`` is not 2-D.
      TypeError: ``nse`` or ``index_dtype`` is not an integer (type).
      ValueError: ``nse`` is negative, or ``mat`` is a bool array.
    """
    mat = pnp.asarray(mat)
    n = static_nse("coo_fromdense", nse, mat)
    index_dtype = check_index_dtype("coo_fromdense", index_dtype)
    check_dense_matrix("coo_fromdense", mat)
    row, col, keep = fromdense_nonzeros(mat, n)
    data = stored_values(mat, row, col, keep, row)
    return COO((data, row.astype(index_dtype), col.astype(index_dtype)), shape=mat.shape,
               rows_sorted=True)


def coo_matvec(mat: COO, v: Any, transpose: bool = False) -> Array:
    """The product of ``mat`` (transposed with ``transpose``) and the vector ``v``, of the
    data's dtype (``mat @ v`` promotes them).

    Raises:
      AssertionError: the buffers do not fit together, or ``v`` is not a vector of the
        data's dtype and the matrix's width (height with ``transpose``).
      TypeError: the indices are not integers.
    """
    v = pnp.asarray(v)
    _check_coo_product("coo_matvec", mat)
    check_operand("coo_matvec", mat.data, v, mat.shape, transpose, 1)
    check_indices("coo_matvec", mat.row, mat.col)
    return buffers_matvec(mat.data, mat.row, mat.col, v, mat.shape, transpose)


def coo_matmat(mat: COO, B: Any, *, transpose: bool = False) -> Array:  # noqa: N803  (JAX's)
    """The product of ``mat`` (transposed with ``transpose``) and the matrix ``B``, of the
    data's dtype (``mat @ B`` promotes them).

    Raises:
      AssertionError: the buffers do not fit together, or ``B`` is not a matrix of the
        data's dtype with as many rows as ``mat`` has columns (rows with ``transpose``).
      TypeError: the indices are not integers.
    """
    B = pnp.asarray(B)
    _check_coo_product("coo_matmat", mat)
    check_operand("coo_matmat", mat.data, B, mat.shape, transpose, 2)
    check_indices("coo_matmat", mat.row, mat.col)
    return buffers_matmat(mat.data, mat.row, mat.col, B, mat.shape, transpose)

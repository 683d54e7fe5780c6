"""The BCOO array (JAX 0.10.2's ``jax.experimental.sparse.BCOO``), the conversions its
methods use, and ``sparsify``.

A :class:`BCOO` is a pytree: its children are ``data`` and ``indices``, its aux data
the shape and the ``indices_sorted``/``unique_indices`` flags, so it passes through
``jit``, ``vmap`` and ``grad`` as JAX's does.  Its arithmetic operators are
:func:`sparsify` applied to the ``plait.numpy`` function (as in JAX): ``M @ v`` runs
``pnp.matmul``'s equations with the sparse rules.
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from plait.frontend import numpy as pnp
from plait.frontend.core.array_base import Array
from plait.frontend.core.tracing import Tracer
from plait.frontend.core.tree_util import (
    register_pytree_node_class,
    tree_flatten,
    tree_unflatten,
)
from plait.frontend.sparse import control_flow as _control_flow  # noqa: F401  (its rules)
from plait.frontend.sparse import convert, restructure
from plait.frontend.sparse import indexing as _indexing  # noqa: F401  (its rules)
from plait.frontend.sparse.base import JAXSparse
from plait.frontend.sparse.layout import Shape, SparseBuffers, SparseInfo, validate
from plait.frontend.sparse.sparsify import format_rules, sparsify_flat, todense_p

__all__ = ["BCOO", "sparsify", "wrap", "mapped_shape", "todense", "bcoo_todense", "bcoo_fromdense",
           "bcoo_transpose", "bcoo_sum_duplicates", "bcoo_sort_indices",
           "bcoo_update_layout"]

_TRACED_NSE = ("The error arose for the nse argument of bcoo_fromdense. In order for "
               "BCOO.fromdense() to be used in traced/compiled code, you must pass a concrete "
               "value to the nse (number of stored elements) argument.")


@register_pytree_node_class
class BCOO(JAXSparse):
    """A sparse array in batched-coordinate format, as JAX's ``BCOO``.

    ``BCOO((data, indices), shape=shape)``: ``data`` of shape
    ``batch + (nse,) + dense`` holds the stored values, ``indices`` of shape
    ``batch + (nse, n_sparse)`` their sparse coordinates (duplicates are summed;
    out-of-bound rows are padding).

    Raises:
      TypeError: ``indices`` are not integers.
      ValueError: the buffers' shapes do not fit ``shape``.
    """

    data: Array
    indices: Array
    shape: Shape
    indices_sorted: bool
    unique_indices: bool

    def __init__(self, args: tuple[Any, Any], *, shape: Sequence[int],
                 indices_sorted: bool = False, unique_indices: bool = False) -> None:
        super().__init__(args, shape=shape)
        data, indices = args
        self.data, self.indices = pnp.asarray(data), pnp.asarray(indices)
        self.indices_sorted = indices_sorted
        self.unique_indices = unique_indices
        validate(self.data, self.indices, self.shape)

    @property
    def _info(self) -> SparseInfo:
        return SparseInfo(self.shape, self.indices_sorted, self.unique_indices)

    @property
    def _buffers(self) -> SparseBuffers:
        return SparseBuffers(self.data, self.indices, self._info)

    @property
    def nse(self) -> int:
        """The number of stored elements (per batch element)."""
        return int(self.indices.shape[-2])

    @property
    def n_batch(self) -> int:
        return self.indices.ndim - 2

    @property
    def n_sparse(self) -> int:
        return int(self.indices.shape[-1])

    @property
    def n_dense(self) -> int:
        return self.data.ndim - 1 - self.n_batch

    @property
    def T(self) -> BCOO:
        """The transpose (all dimensions reversed)."""
        return self.transpose()

    def __repr__(self) -> str:
        extra = f", nse={self.nse}"
        if self.n_batch:
            extra += f", n_batch={self.n_batch}"
        if self.n_dense:
            extra += f", n_dense={self.n_dense}"
        text = f"BCOO({self.dtype}{list(self.shape)}{extra})"
        if isinstance(self.data, Tracer):
            text = f"{type(self.data).__name__}[{text}]"
        return text

    def tree_flatten(self) -> tuple[tuple[Array, Array], SparseInfo]:
        return (self.data, self.indices), self._info

    @classmethod
    def tree_unflatten(cls, aux: SparseInfo, children: Sequence[Any]) -> BCOO:
        obj = object.__new__(cls)
        obj.data, obj.indices = children
        obj.shape = mapped_shape(aux.shape, obj.data, obj.indices)
        obj.indices_sorted, obj.unique_indices = aux.indices_sorted, aux.unique_indices
        return obj

    @classmethod
    def fromdense(cls, mat: Any, *, nse: int | None = None, index_dtype: Any = np.int32,
                  n_dense: int = 0, n_batch: int = 0) -> BCOO:
        """The BCOO array of the nonzero elements of ``mat`` (see :func:`bcoo_fromdense`)."""
        return bcoo_fromdense(mat, nse=nse, index_dtype=index_dtype, n_dense=n_dense,
                              n_batch=n_batch)

    @classmethod
    def from_scipy_sparse(cls, mat: Any, *, index_dtype: Any = None, n_dense: int = 0,
                          n_batch: int = 0) -> BCOO:
        """The BCOO array of a ``scipy.sparse`` matrix (its entries as they are stored).

        Raises:
          NotImplementedError: ``n_dense`` or ``n_batch`` is nonzero.
        """
        if n_dense != 0 or n_batch != 0:
            raise NotImplementedError("BCOO.fromscipy with nonzero n_dense/n_batch")
        coo = mat.tocoo()
        indices = pnp.column_stack((coo.row, coo.col)).astype(index_dtype or np.int32)
        return cls((pnp.asarray(coo.data), indices), shape=coo.shape)

    def todense(self) -> Array:
        """The dense array (duplicates summed)."""
        return bcoo_todense(self)

    def transpose(self, axes: Sequence[int] | None = None) -> BCOO:
        """The array with its dimensions permuted (reversed by default); batch, sparse and
        dense dimensions are permuted among themselves."""
        perm = list(range(self.ndim)[::-1] if axes is None else axes)
        out = restructure.transpose(self._buffers, perm)
        sparse_perm = [p - self.n_batch for p in perm[self.n_batch:self.n_batch + self.n_sparse]]
        # Sorted indices stay sorted when the sparse columns keep their order.
        still_sorted = self.indices_sorted and sparse_perm == list(range(self.n_sparse))
        return wrap(out._replace(info=out.info._replace(indices_sorted=still_sorted)))

    def update_layout(self, *, n_batch: int | None = None, n_dense: int | None = None,
                      on_inefficient: str | None = "error") -> BCOO:
        """The same array with ``n_batch`` batch and ``n_dense`` dense dimensions (see
        :func:`bcoo_update_layout`)."""
        return bcoo_update_layout(self, n_batch=n_batch, n_dense=n_dense,
                                  on_inefficient=on_inefficient)

    def sum_duplicates(self, nse: int | None = None, remove_zeros: bool = True) -> BCOO:
        """The array with duplicate indices summed, sorted, and (with ``remove_zeros``)
        explicit zeros dropped; ``nse`` entries (needed under ``jit``)."""
        if remove_zeros:
            return wrap(convert.eliminate_zeros(self._buffers, _static_nse(nse)))
        return bcoo_sum_duplicates(self, nse=nse)

    def sort_indices(self) -> BCOO:
        """The array with its entries in lexicographic order of their indices."""
        return bcoo_sort_indices(self)

    def astype(self, dtype: Any) -> BCOO:
        """The array with its data converted to ``dtype``."""
        out: BCOO = sparsify(lambda x: x.astype(dtype))(self)
        return out

    def reshape(self, *args: Any, **kwargs: Any) -> BCOO:
        """The array with a new shape (batch, sparse and dense dimensions kept apart)."""
        out: BCOO = sparsify(lambda x: x.reshape(*args, **kwargs))(self)
        return out

    def sum(self, *args: Any, **kwargs: Any) -> Any:
        """``pnp.sum`` of the array: a BCOO array, or a dense scalar for a full sum."""
        return sparsify(lambda x: x.sum(*args, **kwargs))(self)

    def __neg__(self) -> BCOO:
        out: BCOO = _neg(self)
        return out

    def __abs__(self) -> BCOO:
        out: BCOO = _abs(self)
        return out

    def __pos__(self) -> BCOO:
        return self

    def __getitem__(self, index: Any) -> Any:
        """NumPy indexing (``plait.numpy``'s, made sparse): a BCOO array, or a dense one
        where the rules give one."""
        out = sparsify(lambda x: x[index])(self)
        if not isinstance(out, BCOO) and np.size(out) == 0:
            return bcoo_fromdense(out)  # (an empty result comes back dense, as in JAX)
        return out

    def __iter__(self) -> Iterator[Any]:
        return (self[i] for i in range(self.shape[0]))

    def __pow__(self, exponent: Any) -> Any:
        return sparsify(lambda x: pnp.power(x, exponent))(self)

    def __rpow__(self, base: Any) -> Any:
        return _rpower(self, base)

    def __rtruediv__(self, other: Any) -> Any:
        return _rdivide(self, other)

    # Comparisons are elementwise, as in JAX: each raises unless its result stays sparse.
    def __gt__(self, other: Any) -> Any:
        return _greater(self, other)

    def __ge__(self, other: Any) -> Any:
        return _greater_equal(self, other)

    def __lt__(self, other: Any) -> Any:
        return _less(self, other)

    def __le__(self, other: Any) -> Any:
        return _less_equal(self, other)

    def __eq__(self, other: Any) -> Any:  # elementwise, as JAX's
        return _equal(self, other)

    def __ne__(self, other: Any) -> Any:  # elementwise, as JAX's
        return _not_equal(self, other)

    def __matmul__(self, other: Any) -> Any:
        return _matmul(self, other)

    def __rmatmul__(self, other: Any) -> Any:
        return _rmatmul(self, other)

    def __mul__(self, other: Any) -> Any:
        return _multiply(self, other)

    def __rmul__(self, other: Any) -> Any:
        return _rmultiply(self, other)

    def __truediv__(self, other: Any) -> Any:
        return _divide(self, other)

    def __add__(self, other: Any) -> Any:
        return _add(self, other)

    def __radd__(self, other: Any) -> Any:
        return _radd(self, other)

    def __sub__(self, other: Any) -> Any:
        return _subtract(self, other)

    def __rsub__(self, other: Any) -> Any:
        return _rsubtract(self, other)


def mapped_shape(shape: Shape, data: Any, indices: Any) -> Shape:
    """The shape of a BCOO array rebuilt from children whose rank differs from the
    recorded layout: ``vmap`` maps pytree leaves, so mapping (or stacking) a BCOO array
    removes (or adds) one batch axis of ``data`` and ``indices`` together.

    The sizes come from the children; a batch axis they both broadcast keeps its
    recorded size, matched by position (exact for the usual axis 0).
    """
    data_shape, index_shape = getattr(data, "shape", None), getattr(indices, "shape", None)
    if data_shape is None or index_shape is None or len(index_shape) < 2:
        return shape  # (not arrays: a tree of placeholders)
    n_batch = len(index_shape) - 2
    n_rest = len(data_shape) - 1 - n_batch + index_shape[-1]
    old_batch = shape[:len(shape) - n_rest]
    if len(old_batch) == n_batch or n_rest > len(shape):
        return shape
    new = [max(d, i) for d, i in zip(data_shape[:n_batch], index_shape[:n_batch])]

    def fits(a: Sequence[int], b: Sequence[int]) -> bool:
        return all(x == y or x == 1 for x, y in zip(a, b))
    if len(old_batch) == n_batch + 1:  # an axis was mapped away
        for k in range(len(old_batch)):
            kept = [*old_batch[:k], *old_batch[k + 1:]]
            if fits(new, kept):
                new = kept
                break
    elif len(old_batch) + 1 == n_batch:  # an axis was added
        for k in range(n_batch):
            if fits([*new[:k], *new[k + 1:]], old_batch):
                new = [*old_batch[:k], new[k], *old_batch[k:]]
                break
    return (*new, *shape[len(shape) - n_rest:])


def wrap(m: SparseBuffers) -> BCOO:
    """The BCOO array of buffers."""
    return BCOO((m.data, m.indices), shape=m.shape, indices_sorted=m.info.indices_sorted,
                unique_indices=m.info.unique_indices)


def _static_nse(nse: Any) -> int | None:
    return None if nse is None else convert.concrete_nse(
        nse, "the nse argument of bcoo_sum_duplicates.")


def sparsify(f: Callable[..., Any]) -> Callable[..., Any]:
    """``f`` made to take BCOO (and BCSR) arrays wherever it takes arrays (JAX's
    ``sparsify``).

    ``f`` is traced with a dense stand-in for each sparse argument, and its equations
    evaluated with sparse rules where an operand is sparse; the results are sparse arrays
    where the rules keep them sparse.  Keyword arguments are passed to ``f`` as they
    are (not traced).

    Raises:
      NotImplementedError: ``f`` applies to a sparse value a primitive without a sparse
        rule ("sparse rule for exp is not implemented ...").
    """
    @functools.wraps(f)
    def wrapped(*args: Any, **params: Any) -> Any:
        # (BCSR arrays are sparse arguments too: their format registers its rules.)
        leaves, in_tree = tree_flatten(
            args, is_leaf=lambda x: isinstance(x, BCOO) or type(x) in format_rules)
        flat = [x._buffers if isinstance(x, BCOO) else x if type(x) in format_rules
                else pnp.asarray(x) for x in leaves]
        outs, out_tree = sparsify_flat(functools.partial(f, **params), in_tree, flat)
        return tree_unflatten(out_tree, [wrap(o) if type(o) is SparseBuffers else o
                                         for o in outs])
    return wrapped


def _swap(f: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
    return lambda a, b: f(b, a)


_neg = sparsify(pnp.negative)
_abs = sparsify(pnp.abs)
_matmul = sparsify(pnp.matmul)
_rmatmul = sparsify(_swap(pnp.matmul))
_multiply = sparsify(pnp.multiply)
_rmultiply = sparsify(_swap(pnp.multiply))
_divide = sparsify(pnp.divide)
_rdivide = sparsify(_swap(pnp.divide))
_rpower = sparsify(_swap(pnp.power))
_greater = sparsify(pnp.greater)
_greater_equal = sparsify(pnp.greater_equal)
_less = sparsify(pnp.less)
_less_equal = sparsify(pnp.less_equal)
_equal = sparsify(pnp.equal)
_not_equal = sparsify(pnp.not_equal)
_add = sparsify(pnp.add)
_radd = sparsify(_swap(pnp.add))
_subtract = sparsify(pnp.subtract)
_rsubtract = sparsify(_swap(pnp.subtract))


def todense(arr: Any) -> Array:
    """``arr`` as a dense array: a sparse array (any format) converted, an array as it
    is.  Inside :func:`sparsify`, the conversion of a sparse value."""
    if isinstance(arr, JAXSparse):
        return arr.todense()
    out: Array = todense_p.bind(pnp.asarray(arr))
    return out


def bcoo_todense(mat: BCOO) -> Array:
    """The dense array of ``mat``: its stored elements placed, duplicates summed."""
    return convert.todense(mat._buffers)


def bcoo_fromdense(mat: Any, *, nse: int | None = None, n_batch: int = 0, n_dense: int = 0,
                   index_dtype: Any = np.int32) -> BCOO:
    """The BCOO array of the nonzero elements of ``mat``, in row-major order, with
    ``n_batch`` batch and ``n_dense`` dense dimensions and ``nse`` stored elements per
    batch element (by default as many as the largest count; fewer drop elements, more
    are padding).

    Raises:
      ConcretizationTypeError: ``nse`` is not given and ``mat`` is traced.
      ValueError: ``n_batch`` or ``n_dense`` do not fit ``mat``.
      TypeError: ``index_dtype`` is not an integer dtype.
    """
    mat = pnp.asarray(mat)
    if nse is None:
        nse = convert.concrete_nse(convert.count_stored(mat, n_batch, n_dense), _TRACED_NSE)
    nse = operator.index(nse)
    return wrap(convert.fromdense(mat, nse=nse, n_batch=n_batch, n_dense=n_dense,
                                  index_dtype=index_dtype))


def bcoo_transpose(mat: BCOO, *, permutation: Sequence[int]) -> BCOO:
    """``mat`` with its dimensions permuted; batch, sparse and dense dimensions only among
    themselves.

    Raises:
      TypeError: ``permutation`` is not a permutation of the dimensions.
      NotImplementedError: it moves a dimension between batch, sparse and dense.
    """
    return wrap(restructure.transpose(mat._buffers, permutation))


def bcoo_sum_duplicates(mat: BCOO, nse: int | None = None) -> BCOO:
    """``mat`` with duplicate indices summed and sorted, with ``nse`` stored elements
    (needed under ``jit``; by default the number of distinct indices).

    Raises:
      ValueError: ``nse`` is not given and ``mat`` is traced.
    """
    return wrap(convert.sum_duplicates(mat._buffers, _static_nse(nse)))


def bcoo_sort_indices(mat: BCOO) -> BCOO:
    """``mat`` with its stored elements in lexicographic order of their indices."""
    return wrap(convert.sort_indices(mat._buffers))


def bcoo_update_layout(mat: BCOO, *, n_batch: int | None = None, n_dense: int | None = None,
                       on_inefficient: str | None = "error") -> BCOO:
    """``mat`` with ``n_batch`` batch and ``n_dense`` dense dimensions.

    Raises:
      SparseEfficiencyError: with ``on_inefficient='error'``, the layout would store many
        explicit zeros (``'warn'`` warns instead, ``None`` says nothing).
      ValueError: the numbers do not fit ``mat``.
    """
    return wrap(restructure.update_layout(mat._buffers, n_batch=n_batch, n_dense=n_dense,
                                          on_inefficient=on_inefficient))

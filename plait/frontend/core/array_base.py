"""``plait.Array``: the abstract array type shared by concrete arrays and tracers.

Like ``jax.Array``, it is the type to annotate with and to test with
``isinstance``; concrete device arrays and tracers are both subclasses.  All
operators and methods route through :mod:`plait.numpy`, so they behave
identically on concrete and traced values.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from plait.ir.atoms import Literal
from plait.ir.avals import ShapedArray

__all__ = ["Array", "set_array_namespace"]


class Array:
    """An n-dimensional array of one dtype: concrete (on a device) or traced."""

    __slots__ = ()
    __array_priority__ = 100

    @property
    def aval(self) -> ShapedArray:
        """The abstract value: shape, dtype and weak type."""
        raise NotImplementedError

    # -- what only a concrete array can do (ArrayImpl overrides these) ----------
    def _needs_concrete(self, what: str) -> NotImplementedError:
        return NotImplementedError(
            f"{what} needs a concrete array, but got a traced value of type "
            f"{self.aval.str_short(short_dtypes=False)}; call it outside jit and the "
            "other transformations")

    def block_until_ready(self) -> Array:
        """Wait until the array's value is computed; returns the array."""
        raise self._needs_concrete("block_until_ready()")

    def is_deleted(self) -> bool:
        """Whether the array's device buffer was deleted (``delete``, or donation)."""
        raise self._needs_concrete("is_deleted()")

    def delete(self) -> None:
        """Free the array's device buffer now."""
        raise self._needs_concrete("delete()")

    def devices(self) -> set[Any]:
        """The devices holding the array."""
        raise self._needs_concrete("devices()")

    def is_ready(self) -> bool:
        """Whether the value is computed (a call would not wait)."""
        raise self._needs_concrete("is_ready()")

    def copy_to_host_async(self) -> None:
        """Start copying the value to the host, so that a later ``np.asarray`` is quick."""
        raise self._needs_concrete("copy_to_host_async()")

    def on_device_size_in_bytes(self) -> int:
        """The bytes the buffer takes on its device."""
        raise self._needs_concrete("on_device_size_in_bytes()")

    def unsafe_buffer_pointer(self) -> int:
        """The address of the device buffer (valid while the array lives)."""
        raise self._needs_concrete("unsafe_buffer_pointer()")

    def addressable_data(self, index: int) -> Array:
        """The data on the ``index``-th addressable device."""
        raise self._needs_concrete("addressable_data()")

    @property
    def sharding(self) -> Any:
        """Where the array lives: a ``SingleDeviceSharding`` or a ``NamedSharding``.
        A traced value has none: ``AttributeError``, as JAX's, so that
        ``getattr(x, "sharding", None)`` works on both."""
        raise AttributeError(str(self._needs_concrete("sharding")))

    @property
    def format(self) -> Any:
        """The layout and sharding of a concrete array (a ``Format``); a traced value has
        none: ``AttributeError``, as for :attr:`sharding`."""
        raise AttributeError(str(self._needs_concrete("format")))

    @property
    def addressable_shards(self) -> list[Any]:
        """The parts of the array this process's devices hold (``Shard`` objects)."""
        raise self._needs_concrete("addressable_shards")

    @property
    def is_fully_replicated(self) -> bool:
        """Whether every device holds the whole array."""
        raise self._needs_concrete("is_fully_replicated")

    @property
    def is_fully_addressable(self) -> bool:
        """Whether this process holds every part of the array."""
        raise self._needs_concrete("is_fully_addressable")

    def item(self, *args: int) -> Any:
        """An element as a Python scalar (the only one, or the one ``args`` index)."""
        raise self._needs_concrete("item()")

    def tolist(self) -> Any:
        """The value as nested Python lists of scalars."""
        raise self._needs_concrete("tolist()")

    # Python conversions: ArrayImpl converts its value; Tracer converts a known value
    # or raises JAX's concretization errors.
    def __bool__(self) -> bool:
        raise self._needs_concrete("bool()")

    def __int__(self) -> int:
        raise self._needs_concrete("int()")

    def __float__(self) -> float:
        raise self._needs_concrete("float()")

    def __complex__(self) -> complex:
        raise self._needs_concrete("complex()")

    def __index__(self) -> int:
        raise self._needs_concrete("__index__")

    @property
    def shape(self) -> tuple[int, ...]:
        """The dimensions."""
        return self.aval.shape

    @property
    def dtype(self) -> np.dtype[Any]:
        """The element type."""
        return self.aval.dtype

    @property
    def weak_type(self) -> bool:
        """Whether the dtype is weak (the value derives from Python scalars only)."""
        return self.aval.weak_type

    @property
    def ndim(self) -> int:
        """The number of dimensions."""
        return len(self.aval.shape)

    @property
    def size(self) -> int:
        """The number of elements."""
        return self.aval.size

    @property
    def T(self) -> Array:
        """The transpose (dimensions reversed)."""
        return _pnp.transpose(self)

    @property
    def mT(self) -> Array:
        """The matrix transpose (last two dimensions swapped)."""
        return _pnp.swapaxes(self, -1, -2)

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __iter__(self) -> Iterator[Array]:
        if not self.shape:
            raise TypeError("iteration over a 0-d array")
        # As JAX: a unit-stride slice of each row, squeezed.
        return (_row(self, i) for i in range(self.shape[0]))

    def __getitem__(self, index: Any) -> Array:
        return _getitem(self, index)

    @property
    def at(self) -> IndexUpdateHelper:
        """Functional indexed updates: ``x.at[idx].set(v)``, ``.add(v)``, ``.get()`` ..."""
        return _at(self)

    # Arithmetic.
    def __neg__(self) -> Array: return _pnp.negative(self)
    def __pos__(self) -> Array: return _pnp.positive(self)
    def __abs__(self) -> Array: return _pnp.abs(self)
    def __invert__(self) -> Array: return _pnp.invert(self)
    def __add__(self, other: Any) -> Array:
        o = _operand(self, other, "+")
        return NotImplemented if o is NotImplemented else _pnp.add(self, o)

    def __radd__(self, other: Any) -> Array:
        o = _operand(self, other, "+", True)
        return NotImplemented if o is NotImplemented else _pnp.add(o, self)

    def __sub__(self, other: Any) -> Array:
        o = _operand(self, other, "-")
        return NotImplemented if o is NotImplemented else _pnp.subtract(self, o)

    def __rsub__(self, other: Any) -> Array:
        o = _operand(self, other, "-", True)
        return NotImplemented if o is NotImplemented else _pnp.subtract(o, self)

    def __mul__(self, other: Any) -> Array:
        o = _operand(self, other, "*")
        return NotImplemented if o is NotImplemented else _pnp.multiply(self, o)

    def __rmul__(self, other: Any) -> Array:
        o = _operand(self, other, "*", True)
        return NotImplemented if o is NotImplemented else _pnp.multiply(o, self)

    def __truediv__(self, other: Any) -> Array:
        o = _operand(self, other, "/")
        return NotImplemented if o is NotImplemented else _pnp.true_divide(self, o)

    def __rtruediv__(self, other: Any) -> Array:
        o = _operand(self, other, "/", True)
        return NotImplemented if o is NotImplemented else _pnp.true_divide(o, self)

    def __floordiv__(self, other: Any) -> Array:
        o = _operand(self, other, "//")
        return NotImplemented if o is NotImplemented else _pnp.floor_divide(self, o)

    def __rfloordiv__(self, other: Any) -> Array:
        o = _operand(self, other, "//", True)
        return NotImplemented if o is NotImplemented else _pnp.floor_divide(o, self)

    def __mod__(self, other: Any) -> Array:
        o = _operand(self, other, "%")
        return NotImplemented if o is NotImplemented else _pnp.remainder(self, o)

    def __rmod__(self, other: Any) -> Array:
        o = _operand(self, other, "%", True)
        return NotImplemented if o is NotImplemented else _pnp.remainder(o, self)

    def __divmod__(self, other: Any) -> tuple[Array, Array]:
        o = _operand(self, other, "divmod()")
        return NotImplemented if o is NotImplemented else _pnp.divmod(self, o)

    def __rdivmod__(self, other: Any) -> tuple[Array, Array]:
        o = _operand(self, other, "divmod()", True)
        return NotImplemented if o is NotImplemented else _pnp.divmod(o, self)

    def __round__(self, ndigits: int | None = None) -> Array:
        # As Python's round of a float: to an integer without ``ndigits``.
        out = _pnp.round(self, decimals=ndigits or 0)
        return out.astype(int) if ndigits is None else out

    def __contains__(self, value: Any) -> bool:
        """Whether ``value`` (a scalar) equals an element of this 1-d array (as JAX,
        which departs from NumPy's rules here).

        Raises:
          TypeError: ``value`` is not array-like.
          ValueError: this array is not 1-d, or ``value`` is not a scalar.
        """
        if not isinstance(value, _OPERANDS) and not hasattr(value, "__array__"):
            raise TypeError(f"Array.__contains__: unsupported operand type {type(value)}.")
        if self.ndim != 1:
            raise ValueError(f"Array.__contains__: search array must be one-dimensional, got "
                             f"arr.shape={self.shape}.")
        if _pnp.ndim(value) != 0:
            raise ValueError(f"Array.__contains__: query value must be a scalar, got "
                             f"query.shape={_pnp.shape(value)}")
        return _pnp.any(self == value)  # type: ignore[return-value]  # (bool() of it, by Python)

    def __pow__(self, other: Any) -> Array:
        o = _operand(self, other, "**")
        return NotImplemented if o is NotImplemented else _pnp.power(self, o)

    def __rpow__(self, other: Any) -> Array:
        o = _operand(self, other, "**", True)
        return NotImplemented if o is NotImplemented else _pnp.power(o, self)

    def __matmul__(self, other: Any) -> Array:
        o = _operand(self, other, "@")
        return NotImplemented if o is NotImplemented else _pnp.matmul(self, o)

    def __rmatmul__(self, other: Any) -> Array:
        o = _operand(self, other, "@", True)
        return NotImplemented if o is NotImplemented else _pnp.matmul(o, self)

    def __and__(self, other: Any) -> Array:
        o = _operand(self, other, "")
        return NotImplemented if o is NotImplemented else _pnp.bitwise_and(self, o)

    def __rand__(self, other: Any) -> Array:
        o = _operand(self, other, "", True)
        return NotImplemented if o is NotImplemented else _pnp.bitwise_and(o, self)

    def __or__(self, other: Any) -> Array:
        o = _operand(self, other, "")
        return NotImplemented if o is NotImplemented else _pnp.bitwise_or(self, o)

    def __ror__(self, other: Any) -> Array:
        o = _operand(self, other, "", True)
        return NotImplemented if o is NotImplemented else _pnp.bitwise_or(o, self)

    def __xor__(self, other: Any) -> Array:
        o = _operand(self, other, "")
        return NotImplemented if o is NotImplemented else _pnp.bitwise_xor(self, o)

    def __rxor__(self, other: Any) -> Array:
        o = _operand(self, other, "", True)
        return NotImplemented if o is NotImplemented else _pnp.bitwise_xor(o, self)

    def __lshift__(self, other: Any) -> Array:
        o = _operand(self, other, "")
        return NotImplemented if o is NotImplemented else _pnp.left_shift(self, o)

    def __rlshift__(self, other: Any) -> Array:
        o = _operand(self, other, "", True)
        return NotImplemented if o is NotImplemented else _pnp.left_shift(o, self)

    def __rshift__(self, other: Any) -> Array:
        o = _operand(self, other, "", True)
        return NotImplemented if o is NotImplemented else _pnp.right_shift(self, o)

    def __rrshift__(self, other: Any) -> Array:
        o = _operand(self, other, "", True)
        return NotImplemented if o is NotImplemented else _pnp.right_shift(o, self)

    def __setitem__(self, index: Any, value: Any) -> None:
        """Refused: arrays are immutable (use ``x.at[index].set(value)``).

        Raises:
          TypeError: always, as for a JAX array.
        """
        raise TypeError("plait arrays are immutable and do not support in-place item "
                        "assignment. Instead of x[idx] = y, use x = x.at[idx].set(y) or "
                        "another .at[] method")

    # Comparisons return arrays.
    def __lt__(self, other: Any) -> Array:
        o = _operand(self, other, "")
        return NotImplemented if o is NotImplemented else _pnp.less(self, o)
    def __le__(self, other: Any) -> Array:
        o = _operand(self, other, "")
        return NotImplemented if o is NotImplemented else _pnp.less_equal(self, o)
    def __gt__(self, other: Any) -> Array:
        o = _operand(self, other, "")
        return NotImplemented if o is NotImplemented else _pnp.greater(self, o)
    def __ge__(self, other: Any) -> Array:
        o = _operand(self, other, "")
        return NotImplemented if o is NotImplemented else _pnp.greater_equal(self, o)
    def __eq__(self, other: Any) -> Array:  # type: ignore[override]  # an array, not a bool
        o = _operand(self, other, "==")
        return NotImplemented if o is NotImplemented else _pnp.equal(self, o)

    def __ne__(self, other: Any) -> Array:  # type: ignore[override]  # an array, not a bool
        o = _operand(self, other, "!=")
        return NotImplemented if o is NotImplemented else _pnp.not_equal(self, o)

    __hash__ = None  # type: ignore[assignment]  # unhashable, as == is elementwise

    # Methods.
    # -- the array API standard (the namespace, DLPack exchange) ----------------
    def __array_namespace__(self, *, api_version: str | None = None) -> Any:
        """The array API namespace of plait arrays: :mod:`plait.numpy`.

        Raises:
          ValueError: an ``api_version`` other than ``'2024.12'``.
        """
        if api_version is not None and api_version != "2024.12":
            raise ValueError(f"api_version={api_version!r} is not available; available "
                             "versions are: ['2024.12']")
        return sys.modules.get("plait.numpy", _pnp)

    def __dlpack__(self, *, stream: Any = None, max_version: tuple[int, int] | None = None,
                   dl_device: tuple[int, int] | None = None, copy: bool | None = None) -> Any:
        """A DLPack capsule over the array's buffer (see :mod:`plait.frontend.core.dlpack`)."""
        return _pnp.array_api.to_dlpack(self, stream=stream, max_version=max_version,
                                        dl_device=dl_device, copy=copy)

    def __dlpack_device__(self) -> tuple[Any, int]:
        """``(DLPack device type, device id)``: the CPU, device 0."""
        return _pnp.array_api.dlpack_device(self)

    def to_device(self, device: Any, /, *, stream: Any = None) -> Array:
        """The array on ``device`` (itself when it is there already).

        Raises:
          NotImplementedError: a traced array, or a ``stream``.
        """
        return _pnp.array_api.to_device(self, device, stream=stream)

    def astype(self, dtype: Any) -> Array:
        """A copy cast to ``dtype``."""
        return _pnp.astype(self, dtype)

    def reshape(self, *shape: Any, order: str = "C") -> Array:
        """The same elements in a new shape (one ``-1`` is inferred)."""
        if len(shape) == 1 and isinstance(shape[0], Sequence | np.ndarray):
            shape = tuple(shape[0])
        return _pnp.reshape(self, shape, order=order)

    def transpose(self, *axes: Any) -> Array:
        """Permute dimensions (reversed when no axes are given)."""
        one = len(axes) == 1 and (axes[0] is None or isinstance(axes[0], Sequence))
        perm = axes[0] if one else axes
        return _pnp.transpose(self, perm or None)

    def swapaxes(self, axis1: int, axis2: int) -> Array:
        """Exchange two dimensions."""
        return _pnp.swapaxes(self, axis1, axis2)

    def squeeze(self, axis: Any = None) -> Array:
        """Remove size-1 dimensions."""
        return _pnp.squeeze(self, axis)

    def ravel(self) -> Array:
        """The elements as a 1-d array."""
        return _pnp.ravel(self)

    def flatten(self) -> Array:
        """The elements as a 1-d array."""
        return _pnp.ravel(self)

    def sum(self, axis: Any = None, dtype: Any = None, out: None = None, keepdims: bool = False,
            initial: Any = None, where: Any = None, promote_integers: bool = True) -> Array:
        """Sum of elements (see :func:`plait.numpy.sum`)."""
        return _pnp.sum(self, axis=axis, dtype=dtype, out=out, keepdims=keepdims,
                        initial=initial, where=where, promote_integers=promote_integers)

    def prod(self, axis: Any = None, dtype: Any = None, out: None = None, keepdims: bool = False,
             initial: Any = None, where: Any = None, promote_integers: bool = True) -> Array:
        """Product of elements."""
        return _pnp.prod(self, axis=axis, dtype=dtype, out=out, keepdims=keepdims,
                         initial=initial, where=where, promote_integers=promote_integers)

    def mean(self, axis: Any = None, dtype: Any = None, out: None = None, keepdims: bool = False,
             *, where: Any = None) -> Array:
        """Mean of elements."""
        return _pnp.mean(self, axis=axis, dtype=dtype, out=out, keepdims=keepdims, where=where)

    def var(self, axis: Any = None, dtype: Any = None, out: None = None, ddof: int = 0,
            keepdims: bool = False, *, where: Any = None, correction: Any = None) -> Array:
        """Variance of elements."""
        return _pnp.var(self, axis=axis, dtype=dtype, out=out, ddof=ddof, keepdims=keepdims,
                        where=where, correction=correction)

    def std(self, axis: Any = None, dtype: Any = None, out: None = None, ddof: int = 0,
            keepdims: bool = False, *, where: Any = None, correction: Any = None) -> Array:
        """Standard deviation of elements."""
        return _pnp.std(self, axis=axis, dtype=dtype, out=out, ddof=ddof, keepdims=keepdims,
                        where=where, correction=correction)

    def max(self, axis: Any = None, out: None = None, keepdims: bool = False,
            initial: Any = None, where: Any = None) -> Array:
        """Maximum of elements."""
        return _pnp.max(self, axis=axis, out=out, keepdims=keepdims, initial=initial,
                        where=where)

    def min(self, axis: Any = None, out: None = None, keepdims: bool = False,
            initial: Any = None, where: Any = None) -> Array:
        """Minimum of elements."""
        return _pnp.min(self, axis=axis, out=out, keepdims=keepdims, initial=initial,
                        where=where)

    def any(self, axis: Any = None, out: None = None, keepdims: bool = False, *,
            where: Any = None) -> Array:
        """Whether any element is true."""
        return _pnp.any(self, axis=axis, out=out, keepdims=keepdims, where=where)

    def all(self, axis: Any = None, out: None = None, keepdims: bool = False, *,
            where: Any = None) -> Array:
        """Whether all elements are true."""
        return _pnp.all(self, axis=axis, out=out, keepdims=keepdims, where=where)

    def argmax(self, axis: Any = None, keepdims: bool = False) -> Array:
        """Index of the maximum."""
        return _pnp.argmax(self, axis=axis, keepdims=keepdims)

    def argmin(self, axis: Any = None, keepdims: bool = False) -> Array:
        """Index of the minimum."""
        return _pnp.argmin(self, axis=axis, keepdims=keepdims)

    def cumsum(self, axis: Any = None, dtype: Any = None) -> Array:
        """Cumulative sum."""
        return _pnp.cumsum(self, axis=axis, dtype=dtype)

    def cumprod(self, axis: Any = None, dtype: Any = None) -> Array:
        """Cumulative product."""
        return _pnp.cumprod(self, axis=axis, dtype=dtype)

    def dot(self, other: Any) -> Array:
        """Dot product with ``other``."""
        return _pnp.dot(self, other)

    def clip(self, min: Any = None, max: Any = None) -> Array:
        """Values limited to ``[min, max]``."""
        return _pnp.clip(self, min, max)

    def round(self, decimals: int = 0) -> Array:
        """Round to ``decimals`` decimals (half to even)."""
        return _pnp.round(self, decimals)

    def conj(self) -> Array:
        """Complex conjugate (identity for real arrays)."""
        return _pnp.conj(self)

    def conjugate(self) -> Array:
        """Complex conjugate (identity for real arrays)."""
        return _pnp.conj(self)

    def copy(self) -> Array:
        """A copy."""
        return _pnp.copy(self)

    def __copy__(self) -> Array:
        # (copy.copy and copy.deepcopy of a traced value stage a copy, as in JAX:
        # dataclasses.astuple deep-copies its fields.)
        return _pnp.copy(self)

    def __deepcopy__(self, memo: Any) -> Array:
        return _pnp.copy(self)

    def ptp(self, axis: Any = None, out: None = None, keepdims: bool = False) -> Array:
        """Maximum minus minimum."""
        return _pnp.ptp(self, axis=axis, out=out, keepdims=keepdims)

    def sort(self, axis: int | None = -1, *, stable: bool = True,
             descending: bool = False) -> Array:
        """Sorted copy along ``axis``."""
        return _pnp.sort(self, axis, stable=stable, descending=descending)

    def argsort(self, axis: int | None = -1, *, stable: bool = True,
                descending: bool = False) -> Array:
        """Indices that sort along ``axis``."""
        return _pnp.argsort(self, axis, stable=stable, descending=descending)

    def argpartition(self, kth: int, axis: int = -1) -> Array:
        """Indices that partition around the ``kth`` smallest element along ``axis``."""
        return _pnp.argpartition(self, kth, axis)

    def searchsorted(self, v: Any, side: str = "left", sorter: Any = None, *,
                     method: str = "scan") -> Array:
        """Where to insert ``v`` into this sorted 1-d array to keep it sorted."""
        return _pnp.searchsorted(self, v, side, sorter, method=method)

    def nonzero(self, *, fill_value: Any = None, size: int | None = None) -> tuple[Array, ...]:
        """The indices of the nonzero elements, one array per dimension."""
        return _pnp.nonzero(self, size=size, fill_value=fill_value)

    def take(self, indices: Any, axis: int | None = None, out: None = None,
             mode: str | None = None, unique_indices: bool = False,
             indices_are_sorted: bool = False, fill_value: Any = None) -> Array:
        """Elements at ``indices`` along ``axis`` (of the flattened array when ``None``)."""
        return _pnp.take(self, indices, axis, out, mode, unique_indices, indices_are_sorted,
                         fill_value)

    def compress(self, condition: Any, axis: int | None = None, *, out: None = None,
                 size: int | None = None, fill_value: Any = 0) -> Array:
        """The slices along ``axis`` where ``condition`` is true."""
        return _pnp.compress(condition, self, axis, size=size, fill_value=fill_value, out=out)

    def choose(self, choices: Any, out: None = None, mode: str = "raise") -> Array:
        """Elements picked from ``choices`` by this index array."""
        return _pnp.choose(self, choices, out, mode)

    def repeat(self, repeats: Any, axis: int | None = None) -> Array:
        """Each element repeated ``repeats`` times along ``axis``."""
        return _pnp.repeat(self, repeats, axis)

    def diagonal(self, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Array:
        """The ``offset``-th diagonal of the ``axis1``, ``axis2`` planes."""
        return _pnp.diagonal(self, offset, axis1, axis2)

    def trace(self, offset: int = 0, axis1: int = 0, axis2: int = 1, dtype: Any = None,
              out: None = None) -> Array:
        """Sum along the ``offset``-th diagonal."""
        return _pnp.trace(self, offset, axis1, axis2, dtype, out)

    def view(self, dtype: Any = None, type: None = None) -> Array:
        """The bits read as ``dtype`` (the last axis scaled when the widths differ)."""
        return _pnp.bit_views.view(self, dtype, type)

    @property
    def itemsize(self) -> int:
        """Bytes per element."""
        return self.dtype.itemsize

    @property
    def nbytes(self) -> int:
        """Bytes of all elements."""
        return self.size * self.dtype.itemsize

    def tobytes(self, order: str = "C") -> bytes:
        """The elements' bytes, as NumPy's ``tobytes``."""
        return np.asarray(self).tobytes(order)  # type: ignore[arg-type]  # NumPy's order literal

    @property
    def flat(self) -> Any:
        """Not supported (use ``flatten()``)."""
        raise NotImplementedError("plait Arrays do not implement the arr.flat property: "
                                  "consider arr.flatten() instead.")

    @property
    def real(self) -> Array:
        """The real part."""
        return _pnp.real(self)

    @property
    def imag(self) -> Array:
        """The imaginary part."""
        return _pnp.imag(self)


# The operands an operator takes.  With anything else it returns NotImplemented, as
# JAX's operators do, so that Python tries the other operand's reflected method (a
# sparse matrix's ``__rmatmul__``).  Objects NumPy can convert (another library's
# arrays) are taken, and the IR's literals (the numpy namespace's constants).
# Arithmetic refuses Python's containers outright, with Python's message, as JAX's
# does: deferring would let ``list * x`` try to repeat the list.
_OPERANDS = (Array, Literal, np.ndarray, np.generic, bool, int, float, complex)
_REFUSED = (list, tuple, set, dict)


def _operand(self: Array, other: Any, op: str, reflected: bool = False) -> Any:
    """``other`` as an operand of an operator: an array or scalar as it is, an object with
    ``__jax_array__`` converted by it (first, as JAX does: a flax ``nnx.Param`` forwards
    every attribute, ``__array__`` included, to its value), another array-like (with
    ``__array__``) as it is, anything else ``NotImplemented`` (Python then asks
    ``other``'s reflected operator), but for a container in an arithmetic operator
    ``op``, refused."""
    if isinstance(other, _OPERANDS):
        return other
    convert = getattr(other, "__jax_array__", None)
    if convert is not None:
        other = convert()
        if isinstance(other, _OPERANDS):
            return other
    if hasattr(other, "__array__"):
        return other
    if op and isinstance(other, _REFUSED):
        names = [repr(type(self).__name__), repr(type(other).__name__)]
        left, right = names[::-1] if reflected else names
        raise TypeError(f"unsupported operand type(s) for {op}: {left} and {right}")
    return NotImplemented


# Operators and methods route through the NumPy namespace, which sits above this module:
# plait.frontend.numpy.array_methods installs it here when it loads.  The checker sees
# the module itself.
if TYPE_CHECKING:
    from plait.frontend import numpy as _pnp
    from plait.frontend.numpy.at import IndexUpdateHelper
else:
    _pnp = None
_getitem: Callable[[Array, Any], Array]
_at: Callable[[Array], IndexUpdateHelper]
_row: Callable[[Array, int], Array]


def set_array_namespace(namespace: Any, getitem: Callable[[Array, Any], Array],
                        at: Callable[[Array], IndexUpdateHelper],
                        row: Callable[[Array, int], Array]) -> None:
    """Make ``namespace`` (``plait.frontend.numpy``) the implementation of Array's
    operators and methods, ``getitem`` that of indexing, ``at`` that of ``x.at`` and
    ``row`` that of iteration."""
    global _pnp, _getitem, _at, _row
    _pnp = namespace
    _getitem = getitem
    _at = at
    _row = row

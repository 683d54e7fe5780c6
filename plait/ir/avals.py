"""Abstract values: the types of the IR.

A :class:`ShapedArray` is the set of all arrays with one shape and dtype.
Avals are interned: ``ShapedArray((3,), float32)`` always returns the same
object, so comparing and hashing them is comparing and hashing identities.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any, ClassVar, SupportsIndex, cast, final

import attrs
import numpy as np
from numpy.typing import DTypeLike

from plait.ir import dtypes
from plait.ir.caches import WeakInternTable
from plait.ir.dims import DimExpr
from plait.ir.errors import JaxprTypeError

__all__ = ["AbstractValue", "ShapedArray", "shaped", "shaped_avals"]


class AbstractValue:
    """Base class of the types a :class:`~plait.ir.Var` may have."""

    __slots__ = ()

    def str_short(self, short_dtypes: bool = True) -> str:
        """The compact form used in printed jaxprs, such as ``f32[3,4]``; with
        ``short_dtypes=False`` the form of user-facing messages, ``float32[3,4]`` (JAX's)."""
        raise NotImplementedError


class _InternedAval(type):
    """Metaclass of :class:`ShapedArray`: construction returns the canonical instance.

    The table lookup happens before ``__init__``, so a hit costs one dict
    access and never re-runs the attrs initializer.
    """

    _table: WeakInternTable

    def __call__(cls, shape: Any, dtype: Any, weak_type: bool = False) -> Any:
        table = cls._table
        try:  # the hot path: this exact spelling was used recently
            return table.recent[(shape, dtype, weak_type)]
        except (KeyError, TypeError):
            pass
        try:
            hit = table.get((shape, dtype, weak_type))
        except TypeError:
            hit = None
        if hit is not None:
            return hit
        norm_shape = _normalize_shape(shape)
        norm_dtype = _as_dtype(dtype)
        if norm_dtype not in dtypes._SHORT:
            raise TypeError(
                f"expected a dtype plait supports, but got {dtype!r} for ShapedArray")
        key = (norm_shape, norm_dtype, bool(weak_type))
        aval = table.get(key)
        if aval is None:
            aval = super().__call__(norm_shape, norm_dtype, bool(weak_type))
            table.put(key, aval)
        try:
            table.put((shape, dtype, weak_type), aval)
        except TypeError:
            pass  # an unhashable spelling (a list shape) is only normalized
        return aval


def _as_dtype(dtype: DTypeLike) -> np.dtype[Any]:
    return dtype if isinstance(dtype, np.dtype) else dtypes._to_dtype(dtype)


def _normalize_shape(shape: Sequence[SupportsIndex]) -> tuple[int, ...]:
    # A symbolic dimension (:class:`~plait.ir.dims.DimExpr`, of shape-polymorphic
    # export) is kept as it is; it behaves as an int >= 1 where it can.
    try:
        dims = tuple(d if isinstance(d, DimExpr) else operator.index(d) for d in shape)
    except TypeError:
        raise TypeError(
            f"expected a shape (a sequence of non-negative ints), but got {shape!r}") from None
    if any(type(d) is int and d < 0 for d in dims):
        raise TypeError(f"expected non-negative dimensions, but got shape {dims}")
    # (Typed as ints: a symbolic dimension stands in for one.)
    return cast(tuple[int, ...], dims)


@final
@attrs.frozen(eq=False, repr=False, slots=True)
class ShapedArray(AbstractValue, metaclass=_InternedAval):
    """The type of an array: its shape, dtype, and whether the dtype is weak.

    A weak type comes from a Python scalar: it takes the dtype of whatever it
    is combined with (JAX docs, "Type promotion semantics": "Weakly-typed values in JAX").
    """

    _table: ClassVar[WeakInternTable] = WeakInternTable("avals")

    # The converters type the constructor as it is called (any shape sequence, any
    # dtype-like); the metaclass has normalized both already, so they only check.
    shape: tuple[int, ...] = attrs.field(converter=_normalize_shape)
    """The dimensions, each a non-negative int."""
    dtype: np.dtype[Any] = attrs.field(converter=_as_dtype)
    """The element type (a NumPy dtype)."""
    weak_type: bool = False
    """True when the value came from a Python scalar and has no committed dtype."""

    @property
    def ndim(self) -> int:
        """The number of dimensions."""
        return len(self.shape)

    @property
    def size(self) -> int:
        """The number of elements."""
        n = 1
        for d in self.shape:
            n *= d
        return n

    def update(self, shape: tuple[int, ...] | None = None, dtype: Any = None,
               weak_type: bool | None = None) -> ShapedArray:
        """A copy with some fields replaced; the same object when nothing changes."""
        return ShapedArray(self.shape if shape is None else shape,
                           self.dtype if dtype is None else dtype,
                           self.weak_type if weak_type is None else weak_type)

    def strip_weak_type(self) -> ShapedArray:
        """The same type with a committed (strong) dtype."""
        return ShapedArray(self.shape, self.dtype, False) if self.weak_type else self

    def str_short(self, short_dtypes: bool = True) -> str:
        """``f32[3,4]``: short dtype name and dimensions, as printed in jaxprs; with
        ``short_dtypes=False``, ``float32[3,4]`` as user-facing messages spell it (JAX's)."""
        name = dtypes.short_name(self.dtype)
        if not short_dtypes and self.dtype.names is None:  # (float0's, keys' names are "void...")
            name = self.dtype.name
        return f"{name}[{','.join(map(str, self.shape))}]"

    def __str__(self) -> str:
        # JAX's: ``float32[3,4]``, ``~float32[]`` for a weak type.
        name = self.dtype.name if self.dtype.names is None else dtypes.short_name(self.dtype)
        return f"{'~' if self.weak_type else ''}{name}[{','.join(map(str, self.shape))}]"

    def __repr__(self) -> str:
        weak = ", weak_type=True" if self.weak_type else ""
        name = self.dtype.name if self.dtype.names is None else dtypes.short_name(self.dtype)
        return f"ShapedArray({name}[{','.join(map(str, self.shape))}]{weak})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (ShapedArray, (self.shape, self.dtype, self.weak_type))

    def __copy__(self) -> ShapedArray:
        return self

    def __deepcopy__(self, memo: Any) -> ShapedArray:
        return self


def shaped(aval: AbstractValue) -> ShapedArray:
    """``aval`` as a :class:`ShapedArray`: the typed access to an array's shape and dtype.

    ``Var.aval`` and ``Jaxpr.in_avals`` are typed :class:`AbstractValue`, the base
    of all IR types; code that needs a shape or a dtype reads them through this.

    Raises:
      JaxprTypeError: ``aval`` is not an array type.
    """
    if type(aval) is ShapedArray:
        return aval
    raise JaxprTypeError(f"expected an array type (a ShapedArray), but got {aval!r}")


def shaped_avals(avals: Sequence[AbstractValue]) -> tuple[ShapedArray, ...]:
    """:func:`shaped` of each of ``avals``.

    Raises:
      JaxprTypeError: one of ``avals`` is not an array type.
    """
    return tuple([shaped(a) for a in avals])

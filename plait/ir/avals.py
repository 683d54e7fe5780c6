"""Abstract values: the types of the IR.

A :class:`ShapedArray` is the set of all arrays with one shape and dtype.
Avals are interned: ``ShapedArray((3,), float32)`` always returns the same
object, so comparing and hashing them is comparing and hashing identities.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence
from typing import Any, ClassVar, Final, SupportsIndex, cast, final

import attrs
import numpy as np
from numpy.typing import DTypeLike

from plait.ir import dtypes
from plait.ir.caches import WeakInternTable
from plait.ir.config import values as _config
from plait.ir.dims import DimExpr
from plait.ir.errors import JaxprTypeError
from plait.ir.sharding import (
    AbstractMesh,
    AxisType,
    NamedSharding,
    PartitionSpec,
    get_abstract_mesh,
)

__all__ = ["AbstractValue", "ShapedArray", "AbstractToken", "abstract_token", "shaped",
           "shaped_avals", "buffer_avals", "leading_slice", "stacked", "type_sharding"]


_KEEP: Any = object()


def _at(entry: Any) -> str:
    if entry is None:
        return ""
    return f"@{entry}" if isinstance(entry, str) else f"@({','.join(entry)})"


def type_sharding(sharding: Any, shape: tuple[int, ...]) -> NamedSharding | None:
    """``sharding`` as a type's :attr:`ShapedArray.explicit_sharding`: over the abstract
    mesh, its spec one entry per dimension and only naming ``Explicit`` axes; ``None``
    when it splits no dimension.

    Raises:
      TypeError: ``sharding`` is not a ``NamedSharding``.
      JaxprTypeError: the spec does not fit the shape, names a non-``Explicit`` axis, or
        splits a dimension unevenly.
    """
    if sharding is None:
        return None
    if not isinstance(sharding, NamedSharding):
        raise TypeError(f"expected a NamedSharding or None as a type's sharding, but got "
                        f"{sharding!r}")
    mesh = sharding.mesh
    amesh = mesh if isinstance(mesh, AbstractMesh) else mesh.abstract_mesh
    if len(sharding.spec) > len(shape):
        raise JaxprTypeError(f"expected a PartitionSpec of at most {len(shape)} entries for "
                             f"shape {shape}, but got {sharding.spec!r}")
    parts = sharding.spec.padded(len(shape))
    kinds = dict(zip(amesh.axis_names, amesh.axis_types))
    drop_size_one = _config.remove_size_one_mesh_axis_from_type
    explicit = []
    for d, p in enumerate(parts):
        names = () if p is None else ((p,) if isinstance(p, str) else tuple(p))
        if any(not isinstance(n, str) for n in names):
            raise JaxprTypeError(f"expected mesh axis names in a type's PartitionSpec, but "
                                 f"got {sharding.spec!r}")
        kept = tuple(n for n in names if kinds.get(n) is AxisType.Explicit
                     and not (drop_size_one and amesh.shape[n] == 1))
        size = math.prod(amesh.shape[n] for n in kept)
        if kept and type(shape[d]) is int and shape[d] % size:
            raise JaxprTypeError(
                f"Sharding spec {sharding.spec!r} implies that array axis {d} is partitioned "
                f"{size} times, but does not evenly divide the dimension size {shape[d]}. Got "
                f"shape: {shape}")
        explicit.append(None if not kept else kept[0] if len(kept) == 1 else kept)
    if all(p is None for p in explicit):
        return None
    if amesh is mesh and tuple(explicit) == tuple(parts) and len(sharding.spec) == len(shape):
        return sharding
    return NamedSharding(amesh, PartitionSpec(*explicit))


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

    def __call__(cls, shape: Any, dtype: Any, weak_type: bool = False,
                 sharding: Any = None) -> Any:
        table = cls._table
        # An unsharded type's key is the 3-tuple (most types are unsharded).
        # (A sharded one's also holds an option that changes its normal form.)
        spelled = ((shape, dtype, weak_type) if sharding is None
                   else (shape, dtype, weak_type, sharding,
                         _config.remove_size_one_mesh_axis_from_type))
        try:  # the hot path: this exact spelling was used recently
            return table.recent[spelled]
        except (KeyError, TypeError):
            pass
        return cls._intern(table, spelled, shape, dtype, weak_type, sharding)

    def _intern(cls, table: WeakInternTable, spelled: tuple[Any, ...], shape: Any, dtype: Any,
                weak_type: bool, sharding: Any) -> Any:
        try:
            hit = table.get(spelled)
        except TypeError:
            hit = None
        if hit is not None:
            return hit
        norm_shape = _normalize_shape(shape)
        norm_dtype = _as_dtype(dtype)
        if norm_dtype not in dtypes._SHORT:
            raise TypeError(
                f"expected a dtype plait supports, but got {dtype!r} for ShapedArray")
        norm_sharding = type_sharding(sharding, norm_shape)
        key = ((norm_shape, norm_dtype, bool(weak_type)) if norm_sharding is None
               else (norm_shape, norm_dtype, bool(weak_type), norm_sharding))
        aval = table.get(key)
        if aval is None:
            aval = super().__call__(norm_shape, norm_dtype, bool(weak_type), norm_sharding)
            table.put(key, aval)
        try:
            table.put(spelled, aval)
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
    explicit_sharding: NamedSharding | None = None
    """The sharding in the type: how the dimensions are split over the ``Explicit`` axes
    of a mesh (a :class:`~plait.ir.sharding.NamedSharding` over an
    :class:`~plait.ir.sharding.AbstractMesh`, its spec one entry per dimension), or
    ``None`` when no dimension is split over an ``Explicit`` axis.  Printed after the
    sizes: ``f32[8@X,4]``."""

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

    @property
    def sharding(self) -> NamedSharding:
        """JAX's view of the sharding in the type: :attr:`explicit_sharding`, or for an
        unsharded type every dimension whole over the current abstract mesh."""
        s = self.explicit_sharding
        if s is not None:
            return s
        return NamedSharding(get_abstract_mesh(), PartitionSpec(*(None,) * len(self.shape)))

    def update(self, shape: tuple[int, ...] | None = None, dtype: Any = None,
               weak_type: bool | None = None, sharding: Any = _KEEP) -> ShapedArray:
        """A copy with some fields replaced; the same object when nothing changes.  The
        sharding is kept unless ``sharding`` is given or the shape changes."""
        if sharding is _KEEP:
            sharding = self.explicit_sharding
            if sharding is not None and shape is not None and tuple(shape) != self.shape:
                sharding = None
        return ShapedArray(self.shape if shape is None else shape,
                           self.dtype if dtype is None else dtype,
                           self.weak_type if weak_type is None else weak_type, sharding)

    def to_tangent_aval(self) -> ShapedArray:
        """The type of this type's tangents (JAX's method): itself for floating and complex
        dtypes, ``float0`` of the same shape otherwise."""
        return self if dtypes.is_inexact(self.dtype) else ShapedArray(self.shape, dtypes.float0)

    def strip_weak_type(self) -> ShapedArray:
        """The same type with a committed (strong) dtype."""
        return (ShapedArray(self.shape, self.dtype, False, self.explicit_sharding)
                if self.weak_type else self)

    def _dims(self) -> str:
        s = self.explicit_sharding
        if s is None:
            return ",".join(map(str, self.shape))
        return ",".join(f"{d}{_at(p)}" for d, p in zip(self.shape, s.spec))

    def str_short(self, short_dtypes: bool = True) -> str:
        """``f32[3,4]``: short dtype name and dimensions, as printed in jaxprs; with
        ``short_dtypes=False``, ``float32[3,4]`` as user-facing messages spell it (JAX's).
        A dimension split over mesh axes shows them: ``f32[8@X,4]``, ``f32[8@(X,Y)]``."""
        name = dtypes.short_name(self.dtype)
        if not short_dtypes and self.dtype.names is None:  # (float0's, keys' names are "void...")
            name = self.dtype.name
        return f"{name}[{self._dims()}]"

    def __str__(self) -> str:
        # JAX's: ``float32[3,4]``, ``~float32[]`` for a weak type.
        name = self.dtype.name if self.dtype.names is None else dtypes.short_name(self.dtype)
        return f"{'~' if self.weak_type else ''}{name}[{self._dims()}]"

    def __repr__(self) -> str:
        weak = ", weak_type=True" if self.weak_type else ""
        name = self.dtype.name if self.dtype.names is None else dtypes.short_name(self.dtype)
        return f"ShapedArray({name}[{self._dims()}]{weak})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (ShapedArray, (self.shape, self.dtype, self.weak_type, self.explicit_sharding))

    def __copy__(self) -> ShapedArray:
        return self

    def __deepcopy__(self, memo: Any) -> ShapedArray:
        return self


@final
class AbstractToken(AbstractValue):
    """The type of a token (``Tok`` in printed jaxprs): a value with no data that orders
    side effects, as ``lax.create_token`` and ``lax.after_all`` make.  There is one
    instance, :data:`abstract_token`."""

    __slots__ = ()
    _instance: ClassVar[AbstractToken | None] = None

    def __new__(cls) -> AbstractToken:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def str_short(self, short_dtypes: bool = True) -> str:
        """``Tok``, as JAX prints a token's type."""
        return "Tok"

    def __str__(self) -> str:
        return "Tok"

    def __repr__(self) -> str:
        return "AbstractToken()"

    def __reduce__(self) -> tuple[Any, ...]:
        return (AbstractToken, ())


abstract_token: Final[AbstractToken] = AbstractToken()
"""The token type."""


def leading_slice(aval: ShapedArray) -> ShapedArray:
    """The type of one slice along the leading dimension (a ``scan``'s ``xs`` element):
    the other dimensions keep their split.

    Raises:
      ValueError: the leading dimension is split (JAX's message).
    """
    s = aval.explicit_sharding
    if s is None:
        return aval.update(shape=aval.shape[1:])
    if s.spec[0] is not None:
        raise ValueError(f"0th dimension of all xs should be replicated. Got {s.spec!r}")
    return aval.update(shape=aval.shape[1:],
                       sharding=NamedSharding(s.mesh, PartitionSpec(*s.spec[1:])))


def stacked(aval: ShapedArray, n: int) -> ShapedArray:
    """The type of ``n`` values of type ``aval`` stacked along a new, whole, leading
    dimension (a ``scan``'s ``ys``)."""
    s = aval.explicit_sharding
    sharding = None if s is None else NamedSharding(s.mesh, PartitionSpec(None, *s.spec))
    return aval.update(shape=(n,) + aval.shape, sharding=sharding)


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


def buffer_avals(avals: Sequence[AbstractValue]) -> tuple[ShapedArray, ...]:
    """The types of the device buffers holding values of types ``avals``: an array's own
    type; for a token, which carries no data, an empty bool array (as in JAX, whose
    compiled programs take and return tokens as such buffers).

    Raises:
      JaxprTypeError: one of ``avals`` is neither an array type nor the token type.
    """
    return tuple([_TOKEN_BUFFER if type(a) is AbstractToken else shaped(a) for a in avals])


_TOKEN_BUFFER: Final = ShapedArray((0,), np.dtype(np.bool_))

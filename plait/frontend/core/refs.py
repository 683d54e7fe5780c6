"""``plait.Ref``: a mutable array, and the rule that keeps the IR pure.

A Ref holds an array value and belongs to the trace it was created in (``None``
at top level).  Reading and writing it there is plain Python: a read is the
current value (indexed), a write replaces it by a new one (``x.at[i].set(v)``),
so the equations staged are ordinary, pure ones and no effect ever reaches the
IR.  A Ref used inside a trace it does not belong to (closed over by a jitted
function or a loop body, say) raises :class:`ForeignRef` there; a
transformation that can carry Refs catches it and traces again with the Ref's
value as an explicit input and its final value as an explicit output
(:func:`carrying_refs`, :func:`borrowed`), then writes that output back.  A
transformation that cannot carry Refs turns the signal into a
:class:`~plait.errors.RefError` (see :func:`~plait.frontend.core.tracing.trace_flat`).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from typing import Any, TypeVar

import numpy as np

from plait.frontend.core.array_base import Array
from plait.frontend.core.array_impl import ArrayImpl
from plait.frontend.core.host_values import as_host_array, value_aval
from plait.frontend.core.promotion import python_scalar_dtype
from plait.frontend.core.slices import Slice
from plait.frontend.core.tracing import ForeignRef, Trace, Tracer, bind1, current_trace
from plait.ir import dtypes as dt
from plait.ir import primitives as P
from plait.ir.avals import ShapedArray
from plait.ir.errors import RefError

__all__ = ["Ref", "AbstractRef", "ForeignRef", "carrying_refs", "borrowed", "read", "write",
           "ref_leaves", "check_distinct"]

T = TypeVar("T")


class AbstractRef:
    """The type of a :class:`Ref`: the type of the array it holds, ``Ref{f32[3]}``."""

    __slots__ = ("inner_aval",)

    def __init__(self, inner_aval: ShapedArray) -> None:
        self.inner_aval = inner_aval
        """The type of the value the Ref holds."""

    @property
    def shape(self) -> tuple[int, ...]:
        """The shape of the value."""
        return self.inner_aval.shape

    @property
    def dtype(self) -> np.dtype[Any]:
        """The dtype of the value."""
        return self.inner_aval.dtype

    @property
    def ndim(self) -> int:
        """The rank of the value."""
        return len(self.inner_aval.shape)

    def __eq__(self, other: object) -> bool:
        return type(other) is AbstractRef and other.inner_aval == self.inner_aval

    def __hash__(self) -> int:
        return hash(("Ref", self.inner_aval))

    def __repr__(self) -> str:
        return f"Ref{{{self.inner_aval.str_short(short_dtypes=False)}}}"


_ELSEWHERE = object()
"""The home of a Ref that no trace may freeze (a jit or vmap argument's stand-in)."""


class Ref:
    """A mutable array: read with ``r[idx]``, write with ``r[idx] = v`` (NumPy
    indexing; ``r[...]`` is the whole value).  Create one with
    :func:`plait.new_ref`; :func:`plait.freeze` gives its final value as an Array.

    A Ref is not an Array: to compute with it, read it first (``jnp.sin(r[...])``).
    It may be closed over by ``jit``, ``scan``, ``fori_loop``, ``while_loop`` and
    ``cond`` bodies, and passed to ``jit`` and ``vmap``; see ``docs/refs.md``.
    """

    __slots__ = ("_value", "_owner", "_home", "_freed", "__weakref__")

    def __init__(self, value: Array) -> None:
        self._value: Any = value
        self._owner: Trace | None = current_trace()
        self._home: object = self._owner
        self._freed = False

    @property
    def aval(self) -> AbstractRef:
        """The Ref's type."""
        return AbstractRef(value_aval(self._value))

    @property
    def shape(self) -> tuple[int, ...]:
        """The shape of the value held."""
        return tuple(self._value.shape)

    @property
    def dtype(self) -> np.dtype[Any]:
        """The dtype of the value held."""
        return value_aval(self._value).dtype

    @property
    def ndim(self) -> int:
        """The rank of the value held."""
        return len(self._value.shape)

    @property
    def size(self) -> int:
        """The number of elements of the value held."""
        return int(np.prod(self._value.shape, dtype=np.int64))

    @property
    def weak_type(self) -> bool:
        """Whether the value held is weakly typed (a Ref made from a Python scalar)."""
        return value_aval(self._value).weak_type

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __getitem__(self, index: Any) -> Array:
        return get(self, index)

    def __setitem__(self, index: Any, value: Any) -> None:
        set_(self, index, value)

    @property
    def at(self) -> Any:
        """Not available on a Ref (as in JAX): write with ``r[idx] = v``."""
        raise NotImplementedError("a Ref has no .at[]: write with ref[idx] = value, or read "
                                  "its value with ref[...] and use .at[] on that")

    def unsafe_buffer_pointer(self) -> int:
        """The address of the device buffer holding the value (top level only)."""
        return int(read(self).unsafe_buffer_pointer())

    def __repr__(self) -> str:
        v = self._value
        if isinstance(v, Tracer):
            return f"Ref<{v.aval.str_short(short_dtypes=False)}>"
        text = repr(v)
        return "Ref" + text[text.index("("):] if "(" in text else f"Ref({text})"


def _check_access(ref: Ref) -> None:
    if ref._freed:
        raise RefError("this Ref was freed (free_ref) and cannot be used any more")
    t = current_trace()
    owner = ref._owner
    if owner is t:
        return
    if owner is not None and not owner.active:
        raise RefError(f"a Ref created inside a traced function ({owner.purpose}) is used "
                       "after that function returned; freeze it (plait.freeze) and return "
                       "the array instead")
    assert t is not None
    raise ForeignRef(ref, t)


def read(ref: Ref) -> Any:
    """The whole value of ``ref`` (an Array, or a tracer of the current trace)."""
    _check_access(ref)
    return ref._value


def write(ref: Ref, value: Any) -> None:
    """Replace the whole value of ``ref`` (``value`` already of its type)."""
    _check_access(ref)
    ref._value = value


def indexed_shape(shape: tuple[int, ...], index: Any) -> tuple[int, ...]:
    """The shape ``x[index]`` has for an ``x`` of ``shape`` (index arrays by their shapes)."""
    idx = index if isinstance(index, tuple) else (index,)
    host: list[Any] = []
    for i in idx:
        if type(i) is Slice:  # (its static extent; the start is clamped into bounds)
            host.append(slice(0, i.extent, i.stride))
        elif isinstance(i, Array) or (isinstance(i, np.ndarray) and i.ndim):
            if dt.is_bool(np.dtype(i.dtype)):
                raise RefError("a Ref cannot be indexed with a boolean mask; use "
                               "jnp.where on its value instead")
            host.append(np.zeros(i.shape, np.intp))
        else:
            host.append(i)
    probe = np.broadcast_to(np.zeros((), np.int8), shape)
    try:
        return tuple(probe[tuple(host)].shape)
    except IndexError as e:
        raise RefError(f"Out of bound indexer for a Ref of shape {shape}: {e}") from None


def _is_whole(index: Any) -> bool:
    # (None is the whole value too, as for JAX's Refs: not a new axis.)
    return index is Ellipsis or index is None or (type(index) is tuple and (
        not index or len(index) == 1 and index[0] is Ellipsis))


def get(ref: Ref, index: Any = Ellipsis) -> Array:
    """``ref[index]``: the indexed part of the value (NumPy indexing)."""
    value = read(ref)
    if _is_whole(index):
        return value  # type: ignore[no-any-return]  # (an Array or tracer)
    indexed_shape(tuple(value.shape), index)  # out-of-bounds integers raise, as in JAX
    return value[index]  # type: ignore[no-any-return]  # (an Array or tracer)


def _kind(d: np.dtype[Any]) -> str:
    return "c" if dt.is_complex(d) else "f" if dt.is_float(d) else "i" if dt.is_integer(d) \
        else "b"


def _value_type(x: Any) -> ShapedArray:
    """``x``'s type; a Python scalar is weakly typed (except a bool)."""
    if type(x) in (int, float, complex):
        return ShapedArray((), python_scalar_dtype(x), True)
    return value_aval(x)


def _checked(ref: Ref, index: Any, value: Any) -> tuple[ShapedArray, ShapedArray]:
    """The types of ``ref``'s value and of ``value``, checked against each other.

    Raises:
      RefError: a shape other than that of the part of ``ref`` written, or a dtype
        other than the Ref's (a weakly typed value of the same kind, like a Python
        float, is converted).
    """
    aval = value_aval(ref._value)
    want = aval.shape if _is_whole(index) else indexed_shape(aval.shape, index)
    vaval = _value_type(value)
    if vaval.dtype != aval.dtype and not (
            vaval.weak_type and _kind(vaval.dtype) == _kind(aval.dtype)):
        raise RefError(f"Invalid dtype for a Ref write: expected {aval.dtype} (the Ref's "
                       f"dtype), but got a value of dtype {vaval.dtype}; convert it with "
                       f".astype({aval.dtype})")
    if tuple(vaval.shape) != tuple(want):
        raise RefError(f"Invalid shape for a Ref write: the Ref has shape {aval.shape} and "
                       f"the indexed part shape {want}, but the value has shape "
                       f"{tuple(vaval.shape)} (values are not broadcast)")
    return aval, vaval


def _as_type(x: Any, dtype: np.dtype[Any], weak: bool) -> Any:
    """``x`` (an Array, or host data converted on the host) with this dtype and weak type."""
    if not isinstance(x, Array):
        return ArrayImpl.from_numpy(as_host_array(x).astype(dtype), weak)
    a = value_aval(x)
    if a.dtype == dtype and a.weak_type == weak:
        return x
    return bind1(P.convert_element_type_p, x, new_dtype=dtype, weak_type=weak, sharding=None)


def swap(ref: Ref, index: Any, value: Any) -> Array:
    """``old, ref[index] = ref[index], value``: write ``value``, return what it replaced."""
    old = get(ref, index)
    set_(ref, index, value)
    return old


def set_(ref: Ref, index: Any, value: Any) -> None:
    """``ref[index] = value``.  As in JAX, a write leaves the Ref strongly typed."""
    current = read(ref)
    aval, _ = _checked(ref, index, value)
    if _is_whole(index):
        ref._value = _as_type(value, aval.dtype, False)
        return
    # (A Python scalar goes in as it is: the update converts it itself.)
    v = value if type(value) in (int, float, complex) else _as_type(value, aval.dtype, False)
    ref._value = _as_type(current.at[index].set(v), aval.dtype, False)


def addupdate(ref: Ref, index: Any, value: Any) -> None:
    """``ref[index] += value``, in one update (weakly typed if both sides are)."""
    current = read(ref)
    aval, vaval = _checked(ref, index, value)
    v = _as_type(value, aval.dtype, vaval.weak_type)
    new = current + v if _is_whole(index) else current.at[index].add(v)
    ref._value = _as_type(new, aval.dtype, aval.weak_type and vaval.weak_type)


@contextlib.contextmanager
def borrowed(refs: Sequence[Ref], values: Sequence[Any]) -> Iterator[None]:
    """Inside, each of ``refs`` belongs to the current trace and holds the matching
    value (a tracer of it): how a transformation carries Refs in and out.  Their
    final values must be read inside; on exit each Ref is as it was."""
    t = current_trace()
    saved = [(r._owner, r._value) for r in refs]
    for r, v in zip(refs, values, strict=True):
        r._owner, r._value = t, v
    try:
        yield
    finally:
        for r, (o, v) in zip(refs, saved):
            r._owner, r._value = o, v


def carrying_refs(attempt: Callable[[object, tuple[Ref, ...]], T]) -> T:
    """``attempt(token, refs)``, again with each Ref its traces meet added to ``refs``.

    ``attempt`` passes ``token`` to the traces it makes (``trace_to_jaxpr(...,
    refs=token)``); a :class:`ForeignRef` those traces claim means the attempt must
    carry one more Ref.  Signals claimed by other traces pass through.
    """
    token = object()
    refs: tuple[Ref, ...] = ()
    while True:
        try:
            return attempt(token, refs)
        except ForeignRef as e:
            if e.claimed_by is not token:
                raise
            if any(e.ref is r for r in refs):  # (carried, yet met again: a plait bug)
                raise RefError(f"plait could not carry a Ref through this {e.trace.purpose}; "
                               "this is a bug in plait, please report it") from None
            refs += (e.ref,)


def ref_leaves(leaves: Sequence[Any]) -> list[int]:
    """The positions of the Refs among ``leaves``."""
    return [i for i, x in enumerate(leaves) if type(x) is Ref]


def check_distinct(refs: Sequence[Ref], what: str) -> None:
    """Refuse the same Ref twice (an argument twice, or passed and closed over).

    Raises:
      RefError: a Ref appears more than once.
    """
    seen: set[int] = set()
    for r in refs:
        if id(r) in seen:
            raise RefError(f"{what}: the same Ref is passed more than once (as two arguments, "
                           "or as an argument the function also closes over); Refs may not "
                           "alias")
        seen.add(id(r))

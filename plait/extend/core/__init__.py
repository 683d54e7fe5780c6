"""``plait.extend.core``: primitives and jaxprs, as ``jax.extend.core``.

``Primitive`` here is the JAX way of defining one (``Primitive("name")`` and rules
registered afterwards); the jaxpr classes are plait's IR (``plait.ir``)."""

import weakref
from collections.abc import Callable, Iterator
from typing import Any

from plait.errors import ArgumentError, RefError

# ``name as name`` marks a re-export for mypy --strict users.
from plait.extend.core import primitives as primitives
from plait.frontend.api.user_primitives import Primitive as Primitive
from plait.frontend.api.user_traces import set_current_trace as set_current_trace
from plait.frontend.api.user_traces import take_current_trace as take_current_trace
from plait.frontend.core.apply_jaxpr import jaxpr_function
from plait.frontend.core.arguments import abstractify
from plait.frontend.core.refs import Ref
from plait.frontend.core.trace_queries import find_top_trace as find_top_trace
from plait.frontend.core.tracing import Trace, current_trace
from plait.ir import ClosedJaxpr as ClosedJaxpr
from plait.ir import Effect as Effect
from plait.ir import Eqn as JaxprEqn
from plait.ir import Jaxpr as Jaxpr
from plait.ir import Literal as Literal
from plait.ir import Var as Var
from plait.ir import check_jaxpr as check_jaxpr
from plait.ir import subjaxprs as subjaxprs
from plait.ir.avals import AbstractValue, ShapedArray, shaped
from plait.ir.errors import JaxprTypeError as JaxprTypeError
from plait.ir.sharding import NamedSharding, PartitionSpec

__all__ = ["ClosedJaxpr", "DropVar", "Effect", "Jaxpr", "JaxprEqn", "JaxprTypeError", "Literal",
           "OpaqueTraceState", "Primitive", "TraceTag", "Var", "check_jaxpr", "find_top_trace",
           "get_opaque_trace_state", "jaxpr_as_fun", "jaxprs_in_params", "mapped_aval",
           "primitives",
           "set_current_trace", "subjaxprs", "take_current_trace", "unmapped_aval", "valid_jaxtype"]


def jaxpr_as_fun(closed: ClosedJaxpr) -> Callable[..., list[Any]]:
    """A function applying ``closed`` to its arguments; it returns the list of outputs
    (traced when called under a transformation, compiled and run otherwise)."""
    if not isinstance(closed, ClosedJaxpr):
        raise TypeError(f"jaxpr_as_fun: expected a ClosedJaxpr, but got {closed!r}")
    return jaxpr_function(closed, "jaxpr_as_fun")


class OpaqueTraceState:
    """Which trace was innermost when taken (none: running eagerly), as JAX's: two are
    equal when taken under the same trace, even after it ended.  It does not keep the
    trace alive."""

    __slots__ = ("_trace", "_hash")

    def __init__(self, trace: Trace | None) -> None:
        # (CPython gives every weak reference to one object without a callback as the one
        # reference object, and a dead reference equals only itself.)
        self._trace = None if trace is None else weakref.ref(trace)
        self._hash = hash(trace)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, OpaqueTraceState):
            return NotImplemented
        return self._trace == other._trace

    def __hash__(self) -> int:
        return self._hash

    def __repr__(self) -> str:
        if self._trace is None:
            return "OpaqueTraceState(eager)"
        trace = self._trace()
        return f"OpaqueTraceState({trace.purpose if trace else 'ended trace'})"


def jaxprs_in_params(params: dict[str, Any]) -> Iterator[Jaxpr]:
    """The jaxprs among an equation's params, in order (a closed jaxpr gives its jaxpr; a
    tuple of them, each): the sub-programs an interpreter recurses into."""
    for value in params.values():
        for v in value if isinstance(value, tuple) else (value,):
            if isinstance(v, Jaxpr):
                yield v
            elif isinstance(v, ClosedJaxpr):
                yield v.jaxpr


def get_opaque_trace_state(convention: str | None = None) -> OpaqueTraceState:
    """The innermost trace now, as an object to compare with one taken later (a library
    checks its state is used under the trace that made it).  ``convention`` names the
    caller (JAX's argument; any string is accepted)."""
    return OpaqueTraceState(current_trace())


def valid_jaxtype(x: Any) -> bool:
    """Whether ``x`` can be an argument of a transformed function: an array (a key array
    included), a scalar, a Ref or a ``ShapeDtypeStruct``; not a container, a string or an
    array of objects."""
    if isinstance(x, Ref):
        return True
    try:
        abstractify(x, "x", "valid_jaxtype")
    except (ArgumentError, RefError):
        return False
    return True


class DropVar:
    """JAX's type of an equation output that nothing reads. plait's jaxprs have none: such
    an output is a :class:`Var` like any other (printed ``_``), so no atom is a
    ``DropVar``; the class is here for code that asks ``isinstance(atom, DropVar)``."""

    __slots__ = ()

    def __new__(cls, *args: Any, **kwargs: Any) -> "DropVar":
        raise TypeError("DropVar: plait's jaxprs have no dropped variables; an unused "
                        "output is a Var (plait.extend.core.Var) that nothing reads")


class TraceTag:
    """A token a library makes to tell its own traces apart (by identity: ``is``). As
    JAX's, all tags are equal, so that a function cached with one is found with another."""

    __slots__ = ("__weakref__",)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, TraceTag)

    def __hash__(self) -> int:
        return hash(TraceTag)


def _with_spec(aval: ShapedArray, shape: tuple[int, ...], spec: tuple[Any, ...] | None
               ) -> ShapedArray:
    s = aval.explicit_sharding
    sharding = None if s is None or spec is None else NamedSharding(s.mesh, PartitionSpec(*spec))
    return aval.update(shape=shape, sharding=sharding)


def mapped_aval(size: int, axis: int | None, aval: AbstractValue) -> ShapedArray:
    """The type of one element of a batch of ``size`` values of type ``aval`` stacked
    along ``axis`` (``None``: not batched, ``aval`` itself), as a batching rule sees it.

    Raises:
      ValueError: ``aval`` has no dimension ``axis`` of size ``size``.
    """
    a = shaped(aval)
    if axis is None:
        return a
    if not 0 <= axis < a.ndim or a.shape[axis] != size:
        raise ValueError(f"mapped_aval: expected a dimension {axis} of size {size}, but got "
                         f"a value of type {a.str_short()}")
    spec = None if a.explicit_sharding is None else \
        a.explicit_sharding.spec.padded(a.ndim)
    return _with_spec(a, a.shape[:axis] + a.shape[axis + 1:],
                      None if spec is None else spec[:axis] + spec[axis + 1:])


def unmapped_aval(size: int, axis: int | None, aval: AbstractValue,
                  explicit_mesh_axis: Any = None) -> ShapedArray:
    """The type of ``size`` values of type ``aval`` stacked along ``axis`` (``None``: not
    batched, ``aval`` itself); ``explicit_mesh_axis`` splits the new dimension over mesh
    axes in the type's sharding.

    Raises:
      ValueError: ``axis`` is out of range.
    """
    a = shaped(aval)
    if axis is None:
        return a
    if not 0 <= axis <= a.ndim:
        raise ValueError(f"unmapped_aval: expected an axis in [0, {a.ndim}], but got {axis}")
    spec = None if a.explicit_sharding is None else \
        a.explicit_sharding.spec.padded(a.ndim)
    return _with_spec(a, a.shape[:axis] + (size,) + a.shape[axis:],
                      None if spec is None else spec[:axis] + (explicit_mesh_axis,) + spec[axis:])

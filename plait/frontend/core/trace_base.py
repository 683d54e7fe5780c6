"""The bases a library subclasses to write a trace of its own, as JAX's ``core.Trace``
and ``core.Tracer``.

A library's trace intercepts every primitive applied while it is the current trace
(:func:`plait.extend.core.set_current_trace`): ``bind`` calls its
:meth:`BaseTrace.process_primitive` with the operands, the library's tracers among them,
and the trace answers with tracers of its own.  To compute, it binds primitives under
the trace it was made in (``with set_current_trace(parent): prim.bind(...)``).  plait's
own staging trace subclasses :class:`BaseTrace` too, so a library can stage into it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from plait.frontend.core.array_base import Array
from plait.ir.avals import AbstractValue, ShapedArray
from plait.ir.errors import (
    ConcretizationTypeError,
    TracerArrayConversionError,
    TracerBoolConversionError,
    TracerIntegerConversionError,
)
from plait.ir.primitive import Primitive

__all__ = ["BaseTrace", "BaseTracer"]


class BaseTrace:
    """A trace: what ``bind`` hands a primitive to while the trace is current.

    Subclass it and override :meth:`process_primitive` (and, for functions with custom
    derivatives, :meth:`process_custom_jvp_call` and :meth:`process_custom_vjp_call`).
    """

    __slots__ = ("__weakref__", "_invalidated")

    def __init__(self) -> None:
        self._invalidated = False

    def process_primitive(self, primitive: Primitive, tracers: Sequence[Any],
                          params: dict[str, Any], /) -> Any:
        """``primitive`` applied to ``tracers`` (this trace's tracers among them): a
        tracer, or a list of them for a primitive with several results."""
        raise NotImplementedError("must override")

    def process_call(self, call_primitive: Primitive, f: Any, tracers: Sequence[Any],
                     params: dict[str, Any], /) -> Any:
        """A call primitive in JAX's final style; plait never calls it (a call is a
        primitive with its jaxpr in ``params``, given to :meth:`process_primitive`)."""
        raise NotImplementedError(f"{type(self)} must override process_call to handle "
                                  "call-like primitives")

    def process_custom_jvp_call(self, primitive: Primitive, fun: Any, jvp: Any,
                                tracers: Sequence[Any], /, *, symbolic_zeros: bool) -> Any:
        """A function with a custom JVP rule applied to ``tracers``: ``fun`` and ``jvp``
        are wrapped functions (``call_wrapped``) over flat lists; ``jvp`` takes the
        primals then their tangents and returns the outputs then theirs."""
        raise NotImplementedError(f"{type(self)} must override process_custom_jvp_call "
                                  "to handle custom_jvp primitives")

    def process_custom_vjp_call(self, primitive: Primitive, fun: Any, fwd: Any, bwd: Any,
                                tracers: Sequence[Any], /, *, out_trees: Callable[[], Any],
                                symbolic_zeros: bool) -> Any:
        """A function with a custom VJP rule applied to ``tracers`` (``fun`` as in
        :meth:`process_custom_jvp_call`)."""
        raise NotImplementedError(f"{type(self)} must override process_custom_vjp_call "
                                  "to handle custom_vjp primitives")

    def stage_value(self, val: Any) -> Any:
        """``val`` as a value of this trace."""
        raise NotImplementedError("must override")

    def invalidate(self) -> None:
        """Mark the trace ended."""
        self._invalidated = True

    def is_valid(self) -> bool:
        """Whether the trace has not ended."""
        return not self._invalidated

    def full_raise(self, x: Any) -> Any:
        """``x`` (JAX's deprecated lifting, the identity)."""
        return x

    @property
    def main(self) -> Any:
        """The trace's tag (JAX's deprecated ``main``)."""
        return getattr(self, "tag", None)

    def __repr__(self) -> str:
        return type(self).__name__


class BaseTracer(Array):
    """A value of a :class:`BaseTrace`: it has an abstract value (``aval``) and the
    array API of :mod:`plait.numpy`, whose operations bind primitives that its trace
    processes.  Converting one to a Python or NumPy value is an error unless
    :meth:`to_concrete_value` knows the value."""

    __slots__ = ("_trace", "aval", "__weakref__")
    __array_priority__ = 1000
    _trace: BaseTrace

    def __init__(self, trace: BaseTrace, aval: AbstractValue | None = None) -> None:
        self._trace = trace
        if aval is not None:
            self.aval = aval  # type: ignore[misc, assignment]  # (a slot here, Array's property)

    def to_concrete_value(self) -> Any:
        """The concrete value if there is one, else ``None``."""
        return None

    def full_lower(self) -> Any:
        """The value itself (JAX's deprecated lowering)."""
        return self

    def get_referent(self) -> Any:
        """The object this tracer stands for, to compare by identity."""
        return self

    def _error_repr(self) -> str:
        aval = self.aval
        what = aval.str_short() if isinstance(aval, ShapedArray) else repr(aval)
        return f"traced value of type {what} of {type(self._trace).__name__}"

    def _concrete(self, what: str, cls: type[Exception]) -> Any:
        value = self.to_concrete_value()
        if value is None:
            raise cls(f"Attempted {what} of a {self._error_repr()}: its trace does not "
                      "know the value. Compute with the array functions (plait.numpy, "
                      "plait.lax) instead, or convert it outside the trace.")
        return value

    def __bool__(self) -> bool:
        return bool(self._concrete("boolean conversion", TracerBoolConversionError))

    def __int__(self) -> int:
        return int(self._concrete("conversion with int()", ConcretizationTypeError))

    def __index__(self) -> int:
        return int(self._concrete("conversion to a Python int", TracerIntegerConversionError))

    def __float__(self) -> float:
        return float(self._concrete("conversion with float()", ConcretizationTypeError))

    def __complex__(self) -> complex:
        return complex(self._concrete("conversion with complex()", ConcretizationTypeError))

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        return np.asarray(self._concrete("conversion to a NumPy array",
                                         TracerArrayConversionError), dtype)

    def tolist(self) -> Any:
        """The contents as nested lists, if the trace knows the value."""
        return np.asarray(self._concrete("conversion with tolist()",
                                         ConcretizationTypeError)).tolist()

    def item(self, *args: int) -> Any:
        """An element (the only one, or the one ``args`` index), if the trace knows the
        value."""
        return np.asarray(self._concrete("conversion with item()",
                                         ConcretizationTypeError)).item(*args)

    def __repr__(self) -> str:
        return f"Traced<{self.aval!r}>with<{self._trace!r}>"

"""``call_p`` and ``closed_call_p``: JAX's call primitives, which plait's IR does not have.

JAX stages a call of a sub-function as an equation of one of these; plait inlines such
calls (or stages ``jit``'s).  Code written against JAX that binds them, or keys tables on
them (numpyro's provenance rules), gets these objects: their ``bind`` evaluates the call
(inlined into the current trace when tracing), and a jaxpr plait traces never holds them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from plait.frontend.api.linear_util import WrappedFun
from plait.frontend.core.apply_jaxpr import apply_jaxpr
from plait.ir.jaxpr import ClosedJaxpr

__all__ = ["CallPrimitive", "call_p", "closed_call_p"]


class CallPrimitive:
    """A call primitive of JAX's, bound by evaluating the call: it is never an equation's
    primitive in plait (hashable by identity, so usable as a dict key)."""

    multiple_results: Final = True
    call_primitive: Final = True

    def __init__(self, name: str, evaluate: Callable[..., Any]) -> None:
        self.name = name
        self._evaluate = evaluate

    def bind(self, /, *args: Any, **params: Any) -> Any:
        """Evaluate the call on ``args`` (staged into the current trace when tracing)."""
        return self._evaluate(*args, **params)

    def __repr__(self) -> str:
        return self.name


def _call(fun: WrappedFun, *args: Any, **params: Any) -> Any:
    if not isinstance(fun, WrappedFun):
        raise TypeError(f"call_p.bind: expected a WrappedFun (linear_util.wrap_init(f, ...)) "
                        f"as the first argument, but got {fun!r}")
    del params  # (as JAX's call_p, whose evaluation ignores its params)
    return fun.call_wrapped(*args)


def _closed_call(*args: Any, call_jaxpr: ClosedJaxpr | None = None, **params: Any) -> list[Any]:
    if not isinstance(call_jaxpr, ClosedJaxpr):
        raise TypeError(f"closed_call_p.bind: expected call_jaxpr=<a ClosedJaxpr>, but got "
                        f"{call_jaxpr!r}")
    if len(args) != len(call_jaxpr.jaxpr.invars):
        raise TypeError(f"closed_call_p.bind: expected {len(call_jaxpr.jaxpr.invars)} "
                        f"arguments for call_jaxpr, but got {len(args)}")
    del params
    return apply_jaxpr(call_jaxpr.jaxpr, call_jaxpr.consts, args, "closed_call")


call_p: Final = CallPrimitive("call", _call)
"""``call_p.bind(wrapped_fun, *args)`` is ``wrapped_fun.call_wrapped(*args)``."""
closed_call_p: Final = CallPrimitive("closed_call", _closed_call)
"""``closed_call_p.bind(*args, call_jaxpr=closed)`` evaluates ``closed`` on ``args``."""

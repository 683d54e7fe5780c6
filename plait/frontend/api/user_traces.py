"""Library-defined traces, as JAX's: a library subclasses :class:`~plait.core.Trace` and
:class:`~plait.core.Tracer`, makes its trace current with :func:`set_current_trace`, and
its ``process_primitive`` then receives every primitive bound, until the block ends.

plait's own transformations stage jaxprs and rewrite them; a library's trace sees the
primitives those jaxprs apply.  Under a library's trace, what would run eagerly binds
a primitive instead: a ``jit`` call binds ``jit`` (its jaxpr in the parameters), control
flow binds ``scan``, ``cond`` or ``while``, a transformed function's jaxpr is applied
equation by equation, and a function with a custom derivative reaches the trace's
``process_custom_jvp_call`` (or ``process_custom_vjp_call``).  A staging trace that
holds a library's tracer (a function traced under the library's trace closes over it)
takes it as a constant, which the equation holding the jaxpr passes on to the library.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from plait.frontend.api.custom_derivatives import custom_jvp
from plait.frontend.api.linear_util import WrappedFun, wrap_init
from plait.frontend.api.pullback import float0_zeros
from plait.frontend.core import tracing
from plait.frontend.core.apply_jaxpr import apply_jaxpr, jaxpr_function
from plait.frontend.core.host_values import value_aval
from plait.frontend.core.trace_base import BaseTrace
from plait.frontend.core.tracing import Trace, enter_user_trace, leave_user_trace
from plait.ir import dtypes as dt
from plait.ir import primitive as ir_primitive
from plait.ir.atoms import Literal
from plait.ir.debug_info import DebugInfo
from plait.ir.primitive import Primitive
from plait.ir.primitives.custom import (
    custom_jvp_call_p,
    custom_vjp_call_p,
    deferred_rule_error,
)

__all__ = ["EvalTrace", "EVAL_TRACE", "full_lower", "set_current_trace", "take_current_trace"]


class EvalTrace(BaseTrace):
    """Eager evaluation as a trace: the current trace outside every other (what
    :func:`take_current_trace` gives there), as JAX's ``EvalTrace``."""

    __slots__ = ()

    def process_primitive(self, primitive: Primitive, tracers: Sequence[Any],
                          params: dict[str, Any], /) -> Any:
        """``primitive`` run on ``tracers`` (concrete values)."""
        with set_current_trace(self):
            return primitive.bind(*tracers, **params)

    def process_custom_jvp_call(self, primitive: Primitive, fun: Any, jvp: Any,
                                tracers: Sequence[Any], /, *, symbolic_zeros: bool) -> Any:
        """``fun`` run on ``tracers``: no derivative is taken here."""
        return fun.call_wrapped(*tracers)

    def process_custom_vjp_call(self, primitive: Primitive, fun: Any, fwd: Any, bwd: Any,
                                tracers: Sequence[Any], /, *, out_trees: Callable[[], Any],
                                symbolic_zeros: bool) -> Any:
        """``fun`` run on ``tracers``: no derivative is taken here."""
        return fun.call_wrapped(*tracers)

    def stage_value(self, val: Any) -> Any:
        """``val`` itself."""
        return val


EVAL_TRACE = EvalTrace()


def full_lower(x: Any) -> Any:
    """``x`` lowered (JAX's deprecated ``core.full_lower``): a tracer's own ``full_lower()``,
    else ``x``."""
    lower = getattr(x, "full_lower", None)
    return x if lower is None else lower()


@contextlib.contextmanager
def take_current_trace() -> Iterator[BaseTrace]:
    """The current trace, for the ``with`` block: a library's, plait's innermost staging
    trace, or :data:`EVAL_TRACE` when running eagerly.  As in JAX, the trace is taken:
    in the block the current trace is eager evaluation, until ``set_current_trace``."""
    user = tracing.user_trace()
    staging = tracing.current_trace()
    taken = user if user is not None else EVAL_TRACE if staging is None else staging
    saved = enter_user_trace(_current_for(EVAL_TRACE))
    try:
        yield taken
    finally:
        leave_user_trace(saved)


@contextlib.contextmanager
def set_current_trace(trace: BaseTrace | None, check_leaks: bool = False) -> Iterator[None]:
    """Run the ``with`` block under ``trace``: a library's trace (every primitive bound in
    the block goes to its ``process_primitive``), the trace a library's trace was made in,
    or eager evaluation (:data:`EVAL_TRACE`, or ``None``).

    Raises:
      NotImplementedError: ``trace`` is a staging trace of plait's other than the
        innermost (plait's transformations enter and leave their own traces).
      TypeError: ``trace`` is not a trace.
    """
    del check_leaks  # (JAX's leak check here; plait's is the check_tracer_leaks option)
    saved = enter_user_trace(_current_for(trace))
    try:
        yield
    finally:
        leave_user_trace(saved)


def _current_for(trace: BaseTrace | None) -> BaseTrace | None:
    """What :func:`enter_user_trace` takes to make ``trace`` current."""
    staging = tracing._state.stack
    if trace is None or type(trace) is EvalTrace:
        return EVAL_TRACE if staging else None
    if type(trace) is Trace:
        if not staging or staging[-1] is not trace:
            raise NotImplementedError(
                f"set_current_trace: expected the innermost staging trace "
                f"({staging[-1] if staging else 'none'!r}) or a library's trace, but got "
                f"{trace!r}: plait's transformations enter and leave their own traces")
        return None
    if not isinstance(trace, BaseTrace):
        raise TypeError(f"set_current_trace: expected a trace (a subclass of "
                        f"plait.core.Trace) or None, but got {trace!r}")
    return trace


def _process(trace: BaseTrace, prim: Primitive, args: Sequence[Any],
             params: dict[str, Any]) -> Any:
    """``prim`` handed to the current trace ``trace`` (``bind``'s path to a library).

    During the call the current trace is eager evaluation, as in JAX: the library binds
    under its parent trace with ``set_current_trace``.
    """
    if type(trace) is EvalTrace:
        assert tracing._eager_impl is not None
        return tracing._eager_impl(prim, args, params)
    args = [_literal_value(a) if type(a) is Literal else a for a in args]
    saved = enter_user_trace(EVAL_TRACE)
    try:
        if prim is custom_jvp_call_p:
            fun, jvp = _jvp_funs(params)
            return trace.process_custom_jvp_call(prim, fun, jvp, list(args),
                                                 symbolic_zeros=params["symbolic_zeros"])
        if prim is custom_vjp_call_p:
            fun, fwd, bwd, out_trees = _vjp_funs(params)
            return trace.process_custom_vjp_call(prim, fun, fwd, bwd, list(args),
                                                 out_trees=out_trees,
                                                 symbolic_zeros=params["symbolic_zeros"])
        return trace.process_primitive(prim, list(args), params)
    finally:
        leave_user_trace(saved)


def _literal_value(lit: Literal) -> Any:
    """A jaxpr's literal operand as a value, as JAX's trace gets it: a Python scalar if
    weakly typed, else a NumPy scalar of its dtype."""
    return lit.val if lit.aval.weak_type else np.asarray(lit.val, lit.aval.dtype)[()]


def _wrapped(f: Callable[..., Any], name: str) -> WrappedFun:
    return wrap_init(f, debug_info=DebugInfo(name, (), ()))


def _jvp_funs(params: dict[str, Any]) -> tuple[WrappedFun, WrappedFun]:
    """A ``custom_jvp_call``'s function and rule as JAX's trace gets them: flat, the
    rule taking the primals then a tangent for each, and returning the outputs then a
    tangent for each (``float0`` zeros for those that have none)."""
    name = params["name"]
    call, jvp_jaxpr = params["call_jaxpr"], params["jvp_jaxpr"]
    rule_error = params.get("rule_error")

    def jvp(*primals_and_tangents: Any) -> list[Any]:
        if rule_error is not None:
            raise deferred_rule_error(rule_error)
        n = len(primals_and_tangents) // 2
        primals, tangents = primals_and_tangents[:n], primals_and_tangents[n:]
        inexact = [t for p, t in zip(primals, tangents)
                   if dt.is_inexact(value_aval(p).dtype)]
        outs = apply_jaxpr(jvp_jaxpr.jaxpr, jvp_jaxpr.consts, (*primals, *inexact), name)
        n_out = len(call.out_avals)
        it = iter(outs[n_out:])
        return [*outs[:n_out], *[next(it) if dt.is_inexact(a.dtype) else float0_zeros(a)
                                 for a in call.out_avals]]
    return _wrapped(jaxpr_function(call, name), name), _wrapped(jvp, name)


def _vjp_funs(params: dict[str, Any]) -> tuple[WrappedFun, WrappedFun, WrappedFun,
                                               Callable[[], Any]]:
    """A ``custom_vjp_call``'s function, forward and backward rules, flat: ``fwd`` returns
    the outputs then the residuals, ``bwd`` takes the residuals then the outputs'
    cotangents; ``out_trees()`` gives the number of outputs and of residuals."""
    name = params["name"]
    call, fwd, bwd = params["call_jaxpr"], params["fwd_jaxpr"], params["bwd_jaxpr"]
    n_out = len(call.out_avals)
    return (_wrapped(jaxpr_function(call, name), name),
            _wrapped(jaxpr_function(fwd, name), name),
            _wrapped(jaxpr_function(bwd, name), name),
            lambda: (n_out, len(fwd.out_avals) - n_out))


def _bind_with_trace(prim: Primitive, trace: Any, args: Sequence[Any],
                     params: dict[str, Any]) -> Any:
    """``prim.bind_with_trace(trace, args, avals, params)``: ``prim`` applied under
    ``trace``.  A ``custom_jvp_call`` may come as JAX's trace passes it on, its function
    and rule wrapped (``subfuns``)."""
    if "subfuns" in params:
        if prim is not custom_jvp_call_p:
            raise NotImplementedError(
                f"{prim.name}.bind_with_trace: plait takes wrapped functions (subfuns) for "
                "custom_jvp_call only; apply the function under the trace instead")
        fun, jvp = params["subfuns"]
        return _custom_jvp_under(trace, fun, jvp, args, bool(params.get("symbolic_zeros")))
    with set_current_trace(trace):
        return prim.bind(*args, **params)


def _custom_jvp_under(trace: Any, fun: Any, jvp: Any, args: Sequence[Any],
                      symbolic_zeros: bool) -> list[Any]:
    """A function with a custom JVP rule, both wrapped and flat, applied under ``trace``."""
    if type(trace) is not Trace:
        saved = enter_user_trace(EVAL_TRACE)
        try:
            return list(trace.process_custom_jvp_call(custom_jvp_call_p, fun, jvp, list(args),
                                                      symbolic_zeros=symbolic_zeros))
        finally:
            leave_user_trace(saved)
    # plait traces the function and its rule together (and may trace either again); JAX
    # calls one of them. Their stores (auxiliary outputs, merged by merge_linear_aux)
    # are left as JAX leaves them: the function's filled, the rule's empty.
    def primal(*xs: Any) -> list[Any]:
        _reset_stores(fun)
        return list(fun.call_wrapped(*xs))

    def rule(primals: Sequence[Any], tangents: Sequence[Any]) -> tuple[list[Any], list[Any]]:
        _reset_stores(jvp)
        outs = list(jvp.call_wrapped(*primals, *tangents))
        return outs[:len(outs) // 2], outs[len(outs) // 2:]

    staged = custom_jvp(primal)
    staged.defjvp(rule, symbolic_zeros=symbolic_zeros)
    with set_current_trace(trace):
        outs = list(staged(*args))
    _reset_stores(jvp)
    return outs


def _reset_stores(fun: Any) -> None:
    for store in getattr(fun, "stores", ()):
        if store is not None:
            store.reset()


tracing.set_user_bind(_process)
ir_primitive.set_bind_with_trace_hook(_bind_with_trace)

"""The messages of errors about a traced value: its value asked for while tracing, a
conversion that would drop its derivative, and its use after its trace ended."""

from __future__ import annotations

from typing import TYPE_CHECKING

from plait.frontend.core.source_lines import user_frame_info
from plait.ir.atoms import Var

if TYPE_CHECKING:  # (tracing imports this module)
    from plait.frontend.core.tracing import Tracer

__all__ = ["concrete_message", "differentiated_message", "leak_message"]


def _depends_on(t: Tracer) -> list[str]:
    """The arguments of ``t``'s trace that its value depends on, by name."""
    trace = t._trace
    names = trace.debug_info.arg_names if trace.debug_info else ()
    deps: set[Var] = {t._var}
    for eqn in reversed(trace.builder.eqns):
        if any(v in deps for v in eqn.outvars):
            deps.update(a for a in eqn.invars if type(a) is Var)
    out = []
    for i, v in enumerate(trace.invars):
        if v in deps:
            out.append(names[i] if i < len(names) and names[i] else f"argument {i}")
    return out


def concrete_message(t: Tracer, what: str) -> str:
    """``what`` (a conversion) needs ``t``'s value, which tracing does not know."""
    trace = t._trace
    where = user_frame_info()
    line = f" at {where.file}:{where.line}" if where else ""
    fn = trace.debug_info.func_name if trace.debug_info else "the function"
    deps = _depends_on(t)
    because = (f" It depends on the value of {', '.join(deps)}." if deps else "")
    return (f"Attempted {what} of a traced value of type "
            f"{t.aval.str_short(short_dtypes=False)}{line}, while "
            f"tracing {fn} for {trace.purpose}. Its value is not known during tracing.{because}\n"
            "Use plait.lax.cond, plait.lax.while_loop or plait.numpy.where for value-dependent "
            "control flow, or mark the argument static with static_argnums/static_argnames.")


def differentiated_message(t: Tracer, what: str) -> str:
    """``what`` would drop the derivative of ``t``, a value being differentiated."""
    trace = t._trace
    where = user_frame_info()
    line = f" at {where.file}:{where.line}" if where else ""
    return (f"Attempted {what} of a value being differentiated, of type "
            f"{t.aval.str_short(short_dtypes=False)}{line}, while tracing for {trace.purpose}: the "
            "result would "
            "not carry its derivative. Use x.astype(...) to change a dtype, or compute the "
            "Python value from arguments that are not differentiated.")


def leak_message(t: Tracer) -> str:
    """``t`` is used after its trace ended."""
    trace = t._trace
    fn = trace.debug_info.func_name if trace.debug_info else "a function"
    return (f"Encountered an unexpected tracer: a traced value of type "
            f"{t.aval.str_short(short_dtypes=False)} leaked out of the trace of {fn} for "
            f"{trace.purpose}, which has ended. A traced value escaped its function (through a "
            "global, an attribute, or a closure called later). Return it from the function "
            "instead.")

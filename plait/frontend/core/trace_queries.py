"""What libraries ask of traced values (JAX's ``find_top_trace``, ``JVPTracer`` and
``CustomVJPPrimal.perturbed``): which trace is innermost, and whether a value carries a
tangent.

plait stages every transformation into one kind of trace and differentiates the jaxpr
afterwards, so "carries a tangent" is read from the trace's equations: a traced value
does when it depends on an inexact input of its trace through inexact values, not
through ``stop_gradient``, which is where JAX's JVP would have given it a nonzero
tangent.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from plait.frontend.core.tracing import Trace, Tracer, _state, current_trace

__all__ = ["perturbed", "find_top_trace", "JVPTracer"]


_AUTODIFF: Final = frozenset({"grad", "jvp", "vjp", "linearize", "linear_transpose",
                               "saved_residuals"})
"""The purposes of the traces of the differentiating transformations."""


def perturbed(leaves: Sequence[Any], captured: bool = True, ever: bool = False) -> list[bool]:
    """Whether each leaf may carry a tangent: a traced value of an inexact type that
    depends on an input of its trace (or, with ``captured``, on an outer traced value
    it captured that may carry one), where a differentiating transformation is active at
    its trace's level or outside it.

    With ``ever``, whether it could carry one when its trace's program is differentiated
    now or later (plait reuses a traced program under later transformations): what a
    custom rule traced now may assume.  A differentiating trace takes the values it
    captured as constants; another passes them on to its program's transformations."""
    out = [False] * len(leaves)
    by_trace: dict[Trace, list[int]] = {}
    for i, x in enumerate(leaves):
        if type(x) is Tracer:
            by_trace.setdefault(x._trace, []).append(i)
    for trace, idx in by_trace.items():
        if ever:
            use_captured = captured and trace.purpose not in _AUTODIFF
        elif _differentiating(trace):
            use_captured = captured
        else:
            continue
        outer = [(v, c) for v, c in trace.consts if type(c) is Tracer] if use_captured else []
        live = [v for (v, _), p in zip(outer, perturbed([c for _, c in outer], True, ever))
                if p]
        deps = trace.depend_on_inputs([leaves[i]._var for i in idx], live)
        for i, d in zip(idx, deps):
            out[i] = d
    return out


def _differentiating(trace: Trace) -> bool:
    """Whether ``trace`` or one it is nested in differentiates (a trace no longer active
    is assumed to)."""
    for i, t in enumerate(_state.stack):
        if t is trace:
            return any(s.purpose in _AUTODIFF for s in _state.stack[:i + 1])
    return True


def find_top_trace(xs: Any) -> Trace | None:
    """The innermost trace among those of the traced values in ``xs`` (a sequence), or
    the current trace when none is traced (``None`` when running eagerly)."""
    traces = {x._trace for x in xs if type(x) is Tracer}
    if not traces:
        return current_trace()
    depth = {id(t): i for i, t in enumerate(_state.stack)}
    return max(traces, key=lambda t: depth.get(id(t), -1))


class _JVPTracerType(type):
    def __instancecheck__(cls, x: object) -> bool:
        return type(x) is Tracer and perturbed([x], captured=False)[0]


class JVPTracer(metaclass=_JVPTracerType):
    """``isinstance(x, JVPTracer)``: whether ``x`` is a traced value carrying a tangent
    with respect to its own trace's inputs (JAX's ``ad.JVPTracer``; see the module)."""

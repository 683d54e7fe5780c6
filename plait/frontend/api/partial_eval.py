"""Tracing a function with some inputs known, as JAX's ``jax.interpreters.partial_eval``:
``PartialVal``, ``trace_to_jaxpr_nounits`` and ``trace_to_jaxpr_dynamic``.

Libraries use these to ask which outputs of a function do not depend on some inputs
(flax's ``lazy_init`` and lifted ``scan`` do) and to get a function's jaxpr.  plait
traces the whole function once and splits the jaxpr with
:func:`~plait.transforms.partial_eval.partial_eval_jaxpr`; the known part is then run
on the known values in the caller's context (eagerly, or staged into an enclosing
trace).  Python control flow may read concrete known values while tracing, as in JAX.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from plait.frontend.api.linear_util import WrappedFun
from plait.frontend.core.apply_jaxpr import eval_jaxpr_bind
from plait.frontend.core.host_values import value_aval
from plait.frontend.core.traceback_util import api_boundary
from plait.frontend.core.tracing import Tracer, trace_flat
from plait.ir.avals import AbstractValue
from plait.ir.jaxpr import Jaxpr
from plait.transforms.partial_eval import partial_eval_jaxpr

__all__ = ["PartialVal", "trace_to_jaxpr_nounits", "trace_to_jaxpr_dynamic"]


class PartialVal(tuple[AbstractValue | None, Any]):
    """A value known now (``(None, value)``) or only by its type (``(aval, None)``), as
    JAX's ``PartialVal``: unpack it as ``pv, const``."""

    __slots__ = ()

    @classmethod
    def known(cls, const: Any) -> PartialVal:
        """A value known now."""
        return cls((None, const))

    @classmethod
    def unknown(cls, aval: AbstractValue) -> PartialVal:
        """A value known only by its type ``aval``."""
        if not isinstance(aval, AbstractValue):
            raise TypeError(f"PartialVal.unknown: expected an abstract value (ShapedArray), "
                            f"but got {aval!r}")
        return cls((aval, None))

    def is_known(self) -> bool:
        """Whether the value is known now."""
        return self[0] is None

    def get_known(self) -> Any:
        """The value, if known (else ``None``)."""
        return self[1] if self[0] is None else None

    def get_aval(self) -> AbstractValue:
        """The value's type."""
        aval = self[0]
        return value_aval(self[1]) if aval is None else aval


def _check_pvals(pvals: Sequence[Any]) -> list[PartialVal]:
    for i, pv in enumerate(pvals):
        if not isinstance(pv, PartialVal):
            raise TypeError(f"trace_to_jaxpr_nounits: expected pvals[{i}] to be a PartialVal "
                            f"(PartialVal.known(x) or PartialVal.unknown(aval)), but got "
                            f"{pv!r}")
    return list(pvals)


@api_boundary
def trace_to_jaxpr_nounits(fun: WrappedFun, pvals: Sequence[PartialVal],
                           instantiate: bool | Sequence[bool] = False
                           ) -> tuple[Jaxpr, list[PartialVal], list[Any]]:
    """Trace ``fun`` (flat inputs to flat outputs) with the inputs of ``pvals``: those
    known are used, the others traced by their types.

    Returns ``(jaxpr, out_pvals, consts)``: an output not depending on an unknown input
    is ``PartialVal.known(value)`` (unless ``instantiate`` says to keep it in the
    jaxpr), the others ``PartialVal.unknown(aval)``; ``jaxpr`` computes the unknown
    outputs from its constvars (bound to ``consts``) and the unknown inputs.
    """
    if not isinstance(fun, WrappedFun):
        raise TypeError(f"trace_to_jaxpr_nounits: expected a WrappedFun (lu.wrap_init(f)), "
                        f"but got {fun!r}")
    pvals = _check_pvals(pvals)
    unknowns = [not pv.is_known() for pv in pvals]
    known = [pv.get_known() for pv in pvals]
    # A known value that is an enclosing trace's tracer has no value to branch on.
    readable = [None if unk or isinstance(x, Tracer) else x for unk, x in zip(unknowns, known)]
    closed, _ = trace_flat(lambda *a: fun.call_wrapped(*a), [pv.get_aval() for pv in pvals],
                           "partial evaluation", fun.debug_info, known_args=readable,
                           differentiated=False)
    jaxpr = closed.jaxpr
    known_jaxpr, unknown_jaxpr, out_unknowns, num_res = partial_eval_jaxpr(
        jaxpr, unknowns, instantiate)
    known_outs = eval_jaxpr_bind(known_jaxpr, closed.consts,
                                 [x for unk, x in zip(unknowns, known) if not unk])
    residuals = known_outs[len(known_outs) - num_res:]
    values = iter(known_outs[:len(known_outs) - num_res])
    out_avals = iter(unknown_jaxpr.out_avals)
    out_pvals = [PartialVal.unknown(next(out_avals)) if unk else PartialVal.known(next(values))
                 for unk in out_unknowns]
    res_vars = unknown_jaxpr.invars[:num_res]
    out_jaxpr = unknown_jaxpr.replace(constvars=unknown_jaxpr.constvars + res_vars,
                                      invars=unknown_jaxpr.invars[num_res:])
    return out_jaxpr, out_pvals, list(residuals)


@api_boundary
def trace_to_jaxpr_dynamic(fun: WrappedFun, in_avals: Sequence[AbstractValue]
                           ) -> tuple[Jaxpr, list[AbstractValue], list[Any]]:
    """Trace ``fun`` (flat inputs to flat outputs) on inputs of types ``in_avals``.

    Returns ``(jaxpr, out_avals, consts)``; ``consts`` (values ``fun`` closes over, bound
    to the jaxpr's constvars) may be tracers of an enclosing trace."""
    if not isinstance(fun, WrappedFun):
        raise TypeError(f"trace_to_jaxpr_dynamic: expected a WrappedFun (lu.wrap_init(f)), "
                        f"but got {fun!r}")
    for i, aval in enumerate(in_avals):
        if not isinstance(aval, AbstractValue):
            raise TypeError(f"trace_to_jaxpr_dynamic: expected in_avals[{i}] to be an "
                            f"abstract value (ShapedArray), but got {aval!r}")
    closed, _ = trace_flat(lambda *a: fun.call_wrapped(*a), list(in_avals),
                           "trace_to_jaxpr_dynamic", fun.debug_info)
    return closed.jaxpr, list(closed.jaxpr.out_avals), list(closed.consts)

"""How a traced value prints: as JAX 0.10 prints its tracers, so that a ``print(x)``
inside a transformed function shows what it shows under JAX.

- inside ``jit`` (and loops, branches and every other staging): ``JitTracer(~int32[])``,
  the type, with ``~`` for a weak type;
- inside ``vmap``: ``VmapTracer(aval=f32[3], batched=f32[8,3])``, the per-example type
  and the type with the batch dimension (where the argument had it, first for values
  computed from the arguments);
- inside ``grad``, ``vjp``, ``linearize`` and ``jacrev`` (``GradTracer``) and ``jvp``
  and ``jacfwd`` (``JVPTracer``): the primal value when it is known (autodiff outside
  ``jit``) or the outer tracer it comes from, and the tangent's type.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from plait.ir.avals import ShapedArray
from plait.transforms.jvp import tangent_aval

if TYPE_CHECKING:  # (tracing imports this module)
    from plait.frontend.core.tracing import Tracer

__all__ = ["tracer_repr"]

_GRAD = frozenset({"grad", "vjp", "linearize", "jacrev"})  # (value_and_grad traces "grad")
_JVP = frozenset({"jvp", "jacfwd"})  # (hessian is jacfwd of jacrev)


def _batched(t: Tracer, aval: ShapedArray) -> ShapedArray:
    size, dims = t._trace.batch or (0, {})
    d = dims.get(t._var, 0)
    return aval.update(shape=aval.shape[:d] + (size,) + aval.shape[d:])


def _primal(t: Tracer) -> str:
    value: Any = t._trace.value_of(t._var)
    if value is None:
        return f"JitTracer({t.aval})"
    return repr(value) if type(value) is type(t) else str(value)


def tracer_repr(t: Tracer) -> str:
    """``t`` as JAX prints a tracer of the transformation tracing it."""
    aval = t.aval
    purpose = t._trace.purpose
    if not isinstance(aval, ShapedArray):  # (a token)
        return f"JitTracer({aval})"
    if purpose == "vmap" and t._trace.batch is not None:
        return f"VmapTracer(aval={aval}, batched={_batched(t, aval)})"
    if purpose in _GRAD or purpose in _JVP:
        name = "GradTracer" if purpose in _GRAD else "JVPTracer"
        tangent = tangent_aval(aval).str_short()
        return f"{name}(primal={_primal(t)}, typeof(tangent)={tangent})"
    return f"JitTracer({aval})"

"""``plait.core``: the names JAX code imports from ``jax.core`` (types and jaxprs);
they are plait's IR (``plait.ir``)."""

# ``name as name`` marks a re-export for mypy --strict users.
from collections.abc import Sequence
from typing import Any

from plait.extend.core import jaxpr_as_fun as jaxpr_as_fun
from plait.frontend.api.contexts import ensure_compile_time_eval as ensure_compile_time_eval
from plait.frontend.api.contexts import ensure_compile_time_eval as eval_context
from plait.frontend.core.apply_jaxpr import eval_jaxpr_bind
from plait.frontend.core.tracing import Trace as Trace
from plait.frontend.core.tracing import Tracer as Tracer
from plait.frontend.core.tracing import current_trace
from plait.ir import ClosedJaxpr as ClosedJaxpr
from plait.ir import Eqn as JaxprEqn
from plait.ir import Jaxpr as Jaxpr
from plait.ir import Literal as Literal
from plait.ir import ShapedArray as ShapedArray
from plait.ir import Var as Var
from plait.ir.atoms import Atom as Atom
from plait.ir.avals import AbstractValue as AbstractValue

ParamDict = dict[str, Any]
"""The type of an equation's params, as JAX names it."""
Value = Any
"""The type of a value a jaxpr computes, as JAX names it."""

__all__ = ["AbstractValue", "Atom", "ClosedJaxpr", "Jaxpr", "JaxprEqn", "Literal", "ParamDict",
           "ShapedArray", "Trace", "Tracer", "Value", "Var", "ensure_compile_time_eval",
           "eval_context", "eval_jaxpr", "jaxpr_as_fun", "trace_state_clean"]


def eval_jaxpr(jaxpr: Jaxpr, consts: Sequence[Any], *args: Any) -> list[Any]:
    """Evaluate ``jaxpr`` on ``consts`` and ``args`` by applying each equation's primitive
    (so under a transformation the equations are traced); returns the list of outputs."""
    if not isinstance(jaxpr, Jaxpr):
        raise TypeError(f"eval_jaxpr: expected a Jaxpr (closed.jaxpr), but got {jaxpr!r}")
    return eval_jaxpr_bind(jaxpr, consts, args)


def trace_state_clean() -> bool:
    """Whether nothing is being traced here: no ``jit``, ``vmap``, ``grad``... is staging
    the code that calls it (JAX's ``jax._src.core.trace_state_clean``, which libraries use
    to skip caching a function while tracing)."""
    return current_trace() is None

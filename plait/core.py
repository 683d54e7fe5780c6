"""``plait.core``: the names JAX code imports from ``jax.core`` (types and jaxprs);
they are plait's IR (``plait.ir``)."""

# ``name as name`` marks a re-export for mypy --strict users.
import warnings
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from plait.extend import core as _extend_core
from plait.extend.core import jaxpr_as_fun as jaxpr_as_fun
from plait.frontend.api.contexts import ensure_compile_time_eval as ensure_compile_time_eval
from plait.frontend.api.contexts import ensure_compile_time_eval as eval_context
from plait.frontend.core.apply_jaxpr import eval_jaxpr_bind
from plait.frontend.core.array_likes import aval_mappings
from plait.frontend.core.trace_base import BaseTrace as Trace
from plait.frontend.core.trace_base import BaseTracer as Tracer
from plait.frontend.core.tracing import current_trace, user_trace
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
    return current_trace() is None and user_trace() is None


_MOVED = ("DropVar", "Effect", "JaxprTypeError", "check_jaxpr", "find_top_trace",
          "get_opaque_trace_state", "jaxprs_in_params", "valid_jaxtype")
"""Names JAX 0.10 still serves from ``jax.core`` with a ``DeprecationWarning``, which
plait has in :mod:`plait.extend.core`."""

if not TYPE_CHECKING:  # (mypy users get only the names above)
    def __getattr__(name: str) -> Any:
        if name in _MOVED:
            warnings.warn(f"jax.core.{name} is deprecated. Use plait.extend.core.{name} "
                          f"(jax.extend.core.{name}).", DeprecationWarning, stacklevel=2)
            return getattr(_extend_core, name)
        if name == "pytype_aval_mappings":
            warnings.warn("jax.core.pytype_aval_mappings is deprecated.", DeprecationWarning,
                          stacklevel=2)
            return aval_mappings
        raise AttributeError(f"module 'plait.core' has no attribute {name!r}")

"""``plait.core``: the names JAX code imports from ``jax.core`` (types and jaxprs);
they are plait's IR (``plait.ir``)."""

# ``name as name`` marks a re-export for mypy --strict users.
from collections.abc import Sequence
from typing import Any

from plait.extend.core import jaxpr_as_fun as jaxpr_as_fun
from plait.frontend.core.apply_jaxpr import eval_jaxpr_bind
from plait.ir import ClosedJaxpr as ClosedJaxpr
from plait.ir import Eqn as JaxprEqn
from plait.ir import Jaxpr as Jaxpr
from plait.ir import Literal as Literal
from plait.ir import ShapedArray as ShapedArray
from plait.ir import Var as Var
from plait.ir.avals import AbstractValue as AbstractValue

__all__ = ["AbstractValue", "ClosedJaxpr", "Jaxpr", "JaxprEqn", "Literal", "ShapedArray",
           "Var", "eval_jaxpr", "jaxpr_as_fun"]


def eval_jaxpr(jaxpr: Jaxpr, consts: Sequence[Any], *args: Any) -> list[Any]:
    """Evaluate ``jaxpr`` on ``consts`` and ``args`` by applying each equation's primitive
    (so under a transformation the equations are traced); returns the list of outputs."""
    if not isinstance(jaxpr, Jaxpr):
        raise TypeError(f"eval_jaxpr: expected a Jaxpr (closed.jaxpr), but got {jaxpr!r}")
    return eval_jaxpr_bind(jaxpr, consts, args)

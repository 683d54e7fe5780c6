"""``plait.extend.core``: primitives and jaxprs, as ``jax.extend.core``.

``Primitive`` here is the JAX way of defining one (``Primitive("name")`` and rules
registered afterwards); the jaxpr classes are plait's IR (``plait.ir``)."""

from collections.abc import Callable
from typing import Any

# ``name as name`` marks a re-export for mypy --strict users.
from plait.extend.core import primitives as primitives
from plait.frontend.api.user_primitives import Primitive as Primitive
from plait.frontend.core.apply_jaxpr import apply_jaxpr
from plait.ir import ClosedJaxpr as ClosedJaxpr
from plait.ir import Eqn as JaxprEqn
from plait.ir import Jaxpr as Jaxpr
from plait.ir import Literal as Literal
from plait.ir import Var as Var
from plait.ir import check_jaxpr as check_jaxpr
from plait.ir import subjaxprs as subjaxprs
from plait.ir.errors import JaxprTypeError as JaxprTypeError

__all__ = ["ClosedJaxpr", "Jaxpr", "JaxprEqn", "JaxprTypeError", "Literal", "Primitive", "Var",
           "check_jaxpr", "jaxpr_as_fun", "primitives", "subjaxprs"]


def jaxpr_as_fun(closed: ClosedJaxpr) -> Callable[..., list[Any]]:
    """A function applying ``closed`` to its arguments; it returns the list of outputs
    (traced when called under a transformation, compiled and run otherwise)."""
    if not isinstance(closed, ClosedJaxpr):
        raise TypeError(f"jaxpr_as_fun: expected a ClosedJaxpr, but got {closed!r}")

    def fun(*args: Any) -> list[Any]:
        return apply_jaxpr(closed.jaxpr, closed.consts, args, "jaxpr_as_fun")
    return fun

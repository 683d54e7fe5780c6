"""Primitives carrying user-defined derivatives and rematerialization.

``custom_jvp_call`` and ``custom_vjp_call`` apply ``call_jaxpr`` and carry
the user's rule as IR (traced when the function is called), so a jaxpr stays
self-contained: printable, parseable and transformable.  ``custom_lin`` is the
linear map a ``custom_vjp`` function contributes to a JVP: reverse mode
transposes it into the user's backward function; forward mode evaluates the
backward function's transpose.  ``remat2`` marks a region whose intermediates
are recomputed, not saved, in reverse mode (as its ``policy`` says).
"""

from __future__ import annotations

from typing import Any

from plait.ir.avals import AbstractValue
from plait.ir.caches import BoundedDict
from plait.ir.errors import ForwardModeError, TransformError
from plait.ir.jaxpr import ClosedJaxpr
from plait.ir.params import ParamDef, decode_bool, decode_int, decode_str
from plait.ir.primitive import Primitive
from plait.ir.primitives._typing import fail
from plait.ir.primitives.control_flow import body_effects, same_types
from plait.ir.primitives.remat_policies import RematPolicy, decode_policy

__all__ = ["custom_jvp_call_p", "custom_vjp_call_p", "custom_lin_p", "remat_p",
           "nonlinear_bwd_error"]


def _decode_jaxpr(value: Any) -> ClosedJaxpr:
    if not isinstance(value, ClosedJaxpr):
        raise ValueError(f"expected a jaxpr, but got {value!r}")
    return value


def _decode_optional_jaxpr(value: Any) -> ClosedJaxpr | None:
    return None if value is None else _decode_jaxpr(value)


def _types(avals: Any) -> str:
    return "(" + ", ".join(a.str_short() for a in avals) + ")"


def _call_rule(*avals: AbstractValue, call_jaxpr: ClosedJaxpr,
               **_: Any) -> tuple[AbstractValue, ...]:
    if not isinstance(call_jaxpr, ClosedJaxpr) or call_jaxpr.consts:
        fail("expected a closed call_jaxpr without consts")
    if not same_types(call_jaxpr.in_avals, avals):
        fail(f"expected operands {_types(call_jaxpr.in_avals)}, but got {_types(avals)}")
    return call_jaxpr.out_avals


_deferred: BoundedDict[str, Exception] = BoundedDict("deferred rule errors", 256)


def defer_rule_error(exc: Exception, what: str) -> str:
    """Remember ``exc``, raised while tracing ``what`` (a custom rule); returns the
    ``rule_error`` param that stands for it."""
    # One line without single quotes: the printed jaxpr quotes it, and parses back.
    message = f"{what} raised {type(exc).__name__}: {exc}".replace("'", '"')
    message = " ".join(message.split())
    _deferred[message] = exc
    return message


def deferred_rule_error(message: str) -> Exception:
    """The exception a ``rule_error`` param stands for: the rule's own, while it is
    remembered (a parsed jaxpr's is a :class:`TransformError` with its message)."""
    exc = _deferred.data.get(message)
    return exc if exc is not None else TransformError(message)


def _decode_optional_str(value: Any) -> str | None:
    return None if value is None else decode_str(value)


custom_jvp_call_p = Primitive("custom_jvp_call", _call_rule, (
    ParamDef("name", decode=decode_str),
    ParamDef("call_jaxpr", decode=_decode_jaxpr),
    ParamDef("jvp_jaxpr", decode=_decode_jaxpr),
    ParamDef("num_consts", 0, show="nondefault", decode=decode_int),
    ParamDef("symbolic_zeros", False, decode=decode_bool),
    ParamDef("rule_error", None, show="nondefault", decode=_decode_optional_str,
             encode=lambda m: f"'{m}'"),
), multiple_results=True, effects_rule=body_effects, print_first=("name",))
"""``jvp_jaxpr`` maps (operands, tangents of the inexact operands) to (outputs,
tangents of the inexact outputs).  ``rule_error``, when set, is why the JVP rule could
not be traced (it raised): JAX calls a rule only when differentiating, so the call
itself still works, and the error is raised when a JVP is taken (``jvp_jaxpr`` then
only stands in, with zero tangents)."""

custom_vjp_call_p = Primitive("custom_vjp_call", _call_rule, (
    ParamDef("name", decode=decode_str),
    ParamDef("call_jaxpr", decode=_decode_jaxpr),
    ParamDef("fwd_jaxpr", decode=_decode_jaxpr),
    ParamDef("bwd_jaxpr", decode=_decode_jaxpr),
    ParamDef("num_consts", 0, show="nondefault", decode=decode_int),
    ParamDef("symbolic_zeros", False, decode=decode_bool),
    ParamDef("rule_error", None, show="nondefault", decode=_decode_optional_str,
             encode=lambda m: f"'{m}'"),
), multiple_results=True, effects_rule=body_effects, print_first=("name",))
"""``fwd_jaxpr`` maps the operands to (outputs, residuals); ``bwd_jaxpr`` maps
(residuals, cotangents of the inexact outputs) to cotangents of the inexact operands.
``rule_error`` is as ``custom_jvp_call``'s: why fwd or bwd could not be traced, raised
when the call is differentiated (the two jaxprs then stand in, without residuals and
with zero cotangents)."""


def _custom_lin_rule(*avals: AbstractValue, name: str, num_res: int, bwd_jaxpr: ClosedJaxpr,
                     fwd_lin_jaxpr: ClosedJaxpr | None) -> tuple[AbstractValue, ...]:
    # (residuals, input tangents) -> output tangents: the transpose of bwd's signature.
    b_in = bwd_jaxpr.in_avals
    if not same_types(b_in[:num_res], avals[:num_res]):
        fail(f"expected residuals {_types(b_in[:num_res])}, but got {_types(avals[:num_res])}")
    if not same_types(bwd_jaxpr.out_avals, avals[num_res:]):
        fail(f"expected tangents {_types(bwd_jaxpr.out_avals)}, but got {_types(avals[num_res:])}")
    return b_in[num_res:]


def nonlinear_bwd_error(name: str) -> ForwardModeError:
    """Raised where a ``custom_lin`` without ``fwd_lin_jaxpr`` would have to run forward."""
    return ForwardModeError(
        f"forward-mode differentiation (jvp, jacfwd, hessian) of the custom_vjp function {name} "
        "needs the transpose of its backward function, but the backward function is not linear "
        "in its cotangent argument (it clips, branches on or otherwise transforms the "
        "cotangent non-linearly); use reverse mode (grad, vjp, jacrev) instead")


custom_lin_p = Primitive("custom_lin", _custom_lin_rule, (
    ParamDef("name", decode=decode_str),
    ParamDef("num_res", decode=decode_int),
    ParamDef("bwd_jaxpr", decode=_decode_jaxpr),
    ParamDef("fwd_lin_jaxpr", None, decode=_decode_optional_jaxpr),
), multiple_results=True, print_first=("name",))
"""``fwd_lin_jaxpr`` is the transpose of ``bwd_jaxpr`` in its cotangents, or
``None`` when the backward function is not linear in them (then only reverse
mode can use this equation)."""


def _remat_rule(*avals: AbstractValue, jaxpr: ClosedJaxpr, prevent_cse: bool,
                differentiated: bool, policy: RematPolicy | None) -> tuple[AbstractValue, ...]:
    return _call_rule(*avals, call_jaxpr=jaxpr)


remat_p = Primitive("remat2", _remat_rule, (
    ParamDef("jaxpr", decode=_decode_jaxpr),
    ParamDef("prevent_cse", True, decode=decode_bool),
    ParamDef("differentiated", False, decode=decode_bool),
    ParamDef("policy", None, decode=decode_policy),
), multiple_results=True, effects_rule=body_effects)

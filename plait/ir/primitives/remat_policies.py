"""What a ``checkpoint`` region may save: :class:`RematPolicy`, the built-in policies
(JAX 0.10.2's ``jax.checkpoint_policies``), and ``name``, the primitive that labels a
value for the policies that select values by name (``checkpoint_name``).

A policy prints in a jaxpr as the expression that builds it
(``policy=save_only_these_names('h1', 'h2')``) and parses back from that text.  A
policy written by the user (a Python function of the primitive, the operand types
and the parameters, as in JAX) prints as the function's name and cannot be parsed.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any, Final

import attrs

from plait.ir.jaxpr import Eqn
from plait.ir.params import ParamDef, ParsedCall, decode_str
from plait.ir.primitive import Primitive
from plait.ir.primitives._typing import ANY, unary

__all__ = ["RematPolicy", "POLICIES", "POLICY_CONSTRUCTORS", "name_p", "Saveable",
           "Recompute", "Offloadable", "custom_policy", "decode_policy"]

name_p = Primitive("name", unary(ANY), (ParamDef("name", decode=decode_str),))
"""The identity, labelling its operand ``name`` for the saving policies of
``checkpoint`` (``checkpoint_name``; JAX 0.10.2's ``name`` primitive)."""


@attrs.frozen
class RematPolicy:
    """Which intermediates of a ``checkpoint`` region reverse mode may save."""

    name: str
    """Printed in jaxprs: the expression that builds the policy (``dots_saveable``,
    ``save_only_these_names('a')``), or a user function's name."""
    saveable: Callable[[Eqn], bool] = attrs.field(eq=False, hash=False, repr=False)
    """Whether the outputs of an equation may be saved as residuals."""
    fun: Hashable = None
    """The user's policy function (``None`` for a built-in one): two user policies
    with the same name are different policies."""

    def __str__(self) -> str:
        return self.name


@attrs.frozen
class Offloadable:
    """A user policy's answer: save the value in memory ``dst`` (JAX offloads it to
    host memory; plait, which has one memory kind, saves it on the device)."""

    src: str
    dst: str


Saveable: Final = True
"""A user policy's answer: save the value."""
Recompute: Final = False
"""A user policy's answer: recompute the value."""


def _is_dot(eqn: Eqn) -> bool:
    return eqn.primitive.name in ("dot_general", "conv_general_dilated")


def _is_unbatched_dot(eqn: Eqn) -> bool:
    if eqn.primitive.name != "dot_general":
        return False
    (_, _), (lhs_batch, rhs_batch) = eqn.params["dimension_numbers"]
    return not lhs_batch and not rhs_batch


def _label(eqn: Eqn) -> str | None:
    """The name a ``name`` equation gives its value, else ``None``."""
    return eqn.params["name"] if eqn.primitive is name_p else None


def _names(kind: str, names: tuple[Any, ...]) -> tuple[str, ...]:
    for n in names:
        if not isinstance(n, str):
            raise TypeError(f"{kind}: expected names (str), but got {n!r}")
    return names


def _call_text(kind: str, *args: Any) -> str:
    return f"{kind}({', '.join(a.name if isinstance(a, RematPolicy) else repr(a) for a in args)})"


def save_only_these_names(*names: str) -> RematPolicy:
    """Save only values labelled with one of ``names`` (by ``checkpoint_name``)."""
    keep = frozenset(_names("save_only_these_names", names))
    return RematPolicy(_call_text("save_only_these_names", *names),
                       lambda eqn: _label(eqn) in keep)


def save_any_names_but_these(*names: str) -> RematPolicy:
    """Save only labelled values, except those labelled with one of ``names``."""
    skip = frozenset(_names("save_any_names_but_these", names))
    return RematPolicy(_call_text("save_any_names_but_these", *names),
                       lambda eqn: (label := _label(eqn)) is not None and label not in skip)


def save_anything_except_these_names(*names: str) -> RematPolicy:
    """Save any value except those labelled with one of ``names``.  (JAX 0.10.2's
    version saves everything, names included.)"""
    skip = frozenset(_names("save_anything_except_these_names", names))
    return RematPolicy(_call_text("save_anything_except_these_names", *names),
                       lambda eqn: _label(eqn) not in skip)


def save_from_both_policies(policy_1: RematPolicy | Callable[..., Any],
                            policy_2: RematPolicy | Callable[..., Any]) -> RematPolicy:
    """Save what either policy (built in, or a user's function) saves."""
    p1, p2 = (p if isinstance(p, RematPolicy) else custom_policy(p) if callable(p) else None
              for p in (policy_1, policy_2))
    if p1 is None or p2 is None:
        raise TypeError(f"save_from_both_policies: expected two policies, but got "
                        f"{policy_1!r} and {policy_2!r}")
    return RematPolicy(_call_text("save_from_both_policies", p1, p2),
                       lambda eqn: p1.saveable(eqn) or p2.saveable(eqn), (p1, p2))


def save_and_offload_only_these_names(*, names_which_can_be_saved: Any,
                                      names_which_can_be_offloaded: Any, offload_src: str,
                                      offload_dst: str) -> RematPolicy:
    """Save the values labelled with a name of either list (JAX offloads the second
    list's to host memory; plait saves them on the device)."""
    saved, offloaded = set(names_which_can_be_saved), set(names_which_can_be_offloaded)
    if both := saved & offloaded:
        raise ValueError("save_and_offload_only_these_names: expected names_which_can_be_saved"
                         " and names_which_can_be_offloaded not to intersect, but both have "
                         f"{sorted(both)}")
    return save_only_these_names(*sorted(saved), *sorted(offloaded))


def offload_dot_with_no_batch_dims(offload_src: str, offload_dst: str) -> RematPolicy:
    """``dots_with_no_batch_dims_saveable`` (JAX offloads those values to host memory;
    plait saves them on the device)."""
    return POLICIES["dots_with_no_batch_dims_saveable"]


def _answer(value: Any, fun: Callable[..., Any]) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, Offloadable):
        return True
    raise TypeError(f"checkpoint policy {getattr(fun, '__name__', fun)!r}: expected a bool, "
                    f"Saveable, Recompute or Offloadable, but got {value!r}")


def custom_policy(fun: Callable[..., Any]) -> RematPolicy:
    """A user's policy function ``fun(primitive, *operand_types, **params) -> bool``
    (JAX's convention) as a :class:`RematPolicy`."""
    def saveable(eqn: Eqn) -> bool:
        return _answer(fun(eqn.primitive, *(a.aval for a in eqn.invars), **eqn.params), fun)
    return RematPolicy(getattr(fun, "__name__", repr(fun)), saveable, fun)


POLICIES: dict[str, RematPolicy] = {
    p.name: p for p in [
        RematPolicy("nothing_saveable", lambda eqn: False),
        RematPolicy("everything_saveable", lambda eqn: True),
        RematPolicy("dots_saveable", _is_dot),
        RematPolicy("dots_with_no_batch_dims_saveable", _is_unbatched_dot),
    ]
}
"""The policies that take no arguments, by the name they print as."""

POLICY_CONSTRUCTORS: dict[str, Callable[..., RematPolicy]] = {
    f.__name__: f for f in (save_only_these_names, save_any_names_but_these,
                            save_anything_except_these_names, save_from_both_policies,
                            save_and_offload_only_these_names, offload_dot_with_no_batch_dims)
}
"""The policies built from arguments (names, or other policies)."""


def _build(value: Any, as_policy: bool) -> Any:
    """A policy's printed form as the parser reads it (a constructor call is a
    :class:`ParsedCall`), built back; its arguments are names, or policies in
    ``save_from_both_policies``."""
    if isinstance(value, ParsedCall) and value.name in POLICY_CONSTRUCTORS:
        nested = value.name == "save_from_both_policies"
        args = [_build(v, nested) for k, v in value.kwargs if not k]
        kwargs = {k: _build(v, False) for k, v in value.kwargs if k}
        return POLICY_CONSTRUCTORS[value.name](*args, **kwargs)
    if as_policy and isinstance(value, str) and value in POLICIES:
        return POLICIES[value]
    if not as_policy and isinstance(value, str | tuple | list):
        return value
    raise ValueError(value)


def decode_policy(value: Any) -> RematPolicy | None:
    """A ``policy`` parameter: a policy, ``None``, or a policy's printed form."""
    if value is None or isinstance(value, RematPolicy):
        return value
    try:
        policy = _build(value, True)
    except (ValueError, TypeError):
        policy = None
    if isinstance(policy, RematPolicy):
        return policy
    raise ValueError(f"expected None or a built-in policy ({', '.join(sorted(POLICIES))}, or "
                     f"a call of {', '.join(sorted(POLICY_CONSTRUCTORS))}), but got {value!r}")

"""``create_token`` and ``after_all``: the primitives making tokens, the data-less values
of type ``Tok`` that order side effects (JAX 0.10.2's, lowered to
``stablehlo.create_token`` and ``stablehlo.after_all``)."""

from __future__ import annotations

from plait.ir.avals import AbstractToken, AbstractValue, abstract_token
from plait.ir.primitive import Primitive
from plait.ir.primitives._typing import fail

__all__ = ["create_token_p", "after_all_p"]


def _create_token_rule() -> tuple[AbstractValue, ...]:
    return (abstract_token,)


create_token_p = Primitive("create_token", _create_token_rule)
"""A fresh token, ordered after nothing."""


def _after_all_rule(*tokens: AbstractValue) -> tuple[AbstractValue, ...]:
    bad = [t for t in tokens if type(t) is not AbstractToken]
    if bad:
        fail(f"Arguments to after_all must be tokens: expected operands of type Tok, but got "
             f"{', '.join(t.str_short() for t in bad)}")
    return (abstract_token,)


after_all_p = Primitive("after_all", _after_all_rule)
"""A token ordered after all its operand tokens."""

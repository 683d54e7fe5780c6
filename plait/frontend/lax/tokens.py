"""Tokens, as ``jax.lax``'s: ``create_token`` and ``after_all``.

A token is a value with no data of type ``Tok``; XLA orders operations that take and
return tokens (side effects) by the tokens' data flow.  Outside a trace they are
:class:`~plait.frontend.core.tokens.Token` objects; ``jit`` takes and returns them.
"""

from __future__ import annotations

from typing import Any

from plait.frontend.core.tokens import Token, new_token
from plait.frontend.core.tracing import Tracer, bind1, current_trace
from plait.ir import primitives as P
from plait.ir.avals import AbstractToken
from plait.ir.config import values as _values

__all__ = ["create_token", "after_all"]


def _eager() -> bool:
    return current_trace() is None or _values.eager_constant_folding


def create_token(_: Any = None) -> Any:
    """A token ordered after nothing (``jax.lax.create_token``); the argument, which JAX
    keeps for compatibility, is ignored.  Outside a trace, a :class:`Token`."""
    if _eager():
        return new_token()
    return bind1(P.create_token_p)


def after_all(*operands: Any) -> Any:
    """A token ordered after all of ``operands``, which must be tokens
    (``jax.lax.after_all``).

    Raises:
      TypeError: an operand is not a token (JAX's message).
    """
    for x in operands:
        if type(x) is not Token and not (type(x) is Tracer and type(x._var.aval) is AbstractToken):
            raise TypeError(f"Arguments to after_all must be tokens, but got "
                            f"{type(x).__name__} {x!r}")
    if _eager() and not any(type(x) is Tracer for x in operands):
        for t in operands:
            t.block_until_ready()
        return new_token()
    return bind1(P.after_all_p, *operands)

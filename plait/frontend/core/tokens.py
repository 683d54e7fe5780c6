"""Concrete tokens: the values of type ``Tok`` outside a trace (``jax.core.Token``).

A token carries no data; on a device it is an empty bool buffer, which compiled
programs take and return in its place (as JAX does).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from plait.ir.avals import AbstractToken, abstract_token, buffer_avals
from plait.lowering import runtime

__all__ = ["Token", "new_token"]


class Token:
    """A token made by :func:`plait.lax.create_token` or :func:`plait.lax.after_all`
    outside a trace (inside one, a token is a tracer of type ``Tok``)."""

    __slots__ = ("_buf",)

    def __init__(self, buf: Any) -> None:
        self._buf = buf

    @property
    def aval(self) -> AbstractToken:
        """The token type."""
        return abstract_token

    def block_until_ready(self) -> Token:
        """Wait until the computation that made the token has finished; returns it."""
        self._buf.block_until_ready()
        return self


def new_token() -> Token:
    """A fresh token on the default device."""
    (aval,) = buffer_avals([abstract_token])
    return Token(runtime.device_put(np.zeros((0,), np.bool_), aval))

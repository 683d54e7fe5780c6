"""``check``: a runtime assertion, made into values by ``checkify``.

``check pred *fmt_args`` asserts ``pred`` (boolean); its ``message`` is a format
string and the structure of its formatting arguments.  The equation has no result
and an effect, so it is never removed; ``checkify`` rewrites it into error values,
and a program still holding one cannot be compiled (a ``debug`` check is dropped
there instead).  After ``vmap`` the predicate
and the arguments carry ``batch_ndim`` leading batch dimensions, and the check fails
when any element does.
"""

from __future__ import annotations

from typing import Any

import attrs
import numpy as np

from plait.ir.avals import AbstractValue, ShapedArray
from plait.ir.effects import DEBUG, Effect
from plait.ir.params import ParamDef, Params, decode_bool, decode_int
from plait.ir.primitive import Primitive
from plait.ir.primitives._typing import fail

__all__ = ["CheckMessage", "check_p"]


@attrs.frozen
class CheckMessage:
    """What a failed check says: ``text`` formatted with the arguments (``fmt_tree``:
    their pytree structure, opaque here)."""

    text: str
    """A ``str.format`` string."""
    fmt_tree: Any
    """The structure of ``(args, kwargs)`` of the formatting arguments."""

    def __str__(self) -> str:
        return repr(self.text)


def _decode_message(value: Any) -> CheckMessage:
    if not isinstance(value, CheckMessage):
        raise ValueError("expected a check message, but got text: the structure of a "
                         "check's formatting arguments is not part of the printed jaxpr")
    return value


def _check_rule(pred: AbstractValue, *fmt: AbstractValue, message: CheckMessage,
                batch_ndim: int, debug: bool) -> tuple[AbstractValue, ...]:
    if not isinstance(message, CheckMessage):
        fail(f"expected a CheckMessage, but got {message!r}")
    if not (isinstance(pred, ShapedArray) and pred.dtype == np.bool_
            and len(pred.shape) == batch_ndim):
        fail(f"expected a boolean predicate of {batch_ndim} (batch) dimensions, but got "
             f"{pred.str_short()}")
    for a in fmt:
        if not (isinstance(a, ShapedArray) and a.shape[:batch_ndim] == pred.shape):
            fail(f"expected formatting arguments with the batch dimensions {pred.shape}, "
                 f"but got {a.str_short()}")
    return ()


def _effects(params: Params) -> frozenset[Effect]:
    return frozenset({DEBUG})


check_p = Primitive("check", _check_rule, (
    ParamDef("message", decode=_decode_message),
    ParamDef("batch_ndim", 0, show="nondefault", decode=decode_int),
    ParamDef("debug", False, show="nondefault", decode=decode_bool),
), multiple_results=True, effects_rule=_effects)

"""The reference interpreter: evaluates a jaxpr with NumPy.

It is the test oracle of every other evaluator (eager execution, compiled
code, transformed programs), and the model of a custom interpreter: one
env/read/write loop over the equations, one rule per primitive.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from plait.ir import dtypes as dt
from plait.ir.atoms import Atom, Literal, Var
from plait.ir.avals import AbstractToken
from plait.ir.errors import RuleNotImplementedError
from plait.ir.jaxpr import ClosedJaxpr, Jaxpr
from plait.ir.notes import note_equation
from plait.ir.primitive import Primitive

__all__ = ["eval_jaxpr", "eval_closed_jaxpr", "impl_rules", "ImplRule"]

ImplRule = Callable[..., Sequence[np.ndarray]]
"""``rule(*operands, **params) -> results``: NumPy arrays in, a sequence of arrays out."""

impl_rules: dict[Primitive, ImplRule] = {}
"""The reference (NumPy) implementation of each primitive."""


def _as_type(x: Any, aval: Any) -> np.ndarray:
    arr = np.asarray(x)
    if type(aval) is AbstractToken:
        return arr  # (a token is held as an empty bool array)
    if arr.dtype != aval.dtype:
        arr = arr.astype(aval.dtype)
    return arr


def eval_jaxpr(jaxpr: Jaxpr, consts: Sequence[Any], *args: Any) -> list[np.ndarray]:
    """Evaluate ``jaxpr`` on NumPy values; returns one array per output.

    Raises:
      RuleNotImplementedError: a primitive has no reference rule.
    """
    env: dict[Var, np.ndarray] = {}

    def read(a: Atom) -> np.ndarray:
        if type(a) is Literal:
            return np.zeros((), dt.float0) if a.aval.dtype == dt.float0 else \
                np.asarray(a.val, a.aval.dtype)
        return env[a]

    def write(v: Var, value: Any) -> None:
        env[v] = _as_type(value, v.aval)

    for v, c in zip(jaxpr.constvars, consts, strict=True):
        write(v, c)
    for v, x in zip(jaxpr.invars, args, strict=True):
        write(v, x)
    for eqn in jaxpr.eqns:
        try:
            rule = impl_rules.get(eqn.primitive)
            if rule is None:
                raise RuleNotImplementedError("Reference", eqn.primitive.name)
            outs = rule(*[read(a) for a in eqn.invars], **eqn.params)
            for v, out in zip(eqn.outvars, outs, strict=True):
                write(v, out)
        except Exception as exc:
            note_equation(exc, jaxpr, eqn, "evaluating (reference interpreter)")
            raise
    return [read(a) for a in jaxpr.outvars]


def eval_closed_jaxpr(closed: ClosedJaxpr, *args: Any) -> list[np.ndarray]:
    """Evaluate a closed jaxpr: its consts, then ``args``."""
    return eval_jaxpr(closed.jaxpr, closed.consts, *args)

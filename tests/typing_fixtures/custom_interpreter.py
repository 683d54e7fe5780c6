"""Seed 001's ``inverse`` interpreter, fully annotated: it must pass ``mypy --strict``
with no errors, and the test suite also runs it."""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import plait
import plait.lax as plax
import plait.numpy as pnp
from plait.ir import Atom, Jaxpr, Literal, Primitive, Var, subjaxprs
from plait.typing import Array

inverse_registry: dict[Primitive, Callable[[Array], Array]] = {
    plax.exp_p: pnp.log,
    plax.tanh_p: pnp.arctanh,
}


def inverse_jaxpr(jaxpr: Jaxpr, consts: Sequence[Any], *args: Array) -> list[Any]:
    env: dict[Var, Any] = {}

    def read(atom: Atom) -> Any:
        return atom.val if isinstance(atom, Literal) else env[atom]

    def write(var: Atom, val: Any) -> None:
        if isinstance(var, Var):
            env[var] = val

    for v, x in zip(jaxpr.outvars, args):
        write(v, x)
    for c, value in zip(jaxpr.constvars, consts):
        write(c, value)
    for eqn in jaxpr.eqns[::-1]:
        invals = [read(v) for v in eqn.outvars]
        rule = inverse_registry.get(eqn.primitive)
        if rule is None:
            raise NotImplementedError(f"{eqn.primitive.name} does not have a registered inverse")
        write(eqn.invars[0], rule(*invals))
    return [read(v) for v in jaxpr.invars]


def inverse(fun: Callable[[Array], Array]) -> Callable[[Array], Array]:
    @functools.wraps(fun)
    def wrapped(x: Array) -> Array:
        closed = plait.make_jaxpr(fun)(x)
        out: Array = inverse_jaxpr(closed.jaxpr, closed.literals, x)[0]
        return out
    return wrapped


def count_primitives(jaxpr: Jaxpr) -> dict[str, int]:
    """A second interpreter: reads params and recurses into sub-jaxprs."""
    counts: dict[str, int] = {}
    for eqn in jaxpr.eqns:
        counts[eqn.primitive.name] = counts.get(eqn.primitive.name, 0) + 1
        for sub in subjaxprs(eqn.params):
            for name, n in count_primitives(sub).items():
                counts[name] = counts.get(name, 0) + n
    return counts


def f(x: Array) -> Array:
    return pnp.exp(pnp.tanh(x))

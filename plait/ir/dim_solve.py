"""Solving for the values of dimension variables from the sizes of arguments, and the
checks the sizes must pass (JAX's messages; :mod:`plait.lowering.shape_poly` emits the
same as run-time assertions)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final, cast

from plait.ir.dims import (
    Constraint,
    Dim,
    DimExpr,
    Scope,
    dim_vars,
    evaluate,
    is_constant_shape,
)

__all__ = ["plan_solution", "solve", "SolutionStep", "ShapeCheck", "assertion_messages",
           "MISMATCH", "ConstraintCheck", "scope_constraints", "constraint_message"]

# -- solving for the dimension variables --------------------------------------------

MISMATCH: Final = "Input shapes do not match the polymorphic shapes specification. "
_TRAILER: Final = (". Please see https://docs.jax.dev/en/latest/export/shape_poly.html"
                   "#shape-assertion-errors for more details.")


class SolutionStep:
    """How one dimension variable's value follows from an argument's size:
    ``var = (size(arg, dim) - rest) // k``."""

    __slots__ = ("var", "arg", "dim", "k", "rest", "spec")

    def __init__(self, var: str, arg: int, dim: int, k: int, rest: Dim, spec: DimExpr) -> None:
        self.var, self.arg, self.dim, self.k, self.rest, self.spec = var, arg, dim, k, rest, spec


class ShapeCheck:
    """A size that must equal an expression of the solved variables."""

    __slots__ = ("arg", "dim", "expr")

    def __init__(self, arg: int, dim: int, expr: DimExpr) -> None:
        self.arg, self.dim, self.expr = arg, dim, expr


def plan_solution(shapes: Sequence[Sequence[Dim]], names: Sequence[str]
                  ) -> tuple[list[SolutionStep], list[ShapeCheck]]:
    """How to compute every dimension variable of ``shapes`` from the arguments' sizes
    (each from a dimension ``k*var + rest`` whose other variables are known), and the
    sizes left to check.

    Raises:
      ValueError: a variable appears in no dimension it can be solved from.
    """
    eqns = [(i, j, d) for i, s in enumerate(shapes) for j, d in enumerate(s)
            if isinstance(d, DimExpr)]
    known: set[str] = set()
    steps: list[SolutionStep] = []
    used: set[int] = set()
    progress = True
    while progress:
        progress = False
        for n, (i, j, d) in enumerate(eqns):
            if n in used:
                continue
            unknown = [(t, c) for t, c in d.terms.items()
                       if any(not isinstance(f, str) or f not in known for f, _ in t)]
            if len(unknown) != 1:
                continue
            (t, c), = unknown
            if len(t) != 1 or t[0][1] != 1 or not isinstance(t[0][0], str):
                continue
            var = t[0][0]
            rest = d - c * DimExpr.var(var, d.scope)
            steps.append(SolutionStep(var, i, j, c, rest, d))
            known.add(var)
            used.add(n)
            progress = True
    missing = sorted(set(dim_vars(shapes)) - known)
    if missing:
        specs = _specs(shapes, names)
        raise ValueError(f"Cannot solve for values of dimension variables {set(missing)}. We "
                         "can only solve linear uni-variate constraints." + specs +
                         " Unprocessed specifications: " + ", ".join(
                             f"'{d}' for dimension size {names[i]}.shape[{j}]"
                             for n, (i, j, d) in enumerate(eqns) if n not in used) + _TRAILER)
    checks = [ShapeCheck(i, j, d) for n, (i, j, d) in enumerate(eqns) if n not in used]
    return steps, checks


def _specs(shapes: Sequence[Sequence[Dim]], names: Sequence[str]) -> str:
    return (" Using the following polymorphic shapes specifications: " +
            ",".join(f"{names[i]}.shape = {tuple(s)}"
                     for i, s in enumerate(shapes) if not is_constant_shape(s)) + ".")


def solve(shapes: Sequence[Sequence[Dim]], actual: Sequence[Sequence[int]],
          names: Sequence[str]) -> dict[str, int]:
    """The values of the dimension variables for arguments of the ``actual`` shapes.

    Raises:
      ValueError: the shapes do not fit the specification (JAX's messages).
    """
    steps, checks = plan_solution(shapes, names)
    specs = _specs(shapes, names)
    env: dict[str, int] = {}
    obtained = " Obtained dimension variables: "
    for s in steps:
        size = actual[s.arg][s.dim]
        num = size - evaluate(s.rest, env)
        value, rem = divmod(num, s.k)
        if rem:
            raise ValueError(f"{MISMATCH}Division had remainder {rem} when computing the "
                             f"value of '{s.var}'.{specs}{obtained}{_TRAILER}")
        obtained += (f"'{s.var}' = {value} from specification '{s.spec}' for dimension "
                     f"{names[s.arg]}.shape[{s.dim}] (= {size}), ")
        if value < 1:
            raise ValueError(f"{MISMATCH}Expected value >= 1 for dimension variable "
                             f"'{s.var}'.{specs}{obtained}{_TRAILER}")
        env[s.var] = value
    for c in checks:
        size, want = actual[c.arg][c.dim], c.expr.evaluate(env)
        if size != want:
            raise ValueError(
                f"{MISMATCH}Found inconsistency between dimension size "
                f"{names[c.arg]}.shape[{c.dim}] (= {size}) and the specification "
                f"'{c.expr}' (= {want}).{specs}{obtained}{_TRAILER}")
    for k in scope_constraints(shapes):
        got = evaluate(k.resolved, env)
        if got < 0 or (k.cmp == "==" and got != 0):
            raise ValueError(f"{constraint_message(k)}{got}. {specs}{obtained}{_TRAILER}")
    return env


class ConstraintCheck:
    """A constraint of the shapes' scope to check once the variables are known: its
    ``diff`` (as written) and ``resolved`` (with the scope's rules applied to it)."""

    __slots__ = ("text", "cmp", "diff", "resolved")

    def __init__(self, c: Constraint, scope: Scope) -> None:
        self.text, self.cmp, self.diff = c.text, c.cmp, c.diff
        # Evaluating at the variables themselves applies the rules made after the
        # constraint (evaluate computes with Dims as with ints).
        env = cast(dict[str, int], {v: DimExpr.var(v, scope) for v in _vars(c.diff)})
        self.resolved = evaluate(c.diff, env)


def _vars(d: Dim) -> set[str]:
    return d.vars() if isinstance(d, DimExpr) else set()


def scope_constraints(shapes: Sequence[Sequence[Dim]]) -> list[ConstraintCheck]:
    """The explicit constraints of the scope of ``shapes``' symbolic dimensions."""
    for s in shapes:
        for d in s:
            if isinstance(d, DimExpr):
                return [ConstraintCheck(c, d.scope) for c in d.scope.constraints]
    return []


def constraint_message(k: ConstraintCheck) -> str:
    """JAX's message for a broken constraint, up to the value found."""
    how = "equal" if k.cmp == "==" else "greater or equal"
    return (f"Input shapes do not match the symbolic shape constraint {k.text}. Expected "
            f"'{k.diff}' to be {how} to 0, but found ")


def assertion_messages(shapes: Sequence[Sequence[Dim]], names: Sequence[str]
                       ) -> tuple[list[SolutionStep], list[ShapeCheck], str, str]:
    """The solution plan, and the text pieces of the run-time assertions' messages
    (the specifications and the trailer), as :func:`solve` words its errors."""
    steps, checks = plan_solution(shapes, names)
    return steps, checks, _specs(shapes, names), _TRAILER

"""User-created scopes of symbolic dimensions, with constraints (``jax.export.SymbolicScope``).

A constraint ``e1 >= e2`` (or ``<=``) sharpens the bounds that decide comparisons;
``t*k == e`` (the left side one term) rewrites ``t*k`` as ``e`` wherever it appears.
Bounds under constraints come from eliminating terms: for ``c >= 0`` and ``m, n > 0``,
``m*e - n*c`` has a lower bound that, divided by ``m``, bounds ``e`` from below (and
``m*e + n*c`` bounds it from above); ``m, n`` are picked to cancel a term of ``e``.
This is a simpler procedure than JAX's, so a few comparisons JAX decides may be
inconclusive here; every answer it gives is sound.
"""

from __future__ import annotations

import math
import os
import sys
from collections.abc import Sequence
from types import FrameType
from typing import Final

from plait.ir.dims import Constraint, Dim, DimExpr, Scope, parse_dims

__all__ = ["SymbolicScope"]

_PLAIT_DIR: Final = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# How many constraints one bound may combine (each level tries every constraint).
_DEPTH: Final = 2


def _user_location() -> str:
    """``file:line:column (function)`` of the innermost caller outside plait."""
    frame: FrameType | None = sys._getframe(1)
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(
            _PLAIT_DIR + os.sep):
        frame = frame.f_back
    if frame is None:
        return "unknown"
    positions = list(frame.f_code.co_positions())
    col = positions[frame.f_lasti // 2][2] if frame.f_lasti // 2 < len(positions) else None
    return (f"{frame.f_code.co_filename}:{frame.f_lineno}:{col or 0} "
            f"({frame.f_code.co_name})")


class SymbolicScope(Scope):
    """A scope for symbolic dimensions that holds constraints on them.

    Args:
      constraints_str: constraints ``"e1 >= e2"``, ``"e1 <= e2"`` or ``"e1 == e2"``.

    Raises:
      ValueError: ``constraints_str`` is a string (not a sequence of them), a constraint
        has no comparison, is unsatisfiable, or an equality's left side is not one term.
      NotImplementedError: two equalities with the same left side.
    """

    def __init__(self, constraints_str: Sequence[str] = ()) -> None:
        if isinstance(constraints_str, str):
            raise ValueError("The symbolic constraints should be a sequence of strings. "
                             f"Got {constraints_str!r}")
        super().__init__(_user_location())
        self._var_bounds: dict[str, tuple[float, float]] = {}
        self._geq: list[DimExpr] = []  # expressions that are >= 0
        self._cache: dict[DimExpr, tuple[float, float]] = {}
        for text in constraints_str:
            self._add(text)

    def _add(self, text: str) -> None:
        if not isinstance(text, str):
            raise ValueError(f"SymbolicScope constraint must be a string: got {text!r}")
        for op in ("==", ">=", "<="):
            if (pos := text.find(op)) >= 0:
                break
        else:
            raise ValueError("Constraint parsing error: must contain one of '==' or '>=' or "
                             "'<='")
        e1, e2 = self._side(text[:pos]), self._side(text[pos + 2:])
        if op == "<=":
            e1, e2 = e2, e1
        diff = e1 - e2
        if not isinstance(diff, DimExpr):
            if diff < 0 or (op == "==" and diff != 0):
                raise ValueError(f"Unsatisfiable explicit constraint: {text}")
            return
        if op == "==":
            self._add_rule(e1, e2)
        self._add_constraint(Constraint(text, "==" if op == "==" else ">=", diff))

    def _add_constraint(self, c: Constraint) -> None:
        self.constraints.append(c)
        # (an equality's rule rewrites its left side everywhere: no bound is needed)
        if c.cmp == ">=" and isinstance(c.diff, DimExpr):
            self._geq.append(c.diff)
            self._learn_var_bound(c.diff)
        self._cache.clear()

    def _side(self, text: str) -> Dim:
        dims = parse_dims(text, scope=self)
        if len(dims) != 1:
            raise ValueError(f"Constraint parsing error: expected one dimension expression, "
                             f"but got {text!r}")
        return dims[0]

    def _add_rule(self, e1: Dim, e2: Dim) -> None:
        if not isinstance(e1, DimExpr) or len(e1.terms) != 1 or () in e1.terms:
            raise ValueError("Invalid equality constraint: {e1} == {e2}. The left-hand-side "
                             "must be of the form `term * coefficient`.")
        (term, k), = e1.terms.items()
        if term in self.rules:
            raise NotImplementedError("Found multiple equality constraints with the same "
                                      f"left-hand-side: {DimExpr({term: 1}, self)}")
        self.rules[term] = (e2, k)
        if k == 1 and e2 == 0 and len(term) == 1:
            (factor, power), = term
            if power == 1 and isinstance(factor, tuple) and factor[0] == "mod":
                # mod(a, k) == 0 also means k*floordiv(a, k) == a (JAX records it first).
                _, a, m = factor
                lhs = DimExpr({((("floordiv", a, m), 1),): m}, self)
                diff = lhs - a
                self.rules[((("floordiv", a, m), 1),)] = (a, m)
                if isinstance(diff, DimExpr):
                    self._add_constraint(Constraint(f"{lhs} == {a}", "==", diff))

    def _learn_var_bound(self, diff: DimExpr) -> None:
        """Bounds of a variable from a constraint ``k*v + c >= 0``."""
        terms = diff.terms
        var_terms = [(t, k) for t, k in terms.items() if t]
        if len(var_terms) != 1:
            return
        (t, k), = var_terms
        if len(t) != 1 or t[0][1] != 1 or not isinstance(t[0][0], str):
            return
        name, c = t[0][0], terms.get((), 0)
        lo, hi = self.var_bounds(name)
        if k > 0:
            lo = max(lo, float(math.ceil(-c / k)))
        else:
            hi = min(hi, float(math.floor(c / -k)))
        self._var_bounds[name] = (lo, hi)

    def var_bounds(self, name: str) -> tuple[float, float]:
        """Bounds of the variable ``name``: >= 1, and as single-variable constraints say."""
        return self._var_bounds.get(name, (1.0, math.inf))

    def refine(self, e: DimExpr, lo: float, hi: float) -> tuple[float, float]:
        """``e``'s bounds sharpened by eliminating its terms with the constraints."""
        if not self._geq:
            return lo, hi
        cached = self._cache.get(e)
        if cached is None:
            cached = self._cache[e] = self._search(e, _DEPTH)
        return max(lo, cached[0]), min(hi, cached[1])

    def _search(self, e: Dim, depth: int) -> tuple[float, float]:
        if not isinstance(e, DimExpr):
            return float(e), float(e)
        lo, hi = e.plain_bounds()
        if depth == 0:
            return lo, hi
        terms = e.terms
        for c in self._geq:
            for t, ct in c.terms.items():
                et = terms.get(t) if t else None
                if et is None:
                    continue
                m, n = abs(ct), abs(et)
                if (et > 0) == (ct > 0):
                    lo = max(lo, self._search(m * e - n * c, depth - 1)[0] / m)
                else:
                    hi = min(hi, self._search(m * e + n * c, depth - 1)[1] / m)
        # (e is an integer)
        return (float(math.ceil(lo)) if lo != -math.inf else lo,
                float(math.floor(hi)) if hi != math.inf else hi)

"""Symbolic dimensions: shapes whose sizes are expressions of dimension variables.

A :class:`DimExpr` is a polynomial with integer coefficients over dimension
variables (``b``, ``batch``) and opaque factors ``floordiv(e, k)`` and
``mod(e, k)`` for a constant ``k``; an expression that is a constant is always a
plain ``int``.  Every variable stands for an integer >= 1, which decides most
comparisons (``b + 1 >= 1``, ``2*b > b``); the others raise
:class:`~plait.ir.errors.InconclusiveDimensionOperation` with JAX's words.
Equality is structural (JAX's rule): ``b == c`` is false, never an error.

Every expression belongs to a :class:`Scope`; expressions of different scopes never
combine (JAX's "Invalid mixing of symbolic scopes").  A scope may hold constraints
(:class:`plait.ir.dim_scope.SymbolicScope`) that sharpen bounds and rewrite terms.

:func:`parse_dims` reads JAX's text form (``"b, 2*b + 1, floordiv(b, 2)"``),
which ``str`` writes.
"""

from __future__ import annotations

import functools
import math
import operator
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Final, TypeAlias, Union, cast

from plait.ir.errors import InconclusiveDimensionOperation

__all__ = ["DimExpr", "Dim", "Scope", "Constraint", "DEFAULT_SCOPE", "is_symbolic",
           "is_constant_shape", "dim_vars", "parse_dims", "evaluate", "as_dims",
           "broadcast_dims", "set_value_hook", "dimension_value"]

# A factor of a monomial: a variable's name, or ("floordiv" | "mod", expression, k).
Factor: TypeAlias = str | tuple[str, "DimExpr", int]
# A monomial: its factors with their powers, sorted.
Term: TypeAlias = tuple[tuple[Factor, int], ...]
Dim: TypeAlias = Union[int, "DimExpr"]

_HELP: Final = """
This error arises for comparison operations with shapes that
are non-constant, and the result of the operation cannot be represented as
a boolean value for all values of the symbolic dimensions involved.

Please see https://docs.jax.dev/en/latest/export/shape_poly.html#comparison-of-symbolic-dimensions-is-partially-supported
for more details.
"""


def _inconclusive(message: str) -> InconclusiveDimensionOperation:
    return InconclusiveDimensionOperation(message + _HELP)


class Constraint:
    """A constraint of a scope: ``diff == 0`` or ``diff >= 0`` (``cmp`` is ``"=="`` or
    ``">="``), as the user wrote it in ``text``."""

    __slots__ = ("text", "cmp", "diff")

    def __init__(self, text: str, cmp: str, diff: Dim) -> None:
        self.text, self.cmp, self.diff = text, cmp, diff


class Scope:
    """The scope of symbolic dimensions that may interact; this one has no constraints.

    ``rules`` rewrites a term ``t`` with coefficient a multiple of ``k`` (its key ``t``
    gives ``(e, k)``: ``k*t == e``); ``constraints`` are checked when a function is called.
    """

    def __init__(self, location: str = "unknown") -> None:
        self.location = location
        self.rules: dict[Term, tuple[Dim, int]] = {}
        self.constraints: list[Constraint] = []

    def var_bounds(self, name: str) -> tuple[float, float]:
        """Bounds of the variable ``name`` (every variable is >= 1)."""
        return 1.0, math.inf

    def refine(self, e: DimExpr, lo: float, hi: float) -> tuple[float, float]:
        """``e``'s bounds ``lo``, ``hi`` sharpened by the scope's constraints."""
        return lo, hi

    def check_same(self, other: DimExpr, when: str, self_descr: str = " ",
                   other_descr: str = "unknown") -> None:
        """Raise unless ``other`` belongs to this scope.

        Raises:
          ValueError: JAX's "Invalid mixing of symbolic scopes".
        """
        if other.scope is not self:
            raise ValueError(
                f"Invalid mixing of symbolic scopes {when}.\n"
                f"Expected {self_descr}scope {self}\n"
                f"and found for '{other}' ({other_descr}) scope {other.scope}\n"
                "See https://docs.jax.dev/en/latest/export/shape_poly.html"
                "#user-specified-symbolic-constraints.")

    def __str__(self) -> str:
        lines = [f"{id(self)} created at {self.location}"]
        if self.constraints:
            lines[0] += " with constraints:"
            lines += [f"  {c.text}" for c in self.constraints]
        return "\n".join(lines)

    __repr__ = __str__


# Where dimensions parsed without a scope live (jaxpr text, IR parameters).
DEFAULT_SCOPE: Final = Scope()


def _factor_key(f: Factor) -> tuple[Any, ...]:
    return (0, f) if isinstance(f, str) else (1, f[0], str(f[1]), f[2])


def _term_key(t: Term) -> tuple[Any, ...]:
    return tuple((_factor_key(f), p) for f, p in t)


def _mul_terms(a: Term, b: Term) -> Term:
    powers: dict[Factor, int] = dict(a)
    for f, p in b:
        powers[f] = powers.get(f, 0) + p
    return tuple(sorted(powers.items(), key=lambda fp: _factor_key(fp[0])))


def _degree(t: Term) -> int:
    return sum(p for _, p in t)


_as_value: list[Callable[[Any], Any] | None] = [None]


def set_value_hook(hook: Callable[[Any], Any]) -> None:
    """Install how a dimension becomes a value when it meets one that is not a dimension
    (``b * 1.5``, ``x / b``): the frontend makes it a traced scalar."""
    _as_value[0] = hook


def dimension_value(d: DimExpr) -> Any:
    """A symbolic dimension as a value (a traced integer scalar), by the installed hook.

    Raises:
      TypeError: no hook is installed.
    """
    hook = _as_value[0]
    if hook is None:
        raise TypeError(f"the symbolic dimension {d} cannot be used as a value here")
    return hook(d)


def _with_value(op: Callable[[Any, Any], Any], a: Any, b: Any) -> Any:
    hook = _as_value[0]
    if hook is None:
        return NotImplemented
    return op(hook(a) if isinstance(a, DimExpr) else a, hook(b) if isinstance(b, DimExpr) else b)


class DimExpr:
    """A symbolic dimension size (never a constant: those are ints)."""

    __slots__ = ("_terms", "_hash", "_scope")

    def __init__(self, terms: Mapping[Term, int], scope: Scope = DEFAULT_SCOPE) -> None:
        # Use :func:`_make`, which returns an int for a constant.
        self._terms: tuple[tuple[Term, int], ...] = tuple(sorted(
            ((t, c) for t, c in terms.items() if c), key=lambda tc: _term_key(tc[0])))
        self._hash = hash(self._terms)
        self._scope = scope

    # -- construction ------------------------------------------------------------
    @staticmethod
    def var(name: str, scope: Scope = DEFAULT_SCOPE) -> Dim:
        """The dimension variable ``name`` of ``scope`` (as the scope's rules rewrite it)."""
        return _make({((name, 1),): 1}, scope)

    @property
    def scope(self) -> Scope:
        """The scope the expression belongs to."""
        return self._scope

    def _same(self, other: Dim, when: str) -> None:
        if isinstance(other, DimExpr) and other._scope is not self._scope:
            self._scope.check_same(other, when)

    @property
    def terms(self) -> dict[Term, int]:
        """Monomials and their coefficients (the empty monomial is the constant)."""
        return dict(self._terms)

    # -- arithmetic --------------------------------------------------------------
    def __add__(self, other: Dim) -> Dim:
        if not _is_dim(other):
            return cast(Dim, _with_value(operator.add, self, other))
        self._same(other, "for linear combination")
        terms = self.terms
        for t, c in _terms_of(other).items():
            terms[t] = terms.get(t, 0) + c
        return _make(terms, self._scope)

    __radd__ = __add__

    def __truediv__(self, other: Any) -> Any:
        return _with_value(operator.truediv, self, other)

    def __rtruediv__(self, other: Any) -> Any:
        return _with_value(operator.truediv, other, self)

    def __neg__(self) -> Dim:
        return _make({t: -c for t, c in self._terms}, self._scope)

    def __sub__(self, other: Dim) -> Dim:
        if not _is_dim(other):
            return cast(Dim, _with_value(operator.sub, self, other))
        return self + (-other)

    def __rsub__(self, other: Dim) -> Dim:
        if not _is_dim(other):
            return cast(Dim, _with_value(operator.sub, other, self))
        return (-self) + other

    def __mul__(self, other: Dim) -> Dim:
        if not _is_dim(other):
            return cast(Dim, _with_value(operator.mul, self, other))
        self._same(other, "for operation mul")
        out: dict[Term, int] = {}
        for t1, c1 in self._terms:
            for t2, c2 in _terms_of(other).items():
                t = _mul_terms(t1, t2)
                out[t] = out.get(t, 0) + c1 * c2
        return _make(out, self._scope)

    __rmul__ = __mul__

    def __floordiv__(self, other: Dim) -> Dim:
        if not _is_dim(other):
            return cast(Dim, _with_value(operator.floordiv, self, other))
        return _divmod(self, other)[0]

    def __rfloordiv__(self, other: Dim) -> Dim:
        if not _is_dim(other):
            return cast(Dim, _with_value(operator.floordiv, other, self))
        return _divmod(other, self)[0]

    def __mod__(self, other: Dim) -> Dim:
        if not _is_dim(other):
            return cast(Dim, _with_value(operator.mod, self, other))
        return _divmod(self, other)[1]

    def __rmod__(self, other: Dim) -> Dim:
        if not _is_dim(other):
            return cast(Dim, _with_value(operator.mod, other, self))
        return _divmod(other, self)[1]

    def __pow__(self, power: int) -> Dim:
        if isinstance(power, DimExpr) or power != int(power) or power < 0:
            raise ValueError("Symbolic dimension cannot be raised to non-integer or negative "
                             f"powers: '{self}' ** '{power}'")
        out: Dim = 1
        for _ in range(int(power)):
            out = out * self
        return out

    def __divmod__(self, other: Dim) -> tuple[Dim, Dim]:
        return _divmod(self, other)

    # -- comparisons ---------------------------------------------------------------
    def __eq__(self, other: object) -> bool:
        if isinstance(other, DimExpr):
            return self._terms == other._terms and self._scope is other._scope
        return False  # (a constant never equals a DimExpr: constants are ints)

    def __ne__(self, other: object) -> bool:
        return not self.__eq__(other)

    def __hash__(self) -> int:
        return self._hash

    def __ge__(self, other: Dim) -> bool:
        return _geq(self, other, lambda: f"'{self}' >= '{other}'")

    def __le__(self, other: Dim) -> bool:
        return _geq(other, self, lambda: f"'{self}' <= '{other}'")

    def __gt__(self, other: Dim) -> bool:
        return not _geq(other, self, lambda: f"'{self}' > '{other}'")

    def __lt__(self, other: Dim) -> bool:
        return not _geq(self, other, lambda: f"'{self}' < '{other}'")

    def __int__(self) -> int:
        raise _inconclusive(f"Symbolic dimension '{self}' used in a context that requires a "
                            "constant")

    __index__ = __int__  # (range(b), indexing with b: a constant is needed)

    def __bool__(self) -> bool:
        return True  # (a dimension is >= 1)

    # -- queries ---------------------------------------------------------------------
    def bounds(self) -> tuple[float, float]:
        """Lower and upper bounds over all variable values >= 1 that satisfy the scope's
        constraints (``inf`` if unbounded)."""
        lo, hi = self.plain_bounds()
        return self._scope.refine(self, lo, hi)

    def plain_bounds(self) -> tuple[float, float]:
        """Bounds from the variables' bounds alone (no constraint between variables)."""
        lo = hi = 0.0
        for t, c in self._terms:
            tlo, thi = _term_bounds(t, self._scope)
            if c > 0:
                lo, hi = lo + c * tlo, hi + c * thi
            else:
                lo, hi = lo + c * thi, hi + c * tlo
        return lo, hi

    def vars(self) -> set[str]:
        """The names of the dimension variables it uses."""
        out: set[str] = set()
        for t, _ in self._terms:
            for f, _ in t:
                if isinstance(f, str):
                    out.add(f)
                else:
                    out |= f[1].vars() if isinstance(f[1], DimExpr) else set()
        return out

    def evaluate(self, env: Mapping[str, int]) -> int:
        """The value for the variables' values in ``env``."""
        total = 0
        for t, c in self._terms:
            v = c
            for f, p in t:
                v *= _factor_value(f, env) ** p
            total += v
        return total

    def __str__(self) -> str:
        # JAX's text: the "larger" terms first (see _cmp_terms), the constant last.
        parts = []
        for t, c in sorted(self._terms, key=_TERM_ORDER, reverse=True):
            sign = "+" if c > 0 else "-"
            body = "*".join(_factor_str(f) + (f"^{p}" if p != 1 else "")
                            for f, p in sorted(t, key=_FACTOR_ORDER))
            parts.append(f"{sign} {abs(c)}" if not t else f"{sign} {body}" if abs(c) == 1
                         else f"{sign} {abs(c)}*{body}")
        text = " ".join(parts)
        return text[2:] if text.startswith("+ ") else text

    def __repr__(self) -> str:
        return str(self)


# -- JAX's syntactic order of factors and terms (it decides how expressions print) ----

def _cmp(a: Any, b: Any) -> int:
    return int(a > b) - int(a < b)


def _factor_size(f: Factor) -> int:
    return 1 if isinstance(f, str) else 1 + _expr_size(f[1]) + _expr_size(f[2])


def _term_size(t: Term) -> int:
    return sum(1 + p * _factor_size(f) for f, p in t)


def _expr_size(e: Dim) -> int:
    return sum(1 + abs(c) * _term_size(t) for t, c in _terms_of(e).items()) if e else 1


def _cmp_seq(xs: Sequence[Any], ys: Sequence[Any], cmp: Callable[[Any, Any], int]) -> int:
    for i, x in enumerate(xs):
        if i >= len(ys):
            return 1
        if c := cmp(x, ys[i]):
            return c
    return -1 if len(xs) < len(ys) else 0


def _cmp_factors(a: Factor, b: Factor) -> int:
    if c := _cmp(_factor_size(a), _factor_size(b)):
        return c
    if isinstance(a, str) or isinstance(b, str):
        return _cmp(str(a), str(b))
    if c := _cmp(a[0], b[0]):
        return c
    return _cmp_seq([a[1], a[2]], [b[1], b[2]], _cmp_exprs)


def _sorted_factors(t: Term) -> list[tuple[Factor, int]]:
    return sorted(t, key=_FACTOR_ORDER)


def _cmp_terms(a: Term, b: Term) -> int:
    if c := _cmp(_term_size(a), _term_size(b)):
        return c

    def cmp_fp(x: tuple[Factor, int], y: tuple[Factor, int]) -> int:
        return _cmp_factors(x[0], y[0]) or _cmp(x[1], y[1])
    return _cmp_seq(_sorted_factors(a), _sorted_factors(b), cmp_fp)


def _cmp_exprs(a: Dim, b: Dim) -> int:
    if c := _cmp(_expr_size(a), _expr_size(b)):
        return c
    ta = sorted(_terms_of(a).items(), key=_TERM_ORDER, reverse=True)
    tb = sorted(_terms_of(b).items(), key=_TERM_ORDER, reverse=True)
    return _cmp_seq(ta, tb, lambda x, y: _cmp_terms(x[0], y[0]) or _cmp(x[1], y[1]))


def _cmp_factor_powers(x: tuple[Factor, int], y: tuple[Factor, int]) -> int:
    return _cmp_factors(x[0], y[0]) or _cmp(x[1], y[1])


def _cmp_term_items(x: tuple[Term, int], y: tuple[Term, int]) -> int:
    return _cmp_terms(x[0], y[0])


_FACTOR_ORDER: Final = functools.cmp_to_key(_cmp_factor_powers)
_TERM_ORDER: Final = functools.cmp_to_key(_cmp_term_items)


def _is_dim(x: object) -> bool:
    return isinstance(x, DimExpr) or (isinstance(x, int) and not isinstance(x, bool))


def _terms_of(x: Dim) -> dict[Term, int]:
    return x.terms if isinstance(x, DimExpr) else ({(): x} if x else {})


def _make(terms: Mapping[Term, int], scope: Scope) -> Dim:
    nz = {t: c for t, c in terms.items() if c}
    if scope.rules:
        nz = _normalize(nz, scope)
    if not nz:
        return 0
    if set(nz) == {()}:
        return nz[()]
    return DimExpr(nz, scope)


def _normalize(terms: dict[Term, int], scope: Scope) -> dict[Term, int]:
    """Apply the first of ``scope``'s rules that fits a term (``k*t == e`` rewrites
    ``c*t`` with ``k | c`` as ``(c // k)*e``), or one that fits a factor of a product."""
    for t, c in terms.items():
        candidates = [(t, ())] + ([(((f, p),), tuple(x for x in t if x != (f, p)))
                                   for f, p in t] if len(t) > 1 else [])
        for key, rest in candidates:
            after, k = scope.rules.get(key, (None, 0))
            if after is not None and c % k == 0:
                out = dict(terms)
                del out[t]
                for t2, c2 in _terms_of(after).items():
                    t3 = _mul_terms(t2, rest)
                    out[t3] = out.get(t3, 0) + c2 * (c // k)
                return {x: v for x, v in out.items() if v}
    return terms


def _factor_str(f: Factor) -> str:
    return f if isinstance(f, str) else f"{f[0]}({f[1]}, {f[2]})"


def _factor_value(f: Factor, env: Mapping[str, int]) -> int:
    if isinstance(f, str):
        if f not in env:
            raise KeyError(f"no value for the dimension variable {f!r}")
        return env[f]
    op, e, k = f
    v = e.evaluate(env)
    return v // k if op == "floordiv" else v % k


def _term_bounds(t: Term, scope: Scope) -> tuple[float, float]:
    lo, hi = 1.0, 1.0
    for f, p in t:
        if isinstance(f, str):
            flo, fhi = scope.var_bounds(f)
        elif f[0] == "mod":
            k = f[2]
            flo, fhi = (0.0, float(k - 1)) if k > 0 else (float(k + 1), 0.0)
        else:
            elo, ehi = f[1].bounds()
            ends = [x / f[2] if abs(x) == math.inf else float(math.floor(x / f[2]))
                    for x in (elo, ehi)]
            flo, fhi = min(ends), max(ends)
        cands = [x ** p if x != math.inf else math.inf for x in (flo, fhi)]
        if flo < 0 and p % 2 == 0:
            cands.append(0.0)
        lo_p, hi_p = min(cands), max(cands)
        products = [a * b for a in (lo, hi) for b in (lo_p, hi_p)
                    if not ((a == 0 and abs(b) == math.inf) or (b == 0 and abs(a) == math.inf))]
        lo, hi = min(products, default=0.0), max(products, default=0.0)
    return lo, hi


def _geq(a: Dim, b: Dim, describe: Any) -> bool:
    if isinstance(a, DimExpr) and isinstance(b, DimExpr) and a.scope is not b.scope:
        a.scope.check_same(b, f"when comparing {describe()}")
    diff = a - b
    if not isinstance(diff, DimExpr):
        return diff >= 0
    lo, hi = diff.bounds()
    if lo >= 0:
        return True
    if hi < 0:
        return False
    using = f"\nUsing symbolic scope {diff.scope}" if diff.scope.constraints else ""
    raise _inconclusive(f"Symbolic dimension comparison {describe()} is inconclusive.{using}")


def _divmod(a: Dim, b: Dim) -> tuple[Dim, Dim]:
    """Floor division with remainder; exact for polynomials a divisor's monomial divides,
    an opaque ``floordiv``/``mod`` factor for a constant divisor otherwise."""
    if isinstance(a, DimExpr) and isinstance(b, DimExpr) and a.scope is not b.scope:
        a.scope.check_same(b, "for operation divmod")
    if isinstance(b, int):
        if b == 0:
            raise ZeroDivisionError("division of a dimension by zero")
        if isinstance(a, int):
            return divmod(a, b)
        if all(c % b == 0 for t, c in a._terms if t):
            # (k*m + c) // k = m + c // k for an integer m: the constant splits off.
            const = sum(c for t, c in a._terms if not t)
            q = {t: c // b for t, c in a._terms if t}
            if const // b:
                q[()] = const // b
            return _make(q, a.scope), const % b
        return (_make({((("floordiv", a, b), 1),): 1}, a.scope),
                _make({((("mod", a, b), 1),): 1}, a.scope))
    # A symbolic divisor: exact division by one monomial only.
    if len(b._terms) == 1:
        (bt, bc), = b._terms
        out: dict[Term, int] = {}
        for t, c in _terms_of(a).items():
            powers = dict(t)
            for f, p in bt:
                if powers.get(f, 0) < p:
                    break
                powers[f] -= p
            else:
                if c % bc == 0:
                    rest = tuple(sorted(((f, p) for f, p in powers.items() if p),
                                        key=lambda fp: _factor_key(fp[0])))
                    out[rest] = out.get(rest, 0) + c // bc
                    continue
            break
        else:
            return _make(out, b.scope), 0
    raise _inconclusive(f"Cannot divide '{a}' by '{b}'.")


def is_symbolic(d: object) -> bool:
    """Whether ``d`` is a symbolic dimension."""
    return isinstance(d, DimExpr)


def is_constant_shape(shape: Iterable[Dim]) -> bool:
    """Whether every dimension is an int."""
    return not any(isinstance(d, DimExpr) for d in shape)


def dim_vars(shapes: Iterable[Iterable[Dim]]) -> list[str]:
    """The dimension variables of the shapes, sorted by name."""
    out: set[str] = set()
    for s in shapes:
        for d in s:
            if isinstance(d, DimExpr):
                out |= d.vars()
    return sorted(out)


def evaluate(d: Dim, env: Mapping[str, int]) -> int:
    """The value of a dimension for the variables' values in ``env``."""
    return d.evaluate(env) if isinstance(d, DimExpr) else d


# -- parsing -----------------------------------------------------------------------

_TOKEN = re.compile(r"\s*(?:(\d+)|([A-Za-z_][\w]*)|(//|[-+*^(),%]))")


class _Parser:
    def __init__(self, text: str, spec: str, scope: Scope) -> None:
        self.text, self.spec, self.scope = text, spec, scope
        self.tokens: list[tuple[str, str]] = []
        pos = 0
        while pos < len(text):
            if text[pos:].strip() == "":
                break
            m = _TOKEN.match(text, pos)
            if m is None:
                self.fail(f"unexpected character {text[pos:].strip()[0]!r}")
            assert m is not None
            kind = "int" if m.group(1) else "name" if m.group(2) else "op"
            self.tokens.append((kind, m.group(m.lastindex or 0)))
            pos = m.end()
        self.i = 0

    def fail(self, why: str) -> None:
        raise ValueError(f"syntax error in symbolic shape {self.spec!r}: {why}")

    def peek(self) -> tuple[str, str]:
        return self.tokens[self.i] if self.i < len(self.tokens) else ("end", "")

    def take(self, text: str) -> None:
        if self.peek()[1] != text:
            self.fail(f"expected {text!r}, but got {self.peek()[1] or 'the end'!r}")
        self.i += 1

    def expr(self) -> Dim:
        sign = 1
        if self.peek() == ("op", "-"):
            self.i += 1
            sign = -1
        value: Dim = sign * self.term()
        while self.peek() in (("op", "+"), ("op", "-")):
            op = self.peek()[1]
            self.i += 1
            t = self.term()
            value = value + t if op == "+" else value - t
        return value

    def term(self) -> Dim:
        value = self.power()
        while self.peek() in (("op", "*"), ("op", "//"), ("op", "%")):
            op = self.peek()[1]
            self.i += 1
            rhs = self.power()
            value = value * rhs if op == "*" else value // rhs if op == "//" else value % rhs
        return value

    def power(self) -> Dim:
        base = self.atom()
        if self.peek() == ("op", "^"):
            self.i += 1
            kind, text = self.peek()
            if kind != "int":
                self.fail("expected an integer exponent")
            self.i += 1
            out: Dim = 1
            for _ in range(int(text)):
                out = out * base
            return out
        return base

    def atom(self) -> Dim:
        kind, text = self.peek()
        if kind == "int":
            self.i += 1
            return int(text)
        if kind == "name":
            self.i += 1
            if text in ("floordiv", "mod", "max", "min") and self.peek() == ("op", "("):
                self.take("(")
                a = self.expr()
                self.take(",")
                b = self.expr()
                self.take(")")
                if text == "floordiv":
                    return a // b
                if text == "mod":
                    return a % b
                self.fail(f"{text}() of dimensions is not supported")
            return DimExpr.var(text, self.scope)
        if (kind, text) == ("op", "("):
            self.i += 1
            e = self.expr()
            self.take(")")
            return e
        self.fail(f"expected a dimension, but got {text or 'the end'!r}")
        raise AssertionError  # (unreachable)


def parse_dims(spec: str, like: Sequence[int | None] | None = None,
               scope: Scope = DEFAULT_SCOPE) -> tuple[Dim, ...]:
    """The dimensions in ``spec`` (``"b, 4"``, ``"(b, 2*b)"``), in ``scope``; ``_`` or
    ``...`` take the size at that position from ``like``.

    Raises:
      ValueError: a syntax error, or a placeholder without a known size.
    """
    text = spec.strip()
    if text.startswith("(") and text.endswith(")") and text.count("(") == text.count(")"):
        inner = text[1:-1]
        if _balanced(inner):
            text = inner
    parts = _split_top(text) if text.strip() else []
    out: list[Dim] = []
    for i, part in enumerate(parts):
        p = part.strip()
        if p in ("_", "..."):
            if like is None or i >= len(like) or like[i] is None:
                raise ValueError(f"syntax error in symbolic shape {spec!r}: the placeholder "
                                 f"{p!r} in dimension {i} needs a known size")
            size = like[i]
            assert size is not None
            out.append(size)
            continue
        parser = _Parser(p, spec, scope)
        value = parser.expr()
        if parser.peek()[0] != "end":
            parser.fail(f"unexpected {parser.peek()[1]!r} in dimension {i}")
        if isinstance(value, int) and value < 0:
            raise ValueError(f"syntax error in symbolic shape {spec!r}: dimension {i} is "
                             f"negative ({value})")
        out.append(value)
    return tuple(out)


def _balanced(text: str) -> bool:
    depth = 0
    for ch in text:
        depth += ch == "("
        depth -= ch == ")"
        if depth < 0:
            return False
    return depth == 0


def _split_top(text: str) -> list[str]:
    parts: list[str] = []
    cur: list[str] = []
    depth = 0
    for ch in text:
        if ch == "," and depth == 0:
            parts.append("".join(cur))
            cur = []
            continue
        depth += ch == "("
        depth -= ch == ")"
        cur.append(ch)
    if "".join(cur).strip() or parts:
        parts.append("".join(cur))
    return parts


def as_dims(shape: Iterable[Any]) -> tuple[Dim, ...]:
    """A shape's dimensions as ints, symbolic ones kept.

    Raises:
      TypeError: a dimension is neither an integer nor symbolic.
    """
    return tuple(d if isinstance(d, DimExpr) else operator.index(d) for d in shape)


def broadcast_dims(*shapes: Sequence[Dim]) -> tuple[Dim, ...]:
    """The shape NumPy's broadcasting gives ``shapes`` together (symbolic dimensions
    broadcast only with themselves and 1).

    Raises:
      ValueError: incompatible shapes.
    """
    rank = max((len(s) for s in shapes), default=0)
    out: list[Dim] = []
    for i in range(rank):
        sizes = {s[i - rank + len(s)] for s in shapes if i - rank + len(s) >= 0}
        sizes.discard(1) if len(sizes) > 1 else None
        if len(sizes) > 1:
            raise ValueError("Incompatible shapes for broadcasting: "
                             f"shapes={list(map(tuple, shapes))}")
        out.append(sizes.pop() if sizes else 1)
    return tuple(out)

"""``JaxprRewriter``: a jaxpr-to-jaxpr rewrite, written one primitive at a time.

What torch.fx's ``Transformer`` is to an FX graph: the env/read/write loop over
equations, the rebuilding of equations that hold sub-jaxprs, and the checking of
the result are written once here.  A subclass says only what changes:

* per primitive, a rule registered with :meth:`JaxprRewriter.rule`, which emits
  replacement equations through a :class:`~plait.ir.Builder` and returns the
  atoms that stand for the equation's results;
* or, for anything more general, an override of :meth:`JaxprRewriter.rewrite_eqn`.

Every other equation is copied through, with its sub-jaxprs (``cond`` branches,
loop bodies, ``jit`` callees, custom-derivative rules) rewritten by the same
rewriter.  A rewrite that changes nothing returns the jaxpr it was given.

With ``reverse = True`` the walk goes from the outputs back to the inputs, for
rewrites such as the inverse interpreter of JAX's tutorial "Writing custom
Jaxpr interpreters in JAX": the new jaxpr takes values of the old outputs and
returns values of the old inputs, and each rule maps an equation's results to
its operands.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, ClassVar, TypeVar

from plait.ir.atoms import Atom, Literal, Var
from plait.ir.builder import Builder
from plait.ir.check import check_jaxpr
from plait.ir.errors import JaxprTypeError, RuleNotImplementedError
from plait.ir.jaxpr import ClosedJaxpr, Eqn, Jaxpr
from plait.ir.notes import note_equation
from plait.ir.params import Params
from plait.ir.primitive import Primitive

__all__ = ["JaxprRewriter", "RewriteRule"]

RewriteRule = Callable[["JaxprRewriter", Builder, Eqn, Sequence[Atom]], Sequence[Atom | None]]
"""``rule(rewriter, builder, eqn, atoms) -> atoms``.

Forward: ``atoms`` stand for ``eqn.invars`` in the new jaxpr, and the rule returns
one atom per ``eqn.outvars``.  Reverse: ``atoms`` stand for ``eqn.outvars`` and the
rule returns one entry per ``eqn.invars`` (``None`` for a literal operand)."""

R = TypeVar("R", bound=RewriteRule)


class JaxprRewriter:
    """Copies a jaxpr through a :class:`Builder`, applying per-primitive rules.

    Subclass it, register rules with ``@MyRewriter.rule(primitive)`` (each subclass
    has its own table, starting from its parent's), and call :meth:`rewrite`.
    """

    rules: ClassVar[dict[Primitive, RewriteRule]] = {}
    """The rules of this class, keyed by primitive."""
    reverse: ClassVar[bool] = False
    """Walk from the outputs back to the inputs (see the module docstring)."""

    def __init__(self, *, recurse: bool = True, check: bool = True) -> None:
        self.recurse = recurse
        """Rewrite the sub-jaxprs held in params (forward rewrites only)."""
        self.check = check
        """Run :func:`~plait.ir.check_jaxpr` on every result."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls.rules = dict(cls.rules)  # registering on a subclass leaves its parent alone

    @classmethod
    def rule(cls, primitive: Primitive) -> Callable[[R], R]:
        """Decorator: make the function the rule of ``primitive`` in this class."""
        def register(fn: R) -> R:
            cls.rules[primitive] = fn
            return fn
        return register

    # -- entry points -------------------------------------------------------------
    def rewrite(self, jaxpr: Jaxpr) -> Jaxpr:
        """The rewritten jaxpr; ``jaxpr`` itself when no rule changed anything.

        Raises:
          RuleNotImplementedError: a reverse rewrite met a primitive without a rule.
          JaxprTypeError: a rule emitted ill-typed equations, or returned atoms of
            the wrong number or type.
        """
        new = self._reverse(jaxpr) if self.reverse else self._forward(jaxpr)
        if new.typed_key() == jaxpr.typed_key() and new.debug_info == jaxpr.debug_info:
            return jaxpr
        if self.check:
            check_jaxpr(new)
        return new

    def rewrite_closed(self, closed: ClosedJaxpr) -> ClosedJaxpr:
        """:meth:`rewrite` of a closed jaxpr; its consts are kept."""
        return closed.replace(jaxpr=self.rewrite(closed.jaxpr))

    # -- what subclasses may override ------------------------------------------
    def rewrite_eqn(self, builder: Builder, eqn: Eqn,
                    atoms: Sequence[Atom]) -> Sequence[Atom | None]:
        """Emit the replacement of ``eqn`` (see :data:`RewriteRule` for ``atoms``).

        The default applies the class's rule for the primitive; without one it
        copies the equation (forward) or raises (reverse).
        """
        rule = type(self).rules.get(eqn.primitive)
        if rule is not None:
            return rule(self, builder, eqn, atoms)
        if self.reverse:
            raise RuleNotImplementedError(type(self).__name__, eqn.primitive.name)
        return self.copy_eqn(builder, eqn, atoms)

    def copy_eqn(self, builder: Builder, eqn: Eqn, invars: Sequence[Atom]) -> Sequence[Atom]:
        """Emit ``eqn`` unchanged but for its operands (and rewritten sub-jaxprs)."""
        params = self.rewrite_params(eqn.params) if self.recurse else eqn.params
        return builder.bind(eqn.primitive, tuple(invars), params, eqn.source_info)

    def rewrite_params(self, params: Params) -> Params:
        """``params`` with every jaxpr it holds rewritten (the same object if none changes)."""
        changes = {k: self._rewrite_value(v) for k, v in params.items()}
        return params.replace(**changes)

    # -- the walks --------------------------------------------------------------
    def _rewrite_value(self, v: Any) -> Any:
        if isinstance(v, ClosedJaxpr):
            return self.rewrite_closed(v)
        if isinstance(v, Jaxpr):
            return self.rewrite(v)
        if type(v) is tuple and any(isinstance(x, Jaxpr | ClosedJaxpr) for x in v):
            new = tuple(self._rewrite_value(x) for x in v)
            return v if all(a is b for a, b in zip(new, v)) else new
        return v

    def _forward(self, jaxpr: Jaxpr) -> Jaxpr:
        env: dict[Var, Atom] = {}

        def read(a: Atom) -> Atom:
            return a if type(a) is Literal else env[a]

        builder = Builder()
        constvars = [Var(v.aval) for v in jaxpr.constvars]
        invars = [Var(v.aval) for v in jaxpr.invars]
        env.update(zip(jaxpr.constvars, constvars))
        env.update(zip(jaxpr.invars, invars))
        for eqn in jaxpr.eqns:
            builder.source_info = eqn.source_info
            try:
                outs = self.rewrite_eqn(builder, eqn, [read(a) for a in eqn.invars])
                _bind_results(env, eqn.outvars, outs, eqn, "result")
            except Exception as exc:
                note_equation(exc, jaxpr, eqn, f"rewriting ({type(self).__name__})")
                raise
        return builder.build(invars, [read(a) for a in jaxpr.outvars], constvars,
                             jaxpr.debug_info)

    def _reverse(self, jaxpr: Jaxpr) -> Jaxpr:
        if jaxpr.constvars:
            raise JaxprTypeError("a reverse rewrite expected a jaxpr without constvars, but "
                                 f"got {len(jaxpr.constvars)}; convert them to inputs first "
                                 "(plait.ir.convert_constvars)")
        env: dict[Var, Atom] = {}
        builder = Builder()
        invars = [Var(a.aval) for a in jaxpr.outvars]
        for old, new in zip(jaxpr.outvars, invars):
            if type(old) is Var:
                env.setdefault(old, new)
        for eqn in reversed(jaxpr.eqns):
            builder.source_info = eqn.source_info
            try:
                unused = [i for i, v in enumerate(eqn.outvars) if v not in env]
                if unused:
                    raise JaxprTypeError("a reverse rewrite expected every result of an "
                                         f"equation to be used, but results {unused} are not")
                outs = self.rewrite_eqn(builder, eqn, [env[v] for v in eqn.outvars])
                _bind_results(env, eqn.invars, outs, eqn, "operand")
            except Exception as exc:
                note_equation(exc, jaxpr, eqn, f"rewriting ({type(self).__name__})")
                raise
        missing = [i for i, v in enumerate(jaxpr.invars) if v not in env]
        if missing:
            raise JaxprTypeError(f"a reverse rewrite expected every input to reach an output, "
                                 f"but inputs {missing} do not")
        return builder.build(invars, [env[v] for v in jaxpr.invars])


def _bind_results(env: dict[Var, Atom], targets: Sequence[Atom],
                  values: Sequence[Atom | None], eqn: Eqn, what: str) -> None:
    """Record that ``values`` stand for ``targets``.  Types may change (a rewrite may
    change precision, say): the builder types what follows, and the result is checked."""
    if len(values) != len(targets):
        raise JaxprTypeError(f"{eqn.primitive.name}: expected a rule to return one atom per "
                             f"{what} ({len(targets)}), but got {len(values)}")
    for i, (t, x) in enumerate(zip(targets, values)):
        if type(t) is not Var:
            continue  # a literal operand (reverse): nothing to bind
        if x is None:
            raise JaxprTypeError(f"{eqn.primitive.name}: expected an atom for {what} {i}, "
                                 f"but the rule returned None")
        env.setdefault(t, x)

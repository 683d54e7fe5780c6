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
from typing import Any, ClassVar, TypeAlias, TypeVar, cast, overload

from plait.ir.atoms import Atom, Literal, Var
from plait.ir.builder import Builder
from plait.ir.check import check_jaxpr
from plait.ir.errors import JaxprTypeError, RuleNotImplementedError
from plait.ir.jaxpr import ClosedJaxpr, Eqn, Jaxpr
from plait.ir.notes import note_equation
from plait.ir.params import Params
from plait.ir.primitive import Primitive

__all__ = ["JaxprRewriter", "RewriteRule"]

W = TypeVar("W", bound="JaxprRewriter")

Rule: TypeAlias = Callable[[W, Builder, Eqn, Sequence[Atom]], Sequence[Atom | None]]
"""A rule of rewriter class ``W``: ``rule(rewriter, builder, eqn, atoms) -> atoms``."""

RewriteRule: TypeAlias = Rule["JaxprRewriter"]
"""``rule(rewriter, builder, eqn, atoms) -> atoms``.

Forward: ``atoms`` stand for ``eqn.invars`` in the new jaxpr, and the rule returns
one atom per ``eqn.outvars``.  Reverse: ``atoms`` stand for ``eqn.outvars`` and the
rule returns one entry per ``eqn.invars`` (``None`` for a literal operand)."""


class JaxprRewriter:
    """Copies a jaxpr through a :class:`Builder`, applying per-primitive rules.

    Subclass it, register rules with ``@MyRewriter.rule(primitive)`` and call
    :meth:`rewrite`.  A class uses its own rules and those of its bases (the
    nearest class's rule wins), whenever they were registered.
    """

    rules: ClassVar[dict[Primitive, RewriteRule]] = {}
    """The rules registered on this very class (see :meth:`rule_for` for lookup)."""
    reverse: ClassVar[bool] = False
    """Walk from the outputs back to the inputs (see the module docstring)."""

    def __init__(self, *, recurse: bool = True, check: bool = True, cse: bool = False) -> None:
        """A rewriter with these options (see the attributes of the same names)."""
        self.recurse = recurse
        """Rewrite the sub-jaxprs held in the params of copied equations."""
        self.check = check
        """Run :func:`~plait.ir.check_jaxpr` on a changed result."""
        self.cse = cse
        """Merge duplicate pure equations (off by default, so that a copy is faithful:
        a jaxpr that repeats an equation, say a parsed one, is copied as it is)."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls.rules = {}  # each class its own table: registering on a subclass leaves its base alone

    @classmethod
    def rule(cls: type[W], primitive: Primitive) -> Callable[[Rule[W]], Rule[W]]:
        """Decorator: make the function the rule of ``primitive`` in this class.

        Raises:
          TypeError: called on :class:`JaxprRewriter` itself, whose rules every
            rewriter would inherit.
        """
        if cls is JaxprRewriter:
            raise TypeError("expected a subclass of JaxprRewriter to register a rule on, "
                            "but got JaxprRewriter itself")

        def register(fn: Rule[W]) -> Rule[W]:
            # Only instances of cls (or of its subclasses) look rules up in cls's table.
            cls.rules[primitive] = cast(RewriteRule, fn)
            return fn
        return register

    @classmethod
    def rule_for(cls, primitive: Primitive) -> RewriteRule | None:
        """The rule of ``primitive`` in this class or its nearest base that has one."""
        for klass in cls.__mro__:
            table = vars(klass).get("rules")
            if isinstance(table, dict) and primitive in table:
                return cast(RewriteRule, table[primitive])
        return None

    # -- entry points -------------------------------------------------------------
    @overload
    def rewrite(self, jaxpr: Jaxpr) -> Jaxpr: ...

    @overload
    def rewrite(self, jaxpr: ClosedJaxpr) -> ClosedJaxpr: ...

    def rewrite(self, jaxpr: Jaxpr | ClosedJaxpr) -> Jaxpr | ClosedJaxpr:
        """The rewritten jaxpr (closed if ``jaxpr`` is, with the same consts);
        ``jaxpr`` itself when the result is structurally equal to it.

        Raises:
          RuleNotImplementedError: a reverse rewrite met a primitive without a rule.
          JaxprTypeError: a rule emitted ill-typed equations, or returned atoms of
            the wrong number or type.
        """
        new = self._rewrite_any(jaxpr)
        if self.check and new is not jaxpr:
            check_jaxpr(new)  # recursive: sub-jaxprs are checked here, once
        return new

    def rewrite_closed(self, closed: ClosedJaxpr) -> ClosedJaxpr:
        """:meth:`rewrite` of a closed jaxpr; its consts are kept."""
        return self.rewrite(closed)

    # -- what subclasses may override ------------------------------------------
    def rewrite_eqn(self, builder: Builder, eqn: Eqn,
                    atoms: Sequence[Atom]) -> Sequence[Atom | None]:
        """Emit the replacement of ``eqn`` (see :data:`RewriteRule` for ``atoms``).

        The default applies the class's rule for the primitive; without one it
        copies the equation (forward) or raises (reverse).
        """
        rule = self.rule_for(eqn.primitive)
        if rule is not None:
            return rule(self, builder, eqn, atoms)
        if self.reverse:
            raise RuleNotImplementedError(type(self).__name__, eqn.primitive.name)
        return self.copy_eqn(builder, eqn, atoms)

    def binder(self, v: Var) -> Var:
        """The new jaxpr's variable standing for the input or constant ``v`` (forward
        walks; one of the same type unless a rewrite changes types)."""
        return Var(v.aval)

    def copy_eqn(self, builder: Builder, eqn: Eqn, invars: Sequence[Atom]) -> Sequence[Atom]:
        """Emit ``eqn`` unchanged but for its operands (and rewritten sub-jaxprs)."""
        params = self.rewrite_params(eqn.params) if self.recurse else eqn.params
        return builder.bind(eqn.primitive, tuple(invars), params, eqn.source_info)

    def rewrite_params(self, params: Params) -> Params:
        """``params`` with every jaxpr it holds rewritten (the same object if none changes).

        In a reverse rewrite the sub-jaxprs are reversed too: a rule for ``jit``
        can bind ``jit`` with these params to invert the callee.
        """
        changes = {k: self._rewrite_value(v) for k, v in params.items()}
        return params.replace(**changes)

    # -- the walks --------------------------------------------------------------
    def _rewrite_any(self, jaxpr: Jaxpr | ClosedJaxpr) -> Jaxpr | ClosedJaxpr:
        # Unchecked: the entry point checks the outermost result, sub-jaxprs included.
        if isinstance(jaxpr, ClosedJaxpr):
            return jaxpr.replace(jaxpr=self._rewrite_jaxpr(jaxpr.jaxpr))
        return self._rewrite_jaxpr(jaxpr)

    def _rewrite_jaxpr(self, jaxpr: Jaxpr) -> Jaxpr:
        new = self._reverse(jaxpr) if self.reverse else self._forward(jaxpr)
        # A structurally equal result (weak types included) is the input: callers may
        # then test `is` to learn that nothing changed, and caches keep hitting.
        if new.typed_key() == jaxpr.typed_key() and new.debug_info == jaxpr.debug_info:
            return jaxpr
        return new

    def _rewrite_value(self, v: Any) -> Any:
        if isinstance(v, Jaxpr | ClosedJaxpr):
            return self._rewrite_any(v)
        if type(v) is tuple and any(isinstance(x, Jaxpr | ClosedJaxpr) for x in v):
            new = tuple(self._rewrite_value(x) for x in v)
            return v if all(a is b for a, b in zip(new, v)) else new
        return v

    def _forward(self, jaxpr: Jaxpr) -> Jaxpr:
        env: dict[Var, Atom] = {}

        def read(a: Atom) -> Atom:
            return a if type(a) is Literal else env[a]

        builder = Builder(cse=self.cse)
        constvars = [self.binder(v) for v in jaxpr.constvars]
        invars = [self.binder(v) for v in jaxpr.invars]
        env.update(zip(jaxpr.constvars, constvars))
        env.update(zip(jaxpr.invars, invars))
        for eqn in jaxpr.eqns:
            builder.source_info = eqn.source_info  # what a rule emits points at the user's line
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
        builder = Builder(cse=self.cse)
        invars = [Var(a.aval) for a in jaxpr.outvars]
        for old, new in zip(jaxpr.outvars, invars):
            if type(old) is Var:
                env.setdefault(old, new)
        for eqn in reversed(jaxpr.eqns):
            builder.source_info = eqn.source_info
            try:
                outs = self.rewrite_eqn(builder, eqn, _reverse_operands(env, eqn))
                _bind_results(env, eqn.invars, outs, eqn, "operand")
            except Exception as exc:
                note_equation(exc, jaxpr, eqn, f"rewriting ({type(self).__name__})")
                raise
        missing = [i for i, v in enumerate(jaxpr.invars) if v not in env]
        if missing:
            raise JaxprTypeError(f"a reverse rewrite expected every input to reach an output, "
                                 f"but inputs {missing} do not")
        return builder.build(invars, [env[v] for v in jaxpr.invars])


def _reverse_operands(env: dict[Var, Atom], eqn: Eqn) -> list[Atom]:
    """The atoms standing for ``eqn.outvars`` in a reverse walk: all must be known."""
    unused = [i for i, v in enumerate(eqn.outvars) if v not in env]
    if unused:
        raise JaxprTypeError("a reverse rewrite expected every result of an equation to be "
                             f"used, but results {unused} are not")
    return [env[v] for v in eqn.outvars]


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
        # setdefault: in a reverse walk an operand used twice keeps its first inverse.
        env.setdefault(t, x)

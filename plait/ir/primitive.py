"""Primitives: the operations equations apply, each with its typing rule.

A :class:`Primitive` owns only what the IR itself needs: its name, its
declared parameters and its typing rule (abstract evaluation).  Every other
rule (reference implementation, JVP, transpose, batching, lowering) lives in
a table keyed by primitive, in the layer that uses it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final

import attrs

from plait.ir.avals import AbstractValue
from plait.ir.effects import NO_EFFECTS, Effect
from plait.ir.errors import JaxprTypeError
from plait.ir.params import EMPTY_PARAMS, REQUIRED, Derived, ParamDef, Params, param_table
from plait.ir.sharding import EXPLICIT

__all__ = ["Primitive", "TypingRule", "PRIMITIVES", "lookup_primitive", "set_bind_hook",
           "set_bind_with_trace_hook", "set_sharding_hook", "with_shardings"]

TypingRule = Callable[..., tuple[AbstractValue, ...]]
"""``rule(*in_avals, **params) -> out_avals``; raises :class:`JaxprTypeError` on misuse."""

EffectsRule = Callable[[Params], frozenset[Effect]]

PRIMITIVES: Final[dict[str, Primitive]] = {}
"""Every primitive created so far, by name (the parser resolves names here)."""

_bind_hook: Callable[[Primitive, tuple[Any, ...], dict[str, Any]], Any] | None = None
_sharding_hook: Callable[..., tuple[AbstractValue, ...]] | None = None
_bind_with_trace_hook: Callable[[Primitive, Any, Sequence[Any], dict[str, Any]], Any] | None = None


def set_bind_with_trace_hook(
        hook: Callable[[Primitive, Any, Sequence[Any], dict[str, Any]], Any]) -> None:
    """Install the function behind :meth:`Primitive.bind_with_trace` (the frontend's)."""
    global _bind_with_trace_hook
    _bind_with_trace_hook = hook


def set_bind_hook(hook: Callable[[Primitive, tuple[Any, ...], dict[str, Any]], Any]) -> None:
    """Install the function behind :meth:`Primitive.bind` (the frontend does this)."""
    global _bind_hook
    _bind_hook = hook


def set_sharding_hook(hook: Callable[..., tuple[AbstractValue, ...]]) -> None:
    """Install the function giving result types their shardings
    (:func:`plait.ir.sharding_rules.result_shardings`)."""
    global _sharding_hook
    _sharding_hook = hook


def with_shardings(prim: Primitive, in_avals: Sequence[AbstractValue],
                   outs: tuple[AbstractValue, ...], params: Mapping[str, Any]
                   ) -> tuple[AbstractValue, ...]:
    """``outs``, the typing rule's results, with the shardings ``prim``'s sharding rule
    gives them (once the rules are installed)."""
    hook = _sharding_hook
    return outs if hook is None else hook(prim, in_avals, outs, params)


def lookup_primitive(name: str) -> Primitive:
    """The registered primitive called ``name``.

    Raises:
      KeyError: no primitive has that name.
    """
    return PRIMITIVES[name]


@attrs.frozen(eq=False, repr=False)
class Primitive:
    """An operation of the IR.

    Primitives compare by identity and register themselves by name on
    creation, so two primitives may not share a name.
    """

    name: str
    """The name printed in jaxprs, such as ``"add"``."""
    typing_rule: TypingRule = attrs.field(repr=False)
    """Computes output types from input types and params."""
    param_defs: tuple[ParamDef, ...] = ()
    """The declared parameters, in declaration order."""
    multiple_results: bool = False
    """Whether ``bind`` returns a list (``True``) or a single value."""
    effects_rule: EffectsRule | None = None
    """Computes the effects of an equation from its params; ``None`` means pure."""
    call_like: bool = False
    """True for primitives whose ``jaxpr`` param is applied to the operands
    (``jit``): the printer names the callee's binders after the operands."""
    print_first: tuple[str, ...] = ()
    """Params printed before the others (which follow sorted by name)."""
    open_params: bool = False
    """True for a primitive defined outside plait (``plait.extend.core.Primitive``): it
    takes any hashable params, undeclared, and a later one may take its name (as a
    re-run notebook cell redefines it)."""
    params_by_name: Mapping[str, ParamDef] = attrs.field(init=False, repr=False)
    """:attr:`param_defs` indexed by name."""
    _defaults: Params | None = attrs.field(init=False, repr=False)

    def __attrs_post_init__(self) -> None:
        object.__setattr__(self, "params_by_name", param_table(self.param_defs))
        constant = all(d.default is not REQUIRED and not isinstance(d.default, Derived)
                       for d in self.param_defs)
        defaults = Params({d.name: d.default for d in self.param_defs}) if constant else None
        object.__setattr__(self, "_defaults", defaults)
        old = PRIMITIVES.get(self.name)
        if old is not None and not (self.open_params and old.open_params):
            raise ValueError(f"a primitive named {self.name!r} already exists")
        PRIMITIVES[self.name] = self

    def __repr__(self) -> str:
        return self.name

    def bind(self, /, *args: Any, **params: Any) -> Any:
        """Apply the primitive: staged into the current trace, or run eagerly."""
        if _bind_hook is None:
            raise RuntimeError("Primitive.bind needs the plait frontend: `import plait` first")
        return _bind_hook(self, args, params)

    def bind_with_trace(self, trace: Any, args: Sequence[Any], *avals_and_params: Any) -> Any:
        """Apply the primitive under ``trace`` (a trace taken with
        ``take_current_trace``), as JAX's: ``(trace, args, avals, params)``, or
        ``(trace, args, params)`` as before JAX 0.9.2 (the avals are not needed)."""
        if _bind_with_trace_hook is None:
            raise RuntimeError("Primitive.bind_with_trace needs the plait frontend: "
                               "`import plait` first")
        if len(avals_and_params) not in (1, 2):
            raise TypeError(f"{self.name}.bind_with_trace: expected (trace, args, avals, "
                            f"params), but got {2 + len(avals_and_params)} arguments")
        return _bind_with_trace_hook(self, trace, args, dict(avals_and_params[-1]))

    def get_bind_params(self, params: Mapping[str, Any]) -> dict[str, Any]:
        """The params to rebind an equation with, ``bind(*args, **params)``, as JAX's
        (plait's equations keep their bodies as params: they rebind as they are)."""
        return dict(params)

    def complete_params(self, params: Mapping[str, Any]) -> Params:
        """Check ``params`` against the declarations and fill constant defaults.

        Raises:
          JaxprTypeError: an unknown parameter, or a required one missing.
        """
        if not params:
            if self._defaults is not None:
                return self._defaults
        elif type(params) is Params and len(params) == len(self.param_defs):
            return params
        defs = self.params_by_name
        if not defs and not params:
            return EMPTY_PARAMS
        if self.open_params:
            return _open_params(self.name, params)
        unknown = [k for k in params if k not in defs]
        if unknown:
            raise JaxprTypeError(
                f"{self.name}: expected parameters among ({', '.join(defs) or 'none'}), "
                f"but got unknown {', '.join(map(repr, unknown))}")
        if len(params) == len(defs):
            return params if isinstance(params, Params) else Params(params)
        full = dict(params)
        for d in self.param_defs:
            if d.name not in full:
                if d.default is REQUIRED or isinstance(d.default, Derived):
                    raise JaxprTypeError(f"{self.name}: expected parameter {d.name!r}, but it is "
                                         "missing")
                full[d.name] = d.default
        return Params(full)

    def abstract_eval(self, in_avals: Sequence[AbstractValue], params: Mapping[str, Any]
                      ) -> tuple[AbstractValue, ...]:
        """Output types for inputs of types ``in_avals`` (the typing rule).

        Raises:
          JaxprTypeError: the inputs or params are ill-typed; the message starts
            with the primitive's name.
        """
        try:
            outs = self.typing_rule(*in_avals, **params)
        except JaxprTypeError as e:
            msg = str(e)
            if msg.startswith(f"{self.name}:"):
                raise
            raise JaxprTypeError(f"{self.name}: {msg}") from None
        if EXPLICIT.seen:
            return with_shardings(self, in_avals, outs, params)
        return outs

    def effects(self, params: Params) -> frozenset[Effect]:
        """The effects an equation with these params has."""
        rule = self.effects_rule
        return NO_EFFECTS if rule is None else rule(params)


def _open_params(name: str, params: Mapping[str, Any]) -> Params:
    """``params`` of a primitive that declares none, checked to be hashable (they are
    part of an equation's structural key)."""
    for k, v in params.items():
        try:
            hash(v)
        except TypeError:
            raise JaxprTypeError(f"{name}: expected hashable parameters, but {k}={v!r} is a "
                                 f"{type(v).__name__}: pass a tuple for a list, or a "
                                 "hashable wrapper") from None
    return params if isinstance(params, Params) else Params(params)

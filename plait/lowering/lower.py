"""Lowering a closed jaxpr to a StableHLO module (as MLIR text).

One rule per primitive (:data:`lowering_rules`), each the same shape:
``rule(ctx, *operands, **params) -> results``, where operands are
:class:`~plait.lowering.emitter.Value`\\ s and ``ctx`` carries the equation's
types and the function being emitted.  The module is ``module @jit_<name>``
with a public ``@main`` whose results carry ``jax.result_info`` paths.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import attrs

from plait.errors import RuleNotImplementedError
from plait.ir.atoms import Atom, Literal, Var
from plait.ir.avals import AbstractValue, ShapedArray
from plait.ir.jaxpr import ClosedJaxpr, Jaxpr
from plait.ir.primitive import Primitive
from plait.lowering.emitter import FuncEmitter, Value, tensor_type

__all__ = ["LoweringContext", "LoweringRule", "lowering_rules", "lower_closed_jaxpr",
           "ModuleText", "lower_sub_jaxpr"]


@attrs.define
class ModuleEmitter:
    """The functions of a module being lowered."""

    counter: list[int] = attrs.field(factory=lambda: [0])
    functions: list[str] = attrs.field(factory=list)
    names: dict[str, int] = attrs.field(factory=dict)
    callees: dict[Any, str] = attrs.field(factory=dict)

    def unique(self, name: str) -> str:
        """A function name not used yet in this module."""
        n = self.names.get(name, 0)
        self.names[name] = n + 1
        return name if n == 0 else f"{name}_{n}"


class LoweringContext:
    """What a lowering rule sees of its equation (one object reused along a function)."""

    __slots__ = ("fn", "module", "avals_in", "avals_out")

    def __init__(self, fn: FuncEmitter, module: ModuleEmitter) -> None:
        self.fn = fn
        """The function receiving the ops."""
        self.module = module
        """The module (to add private functions for calls)."""
        self.avals_in: Sequence[AbstractValue] = ()
        """Types of the equation's operands."""
        self.avals_out: Sequence[AbstractValue] = ()
        """Types of the equation's results."""


LoweringRule = Callable[..., Sequence[Value]]
lowering_rules: dict[Primitive, LoweringRule] = {}
"""The StableHLO lowering of each primitive."""


def lower_body(module: ModuleEmitter, fn: FuncEmitter, jaxpr: Jaxpr,
               consts: Sequence[Value], args: Sequence[Value]) -> list[Value]:
    """Emit ``jaxpr``'s equations into ``fn``; returns the values of its outputs."""
    env: dict[Var, Value] = {}

    def read(a: Atom) -> Value:
        if type(a) is Literal:
            return fn.literal(a)  # type: ignore[arg-type]
        return env[a]  # type: ignore[index]

    for v, x in zip(jaxpr.constvars, consts, strict=True):
        env[v] = x
    for v, x in zip(jaxpr.invars, args, strict=True):
        env[v] = x
    ctx = LoweringContext(fn, module)
    rules = lowering_rules
    for eqn in jaxpr.eqns:
        rule = rules.get(eqn.primitive)
        if rule is None:
            raise RuleNotImplementedError("Lowering", eqn.primitive.name)
        ctx.avals_in = [a.aval for a in eqn.inputs]
        ctx.avals_out = [v.aval for v in eqn.outvars]
        outs = rule(ctx, *[read(a) for a in eqn.inputs], **eqn.params)
        for v, out in zip(eqn.outvars, outs, strict=True):
            env[v] = out
    return [read(a) for a in jaxpr.outvars]


def _signature(args: Sequence[Value], result_types: Sequence[str],
               result_attrs: Sequence[str] | None, arg_attrs: Sequence[str] = ()) -> str:
    attrs_ = list(arg_attrs) or [""] * len(args)
    params = ", ".join(f"{a.name}: {a.type}" + (f" {{{x}}}" if x else "")
                       for a, x in zip(args, attrs_))
    if result_attrs is None:
        results = ", ".join(result_types)
        results = f"({results})" if len(result_types) != 1 else results
    else:
        results = "(" + ", ".join(f"{t} {{{a}}}" if a else t
                                  for t, a in zip(result_types, result_attrs)) + ")"
    return f"({params}) -> {results}"


def _emit_function(module: ModuleEmitter, name: str, visibility: str, jaxpr: Jaxpr,
                   const_values: Sequence[Any], result_attrs: Sequence[str] | None,
                   arg_attrs: Sequence[str] = ()) -> None:
    slot = len(module.functions)
    module.functions.append("")  # callees lowered below come after this function, as in JAX
    fn = FuncEmitter(module.counter)
    args = [fn.fresh(tensor_type(v.aval)) for v in jaxpr.invars]
    consts = [fn.constant(c, v.aval) for v, c in zip(jaxpr.constvars, const_values)]  # type: ignore[arg-type]
    outs = lower_body(module, fn, jaxpr, consts, args)
    ret = (f'"func.return"({", ".join(o.name for o in outs)}) : '
           f"({', '.join(o.type for o in outs)}) -> ()")
    sig = _signature(args, [tensor_type(a.aval) for a in jaxpr.outvars], result_attrs, arg_attrs)
    body = "\n".join(fn.lines + [ret])
    module.functions[slot] = f"func.func {visibility} @{name}{sig} {{\n{body}\n}}"


def lower_sub_jaxpr(module: ModuleEmitter, name: str, closed: ClosedJaxpr) -> str:
    """Emit ``closed`` as a private function (once per distinct jaxpr); returns its name."""
    existing = module.callees.get(closed)
    if existing is not None:
        return existing
    fname = module.unique(name)
    module.callees[closed] = fname
    _emit_function(module, fname, "private", closed.jaxpr, closed.consts, None)
    return fname


def _escape(s: str) -> str:
    return s.replace("\\", "\\\\").replace('"', '\\"')


@attrs.frozen
class ModuleText:
    """A lowered module: its MLIR text and the signature it was lowered for."""

    text: str
    """MLIR in generic syntax (parse it for the pretty form)."""
    name: str
    """The module's symbol name, ``jit_<function name>``."""
    in_avals: tuple[ShapedArray, ...]
    """Types of ``@main``'s arguments."""
    out_avals: tuple[ShapedArray, ...]
    """Types of ``@main``'s results."""


def module_name(fun_name: str) -> str:
    """``jit_<name>`` with characters MLIR symbols cannot hold replaced, as JAX does."""
    clean = "".join(c if c.isalnum() or c in "_.$" else "_" for c in fun_name)
    return f"jit_{clean}"


def lower_closed_jaxpr(closed: ClosedJaxpr, fun_name: str, result_paths: Sequence[str] = (),
                       donated: Sequence[bool] = ()) -> ModuleText:
    """Lower ``closed`` to a module whose ``@main`` takes the jaxpr's invars.

    Consts are embedded as ``stablehlo.constant``\\ s.  Arguments flagged in
    ``donated`` carry ``jax.buffer_donor = true``: the runtime may reuse them.

    Raises:
      RuleNotImplementedError: a primitive has no lowering rule.
    """
    module = ModuleEmitter()
    jaxpr = closed.jaxpr
    paths = list(result_paths) or [""] * len(jaxpr.outvars)
    attrs_ = [f'jax.result_info = "{_escape(p)}"' if p else "" for p in paths]
    arg_attrs = ["jax.buffer_donor = true" if d else "" for d in donated]
    _emit_function(module, "main", "public", jaxpr, closed.consts, attrs_, arg_attrs)
    name = module_name(fun_name)
    text = (f"module @{name} attributes {{mhlo.num_partitions = 1 : i32, "
            f"mhlo.num_replicas = 1 : i32}} {{\n" + "\n".join(module.functions) + "\n}\n")
    return ModuleText(text, name, tuple(v.aval for v in jaxpr.invars),  # type: ignore[misc]
                      tuple(a.aval for a in jaxpr.outvars))  # type: ignore[misc]

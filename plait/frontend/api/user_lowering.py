"""Lowering rules of user primitives (``plait.interpreters.mlir.register_lowering``).

Two kinds of rule, as JAX code writes them:

* ``mlir.lower_fun(fun, multiple_results)``: the primitive lowers as ``fun`` (plait
  code over arrays) does; ``fun`` is traced at the equation's types and its
  equations lowered in place.
* A function ``rule(ctx, *values, **params)`` building ops with the MLIR Python
  bindings of ``jaxlib`` (``jaxlib.mlir.dialects.stablehlo``).  plait writes its
  modules as text, so the rule runs in a function of its own, built with the
  bindings and printed; the equation becomes a ``func.call`` of it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import attrs
import numpy as np

from plait.frontend.api.user_primitives import Primitive, check_user_primitive
from plait.frontend.core.tracing import trace_flat
from plait.ir.avals import AbstractValue, shaped
from plait.ir.caches import clear_caches
from plait.ir.errors import TransformError
from plait.lowering.emitter import Value, tensor_type
from plait.lowering.lower import LoweringContext, lower_body, lowering_rules, symbol
from plait.lowering.runtime import mlir_context

__all__ = ["register_lowering", "lower_fun", "LowerFun", "RuleContext", "aval_to_ir_type",
           "ir_constant"]


@attrs.frozen
class LowerFun:
    """A lowering rule that lowers the primitive as ``fun`` (see :func:`lower_fun`)."""

    fun: Callable[..., Any]
    """Plait code computing the primitive: ``fun(*args, **params)``."""
    multiple_results: bool
    """Whether ``fun`` returns a list of arrays."""


def lower_fun(fun: Callable[..., Any], multiple_results: bool = True) -> LowerFun:
    """A lowering rule computing the primitive as ``fun(*args, **params)`` does."""
    return LowerFun(fun, multiple_results)


@attrs.frozen
class RuleContext:
    """What a binding-building lowering rule receives first (JAX's ``ctx``)."""

    primitive: Primitive
    """The primitive being lowered."""
    avals_in: tuple[AbstractValue, ...]
    """The operands' types."""
    avals_out: tuple[AbstractValue, ...]
    """The results' types."""
    platforms: tuple[str, ...] = ("cpu",)
    """The platforms lowered for."""


def aval_to_ir_type(aval: AbstractValue) -> Any:
    """The ``jaxlib.mlir.ir`` tensor type of ``aval`` (inside a lowering rule)."""
    from jaxlib.mlir import ir
    return ir.Type.parse(str(tensor_type(shaped(aval))))


def ir_constant(value: Any) -> Any:
    """The result of a ``stablehlo.constant`` holding ``value`` (inside a lowering rule)."""
    from jaxlib.mlir import ir
    from jaxlib.mlir.dialects import stablehlo
    arr = np.ascontiguousarray(np.asarray(value))
    attr = ir.DenseElementsAttr.get(arr)  # type: ignore[call-overload]  # (an ndarray is a Buffer)
    return stablehlo.ConstantOp(attr).result


def register_lowering(prim: Any, rule: Callable[..., Any] | LowerFun,
                      platform: str | None = None) -> None:
    """Lower ``prim`` with ``rule`` (for ``platform``: plait compiles for the CPU, so a
    rule for another platform is kept by JAX code but unused here)."""
    p = check_user_primitive(prim, "mlir.register_lowering")
    if platform not in (None, "cpu"):
        return
    if not (isinstance(rule, LowerFun) or callable(rule)):
        raise TypeError(f"mlir.register_lowering: expected a rule (a function or "
                        f"mlir.lower_fun(...)) for {p.name!r}, but got {rule!r}")
    lowering_rules[p] = (_lower_fun_rule(p, rule) if isinstance(rule, LowerFun)
                         else _bindings_rule(p, rule))
    clear_caches()  # (executables compiled with an earlier rule would be stale)


def _lower_fun_rule(prim: Primitive, rule: LowerFun) -> Callable[..., Sequence[Value]]:
    def lower(ctx: LoweringContext, *args: Value, **params: Any) -> Sequence[Value]:
        def flat(*xs: Any) -> list[Any]:
            out = rule.fun(*xs, **params)
            return list(out) if rule.multiple_results else [out]
        closed, _ = trace_flat(flat, [shaped(a) for a in ctx.avals_in],
                               f"the lowering of {prim.name}", None)
        _check_types(prim, [v.aval for v in closed.jaxpr.outvars], ctx.avals_out)
        consts = [ctx.fn.constant(np.asarray(c), shaped(v.aval))
                  for v, c in zip(closed.jaxpr.constvars, closed.consts)]
        return lower_body(ctx.module, ctx.fn, closed.jaxpr, consts, list(args))
    return lower


def _check_types(prim: Primitive, got: Sequence[AbstractValue],
                 want: Sequence[AbstractValue]) -> None:
    g = [shaped(a).str_short() for a in got]
    w = [shaped(a).str_short() for a in want]
    if g != w:
        raise TransformError(f"{prim.name}: expected the lowering to give results of types "
                             f"({', '.join(w)}), but got ({', '.join(g)})")


def _bindings_rule(prim: Primitive, rule: Callable[..., Any]
                   ) -> Callable[..., Sequence[Value]]:
    def lower(ctx: LoweringContext, *args: Value, **params: Any) -> Sequence[Value]:
        text = _bindings_function(prim, rule, tuple(ctx.avals_in), tuple(ctx.avals_out), params)
        fname = ctx.module.unique(f"{prim.name}_lowering")
        ctx.module.functions.append(text.replace('sym_name = "user_rule"',
                                                 f'sym_name = "{fname}"', 1))
        return ctx.fn.op("func.call", list(args),
                         [str(tensor_type(shaped(a))) for a in ctx.avals_out],
                         f"callee = {symbol(fname)}")
    return lower


def _bindings_function(prim: Primitive, rule: Callable[..., Any],
                       avals_in: tuple[AbstractValue, ...], avals_out: tuple[AbstractValue, ...],
                       params: dict[str, Any]) -> str:
    """A private ``func.func @user_rule`` (generic syntax) whose body ``rule`` builds."""
    from jaxlib.mlir import ir
    from jaxlib.mlir.dialects import func
    with mlir_context(), ir.Location.unknown():
        module = ir.Module.create()
        ins = [aval_to_ir_type(a) for a in avals_in]
        outs = [aval_to_ir_type(a) for a in avals_out]
        with ir.InsertionPoint(module.body):
            # (The stubs describe the generated FuncOp, not the extension jaxlib exports.)
            f = func.FuncOp("user_rule", (ins, outs),  # type: ignore[call-arg]  # (as above)
                            visibility="private")
            block = f.add_entry_block()  # type: ignore[attr-defined]  # (as above)
            with ir.InsertionPoint(block):
                results = rule(RuleContext(prim, avals_in, avals_out), *block.arguments,
                               **params)
                values = _flat_values(prim, results)
                got = [str(v.type) for v in values]
                want = [str(t) for t in outs]
                if got != want:
                    raise TransformError(f"{prim.name}: expected the lowering rule to return "
                                         f"values of types ({', '.join(want)}), but got "
                                         f"({', '.join(got)})")
                func.ReturnOp(values)
        if not module.operation.verify():
            raise TransformError(f"{prim.name}: the lowering rule built ops that do not "
                                 "verify")
        return str(f.operation.get_asm(print_generic_op_form=True))


def _flat_values(prim: Primitive, results: Any) -> list[Any]:
    """JAX's rules return a sequence of values, or of sequences of values (one per
    result); an op's ``.result`` alone is one value."""
    from jaxlib.mlir import ir
    if isinstance(results, ir.Value):
        return [results]
    if not isinstance(results, Sequence):
        raise TypeError(f"{prim.name}: expected the lowering rule to return a list of "
                        f"MLIR values, but got {results!r}")
    flat: list[Any] = []
    for r in results:
        flat.extend(r if isinstance(r, Sequence) and not isinstance(r, ir.Value) else [r])
    return flat

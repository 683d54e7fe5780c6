"""Derivatives from closures: ``custom_gradient`` and ``closure_convert``, as JAX's.

``custom_gradient(f)``: ``f`` returns its value and a function mapping the
output cotangent to the input cotangents, a closure over values ``f``
computed.  plait traces that closure, inside the forward rule, to a jaxpr
whose constants are those values: they become the residuals of a
``custom_vjp``, and the backward rule evaluates the jaxpr on them.

``closure_convert(f, *example_args)``: ``f`` with the traced values it closes
over (values another transformation may be differentiating) turned into
explicit trailing arguments, so that ``custom_vjp`` rules, which must not close
over traced values, can take them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs

from plait.frontend.api.custom_derivatives import custom_vjp
from plait.frontend.core.apply_jaxpr import eval_jaxpr_bind
from plait.frontend.core.arguments import abstractify, fun_name
from plait.frontend.core.trace_to_jaxpr import trace_to_jaxpr
from plait.frontend.core.tracing import Tracer
from plait.frontend.core.tree_util import (
    PyTreeDef,
    register_pytree_node,
    tree_flatten,
    tree_unflatten,
)
from plait.ir import dtypes as dt
from plait.ir.avals import ShapedArray
from plait.ir.jaxpr import Jaxpr

__all__ = ["custom_gradient", "closure_convert"]


@attrs.frozen
class _Rule:
    """A traced cotangent rule: its jaxpr and trees (static) and its constants (the
    residuals, the pytree children)."""

    jaxpr: Jaxpr
    in_tree: PyTreeDef
    out_tree: PyTreeDef
    consts: tuple[Any, ...]


register_pytree_node(_Rule, lambda r: (r.consts, (r.jaxpr, r.in_tree, r.out_tree)),
                     lambda aux, consts: _Rule(aux[0], aux[1], aux[2], tuple(consts)))


def _cotangent_aval(x: Any) -> ShapedArray:
    a = abstractify(x, "result", "custom_gradient")
    return a if dt.is_inexact(a.dtype) else ShapedArray(a.shape, dt.float0)


def custom_gradient(fun: Callable[..., tuple[Any, Callable[[Any], Any]]]) -> Callable[..., Any]:
    """``fun`` (returning ``(value, vjp)``, where ``vjp(cotangent)`` gives one cotangent
    per positional argument, or the single one) as a function returning ``value`` and
    differentiated in reverse mode by ``vjp``.

    Raises:
      TypeError: the cotangent passed to the rule does not have ``value``'s structure.
    """
    def primal(*args: Any) -> Any:
        return fun(*args)[0]

    def fwd(*args: Any) -> tuple[Any, _Rule]:
        value, vjp = fun(*args)
        leaves, out_tree = tree_flatten((value,))
        rule = trace_to_jaxpr(vjp, out_tree, [_cotangent_aval(x) for x in leaves],
                              "custom_gradient")
        return value, _Rule(rule.closed.jaxpr, out_tree, rule.out_tree,
                            tuple(rule.closed.consts))

    def bwd(rule: _Rule, cotangent: Any) -> tuple[Any, ...]:
        leaves, tree = tree_flatten((cotangent,))
        if tree != rule.in_tree:
            raise TypeError(f"expected a cotangent of structure {rule.in_tree}, but got {tree}")
        out = tree_unflatten(rule.out_tree, eval_jaxpr_bind(rule.jaxpr, rule.consts, leaves))
        return out if isinstance(out, tuple) else (out,)

    wrapped = custom_vjp(primal)
    wrapped.defvjp(fwd, bwd)
    wrapped.__name__ = fun_name(fun)  # type: ignore[attr-defined]  # named after fun
    return wrapped


def closure_convert(fun: Callable[..., Any], *example_args: Any
                    ) -> tuple[Callable[..., Any], list[Any]]:
    """``(converted, consts)``: ``converted(*args, *consts)`` computes ``fun(*args)``, with
    the traced values ``fun`` closes over (``consts``) passed explicitly.  ``fun`` is
    traced once, on arguments of ``example_args``' types and structure.

    Raises:
      TypeError: ``converted`` is called with arguments of another structure.
    """
    leaves, in_tree = tree_flatten(example_args)
    avals = [abstractify(x, f"example_args{i}", "closure_convert") for i, x in enumerate(leaves)]
    traced = trace_to_jaxpr(fun, in_tree, avals, "closure_convert")
    consts = list(traced.closed.consts)
    hoist = [type(c) is Tracer for c in consts]
    hoisted = [c for c, h in zip(consts, hoist) if h]

    def converted(*args_and_consts: Any) -> Any:
        n = len(args_and_consts) - len(hoisted)
        args, given = args_and_consts[:n], iter(args_and_consts[n:])
        flat, tree = tree_flatten(tuple(args))
        if tree != in_tree:
            raise TypeError("The inputs to the closure produced by closure_convert must have "
                            f"the same Pytree structure as the example arguments passed when "
                            f"closure_convert was called. Expected {in_tree}, but got {tree}")
        all_consts = [next(given) if h else c for c, h in zip(consts, hoist)]
        return tree_unflatten(traced.out_tree, eval_jaxpr_bind(traced.closed.jaxpr, all_consts,
                                                               flat))

    converted.__name__ = fun_name(fun)
    return converted, hoisted

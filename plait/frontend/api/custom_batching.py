"""``custom_vmap`` and ``sequential_vmap``: functions with a user-defined ``vmap``.

Inside a trace, a call binds one ``custom_vmap_call`` equation carrying the
function's jaxpr (values it closes over become leading operands) and a rule
object, :class:`_UserRule`.  ``vmap`` is a jaxpr rewrite in plait, so the user's
rule is traced when the rewrite reaches the equation, for the batching pattern
and axis size it finds there (see :mod:`plait.transforms.custom_batching_rules`).
Outside any trace the equation runs at once (the function's jaxpr, compiled).
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Sequence
from typing import Any, Generic, ParamSpec, TypeVar, cast

import attrs
import numpy as np

from plait.frontend.api.control_flow import map as _map
from plait.frontend.core.arguments import abstractify, fun_name
from plait.frontend.core.host_values import value_aval
from plait.frontend.core.trace_to_jaxpr import trace_to_jaxpr
from plait.frontend.core.traceback_util import api_boundary
from plait.frontend.core.tracing import bind, is_traced
from plait.frontend.core.tree_util import PyTreeDef, tree_flatten, tree_map, tree_unflatten
from plait.ir.atoms import Var
from plait.ir.avals import ShapedArray
from plait.ir.debug_info import DebugInfo
from plait.ir.errors import TransformError
from plait.ir.jaxpr import ClosedJaxpr, convert_constvars
from plait.ir.primitives import VmapRule, custom_vmap_call_p
from plait.transforms.vmap import batched_aval

__all__ = ["custom_vmap", "sequential_vmap"]

P = ParamSpec("P")
R = TypeVar("R")


def _resolve(fun: Callable[..., Any], name: str, args: tuple[Any, ...],
             kwargs: dict[str, Any]) -> tuple[Any, ...]:
    """The arguments as positional ones, as JAX's ``resolve_kwargs``."""
    try:
        sig = inspect.signature(fun)
    except (TypeError, ValueError):  # no signature (a builtin): only positionals work
        if kwargs:
            raise TypeError(f"The custom_vmap-decorated function {name} takes no keyword "
                            "arguments") from None
        return args
    try:
        bound = sig.bind(*args, **kwargs)
    except TypeError as e:
        raise TypeError(
            f"The input arguments to the custom_vmap-decorated function {name} could not be "
            f"resolved to positional-only arguments. Binding failed with the error:\n{e}"
        ) from e
    bound.apply_defaults()
    if bound.kwargs:
        raise TypeError(
            f"The input arguments to the custom_vmap-decorated function {name} could not be "
            "resolved to positional-only arguments: keyword-only arguments "
            f"{sorted(bound.kwargs)} are not supported")
    return tuple(bound.args)


def _same_value(a: Any, b: Any) -> bool:
    """Whether two concrete consts hold the same array (same type and bits)."""
    if is_traced(a) or is_traced(b):
        return False
    try:
        x, y = np.asarray(a), np.asarray(b)
    except Exception:
        return False
    return (x.shape == y.shape and x.dtype == y.dtype
            and np.ascontiguousarray(x).tobytes() == np.ascontiguousarray(y).tobytes())


@attrs.frozen
class _UserRule(VmapRule):
    """The batching rule of a ``custom_vmap`` call: the user's rule, traced on demand.

    Equal for equal functions (by identity) called with equal structures and types,
    so that equal calls give equal jaxprs."""

    fun: Callable[..., Any]
    """The user's rule ``(axis_size, in_batched, *args) -> (out, out_batched)``."""
    name: str
    """The custom_vmap function's name, for errors."""
    in_tree: PyTreeDef
    """Structure of the positional arguments (a tuple)."""
    out_tree: PyTreeDef
    """Structure of the function's result."""
    in_avals: tuple[ShapedArray, ...]
    """Types of the flat arguments (unbatched)."""
    num_consts: int
    """How many closed-over values lead the equation's operands."""
    consts: tuple[Any, ...] = attrs.field(eq=False, hash=False, repr=False)
    """Their values when the function was traced: a rule that calls the function again
    captures them again, and they are then read from the operands."""

    def batch(self, axis_size: int, in_batched: Sequence[bool]
              ) -> tuple[ClosedJaxpr, tuple[bool, ...]]:
        nc = self.num_consts
        if any(in_batched[:nc]):
            raise TransformError(
                f"The custom_vmap function {self.name} closes over a value that an enclosing "
                "vmap batches; its vmap rule only receives its explicit arguments. Pass that "
                "value to the function as an argument instead.")
        flags = [bool(b) for b in in_batched[nc:]]
        avals = [batched_aval(a, 0, axis_size) if b else a
                 for a, b in zip(self.in_avals, flags, strict=True)]
        in_b = list(tree_unflatten(self.in_tree, flags))
        rule = self.fun
        rname = fun_name(rule)
        got: list[Any] = []

        def run(*args: Any) -> Any:
            res = rule(axis_size, in_b, *args)
            if not isinstance(res, tuple | list) or len(res) != 2:
                what = (f"a {type(res).__name__} of length {len(res)}"
                        if isinstance(res, tuple | list) else type(res).__name__)
                raise ValueError(f"custom vmap rule ({rname}) of {self.name}: expected a pair "
                                 f"(out, out_batched), but got {what}")
            got.append(res[1])
            return res[0]

        traced = trace_to_jaxpr(run, self.in_tree, avals, "custom_vmap rule",
                                DebugInfo(rname, ("",) * len(avals), ()))
        out_tree = traced.out_tree
        b_leaves, b_tree = tree_flatten(got[0])
        if out_tree != b_tree:
            raise ValueError(
                "structure of output value and output batching specification returned by "
                f"custom vmap rule ({rname}) do not match.\nOutput values: {out_tree}\n"
                f"Batching spec: {b_tree}")
        if out_tree != self.out_tree:
            raise ValueError(
                f"structure of output returned by custom vmap rule ({rname}) does not match "
                f"that of original custom-vmapped function.\nOriginal output: {self.out_tree}\n"
                f"Rule output: {out_tree}")
        out_batched = tuple(bool(b) for b in b_leaves)
        return self._operands_for_consts(traced.closed), out_batched

    def _operands_for_consts(self, closed: ClosedJaxpr) -> ClosedJaxpr:
        """``closed`` taking every operand: the rule's consts that are the function's
        closed-over values (the rule called the function) become those operands."""
        j = closed.jaxpr
        operands: list[Var | None] = [None] * self.num_consts
        constvars: list[Var] = []
        consts: list[Any] = []
        for v, c in zip(j.constvars, closed.consts):
            k = next((k for k, x in enumerate(self.consts) if x is c and operands[k] is None),
                     None)
            if k is None:
                k = next((k for k, x in enumerate(self.consts)
                          if operands[k] is None and _same_value(x, c)), None)
            if k is not None:
                operands[k] = v
                continue
            if is_traced(c):
                raise TransformError(
                    f"The vmap rule {fun_name(self.fun)} of the custom_vmap function "
                    f"{self.name} closes over a traced value (of an enclosing jit, grad or "
                    "other transformation). plait traces vmap rules when vmap reaches the "
                    "function, where that value is not available: pass it to the function "
                    "as an argument instead.")
            constvars.append(v)
            consts.append(c)
        fillers = [v if v is not None else Var(value_aval(c))
                   for v, c in zip(operands, self.consts)]
        new = j.replace(constvars=tuple(constvars), invars=tuple(fillers) + tuple(j.invars),
                        debug_info=None)
        return ClosedJaxpr(new, tuple(consts))

    def __str__(self) -> str:
        return str(self.fun)

    __repr__ = __str__


class custom_vmap(Generic[P, R]):
    """A function with a custom ``vmap`` rule, set with :meth:`def_vmap`.

    Under ``vmap``, the rule ``vmap_rule(axis_size, in_batched, *args) -> (out,
    out_batched)`` replaces batching the function: ``in_batched`` is a list with one
    pytree of booleans per argument (is it batched, along axis 0), ``out_batched`` a
    pytree of booleans of the output's structure.  Elsewhere the function runs as is;
    ``jvp`` differentiates it (and ``vmap`` of that uses the JVP of the rule);
    reverse mode is not supported (wrap it in a ``custom_vjp``).
    """

    fun: Callable[P, R]
    vmap_rule: Callable[..., tuple[Any, Any]] | None

    def __init__(self, fun: Callable[P, R]) -> None:
        functools.update_wrapper(self, fun)  # first: it copies fun.__dict__ over ours
        self.fun = fun
        self.vmap_rule = None

    def __getattr__(self, name: str) -> Any:
        # As JAX's forward_attr: attributes of the wrapped function.
        if name == "fun":
            raise AttributeError(name)
        return getattr(self.fun, name)

    def __get__(self, obj: Any, objtype: Any = None) -> Any:
        if obj is None:
            return self
        return functools.partial(self, obj)

    def def_vmap(self, vmap_rule: Callable[..., tuple[Any, Any]]
                 ) -> Callable[..., tuple[Any, Any]]:
        """Set the vmap rule; returns it unchanged (so this works as a decorator)."""
        self.vmap_rule = vmap_rule
        return vmap_rule

    @api_boundary
    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R:
        name = fun_name(self.fun)
        full = _resolve(self.fun, name, args, kwargs)
        if not self.vmap_rule:
            raise AttributeError(
                f"No batching rule defined for custom_vmap function {name} using def_vmap.")
        # Traced even outside any trace (then bound eagerly), as in JAX: the results are
        # arrays of the traced types whatever the function returns.
        leaves, in_tree = tree_flatten(full)
        avals = [abstractify(x, f"args{_path(in_tree, i)}", "custom_vmap")
                 for i, x in enumerate(leaves)]
        traced = trace_to_jaxpr(self.fun, in_tree, avals, "custom_vmap",
                                DebugInfo(name, ("",) * len(avals), ()))
        consts = tuple(traced.closed.consts)
        call = ClosedJaxpr(convert_constvars(traced.closed.jaxpr).replace(debug_info=None))
        rule = _UserRule(self.vmap_rule, name, in_tree, traced.out_tree, tuple(avals),
                         len(consts), consts)
        outs = bind(custom_vmap_call_p, *consts, *leaves, call=call, rule=rule,
                    num_consts=len(consts))
        return cast(R, tree_unflatten(traced.out_tree, outs))


def _path(tree: PyTreeDef, i: int) -> str:
    return f"[leaf {i}]"


def sequential_vmap(f: Callable[P, R]) -> custom_vmap[P, R]:
    """``f`` as a :class:`custom_vmap` whose rule runs ``f`` in a loop (``lax.map``) over
    the batch: for functions that do not batch natively (a host callback, say)."""
    g: custom_vmap[P, R] = custom_vmap(f)
    call: Callable[..., Any] = g  # called on the flat argument list

    def rule(axis_size: int, in_batched: list[Any], *args: Any) -> tuple[Any, Any]:
        mapped = tree_map(lambda b, x: x if b else None, in_batched, list(args))
        bcast = tree_map(lambda b, x: None if b else x, in_batched, list(args))

        def one(m: Any) -> Any:
            merged = tree_map(lambda b, x, y: x if b else y, in_batched, m, bcast)
            return call(*merged)

        out = _map(one, mapped)
        return out, tree_map(lambda _: True, out)

    rule.__qualname__ = "sequential_vmap.<locals>.rule"
    g.def_vmap(rule)
    return g

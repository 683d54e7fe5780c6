"""Tracing a user function on pytree arguments to a closed jaxpr."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs

from plait.ir.atoms import Var
from plait.ir.avals import ShapedArray
from plait.ir.debug_info import DebugInfo
from plait.ir.jaxpr import ClosedJaxpr
from plait.transforms.dce import dce_jaxpr
from plait.frontend.core.arguments import (abstractify, arg_path, debug_info_for, flatten_outputs,
                                     mark_static, unmark_static)
from plait.frontend.core.tracing import is_concretizable, trace_flat
from plait.frontend.core.tree_util import PyTreeDef, tree_flatten_with_path, tree_unflatten

__all__ = ["FlatCall", "TracedFunction", "trace_function", "flatten_call", "prune_unused"]


@attrs.frozen
class FlatCall:
    """A call's arguments, flattened: dynamic leaves, their structure, the statics."""

    leaves: list[Any]
    """The dynamic argument leaves, in order."""
    in_tree: PyTreeDef
    """The structure of ``(args, kwargs)`` with statics replaced by ``None``."""
    static_key: tuple[Any, ...]
    """The static arguments, as a hashable key."""
    debug_info: DebugInfo
    """Function name and one name per leaf."""
    paths: list[Any]
    """The key path of each leaf in ``(args, kwargs)``."""


def flatten_call(fun: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any],
                 static_argnums: tuple[int, ...], static_argnames: tuple[str, ...]) -> FlatCall:
    """Split a call into dynamic leaves and static arguments, naming every leaf."""
    dyn_args, dyn_kwargs, key = mark_static(args, kwargs, static_argnums, static_argnames)
    pairs, in_tree = tree_flatten_with_path((dyn_args, dyn_kwargs))
    debug = debug_info_for(fun, args, kwargs, [p for p, _ in pairs])
    return FlatCall([x for _, x in pairs], in_tree, key, debug, [p for p, _ in pairs])


@attrs.frozen
class TracedFunction:
    """The result of tracing: the jaxpr and the pytree structures around it."""

    closed: ClosedJaxpr
    """The program; its consts may include captured outer tracers."""
    in_tree: PyTreeDef
    """Structure of the dynamic arguments."""
    out_tree: PyTreeDef
    """Structure of the result."""
    in_avals: tuple[ShapedArray, ...]
    """Types of the flat inputs."""
    debug_info: DebugInfo
    """Names of the function, arguments and results."""
    static_key: tuple[Any, ...] = ((), ())
    """The static arguments it was traced with (positions and values)."""


def trace_function(fun: Callable[..., Any], call: FlatCall, purpose: str,
                   concrete: bool = False) -> TracedFunction:
    """Trace ``fun`` on abstract versions of the call's dynamic leaves.

    With ``concrete`` (autodiff outside ``jit``), when every leaf is concrete or
    a tracer whose value can be known, the tracers know their values on demand:
    Python control flow on them works, and the jaxpr follows the branches taken.
    """
    names = call.debug_info.arg_names
    in_avals = tuple(abstractify(x, arg_path(names, i), purpose) for i, x in enumerate(call.leaves))
    out_info: list[Any] = []

    def flat_fun(*tracers: Any) -> list[Any]:
        a, k = tree_unflatten(call.in_tree, tracers)
        full_args, full_kwargs = unmark_static(a, k, call.static_key)
        out = fun(*full_args, **full_kwargs)
        leaves, tree, paths = flatten_outputs(out, purpose)
        out_info.extend([tree, paths])
        return leaves

    known = call.leaves if concrete and all(map(is_concretizable, call.leaves)) else None
    closed, _ = trace_flat(flat_fun, in_avals, purpose, call.debug_info, known)
    out_tree, paths = out_info
    debug = call.debug_info.with_result_paths(paths)
    closed = closed.replace(jaxpr=closed.jaxpr.replace(debug_info=debug))
    return TracedFunction(closed, call.in_tree, out_tree, in_avals, debug, call.static_key)


def prune_unused(closed: ClosedJaxpr) -> tuple[ClosedJaxpr, tuple[bool, ...]]:
    """The program ``jit`` compiles: ``closed`` without dead equations, unused constants
    and unused inputs (JAX's ``keep_unused=False``); and which inputs it keeps."""
    jaxpr, kept = dce_jaxpr(closed.jaxpr, prune_invars=True)
    used = {a for e in jaxpr.eqns for a in e.inputs if type(a) is Var}
    used.update(a for a in jaxpr.outvars if type(a) is Var)
    consts = [(v, c) for v, c in zip(jaxpr.constvars, closed.consts) if v in used]
    if len(consts) < len(jaxpr.constvars):
        jaxpr = jaxpr.replace(constvars=tuple(v for v, _ in consts))
    return ClosedJaxpr(jaxpr, tuple(c for _, c in consts)), kept

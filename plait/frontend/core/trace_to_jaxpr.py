"""Tracing a Python function on pytree arguments to a closed jaxpr: :func:`trace_to_jaxpr`."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import attrs

from plait.frontend.core.arguments import (
    arg_aval,
    arg_path,
    debug_info_for,
    flatten_outputs,
    fun_name,
    mark_static,
    unmark_static,
)
from plait.frontend.core.tracing import is_concretizable, trace_flat
from plait.frontend.core.tree_util import PyTreeDef, tree_flatten_with_path, tree_unflatten
from plait.ir.atoms import Var
from plait.ir.avals import AbstractValue, ShapedArray, buffer_avals, shaped_avals
from plait.ir.debug_info import DebugInfo
from plait.ir.jaxpr import ClosedJaxpr, Jaxpr, convert_constvars
from plait.transforms.dce import dce_jaxpr

__all__ = ["FlatCall", "TracedFunction", "trace_to_jaxpr", "trace_function", "flatten_call",
           "prune_unused"]


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
                 static_argnums: tuple[int, ...], static_argnames: tuple[str, ...],
                 hashable: bool = True) -> FlatCall:
    """Split a call into dynamic leaves and static arguments, naming every leaf (see
    :func:`mark_static` for ``hashable``)."""
    dyn_args, dyn_kwargs, key = mark_static(args, kwargs, static_argnums, static_argnames,
                                            hashable)
    pairs, in_tree = tree_flatten_with_path((dyn_args, dyn_kwargs))
    debug = debug_info_for(fun, args, kwargs, [p for p, _ in pairs])
    return FlatCall([x for _, x in pairs], in_tree, key, debug, [p for p, _ in pairs])


@attrs.frozen
class TracedFunction:
    """The result of tracing: the jaxpr and the pytree structures around it."""

    closed: ClosedJaxpr
    """The program; its consts may include captured outer tracers."""
    in_tree: PyTreeDef
    """Structure of the inputs (for a user call: of ``(args, kwargs)`` without statics)."""
    out_tree: PyTreeDef
    """Structure of the result."""
    in_avals: tuple[ShapedArray, ...]
    """Types of the flat inputs (of their buffers: a token's, which the jaxpr's input
    types show as ``Tok``, is an empty bool array; see
    :func:`~plait.ir.avals.buffer_avals`)."""
    debug_info: DebugInfo
    """Names of the function, arguments and results."""
    static_key: tuple[Any, ...] = ((), ())
    """The static arguments it was traced with (positions and values)."""
    outs: tuple[Any, ...] = attrs.field(default=(), eq=False, repr=False)
    """The output tracers (they know their values when the trace knew its inputs); empty
    once the trace is stored in a cache."""

    @property
    def out_avals(self) -> tuple[ShapedArray, ...]:
        """Types of the flat outputs."""
        return shaped_avals(self.closed.out_avals)

    def consts_as_invars(self) -> tuple[Jaxpr, tuple[Any, ...]]:
        """The jaxpr with its constvars as leading invars, and the const values."""
        return convert_constvars(self.closed.jaxpr), self.closed.consts


def trace_to_jaxpr(fun: Callable[..., Any], in_tree: PyTreeDef, in_avals: Sequence[AbstractValue],
                   purpose: str, debug_info: DebugInfo | None = None, *, unpack: bool = True,
                   known: Sequence[Any] | None = None, refs: object = None) -> TracedFunction:
    """Trace ``fun`` on tracers of types ``in_avals`` arranged as ``in_tree``: the one way
    plait turns a Python function into a jaxpr (jit, make_jaxpr, autodiff, vmap, control
    flow and custom derivatives all come here).

    Args:
      fun: called as ``fun(*tree_unflatten(in_tree, tracers))`` (``in_tree`` is a tuple
        of positional arguments), or with that value whole when ``unpack`` is false.
      purpose: what the trace is for, in error messages (``"jit"``, ``"scan"``).
      debug_info: names of the function and of the flat inputs; by default the
        function's name and empty argument names.  Result paths are filled in.
      known: concrete values of the inputs (``None`` where unknown): the tracers then
        know their values on demand (see :meth:`Trace.value_of`), and the jaxpr
        follows the Python branches taken.
      refs: the token of a caller that carries Refs (see :func:`trace_flat`).

    Raises:
      ArgumentError: ``fun`` returned something that is not a pytree of arrays.
    """
    debug = debug_info or DebugInfo(fun_name(fun), ("",) * len(in_avals), ())
    out_info: list[Any] = []

    def flat_fun(*tracers: Any) -> list[Any]:
        args = tree_unflatten(in_tree, tracers)
        leaves, tree, paths = flatten_outputs(fun(*args) if unpack else fun(args), purpose)
        out_info[:] = [tree, paths]
        return leaves

    closed, outs = trace_flat(flat_fun, in_avals, purpose, debug, known, refs)
    out_tree, paths = out_info
    debug = debug.with_result_paths(paths)
    closed = closed.replace(jaxpr=closed.jaxpr.replace(debug_info=debug))
    return TracedFunction(closed, in_tree, out_tree, buffer_avals(in_avals), debug,
                          outs=tuple(outs))


def trace_function(fun: Callable[..., Any], call: FlatCall, purpose: str,
                   concrete: bool = False, refs: object = None,
                   constants_known: bool = False) -> TracedFunction:
    """Trace a user call: ``fun`` on abstract versions of the call's dynamic leaves, its
    static arguments passed as they are.

    With ``concrete`` (autodiff outside ``jit``), when every leaf is concrete or
    a tracer whose value can be known, the tracers know their values on demand:
    Python control flow on them works, and the jaxpr follows the branches taken.
    With ``constants_known`` (``vmap``), the leaves are unknown but values computed
    from constants alone (closed-over arrays) are known on demand, as JAX's ``vmap``
    evaluates operations on unbatched values.
    """
    names = call.debug_info.arg_names
    in_avals = tuple(arg_aval(x, arg_path(names, i), purpose) for i, x in enumerate(call.leaves))

    def call_fun(args: Any, kwargs: Any) -> Any:
        full_args, full_kwargs = unmark_static(args, kwargs, call.static_key)
        return fun(*full_args, **full_kwargs)

    known: Sequence[Any] | None = None
    if concrete and all(map(is_concretizable, call.leaves)):
        known = call.leaves
    elif constants_known:
        known = [None] * len(call.leaves)
    traced = trace_to_jaxpr(call_fun, call.in_tree, in_avals, purpose, call.debug_info,
                            known=known, refs=refs)
    return attrs.evolve(traced, static_key=call.static_key, outs=())


def prune_unused(closed: ClosedJaxpr) -> tuple[ClosedJaxpr, tuple[bool, ...]]:
    """The program ``jit`` compiles: ``closed`` without dead equations, unused constants
    and unused inputs (JAX's ``keep_unused=False``); and which inputs it keeps."""
    jaxpr, kept = dce_jaxpr(closed.jaxpr, prune_invars=True)
    used = {a for e in jaxpr.eqns for a in e.invars if type(a) is Var}
    used.update(a for a in jaxpr.outvars if type(a) is Var)
    consts = [(v, c) for v, c in zip(jaxpr.constvars, closed.consts) if v in used]
    if len(consts) < len(jaxpr.constvars):
        jaxpr = jaxpr.replace(constvars=tuple(v for v, _ in consts))
    return ClosedJaxpr(jaxpr, tuple(c for _, c in consts)), kept

"""Applying a (transformed) jaxpr to values: staged into the current trace, or compiled and run.

This is how every API-level transformation finishes: trace once, rewrite the
IR, then apply the result.  Inside a trace the equations are re-bound one by
one (so they compose with whatever encloses them); outside, the jaxpr is
compiled (cached by structure) and executed, its constants passed as arguments.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from plait.frontend.core.array_impl import ArrayImpl, committed_device, device_buffer, wrap_output
from plait.frontend.core.bind_eval import eval_jaxpr_bind
from plait.frontend.core.compile_cache import executable_for
from plait.frontend.core.run_guards import refuse_execution
from plait.frontend.core.source_lines import scopes
from plait.frontend.core.spmd import arg_sharding
from plait.frontend.core.trace_base import BaseTracer
from plait.frontend.core.tracing import Trace, Tracer, current_trace, user_trace
from plait.ir.atoms import Atom, Literal, Var
from plait.ir.avals import ShapedArray, buffer_avals, shaped_avals
from plait.ir.config import values as _values
from plait.ir.jaxpr import ClosedJaxpr, Jaxpr, convert_constvars
from plait.ir.primitive import PRIMITIVES
from plait.ir.sharding import EXPLICIT
from plait.ir.sharding_rules import retyped

__all__ = ["apply_jaxpr", "eval_jaxpr_bind", "inline_into_trace", "jaxpr_function"]


def inline_into_trace(trace: Trace, jaxpr: Jaxpr, consts: Sequence[Any],
                      args: Sequence[Any]) -> list[Any]:
    """Stage ``jaxpr`` applied to ``consts`` and ``args`` into ``trace``; returns tracers.

    Equations whose operands keep their types are copied without re-running
    typing rules (they were typed already); hash-consing still applies.
    """
    env: dict[Var, Atom] = {}
    for v, x in zip(jaxpr.constvars, consts, strict=True):
        env[v] = trace.to_atom(x)
    for v, x in zip(jaxpr.invars, args, strict=True):
        env[v] = trace.to_atom(x)

    def read(a: Atom) -> Atom:
        return a if type(a) is Literal else env[a]

    builder = trace.builder
    cse = builder._cse
    scope = scopes.name_stack  # (the jaxpr's name stacks are relative to its caller's)
    for eqn in jaxpr.eqns:
        ins = tuple([read(a) for a in eqn.invars])
        src = eqn.source_info
        if scope and src is not None:
            src = src.under(scope)
        if eqn.effects or cse is None or any(
                n.aval is not o.aval for n, o in zip(ins, eqn.invars)):
            outs: Sequence[Var] = builder.bind(eqn.primitive, ins, eqn.params, src)
        else:
            key = (eqn.primitive, ins, eqn.params)
            hit = cse.get(key)
            if hit is None:
                outs = tuple([Var(v.aval) for v in eqn.outvars])
                builder.eqns.append(eqn.replace(invars=ins, outvars=outs, source_info=src))
                cse[key] = outs
            else:
                outs = hit
        for v, x in zip(eqn.outvars, outs):  # (dict.update of pairs is slower)
            env[v] = x
    return [Tracer(trace, a) if type(a) is Var else a for a in map(read, jaxpr.outvars)]


def _user_primitive_unlowered(e: NotImplementedError) -> bool:
    """Whether ``e`` says a user primitive has no lowering (it may still have an impl)."""
    prim = PRIMITIVES.get(getattr(e, "primitive", ""))
    return getattr(e, "transform", None) == "Lowering" and prim is not None and \
        prim.open_params


def _literal_value(lit: Literal) -> ArrayImpl:
    # A constant result is a concrete array, even inside a trace (as in JAX).
    return ArrayImpl.from_numpy(np.asarray(lit.val, lit.aval.dtype), lit.aval.weak_type)


def _typed_for(jaxpr: Jaxpr, values: Sequence[Any]) -> Jaxpr:
    """``jaxpr`` retyped for arguments whose types are sharded where its own are not."""
    avals = [x._aval if type(x) is ArrayImpl else a for x, a in zip(values, jaxpr.in_avals)]
    if all(a is b for a, b in zip(avals, jaxpr.in_avals)):
        return jaxpr
    if any(type(a) is not ShapedArray or a.strip_weak_type() is not b.update(
            sharding=a.explicit_sharding).strip_weak_type()
            for a, b in zip(avals, shaped_avals(jaxpr.in_avals))):
        return jaxpr  # (they differ in more than sharding: the program converts them)
    return retyped(jaxpr, avals)


def apply_jaxpr(jaxpr: Jaxpr, consts: Sequence[Any], args: Sequence[Any], name: str) -> list[Any]:
    """``jaxpr`` applied to ``consts`` and ``args``: inlined when tracing, else compiled and run."""
    trace = current_trace()
    if trace is not None:
        return [_literal_value(x) if type(x) is Literal else x
                for x in inline_into_trace(trace, jaxpr, consts, args)]
    if _values.check_values or _values.debug_key_reuse or user_trace() is not None or any(
            isinstance(x, BaseTracer) for x in (*consts, *args)):
        # Operation by operation: with debug_nans/debug_infs each result is checked (as
        # JAX's transformations outside jit run), with debug_key_reuse each use of a key
        # is recorded; a library's trace processes each primitive; a leaked tracer
        # raises its error.
        return eval_jaxpr_bind(jaxpr, consts, args)
    flat = convert_constvars(jaxpr)
    values = [*consts, *args]
    if EXPLICIT.seen:
        flat = _typed_for(flat, values)
    layouts = [arg_sharding(x) for x in values]
    try:
        if any(s is not None for s in layouts):
            # Arguments over a mesh: an SPMD program over it, as an eager operation on
            # them runs (a gradient of sharded arguments outside jit, say).
            device = None
            exe = executable_for(ClosedJaxpr(flat), name, in_shardings=layouts)
        else:
            device = committed_device(values)  # (the computation follows its data)
            exe = executable_for(ClosedJaxpr(flat), name, device=device)
    except NotImplementedError as e:  # (a user primitive's is a plain one: missing_rule)
        if not _user_primitive_unlowered(e):
            raise
        # A user primitive with an impl and no lowering: operation by operation, its
        # impl run on values, as JAX's transformations outside jit run.
        return eval_jaxpr_bind(jaxpr, consts, args)
    if _values.no_execution:
        refuse_execution(f"jit({name})")
    bufs = [device_buffer(x, a, True, device)
            for x, a in zip(values, buffer_avals(flat.in_avals), strict=True)]
    outs = exe.execute(bufs)
    return [wrap_output(a, b) for a, b in zip(flat.out_avals, outs)]


def jaxpr_function(closed: ClosedJaxpr, name: str) -> Callable[..., list[Any]]:
    """A function named ``name`` applying ``closed`` to its arguments with
    :func:`apply_jaxpr`; it returns the list of outputs."""
    def fun(*args: Any) -> list[Any]:
        return apply_jaxpr(closed.jaxpr, closed.consts, args, name)
    fun.__name__ = name
    return fun

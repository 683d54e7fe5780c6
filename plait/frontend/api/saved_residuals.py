"""Which values reverse mode saves for the backward pass (``saved_residuals``,
``print_saved_residuals``, as in ``jax.ad_checkpoint``): the tool for checking what
a ``checkpoint`` policy keeps."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from plait.frontend.core.trace_to_jaxpr import flatten_call, trace_function
from plait.frontend.core.traceback_util import api_boundary
from plait.ir import dtypes
from plait.ir.atoms import Var
from plait.ir.avals import ShapedArray, shaped
from plait.ir.jaxpr import ClosedJaxpr, Eqn, Jaxpr, convert_constvars
from plait.ir.primitives import jit_p, name_p, remat_p
from plait.transforms.ad import linearize_jaxpr

__all__ = ["saved_residuals", "print_saved_residuals"]


def _producers(jaxpr: Jaxpr) -> dict[Var, tuple[Eqn, int]]:
    return {v: (eqn, i) for eqn in jaxpr.eqns for i, v in enumerate(eqn.outvars)}


def _describe(eqn: Eqn, index: int) -> str:
    """Where an equation's output comes from, in JAX's words; a value ``remat2``
    saves is described by what computes it inside the region."""
    if eqn.primitive is remat_p:
        inner: ClosedJaxpr = eqn.params["jaxpr"]
        out = inner.jaxpr.outvars[index]
        hit = _producers(inner.jaxpr).get(out) if type(out) is Var else None
        if hit is not None:
            return _describe(*hit)
    where = f" from {eqn.source_info}" if eqn.source_info is not None else ""
    if eqn.primitive is name_p:
        return f"named {eqn.params['name']!r}{where}"
    if eqn.primitive is jit_p:
        return f"output of jitted function {eqn.params['name']!r}{where}"
    return f"output of {eqn.primitive.name}{where}"


@api_boundary
def saved_residuals(f: Callable[..., Any], *args: Any, **kwargs: Any
                    ) -> list[tuple[ShapedArray, str]]:
    """The values reverse-mode differentiation of ``f`` (w.r.t. its floating-point
    and complex arguments) saves for the backward pass: each one's type and where it comes from
    (an argument, by its path, or an operation, with its source line)."""
    call = flatten_call(f, args, kwargs, (), ())
    traced = trace_function(f, call, "saved_residuals")
    n_consts = len(traced.closed.jaxpr.constvars)
    jaxpr = convert_constvars(traced.closed.jaxpr)
    diff = [False] * n_consts + [dtypes.is_inexact(a.dtype) for a in traced.in_avals]
    primal, _, nres, _ = linearize_jaxpr(jaxpr, diff)
    residuals = primal.outvars[len(primal.outvars) - nres:]
    names = call.debug_info.arg_names
    inputs = {v: i for i, v in enumerate(primal.invars)}
    producers = _producers(primal)
    args_out: list[tuple[int, tuple[ShapedArray, str]]] = []
    rest: list[tuple[ShapedArray, str]] = []
    seen: set[Var] = set()
    for r in residuals:
        if type(r) is not Var or r in seen:
            continue
        seen.add(r)
        aval = shaped(r.aval)
        i = inputs.get(r)
        if i is not None:
            what = ("from a constant" if i < n_consts else
                    f"from the argument {names[i - n_consts] or f'args[{i - n_consts}]'}")
            args_out.append((i, (aval, what)))
        else:
            rest.append((aval, _describe(*producers[r])))
    return [x for _, x in sorted(args_out, key=lambda p: p[0])] + rest


def print_saved_residuals(f: Callable[..., Any], *args: Any, **kwargs: Any) -> None:
    """Print :func:`saved_residuals`, one residual per line: ``f32[5,4] from the
    argument W``, ``f32[5] output of sin from file.py:12 (g)``."""
    for aval, what in saved_residuals(f, *args, **kwargs):
        print(f"{aval.str_short()} {what}")

"""Differentiation and batching of host callbacks (seed 003's table, as JAX 0.10.2).

JVP: a ``pure_callback`` or ``io_callback`` with a nonzero tangent is an error (a
``custom_jvp`` gives callbacks derivatives); with zero tangents it is copied.  A
``debug_callback`` sees the primal values.

vmap: ``pure_callback`` follows its ``vmap_method``: ``expand_dims`` (one call, the
unbatched operands with a leading size-1 dimension), ``broadcast_all`` (one call, all
operands broadcast), ``sequential``/``sequential_unrolled`` (one call per element, made
by a host-side loop); without one, an error listing them.  An unordered ``io_callback``
and a ``debug_callback`` run once per element, in element order; an ordered
``io_callback`` cannot be batched.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from plait.ir.atoms import Atom
from plait.ir.avals import ShapedArray, shaped
from plait.ir.effects import Effect
from plait.ir.primitive import Primitive
from plait.ir.primitives.callbacks import (
    VMAP_METHODS,
    HostCallback,
    debug_callback_p,
    io_callback_p,
    pure_callback_p,
)
from plait.transforms.emit import Emitter, Zero
from plait.transforms.jvp import JvpRule, Tangent, jvp_rules, zero_tangent
from plait.transforms.vmap import Dim, batching_rules, bdim_to_front, move_axis

__all__: list[str] = []


def _no_jvp(prim: Primitive, message: str) -> JvpRule:
    def rule(e: Emitter, primals: Sequence[Atom], tangents: Sequence[Tangent],
             **params: Any) -> tuple[list[Atom], list[Tangent]]:
        if any(type(t) is not Zero for t in tangents):
            raise ValueError(message)
        outs: list[Atom] = list(e.bind(prim, *primals, **params))
        return outs, [zero_tangent(o) for o in outs]
    return rule


jvp_rules[pure_callback_p] = _no_jvp(
    pure_callback_p, "Pure callbacks do not support JVP. Please use `jax.custom_jvp` to use "
    "callbacks while taking gradients.")
jvp_rules[io_callback_p] = _no_jvp(io_callback_p, "IO callbacks do not support JVP.")


def _debug_jvp(e: Emitter, primals: Sequence[Atom], tangents: Sequence[Tangent], *,
               callback: HostCallback, effect: Effect,
               partitioned: bool) -> tuple[list[Atom], list[Tangent]]:
    e.bind(debug_callback_p, *primals, callback=callback, effect=effect,
           partitioned=partitioned)
    return [], []


jvp_rules[debug_callback_p] = _debug_jvp


def _per_element(callback: HostCallback, batched: Sequence[bool], size: int,
                 stack: bool) -> HostCallback:
    """A callback calling ``callback`` once per element of the leading dimension of the
    ``batched`` operands, in order; with ``stack``, its results stacked."""
    def loop(*args: Any) -> Sequence[Any]:
        results = [callback(*[a[i] if b else a for a, b in zip(args, batched)])
                   for i in range(size)]
        if not stack:
            return ()
        n = len(results[0]) if results else 0
        return tuple(np.stack([np.asarray(r[k]) for r in results]) for k in range(n))
    return HostCallback(loop, f"{callback} (per element of {size})")


def _front(e: Emitter, vals: Sequence[Atom], dims: Sequence[Dim]) -> list[Atom]:
    """The batched operands with their batch dimension first; the others as they are."""
    return [x if d is None else move_axis(e, x, d, 0) for x, d in zip(vals, dims)]


def _batched_avals(avals: Sequence[ShapedArray], size: int) -> tuple[ShapedArray, ...]:
    return tuple(a.update(shape=(size, *a.shape)) for a in avals)


def _pure_vmap(e: Emitter, size: int, vals: list[Atom], dims: list[Dim], *,
               callback: HostCallback, result_avals: tuple[ShapedArray, ...], sharding: None,
               vmap_method: str | None) -> tuple[list[Atom], list[Dim]]:
    if vmap_method is None:
        raise NotImplementedError(
            "vmap is only supported for the pure_callback primitive when vmap_method is one "
            f"of {', '.join(repr(m) for m in VMAP_METHODS[:-1])}, or {VMAP_METHODS[-1]!r}. "
            "Got vmap_method=None.")
    out_avals = _batched_avals(result_avals, size)
    if vmap_method in ("sequential", "sequential_unrolled"):
        args = _front(e, vals, dims)
        cb = _per_element(callback, [d is not None for d in dims], size, stack=True)
    elif vmap_method == "expand_dims":
        args = [e.reshape(x, (1, *shaped(x.aval).shape)) if d is None else move_axis(e, x, d, 0)
                for x, d in zip(vals, dims)]
        cb = callback
    else:  # broadcast_all
        args = [bdim_to_front(e, x, d, size) for x, d in zip(vals, dims)]
        cb = callback
    outs = e.bind(pure_callback_p, *args, callback=cb, result_avals=out_avals, sharding=None,
                  vmap_method=vmap_method)
    return list(outs), [0] * len(outs)


batching_rules[pure_callback_p] = _pure_vmap


def _io_vmap(e: Emitter, size: int, vals: list[Atom], dims: list[Dim], *,
             callback: HostCallback, result_avals: tuple[ShapedArray, ...], ordered: bool,
             sharding: None) -> tuple[list[Atom], list[Dim]]:
    if ordered:
        raise ValueError("Cannot `vmap` ordered IO callback.")
    cb = _per_element(callback, [d is not None for d in dims], size, stack=True)
    outs = e.bind(io_callback_p, *_front(e, vals, dims), callback=cb,
                  result_avals=_batched_avals(result_avals, size), ordered=False,
                  sharding=None)
    return list(outs), [0] * len(outs)


batching_rules[io_callback_p] = _io_vmap


def _debug_vmap(e: Emitter, size: int, vals: list[Atom], dims: list[Dim], *,
                callback: HostCallback, effect: Effect,
                partitioned: bool) -> tuple[list[Atom], list[Dim]]:
    cb = _per_element(callback, [d is not None for d in dims], size, stack=False)
    e.bind(debug_callback_p, *_front(e, vals, dims), callback=cb, effect=effect,
           partitioned=partitioned)
    return [], []


batching_rules[debug_callback_p] = _debug_vmap

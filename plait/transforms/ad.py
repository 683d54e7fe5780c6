"""Reverse mode from the pieces: JVP, then partial evaluation, then transposition."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import attrs

from plait.ir.atoms import Var
from plait.ir.avals import shaped
from plait.ir.caches import LRUCache
from plait.ir.jaxpr import Jaxpr
from plait.transforms.dce import dce_jaxpr
from plait.transforms.emit import Emitter
from plait.transforms.inline import inline_jaxpr
from plait.transforms.jvp import jvp_jaxpr
from plait.transforms.partial_eval import partial_eval_jaxpr
from plait.transforms.transpose import transpose_jaxpr

__all__ = ["VjpJaxprs", "vjp_jaxprs", "linearize_jaxpr", "value_and_grad_jaxpr",
           "split_forwarded"]


@attrs.frozen
class VjpJaxprs:
    """The two halves of reverse mode for a jaxpr.

    ``fwd`` maps ``(constvars; inputs)`` to ``outputs + residuals``; ``bwd`` maps
    ``residuals + cotangents`` (one per output with ``out_tangent[i]``) to one
    cotangent per differentiated input.
    """

    fwd: Jaxpr
    bwd: Jaxpr
    num_res: int
    out_tangent: tuple[bool, ...]


_cache: LRUCache[tuple[Any, ...], VjpJaxprs] = LRUCache("vjp")


def linearize_jaxpr(jaxpr: Jaxpr, diff: Sequence[bool]
                    ) -> tuple[Jaxpr, Jaxpr, int, tuple[bool, ...]]:
    """Split the JVP of ``jaxpr`` into a primal part and a linear part.

    Returns ``(primal, linear, num_res, out_tangent)``: ``primal`` maps the inputs
    to the outputs plus residuals; ``linear`` maps residuals and the tangents of
    the ``diff`` inputs to the tangents of the outputs marked in ``out_tangent``.
    """
    jj, out_nz = jvp_jaxpr(jaxpr, diff, instantiate=True)
    n_in, n_t = len(jaxpr.invars), sum(diff)
    n_out, n_tout = len(jaxpr.outvars), sum(out_nz)
    known, unknown, out_unk, nres = partial_eval_jaxpr(
        jj, [False] * n_in + [True] * n_t, [False] * n_out + [True] * n_tout)
    assert not any(out_unk[:n_out]), "primal outputs depend on tangents"
    primal, _ = dce_jaxpr(known)
    linear, _ = dce_jaxpr(unknown)
    return primal, linear, nres, out_nz


def vjp_jaxprs(jaxpr: Jaxpr, diff: Sequence[bool]) -> VjpJaxprs:
    """The forward and backward jaxprs of reverse mode w.r.t. the ``diff`` inputs."""
    key = (jaxpr.typed_key(), tuple(diff))
    hit = _cache.get(key)
    if hit is None:
        primal, linear, nres, out_nz = linearize_jaxpr(jaxpr, diff)
        bwd = transpose_jaxpr(linear, [False] * nres + [True] * sum(diff))
        bwd, _ = dce_jaxpr(bwd)
        hit = _cache[key] = VjpJaxprs(primal, bwd, nres, out_nz)
    return hit


def split_forwarded(fwd: Jaxpr, n_out: int) -> tuple[Jaxpr, tuple[int | None, ...]]:
    """``fwd`` without those residuals (its outputs from ``n_out`` on) that are its own
    inputs, and for each residual the index of the input it is (``None``: ``fwd``
    still returns it, in order).

    A weight the backward pass needs is a residual that is an input: returned by a
    compiled program it would be copied on every call (XLA gives every result a
    buffer of its own), so ``vjp`` and ``linearize`` pass the caller's value on.
    """
    index = {v: i for i, v in enumerate(fwd.invars)}
    res_from = tuple(index.get(v) if type(v) is Var else None for v in fwd.outvars[n_out:])
    if all(i is None for i in res_from):
        return fwd, res_from
    pruned, _ = dce_jaxpr(fwd, [True] * n_out + [i is None for i in res_from])
    return pruned, res_from


_vg_cache: LRUCache[tuple[Any, ...], Jaxpr] = LRUCache("value_and_grad")


def value_and_grad_jaxpr(jaxpr: Jaxpr, n_consts: int, diff: Sequence[bool],
                          keep_outputs: Sequence[bool]) -> Jaxpr:
    """One jaxpr ``(consts, args) -> (kept outputs..., grads of the diff args)`` for a
    scalar first output; what only the dropped outputs need is gone (cached)."""
    key = (jaxpr.typed_key(), n_consts, tuple(diff), tuple(keep_outputs))
    return _vg_cache.get_or_compute(
        key, lambda: _build_value_and_grad(jaxpr, n_consts, diff, keep_outputs))


def _build_value_and_grad(jaxpr: Jaxpr, n_consts: int, diff: Sequence[bool],
                          keep_outputs: Sequence[bool]) -> Jaxpr:
    pieces = vjp_jaxprs(jaxpr, [False] * n_consts + list(diff))
    e = Emitter()
    invars = [Var(v.aval) for v in jaxpr.invars]
    outs = inline_jaxpr(e, pieces.fwd, (), invars)
    n_out = len(jaxpr.outvars)
    primal_outs, residuals = outs[:n_out], outs[n_out:]
    out_aval = shaped(jaxpr.outvars[0].aval)
    one = e.literal(1.0, out_aval.dtype, out_aval.weak_type)
    cts = [one] + [e.zeros(a.aval) for a, has in
                   zip(jaxpr.outvars[1:], pieces.out_tangent[1:]) if has]
    grads = inline_jaxpr(e, pieces.bwd, (), [*residuals, *cts]) if pieces.out_tangent[0] else [
        e.zeros(v.aval) for v, d in zip(jaxpr.invars[n_consts:], diff) if d]
    full = e.builder.build(invars, [*primal_outs, *grads])
    full, _ = dce_jaxpr(full, [*keep_outputs, *([True] * len(grads))])
    return full

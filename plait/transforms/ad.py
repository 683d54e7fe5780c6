"""Reverse mode from the pieces: JVP, then partial evaluation, then transposition."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import attrs

from plait.ir.jaxpr import Jaxpr
from plait.transforms.dce import dce_jaxpr
from plait.transforms.jvp import jvp_jaxpr
from plait.transforms.partial_eval import partial_eval_jaxpr
from plait.transforms.transpose import transpose_jaxpr

__all__ = ["VjpJaxprs", "vjp_jaxprs", "linearize_jaxpr"]


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


_cache: dict[tuple[Any, ...], VjpJaxprs] = {}


def linearize_jaxpr(jaxpr: Jaxpr, diff: Sequence[bool]) -> tuple[Jaxpr, Jaxpr, int, tuple[bool, ...]]:
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

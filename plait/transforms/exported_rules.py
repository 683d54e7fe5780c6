"""Differentiation and batching of calls of exported functions.

An exported function is opaque: its only derivative is the VJP exported beside it.
The JVP of ``call_exported`` is a ``call_exported_lin`` equation, which reverse
mode transposes into a call of that VJP; forward mode cannot evaluate it, and no
rule batches either (as in JAX, whose deserialized functions support reverse-mode
differentiation only).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NoReturn

import numpy as np

from plait.ir import dtypes as dt
from plait.ir.atoms import Atom
from plait.ir.avals import ShapedArray
from plait.ir.errors import JaxprTypeError, TransformError, UnsupportedTransformError
from plait.ir.lists import fill_in
from plait.ir.primitives.exported import (
    ExportedModule,
    call_exported_lin_p,
    call_exported_p,
    forward_mode_error,
)
from plait.transforms.emit import Emitter, Zero
from plait.transforms.jvp import Tangent, jvp_rules, zero_tangent
from plait.transforms.transpose import Cotangent, UndefPrimal, transpose_rules
from plait.transforms.vmap import Dim, batching_rules

__all__ = ["NO_VJP_MESSAGE"]

NO_VJP_MESSAGE = "No VJP is available"
"""JAX's words when an exported function is differentiated past its serialized
``vjp_order``."""


def _inexact(aval: Any) -> bool:
    return dt.is_inexact(aval.dtype)


def _jvp(e: Emitter, primals: Sequence[Atom], tangents: Sequence[Tangent], *,
         exported: ExportedModule) -> tuple[list[Atom], list[Tangent]]:
    outs: list[Atom] = list(e.bind(call_exported_p, *primals, exported=exported))
    if all(type(t) is Zero for t in tangents):
        return outs, [zero_tangent(o) for o in outs]
    ts = [e.instantiate(t) for p, t in zip(primals, tangents) if _inexact(p.aval)]
    t_outs = e.bind(call_exported_lin_p, *primals, *ts, exported=exported)
    mask = [_inexact(a) for a in exported.out_avals]
    return outs, fill_in(mask, t_outs, outs, zero_tangent)


jvp_rules[call_exported_p] = _jvp


def _lin_jvp(e: Emitter, primals: Sequence[Atom], tangents: Sequence[Tangent], *,
             exported: ExportedModule) -> NoReturn:
    raise forward_mode_error(exported)


jvp_rules[call_exported_lin_p] = _lin_jvp


def _float0_stand_in(e: Emitter, aval: ShapedArray) -> Atom:
    # float0 carries no data; its stand-in is bool, the type it travels as.
    return e.full(ShapedArray(aval.shape, np.dtype(np.bool_)), False)


def _lin_transpose(e: Emitter, cts: Sequence[Atom | Zero], *ins: Any,
                   exported: ExportedModule) -> Sequence[Cotangent]:
    n = len(exported.in_avals)
    primals = ins[:n]
    if any(type(p) is UndefPrimal for p in primals):
        raise JaxprTypeError(f"call_exported_lin of {exported.fun_name!r}: the primal "
                             "arguments must be known when transposing")
    vjp = exported.vjp()
    if vjp is None:
        raise TransformError(NO_VJP_MESSAGE)
    it = iter(cts)
    full = [e.instantiate(next(it)) if _inexact(a) else _float0_stand_in(e, a)
            for a in exported.out_avals]
    in_cts = e.bind(call_exported_p, *primals, *full, exported=vjp)
    kept: list[Cotangent] = [c for c, a in zip(in_cts, exported.in_avals) if _inexact(a)]
    return [None] * n + kept


transpose_rules[call_exported_lin_p] = _lin_transpose


def _no_batching(e: Emitter, size: int, vals: list[Atom], dims: list[Dim], *,
                 exported: ExportedModule) -> NoReturn:
    raise UnsupportedTransformError(
        f"vmap of the exported function '{exported.fun_name}' is not supported: an exported "
        "function supports no transformation but reverse-mode differentiation; export the "
        "vmapped function instead (plait.export.export(plait.jit(plait.vmap(f))))")


def _lin_batching(e: Emitter, size: int, vals: list[Atom], dims: list[Dim], *,
                  exported: ExportedModule) -> NoReturn:
    # Batching the linear part means evaluating it forward (jacfwd, vmap of linearize).
    raise forward_mode_error(exported)


batching_rules[call_exported_p] = _no_batching
batching_rules[call_exported_lin_p] = _lin_batching

"""Lowering of ``call_exported``: the serialized module's functions inlined as private
functions of the module being lowered, and a ``func.call`` of its ``@main``.

As JAX lowers it: ``@main`` gets the index of the platform in the exported
module's list first (when it serves several), then the kept arguments.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import NoReturn

import numpy as np

from plait.ir import primitives as P
from plait.ir.avals import ShapedArray
from plait.ir.primitives.exported import ExportedModule, forward_mode_error
from plait.lowering import lapack
from plait.lowering.emitter import Value, tensor_type
from plait.lowering.exporting import foreign_module
from plait.lowering.lower import LoweringContext, symbol
from plait.lowering.rules._util import register

__all__ = ["callee_platform_index"]


def callee_platform_index(exported: ExportedModule, platform: str) -> int:
    """Which of the exported module's platforms serves ``platform``.

    Raises:
      ValueError: none does, and the platform check was not disabled.
    """
    if platform in exported.platforms:
        return exported.platforms.index(platform)
    if not exported.platform_check:
        return 0
    raise ValueError(f"Function '{exported.fun_name}' was exported for platforms "
                     f"'{exported.platforms}' but it is used on '{(platform,)}'.")


@register(P.call_exported_p)
def _call_exported(ctx: LoweringContext, *args: Value,
                   exported: ExportedModule) -> Sequence[Value]:
    platforms = ctx.module.platforms
    indices = [callee_platform_index(exported, p) for p in platforms]
    n = ctx.module.mesh.size if ctx.module.mesh is not None else 1
    if exported.nr_devices not in (1, n):
        raise ValueError(f"Function {exported.fun_name} was exported for "
                         f"{exported.nr_devices} devices and is called in a context with {n} "
                         "devices, which is not allowed.")
    if "cpu" in exported.platforms or not exported.platform_check:
        lapack.ensure_registered()  # (the module may call the CPU's LAPACK kernels)
    module = ctx.module
    prefix = f"call_exported_{exported.fun_name}_"
    foreign = foreign_module(exported.serialized, lambda n: module.unique(prefix + n))
    module.functions.extend(foreign.functions)
    operands = [args[i] for i in exported.kept_var_idx]
    if len(exported.platforms) > 1:
        if len(platforms) > 1:
            raise NotImplementedError(
                f"calling the exported function '{exported.fun_name}' (exported for several "
                f"platforms) from a function exported for several platforms {platforms} is "
                "not supported yet")
        index_type = foreign.arg_types[0]
        index = ctx.fn.constant(indices[0], ShapedArray((), np.dtype(
            np.int64 if index_type == "tensor<i64>" else np.int32)))
        operands = [index, *operands]
    out_types = [tensor_type(a) for a in ctx.avals_out]
    if not _compatible([o.type for o in operands], foreign.arg_types):
        raise ValueError(
            f"the exported function '{exported.fun_name}' takes arguments of types "
            f"({', '.join(foreign.arg_types)}) in its module, but its calling convention "
            f"gives ({', '.join(o.type for o in operands)}): the artifact is inconsistent")
    if not _compatible(out_types, foreign.result_types):
        raise ValueError(
            f"the exported function '{exported.fun_name}' returns "
            f"({', '.join(foreign.result_types)}) in its module, but its metadata says "
            f"({', '.join(out_types)}): the artifact is inconsistent")
    # A shape-polymorphic module takes and returns dynamic shapes: convert, then
    # refine the shapes when compiling (see plait.lowering.runtime.compile_text).
    fn = ctx.fn
    operands = [o if o.type == t else fn.op1("stablehlo.convert", [o], t)
                for o, t in zip(operands, foreign.arg_types)]
    results = fn.op("func.call", operands, foreign.result_types,
                    f"callee = {symbol(foreign.main)}")
    return [r if r.type == t else fn.op1("stablehlo.convert", [r], t)
            for r, t in zip(results, out_types)]


_TENSOR = re.compile(r"tensor<((?:[0-9?]+x)*)(.+)>")


def _compatible(types: Sequence[str], module_types: Sequence[str]) -> bool:
    """Whether values of ``types`` fit ``module_types`` (equal, but for dynamic sizes)."""
    if len(types) != len(module_types):
        return False
    for t, m in zip(types, module_types):
        if t == m:
            continue
        a, b = _TENSOR.fullmatch(t), _TENSOR.fullmatch(m)
        if a is None or b is None or a.group(2) != b.group(2):
            return False
        da, db = a.group(1).split("x")[:-1], b.group(1).split("x")[:-1]
        if len(da) != len(db) or any(x != y and "?" not in (x, y) for x, y in zip(da, db)):
            return False
    return True


@register(P.call_exported_lin_p)
def _call_exported_lin(ctx: LoweringContext, *args: Value,
                       exported: ExportedModule) -> NoReturn:
    raise forward_mode_error(exported)


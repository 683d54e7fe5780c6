"""Lowering of host callbacks: a ``stablehlo.custom_call`` to jaxlib's CPU callback
handler (``xla_ffi_python_cpu_callback``, FFI API version 4), whose
``backend_config = {index = N : ui64}`` names the module's N-th host callback (passed
to the compiler with the module).  An ordered callback also takes and returns a token,
which chains it after the previous operation with its effect.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from plait.ir import primitives as P
from plait.ir.avals import ShapedArray
from plait.ir.effects import ORDERED_IO, Effect
from plait.ir.primitives.callbacks import HostCallback
from plait.lowering.emitter import TOKEN_TYPE, Value, tensor_type
from plait.lowering.lower import LoweringContext
from plait.lowering.rules._util import register

__all__ = ["CALLBACK_TARGET"]

CALLBACK_TARGET = "xla_ffi_python_cpu_callback"


def _checking(fn: HostCallback, avals: Sequence[ShapedArray]) -> Any:
    """``fn``, its results checked against the types the program expects (JAX's words)."""
    def call(*args: Any) -> tuple[Any, ...]:
        outs = tuple(fn(*args))
        if len(outs) != len(avals):
            raise RuntimeError(f"Mismatched number of outputs from callback. Expected: "
                               f"{len(avals)}, Actual: {len(outs)}")
        for i, (x, a) in enumerate(zip(outs, avals)):
            if x.shape != a.shape:
                raise RuntimeError(f"Incorrect output shape for return value #{i}: Expected: "
                                   f"{a.shape}, Actual: {x.shape}")
            if x.dtype != a.dtype:
                raise RuntimeError(f"Incorrect output dtype for return value #{i}: Expected: "
                                   f"{a.dtype}, Actual: {x.dtype}")
        return outs
    return call


def _with_token(fn: Any) -> Any:
    def call(token: Any, *args: Any) -> tuple[Any, ...]:
        return (token, *fn(*args))
    return call


def _emit(ctx: LoweringContext, args: Sequence[Value], callback: HostCallback,
          result_avals: Sequence[ShapedArray], side_effect: bool,
          ordered: Effect | None) -> list[Value]:
    fn = ctx.fn
    host = ctx.module.host_callbacks
    index = len(host)
    checked = _checking(callback, result_avals)
    host.append(_with_token(checked) if ordered is not None else checked)
    operands = list(args)
    types = [tensor_type(a) for a in result_avals]
    if ordered is not None:
        operands = [fn.token(ordered), *operands]
        types = [TOKEN_TYPE, *types]
    outs = fn.op("stablehlo.custom_call", operands, types,
                 f'call_target_name = "{CALLBACK_TARGET}", api_version = 4 : i32, '
                 f"has_side_effect = {str(side_effect).lower()}, "
                 f"backend_config = {{index = {index} : ui64}}",
                 discardable=_placement(ctx, result_avals, ordered is not None))
    if ordered is not None:
        fn.set_token(ordered, outs[0])
        outs = outs[1:]
    return outs


def _placement(ctx: LoweringContext, result_avals: Sequence[ShapedArray],
               ordered: bool) -> str:
    """Where the callback runs in a program over several devices (as JAX places it): once,
    on the mesh's first device, with the whole values; inside ``shard_map``, on every
    device with its own parts.  Nothing for a one-device program."""
    module = ctx.module
    if module.mesh is None:
        return ""
    ranks = [0] * ordered + [len(a.shape) for a in result_avals] or [0]
    if module.manual:
        module.meshes["empty_mesh"] = "[]"
        values = [f"<@empty_mesh, [{', '.join(['{}'] * r)}]>" for r in ranks]
    else:
        module.meshes["maximal_mesh_0"] = "[], device_ids=[0]"
        values = ["<@maximal_mesh_0, []>"] * len(ranks)
    return f"sdy.sharding = #sdy.sharding_per_value<[{', '.join(values)}]>"


@register(P.pure_callback_p)
def _pure(ctx: LoweringContext, *args: Value, callback: HostCallback,
          result_avals: tuple[ShapedArray, ...], **_: Any) -> Sequence[Value]:
    return _emit(ctx, args, callback, result_avals, False, None)


@register(P.io_callback_p)
def _io(ctx: LoweringContext, *args: Value, callback: HostCallback,
        result_avals: tuple[ShapedArray, ...], ordered: bool, **_: Any) -> Sequence[Value]:
    return _emit(ctx, args, callback, result_avals, True, ORDERED_IO if ordered else None)


@register(P.debug_callback_p)
def _debug(ctx: LoweringContext, *args: Value, callback: HostCallback, effect: Effect,
           **_: Any) -> Sequence[Value]:
    return _emit(ctx, args, callback, (), True, effect if effect.ordered else None)

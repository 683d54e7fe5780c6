"""Helpers shared by lowering rules."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, cast

import numpy as np

from plait.ir import dtypes as dt
from plait.ir.avals import ShapedArray, shaped
from plait.ir.primitive import Primitive
from plait.lowering.emitter import FuncEmitter, Value, i64_array, tensor_type
from plait.lowering.lower import LoweringContext, lowering_rules, private_function, symbol

__all__ = ["broadcast_to", "compare", "compare_type", "nary", "scalar_type", "register",
           "reduce_region", "binary", "convert", "outlined", "lowest", "highest",
           "precision_config"]


def register(prim: Primitive
             ) -> Callable[[Callable[..., Sequence[Value]]], Callable[..., Sequence[Value]]]:
    """Decorator: make ``fn`` the lowering rule of ``prim``."""
    def deco(fn: Callable[..., Sequence[Value]]) -> Callable[..., Sequence[Value]]:
        lowering_rules[prim] = fn
        return fn
    return deco


def outlined(name: str, rule: Callable[..., Sequence[Value]]) -> Callable[..., Sequence[Value]]:
    """``rule`` emitting its ops into a private function ``name`` that the equation calls
    (one function per params and operand types), as JAX lowers some primitives."""
    def call(ctx: LoweringContext, *xs: Value, **params: Any) -> Sequence[Value]:
        key = (name, tuple(ctx.avals_in), tuple(sorted(params.items())))
        avals_in, avals_out = ctx.avals_in, ctx.avals_out

        def body(fn: FuncEmitter, args: list[Value]) -> Sequence[Value]:
            inner = LoweringContext(fn, ctx.module)
            inner.avals_in, inner.avals_out = avals_in, avals_out
            return rule(inner, *args, **params)
        callee = private_function(ctx.module, name, key, avals_in, avals_out, body)
        return ctx.fn.op("func.call", list(xs), [tensor_type(a) for a in avals_out],
                         f"callee = {symbol(callee)}")
    return call


def broadcast_to(fn: FuncEmitter, x: Value, x_aval: ShapedArray, shape: tuple[int, ...]) -> Value:
    """``x`` broadcast to ``shape`` (rank-0, or equal rank with size-1 dims), as the
    elementwise primitives allow; no-op when the shape already matches.

    Each use gets its own ``broadcast_in_dim``, as JAX emits them: XLA's simplifier
    rewrites a division by a broadcast ``exp`` (into a multiplication by ``exp(-x)``)
    only when that broadcast has no other user, so sharing one changes the rounding."""
    if x_aval.shape == shape:
        return x
    return _broadcast(fn, x, x_aval, shape)


def _broadcast(fn: FuncEmitter, x: Value, x_aval: ShapedArray, shape: tuple[int, ...]) -> Value:
    if x_aval.ndim == 0:
        dims: Sequence[int] = ()
    else:
        dims = range(len(shape))
        if any(d != s for d, s in zip(x_aval.shape, shape) if d != 1):
            raise AssertionError("operand does not broadcast")
        # broadcast_in_dim itself expands size-1 dimensions: no reshape needed (as JAX).
    return fn.op1("stablehlo.broadcast_in_dim", [x], tensor_type((shape, x_aval.dtype)),
                  f"broadcast_dimensions = {i64_array(dims)}")


def scalar_type(dtype: np.dtype[Any]) -> str:
    """``tensor<f32>`` for a dtype."""
    return tensor_type(((), dtype))


def convert(fn: FuncEmitter, x: Value, x_aval: ShapedArray, dtype: np.dtype[Any]) -> Value:
    """``x`` converted to ``dtype`` (no-op when it has it already)."""
    if x_aval.dtype == dtype:
        return x
    return fn.op1("stablehlo.convert", [x], tensor_type((x_aval.shape, dtype)))


_LEXICOGRAPHIC = {"stablehlo.maximum": "GT", "stablehlo.minimum": "LT"}


def nary(name: str) -> Callable[..., Sequence[Value]]:
    """The rule of an elementwise op lowering to one StableHLO/CHLO op ``name``."""
    minmax = name in _LEXICOGRAPHIC  # decided once: this rule is on the hot path

    def rule(ctx: LoweringContext, *xs: Value, out_dtype: Any = None,
             **_: Any) -> Sequence[Value]:
        out = shaped(ctx.avals_out[0])
        shape = out.shape
        # Every lowered value is a ShapedArray (checked by shaped(()) where it matters).
        avals_in = cast(Sequence[ShapedArray], ctx.avals_in)
        args = [x if a.shape == shape else broadcast_to(ctx.fn, x, a, shape)
                for x, a in zip(xs, avals_in)]
        if out_dtype is not None:  # ``mul``'s out_dtype: JAX converts the operands first
            args = [convert(ctx.fn, x, shaped(a).update(shape=out.shape), out.dtype)
                    for x, a in zip(args, ctx.avals_in)]
        if minmax:
            return [binary(ctx.fn, name, args, out.dtype, out.shape)]
        return [ctx.fn.op1(name, args, tensor_type(out))]
    return rule


def binary(fn: FuncEmitter, op: str, args: Sequence[Value], dtype: np.dtype[Any],
           shape: tuple[int, ...]) -> Value:
    """``op`` applied to two values of one type (``dtype``, ``shape``).

    Complex maximum and minimum compare (real, imag) lexicographically, as
    JAX's lowering does: XLA's own complex maximum disagrees where real parts tie.
    """
    direction = _LEXICOGRAPHIC.get(op)
    if direction is None or not dt.is_complex(dtype):
        return fn.op1(op, args, tensor_type((shape, dtype)))
    x, y = args
    part = tensor_type((shape, np.dtype(np.finfo(dtype).dtype)))
    rx, ry = (fn.op1("stablehlo.real", [v], part) for v in (x, y))
    ix, iy = (fn.op1("stablehlo.imag", [v], part) for v in (x, y))
    pred = tensor_type((shape, dt.bool_))
    which = fn.op1("stablehlo.select", [compare(fn, "EQ", rx, ry, dtype, shape),
                                        compare(fn, direction, ix, iy, dtype, shape),
                                        compare(fn, direction, rx, ry, dtype, shape)], pred)
    return fn.op1("stablehlo.select", [which, x, y], tensor_type((shape, dtype)))


def compare_type(dtype: np.dtype[Any]) -> str:
    """StableHLO's comparison type for a dtype."""
    if dt.is_inexact(dtype):
        return "FLOAT"
    if dt.is_signed(dtype):
        return "SIGNED"
    return "UNSIGNED"


def compare(fn: FuncEmitter, direction: str, x: Value, y: Value, dtype: np.dtype[Any],
            shape: tuple[int, ...], ctype: str | None = None) -> Value:
    """``stablehlo.compare`` of two values of one (already broadcast) shape."""
    ct = ctype or compare_type(dtype)
    return fn.op1("stablehlo.compare", [x, y], tensor_type((shape, dt.bool_)),
                  f"comparison_direction = #stablehlo<comparison_direction {direction}>, "
                  f"compare_type = #stablehlo<comparison_type {ct}>")


def reduce_region(fn: FuncEmitter, op: str, dtype: np.dtype[Any]) -> str:
    """A two-argument region applying binary ``op`` (for reduce and reduce_window)."""
    st = scalar_type(dtype)
    region = fn.region([st, st])
    r = binary(fn, op, region.args, dtype, ())
    fn.close(region)
    return region.text([r])


def lowest(dtype: np.dtype[Any]) -> Any:
    """The identity of max over ``dtype``: its lowest value (-inf for most floats)."""
    return dt.max_identity(dtype)


def highest(dtype: np.dtype[Any]) -> Any:
    """The identity of min over ``dtype``: its highest value (inf for most floats)."""
    return dt.min_identity(dtype)


def precision_config(precision: Any) -> str:
    """The ``precision_config`` attribute of a contraction: DEFAULT for ``None`` and for
    a dot algorithm (which says how to compute instead)."""
    names = (("DEFAULT", "DEFAULT") if precision is None or not isinstance(precision, tuple)
             or len(precision) != 2 else (p.name for p in precision))
    return "[" + ", ".join(f"#stablehlo<precision {n}>" for n in names) + "]"

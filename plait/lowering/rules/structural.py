"""Lowering of reductions, data movement, contraction and sorting."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from plait.ir import dtypes as dt
from plait.ir import primitives as P
from plait.ir.avals import ShapedArray, shaped
from plait.ir.primitive import Primitive
from plait.ir.primitives.linalg import CPU_ALGORITHMS, algorithm_compute_types
from plait.lowering.emitter import FuncEmitter, Value, element_type, i64_array, tensor_type
from plait.lowering.lower import LoweringContext, lowering_rules
from plait.lowering.rules._util import (
    broadcast_to,
    compare,
    convert,
    highest,
    lowest,
    outlined,
    precision_config,
    reduce_region,
    register,
    scalar_type,
)


def _all_ones(dtype: np.dtype[Any]) -> Any:
    return True if dtype == dt.bool_ else (-1 if dt.is_signed(dtype) else dt.int_range(dtype)[1])


MONOIDS: dict[Primitive, tuple[str, Callable[[np.dtype[Any]], Any]]] = {
    P.reduce_sum_p: ("stablehlo.add", lambda d: 0),
    P.reduce_prod_p: ("stablehlo.multiply", lambda d: 1),
    P.reduce_max_p: ("stablehlo.maximum", lowest),
    P.reduce_min_p: ("stablehlo.minimum", highest),
    P.reduce_and_p: ("stablehlo.and", _all_ones),
    P.reduce_or_p: ("stablehlo.or", lambda d: False if d == dt.bool_ else 0),
    P.reduce_xor_p: ("stablehlo.xor", lambda d: False if d == dt.bool_ else 0),
}


def _reducer(op: str, init: Any) -> Any:
    def rule(ctx: LoweringContext, x: Value, *, axes: tuple[int, ...], **_: Any) -> Sequence[Value]:
        xa = shaped(ctx.avals_in[0])
        fn = ctx.fn
        init_v = fn.constant(init(xa.dtype), ShapedArray((), xa.dtype))
        body = reduce_region(fn, op, xa.dtype)
        return [fn.op1("stablehlo.reduce", [x, init_v], tensor_type(ctx.avals_out[0]),
                       f"dimensions = {i64_array(axes)}", [body])]
    return rule


for _prim, (_op, _init) in MONOIDS.items():
    lowering_rules[_prim] = _reducer(_op, _init)


def _argminmax(direction: str) -> Any:
    def rule(ctx: LoweringContext, x: Value, *, axes: tuple[int, ...],
             index_dtype: np.dtype[Any]) -> Sequence[Value]:
        xa = shaped(ctx.avals_in[0])
        out = shaped(ctx.avals_out[0])
        fn = ctx.fn
        axis, = axes
        idx = fn.op1("stablehlo.iota", [], tensor_type((xa.shape, index_dtype)),
                     f"iota_dimension = {axis} : i64")
        init_x = fn.constant(lowest(xa.dtype) if direction == "GT" else highest(xa.dtype),
                             ShapedArray((), xa.dtype))
        init_i = fn.constant(0, ShapedArray((), index_dtype))
        sx, si = scalar_type(xa.dtype), scalar_type(index_dtype)
        region = fn.region([sx, si, sx, si])  # (accumulator x, i), then (element x, i)
        a, ia, b, ib = region.args
        # Keep a when it is strictly better, or NaN, or equal with a smaller index.
        better = compare(fn, direction, a, b, xa.dtype, ())
        if dt.is_inexact(xa.dtype):
            nan = compare(fn, "NE", a, a, xa.dtype, ())
            better = fn.op1("stablehlo.or", [better, nan], scalar_type(dt.bool_))
        tie = fn.op1("stablehlo.and", [compare(fn, "EQ", a, b, xa.dtype, ()),
                                       compare(fn, "LT", ia, ib, index_dtype, ())],
                     scalar_type(dt.bool_))
        take_a = fn.op1("stablehlo.or", [better, tie], scalar_type(dt.bool_))
        vx = fn.op1("stablehlo.select", [better, a, b], sx)
        vi = fn.op1("stablehlo.select", [take_a, ia, ib], si)
        fn.close(region)
        outs = fn.op("stablehlo.reduce", [x, idx, init_x, init_i],
                     [tensor_type((out.shape, xa.dtype)), tensor_type(out)],
                     f"dimensions = {i64_array(axes)}", [region.text([vx, vi])])
        return [outs[1]]
    return rule


# In private functions, as JAX lowers them (so the module text reads the same).
lowering_rules[P.argmax_p] = outlined("argmax", _argminmax("GT"))
lowering_rules[P.argmin_p] = outlined("argmin", _argminmax("LT"))

# op, init value, and whether JAX broadcasts the (scalar) init value to a scalar first
_CUMULATIVE = {
    P.cumsum_p: ("stablehlo.add", lambda d: 0, True),
    P.cumprod_p: ("stablehlo.multiply", lambda d: 1, False),
    P.cummax_p: ("stablehlo.maximum", lowest, True),
    P.cummin_p: ("stablehlo.minimum", highest, True),
}


def _cumulative(op: str, init: Any, jax_broadcast: bool) -> Any:
    # A window over the whole axis, padded so that output i sees inputs 0..i (as JAX does;
    # XLA rewrites this O(n^2) form into a scan).
    def rule(ctx: LoweringContext, x: Value, *, axis: int, reverse: bool) -> Sequence[Value]:
        xa = shaped(ctx.avals_in[0])
        fn = ctx.fn
        n = xa.shape[axis]
        if n == 0:  # nothing to accumulate, and a window may not be empty
            return [x]
        window = [n if i == axis else 1 for i in range(xa.ndim)]
        pads = [[0, 0] for _ in range(xa.ndim)]
        pads[axis] = [0, n - 1] if reverse else [n - 1, 0]
        init_v = fn.constant(init(xa.dtype), ShapedArray((), xa.dtype))
        if jax_broadcast:  # a no-op, kept so that the module text reads as JAX's
            init_v = fn.op1("stablehlo.broadcast_in_dim", [init_v], init_v.type,
                            f"broadcast_dimensions = {i64_array(())}")
        body = reduce_region(fn, op, xa.dtype)
        ones = i64_array([1] * xa.ndim)
        attrs = (f"base_dilations = {ones}, window_dilations = {ones}, "
                 f"window_dimensions = {i64_array(window)}, window_strides = {ones}, "
                 f"padding = dense<{pads}> : tensor<{xa.ndim}x2xi64>")
        return [fn.op1("stablehlo.reduce_window", [x, init_v], tensor_type(xa), attrs, [body])]
    return rule


for _prim, (_op, _init, _bcast) in _CUMULATIVE.items():
    lowering_rules[_prim] = outlined(_prim.name, _cumulative(_op, _init, _bcast))


@register(P.broadcast_in_dim_p)
def _broadcast_in_dim(ctx: LoweringContext, x: Value, *, shape: tuple[int, ...],
                      broadcast_dimensions: tuple[int, ...], sharding: None) -> Sequence[Value]:
    return [ctx.fn.op1("stablehlo.broadcast_in_dim", [x], tensor_type(ctx.avals_out[0]),
                       f"broadcast_dimensions = {i64_array(broadcast_dimensions)}")]


@register(P.reshape_p)
def _reshape(ctx: LoweringContext, x: Value, *, new_sizes: tuple[int, ...],
             dimensions: tuple[int, ...] | None, sharding: None) -> Sequence[Value]:
    if dimensions is not None and dimensions != tuple(range(len(dimensions))):
        xa = shaped(ctx.avals_in[0])
        x = _transpose(ctx.fn, x, xa, dimensions)
    return [ctx.fn.op1("stablehlo.reshape", [x], tensor_type(ctx.avals_out[0]))]


def _transpose(fn: FuncEmitter, x: Value, xa: ShapedArray, perm: Sequence[int]) -> Value:
    shape = tuple(xa.shape[p] for p in perm)
    return fn.op1("stablehlo.transpose", [x], tensor_type((shape, xa.dtype)),
                  f"permutation = {i64_array(perm)}")


@register(P.transpose_p)
def _transpose_rule(ctx: LoweringContext, x: Value, *,
                    permutation: tuple[int, ...]) -> Sequence[Value]:
    return [_transpose(ctx.fn, x, shaped(ctx.avals_in[0]), permutation)]


@register(P.squeeze_p)
def _squeeze(ctx: LoweringContext, x: Value, *, dimensions: tuple[int, ...]) -> Sequence[Value]:
    return [ctx.fn.op1("stablehlo.reshape", [x], tensor_type(ctx.avals_out[0]))]


@register(P.concatenate_p)
def _concatenate(ctx: LoweringContext, *xs: Value, dimension: int) -> Sequence[Value]:
    return [ctx.fn.op1("stablehlo.concatenate", list(xs), tensor_type(ctx.avals_out[0]),
                       f"dimension = {dimension} : i64")]


@register(P.pad_p)
def _pad(ctx: LoweringContext, x: Value, value: Value, *,
         padding_config: tuple[tuple[int, int, int], ...]) -> Sequence[Value]:
    lo, hi, interior = zip(*padding_config) if padding_config else ((), (), ())
    return [ctx.fn.op1("stablehlo.pad", [x, value], tensor_type(ctx.avals_out[0]),
                       f"edge_padding_low = {i64_array(lo)}, edge_padding_high = {i64_array(hi)}, "
                       f"interior_padding = {i64_array(interior)}")]


@register(P.slice_p)
def _slice(ctx: LoweringContext, x: Value, *, start_indices: tuple[int, ...],
           limit_indices: tuple[int, ...], strides: tuple[int, ...] | None) -> Sequence[Value]:
    st = strides or (1,) * len(start_indices)
    return [ctx.fn.op1("stablehlo.slice", [x], tensor_type(ctx.avals_out[0]),
                       f"start_indices = {i64_array(start_indices)}, "
                       f"limit_indices = {i64_array(limit_indices)}, strides = {i64_array(st)}")]


def _common_indices(ctx: LoweringContext, indices: Sequence[Value],
                    avals: Sequence[Any]) -> list[Value]:
    # StableHLO wants one index type; mixed integer types are converted to int32.
    dtypes_ = {a.dtype for a in avals}
    if len(dtypes_) <= 1:
        return list(indices)
    return [i if a.dtype == dt.int32 else
            ctx.fn.op1("stablehlo.convert", [i], scalar_type(dt.int32))
            for i, a in zip(indices, avals)]


@register(P.dynamic_slice_p)
def _dynamic_slice(ctx: LoweringContext, x: Value, *indices: Value,
                   slice_sizes: tuple[int, ...]) -> Sequence[Value]:
    idx = _common_indices(ctx, indices, ctx.avals_in[1:])
    return [ctx.fn.op1("stablehlo.dynamic_slice", [x, *idx], tensor_type(ctx.avals_out[0]),
                       f"slice_sizes = {i64_array(slice_sizes)}")]


@register(P.dynamic_update_slice_p)
def _dynamic_update_slice(ctx: LoweringContext, x: Value, update: Value,
                          *indices: Value) -> Sequence[Value]:
    idx = _common_indices(ctx, indices, ctx.avals_in[2:])
    return [ctx.fn.op1("stablehlo.dynamic_update_slice", [x, update, *idx],
                       tensor_type(ctx.avals_out[0]))]


@register(P.rev_p)
def _rev(ctx: LoweringContext, x: Value, *, dimensions: tuple[int, ...]) -> Sequence[Value]:
    return [ctx.fn.op1("stablehlo.reverse", [x], tensor_type(ctx.avals_out[0]),
                       f"dimensions = {i64_array(dimensions)}")]


@register(P.empty_p)
def _empty(ctx: LoweringContext, *, dtype: Any, shape: tuple[int, ...],
           out_sharding: None) -> Sequence[Value]:
    zero = ctx.fn.constant(0, ShapedArray((), dtype))
    return [broadcast_to(ctx.fn, zero, ShapedArray((), dtype), shape)]


@register(P.dim_as_value_p)
def _dim_as_value(ctx: LoweringContext, *, dim: Any) -> Sequence[Value]:
    v = ctx.fn.dim_value(dim)
    out = tensor_type(ctx.avals_out[0])
    return [v if out == v.type else ctx.fn.op1("stablehlo.convert", [v], out)]


@register(P.iota_p)
def _iota(ctx: LoweringContext, *, dtype: Any, shape: tuple[int, ...], dimension: int,
          sharding: None) -> Sequence[Value]:
    return [ctx.fn.op1("stablehlo.iota", [], tensor_type(ctx.avals_out[0]),
                       f"iota_dimension = {dimension} : i64")]


def _dims(name: str, xs: Sequence[int]) -> str:
    return f"{name} = [{', '.join(map(str, xs))}]"


@register(P.dot_general_p)
def _dot_general(ctx: LoweringContext, lhs: Value, rhs: Value, *, dimension_numbers: Any,
                 precision: Any, preferred_element_type: Any,
                 out_sharding: None) -> Sequence[Value]:
    (lc, rc), (lb, rb) = dimension_numbers
    fields = [_dims(n, xs) for n, xs in [("lhs_batching_dimensions", lb),
                                         ("rhs_batching_dimensions", rb),
                                         ("lhs_contracting_dimensions", lc),
                                         ("rhs_contracting_dimensions", rc)] if xs]
    attrs = (f"dot_dimension_numbers = #stablehlo.dot<{', '.join(fields)}>, "
             f"precision_config = {precision_config(precision)}")
    if isinstance(precision, P.DotAlgorithm | P.DotAlgorithmPreset):
        return [_dot_with_algorithm(ctx, lhs, rhs, precision, attrs)]
    la, ra, out = (shaped(a) for a in (*ctx.avals_in, ctx.avals_out[0]))
    if la.dtype != ra.dtype and not (la.dtype in _FLOAT8 and ra.dtype in _FLOAT8):
        # XLA's CPU code generator fails on some mixed pairs that its type system
        # accepts (int4 with int8): both operands are converted to the result's dtype, as
        # JAX lowers them for CPU.
        lhs, rhs = convert(ctx.fn, lhs, la, out.dtype), convert(ctx.fn, rhs, ra, out.dtype)
    return [ctx.fn.op1("stablehlo.dot_general", [lhs, rhs], tensor_type(ctx.avals_out[0]), attrs)]


# The float8 pairs XLA multiplies without conversion (JAX's list: not e4m3b11fnuz).
_FLOAT8 = frozenset(dt.FLOAT8) - {dt.float8_e4m3b11fnuz}


def _dot_with_algorithm(ctx: LoweringContext, lhs: Value, rhs: Value, algorithm: Any,
                        attrs: str) -> Value:
    """``dot_general`` with a dot algorithm, as JAX lowers it for CPU: operands converted
    to the algorithm's types, the result computed in its accumulation type."""
    if algorithm not in CPU_ALGORITHMS:
        # XLA:CPU ignores algorithms it cannot carry out: refuse them, as JAX does.
        raise ValueError(f"The precision '{algorithm}' is not supported by dot_general on CPU")
    la, ra = shaped(ctx.avals_in[0]), shaped(ctx.avals_in[1])
    out = shaped(ctx.avals_out[0])
    lt, rt, acc = algorithm_compute_types(algorithm, la.dtype, ra.dtype, out.dtype)
    fn = ctx.fn
    lhs, rhs = convert(fn, lhs, la, lt), convert(fn, rhs, ra, rt)
    fields = (algorithm.hlo_fields() if isinstance(algorithm, P.DotAlgorithm)
              else algorithm.hlo_fields(lt, rt))
    if fields is not None:
        names = [t if isinstance(t, str) else element_type(t) for t in fields[:3]]
        attrs += (f", algorithm = #stablehlo.dot_algorithm<lhs_precision_type = {names[0]}, "
                  f"rhs_precision_type = {names[1]}, accumulation_type = {names[2]}, "
                  f"lhs_component_count = {fields[3]}, rhs_component_count = {fields[4]}, "
                  f"num_primitive_operations = {fields[5]}, "
                  f"allow_imprecise_accumulation = {str(fields[6]).lower()}>")
    res = fn.op1("stablehlo.dot_general", [lhs, rhs], tensor_type((out.shape, acc)), attrs)
    return convert(fn, res, ShapedArray(out.shape, acc), out.dtype)


def _canonical_for_sort(fn: FuncEmitter, x: Value, dtype: np.dtype[Any]) -> Value:
    # -0.0 sorts as 0.0 and every NaN as one NaN (last, under TOTALORDER).
    if not dt.is_float(dtype):
        return x
    st = scalar_type(dtype)
    zero = fn.constant(0.0, ShapedArray((), dtype))
    is_zero = compare(fn, "EQ", x, zero, dtype, ())
    x = fn.op1("stablehlo.select", [is_zero, fn.constant(0.0, ShapedArray((), dtype)), x], st)
    is_nan = compare(fn, "NE", x, x, dtype, ())
    return fn.op1("stablehlo.select", [is_nan, fn.constant(np.nan, ShapedArray((), dtype)), x], st)


def _sort_compare(fn: FuncEmitter, direction: str, a: Value, b: Value,
                  dtype: np.dtype[Any]) -> Value:
    ct = "TOTALORDER" if dt.is_float(dtype) else None
    a, b = _canonical_for_sort(fn, a, dtype), _canonical_for_sort(fn, b, dtype)
    return compare(fn, direction, a, b, dtype, (), ct)


def _sort_keys(fn: FuncEmitter, a: Value, b: Value,
               dtype: np.dtype[Any]) -> list[tuple[Value, Value, np.dtype[Any]]]:
    # A complex key sorts by (real, imag), as in JAX: XLA has no complex ordering.
    if not dt.is_complex(dtype):
        return [(a, b, dtype)]
    part = np.dtype(np.finfo(dtype).dtype)
    st = scalar_type(part)
    return [(fn.op1(op, [a], st), fn.op1(op, [b], st), part)
            for op in ("stablehlo.real", "stablehlo.imag")]


@register(P.sort_p)
def _sort(ctx: LoweringContext, *xs: Value, dimension: int, is_stable: bool,
          num_keys: int) -> Sequence[Value]:
    fn = ctx.fn
    dtypes_ = [shaped(a).dtype for a in ctx.avals_in]
    region = fn.region([scalar_type(d) for d in dtypes_ for _ in range(2)])
    args = region.args
    keys = [k for i in range(num_keys) for k in _sort_keys(fn, args[2 * i], args[2 * i + 1],
                                                             dtypes_[i])]
    # Lexicographic over the keys: less on the first unequal key.
    result: Value | None = None
    for a, b, dtype in reversed(keys):
        lt = _sort_compare(fn, "LT", a, b, dtype)
        if result is None:
            result = lt
        else:
            eq = _sort_compare(fn, "EQ", a, b, dtype)
            both = fn.op1("stablehlo.and", [eq, result], scalar_type(dt.bool_))
            result = fn.op1("stablehlo.or", [lt, both], scalar_type(dt.bool_))
    fn.close(region)
    assert result is not None
    attrs = f"dimension = {dimension} : i64, is_stable = {'true' if is_stable else 'false'}"
    return fn.op("stablehlo.sort", list(xs), [tensor_type(a) for a in ctx.avals_out], attrs,
                 [region.text([result])])


@register(P.top_k_p)
def _top_k(ctx: LoweringContext, x: Value, *, k: int, axis: int) -> Sequence[Value]:
    # chlo.top_k works on the last dimension: swap the axis with it and back (as JAX).
    fn = ctx.fn
    xa = shaped(ctx.avals_in[0])
    last = xa.ndim - 1
    if axis == last:
        return fn.op("chlo.top_k", [x], [tensor_type(a) for a in ctx.avals_out],
                     f"k = {k} : i64")
    perm = list(range(xa.ndim))
    perm[axis], perm[last] = last, axis
    swapped = tuple(xa.shape[d] for d in perm)
    x = fn.op1("stablehlo.transpose", [x], tensor_type((swapped, xa.dtype)),
               f"permutation = {i64_array(perm)}")
    moved = swapped[:-1] + (k,)
    outs = fn.op("chlo.top_k", [x], [tensor_type((moved, xa.dtype)),
                                      tensor_type((moved, dt.int32))], f"k = {k} : i64")
    return [fn.op1("stablehlo.transpose", [o], tensor_type(a), f"permutation = {i64_array(perm)}")
            for o, a in zip(outs, ctx.avals_out)]

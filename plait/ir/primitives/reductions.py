"""Reductions over axes, index reductions, and cumulative (scan-like) reductions."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

from plait.ir import dtypes as dt
from plait.ir.atoms import Literal
from plait.ir.avals import ShapedArray, shaped
from plait.ir.builder import Builder, new_vars
from plait.ir.config import values as _config
from plait.ir.jaxpr import ClosedJaxpr, Jaxpr
from plait.ir.params import (
    ParamDef,
    decode_bool,
    decode_dtype,
    decode_int,
    decode_ints,
    decode_none,
)
from plait.ir.primitive import Primitive
from plait.ir.primitives._typing import (
    ANY,
    BOOL_OR_INT,
    INEXACT,
    INT,
    NUM,
    ORDERED,
    Dtypes,
    check_axes,
    check_dtype,
    fail,
)
from plait.ir.primitives.elementwise import (
    abs_p,
    add_p,
    complex_p,
    exp_p,
    imag_p,
    log1p_p,
    lt_p,
    max_p,
    mul_p,
    ne_p,
    neg_p,
    real_p,
    rem_p,
    select_n_p,
    sub_p,
)

_AXES = ParamDef("axes", decode=decode_ints)


def _reducer(accepted: Dtypes, keep_weak: bool = True) -> Callable[..., tuple[ShapedArray, ...]]:
    def rule(x: ShapedArray, *, axes: tuple[int, ...], **_: Any) -> tuple[ShapedArray, ...]:
        check_dtype(x, accepted)
        check_axes(axes, x.ndim)
        shape = tuple(d for i, d in enumerate(x.shape) if i not in axes)
        return (ShapedArray(shape, x.dtype, x.weak_type and keep_weak),)
    return rule


_sum_rule = _reducer(NUM)


def _reduce_sum_rule(x: ShapedArray, **params: Any) -> tuple[ShapedArray, ...]:
    outs = _sum_rule(x, **params)
    if not _config.allow_f16_reductions and x.dtype in (dt.float16, dt.bfloat16) and \
            any(x.shape[d] != 1 for d in params["axes"]):
        # (a ValueError, as JAX's: not a type error of the program)
        raise ValueError(f"reduce_sum on operand {x.str_short()} is not allowed when "
                         "jax_allow_f16_reductions=False; convert it to float32 first "
                         "(plait.numpy's sums accumulate in float32), or allow it: "
                         "plait.allow_f16_reductions(True)")
    return outs


reduce_sum_p = Primitive("reduce_sum", _reduce_sum_rule, (
    _AXES, ParamDef("out_sharding", None, decode=decode_none)))
reduce_prod_p = Primitive("reduce_prod", _reducer(NUM), (_AXES,))
reduce_max_p = Primitive("reduce_max", _reducer(ANY), (_AXES,))
reduce_min_p = Primitive("reduce_min", _reducer(ANY), (_AXES,))
reduce_and_p = Primitive("reduce_and", _reducer(BOOL_OR_INT, keep_weak=False), (_AXES,))
reduce_or_p = Primitive("reduce_or", _reducer(BOOL_OR_INT, keep_weak=False), (_AXES,))
reduce_xor_p = Primitive("reduce_xor", _reducer(BOOL_OR_INT, keep_weak=False), (_AXES,))


def _argminmax_rule(x: ShapedArray, *, axes: tuple[int, ...],
                    index_dtype: np.dtype[Any]) -> tuple[ShapedArray, ...]:
    check_dtype(x, ORDERED)
    if len(axes) != 1:
        fail(f"expected exactly one axis, but got axes={axes}")
    check_axes(axes, x.ndim)
    axis, = axes
    if x.shape[axis] < 1:
        fail(f"expected a non-empty reduced dimension, but got {x.str_short()} with axis {axis}")
    if index_dtype not in INT:
        fail(f"expected an integer index_dtype, but got {index_dtype}")
    shape = x.shape[:axis] + x.shape[axis + 1:]
    return (ShapedArray(shape, index_dtype),)


_ARGMINMAX = (_AXES, ParamDef("index_dtype", decode=decode_dtype))
argmax_p = Primitive("argmax", _argminmax_rule, _ARGMINMAX)
argmin_p = Primitive("argmin", _argminmax_rule, _ARGMINMAX)


def _cumulative(accepted: Dtypes) -> Callable[..., tuple[ShapedArray, ...]]:
    def rule(x: ShapedArray, *, axis: int, reverse: bool) -> tuple[ShapedArray, ...]:
        check_dtype(x, accepted)
        check_axes((axis,), x.ndim, "axis")
        return (x,)
    return rule


_CUMULATIVE = (ParamDef("axis", decode=decode_int), ParamDef("reverse", False, decode=decode_bool))
cumsum_p = Primitive("cumsum", _cumulative(NUM), _CUMULATIVE)
cumprod_p = Primitive("cumprod", _cumulative(NUM), _CUMULATIVE)
# JAX takes any number, complex included, and no bool, for all four.
cummax_p = Primitive("cummax", _cumulative(NUM), _CUMULATIVE)
cummin_p = Primitive("cummin", _cumulative(NUM), _CUMULATIVE)
# JAX also takes integers (and crashes on them); plait takes floats and complex numbers.
cumlogsumexp_p = Primitive("cumlogsumexp", _cumulative(INEXACT), _CUMULATIVE)


@functools.cache
def logaddexp_jaxpr(dtype: np.dtype[Any]) -> Jaxpr:
    """``log(exp(a) + exp(b))`` of two scalars, computed stably: the combining
    function of ``cumlogsumexp`` (where both are -inf, or one is NaN, ``a + b``)."""
    scalar = ShapedArray((), np.dtype(dtype))
    a, b = new_vars([scalar, scalar])
    bld = Builder()  # (the equations in the order of JAX's logaddexp)
    amax = bld.bind1(max_p, a, b)
    if scalar.dtype.kind == "c":
        # amax (lexicographic) + log1p(exp(a + b - 2 amax)), its phase wrapped into
        # [-pi, pi).
        delta = bld.bind1(sub_p, bld.bind1(add_p, a, b),
                          bld.bind1(mul_p, amax, Literal(scalar.dtype.type(2), scalar)))
        out = bld.bind1(add_p, amax, bld.bind1(log1p_p, bld.bind1(exp_p, delta)))
        return bld.build([a, b], [bld.bind1(complex_p, bld.bind1(real_p, out),
                                            _wrap_pi(bld, bld.bind1(imag_p, out)))])
    delta = bld.bind1(sub_p, a, b)
    is_nan = bld.bind1(ne_p, delta, delta)
    total = bld.bind1(add_p, a, b)
    tail = bld.bind1(log1p_p, bld.bind1(exp_p, bld.bind1(neg_p, bld.bind1(abs_p, delta))))
    out = bld.bind1(select_n_p, is_nan, bld.bind1(add_p, amax, tail), total)
    return bld.build([a, b], [out])


def _wrap_pi(bld: Builder, x: Any) -> Any:
    """``x`` moved by a multiple of 2 pi into [-pi, pi)."""
    def const(v: float) -> Literal:
        return Literal(x.aval.dtype.type(v), x.aval)
    rem = bld.bind1(rem_p, bld.bind1(add_p, x, const(np.pi)), const(2 * np.pi))
    rem = bld.bind1(select_n_p, bld.bind1(lt_p, rem, const(0.0)), rem,
                    bld.bind1(add_p, rem, const(2 * np.pi)))
    return bld.bind1(sub_p, rem, const(np.pi))


# -- reduce with a computation --------------------------------------------------------------

def _decode_closed(value: Any) -> ClosedJaxpr:
    if isinstance(value, ClosedJaxpr):
        return value
    if isinstance(value, Jaxpr):
        return ClosedJaxpr(value)
    raise ValueError(f"expected a jaxpr, but got {value!r}")


def _reduce_rule(*args: ShapedArray, jaxpr: ClosedJaxpr,
                 dimensions: tuple[int, ...]) -> tuple[ShapedArray, ...]:
    if not args or len(args) % 2:
        fail(f"expected operands followed by as many init values, but got {len(args)} "
             "arguments")
    n = len(args) // 2
    operands, inits = args[:n], args[n:]
    for x in operands[1:]:
        if x.shape != operands[0].shape:
            fail(f"expected operands of one shape, but got "
                 f"{', '.join(a.str_short() for a in operands)}")
    for x, init in zip(operands, inits):
        if init.shape != () or init.dtype != x.dtype:
            fail(f"expected a {x.dtype.name}[] init value for the operand {x.str_short()}, "
                 f"but got {init.str_short()}")
    scalars = [ShapedArray((), x.dtype) for x in operands]
    ins = [shaped(a).update(weak_type=False) for a in jaxpr.in_avals]
    outs = [shaped(a).update(weak_type=False) for a in jaxpr.out_avals]
    if jaxpr.consts or ins != scalars * 2 or outs != scalars:
        fail(f"expected a computation from ({', '.join(s.str_short() for s in scalars * 2)}) "
             f"to ({', '.join(s.str_short() for s in scalars)}), but got {jaxpr}")
    check_axes(dimensions, operands[0].ndim, "dimensions")
    shape = tuple(d for i, d in enumerate(operands[0].shape) if i not in dimensions)
    return tuple(ShapedArray(shape, x.dtype) for x in operands)


# JAX's reduce also carries the Python ``computation``; plait keeps only its jaxpr.
reduce_p = Primitive("reduce", _reduce_rule, (
    ParamDef("jaxpr", decode=_decode_closed), ParamDef("dimensions", decode=decode_ints)),
    multiple_results=True)

"""Reductions over axes, index reductions, and cumulative (scan-like) reductions."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

from plait.ir.avals import ShapedArray
from plait.ir.builder import Builder, new_vars
from plait.ir.jaxpr import Jaxpr
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
    FLOAT,
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
    exp_p,
    log1p_p,
    max_p,
    ne_p,
    neg_p,
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


reduce_sum_p = Primitive("reduce_sum", _reducer(NUM), (
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
# JAX also takes complex numbers (and crashes on integers); plait takes real floats.
cumlogsumexp_p = Primitive("cumlogsumexp", _cumulative(FLOAT), _CUMULATIVE)


@functools.cache
def logaddexp_jaxpr(dtype: np.dtype[Any]) -> Jaxpr:
    """``log(exp(a) + exp(b))`` of two scalars, computed stably: the combining
    function of ``cumlogsumexp`` (where both are -inf, or one is NaN, ``a + b``)."""
    scalar = ShapedArray((), np.dtype(dtype))
    a, b = new_vars([scalar, scalar])
    bld = Builder()
    delta = bld.bind1(sub_p, a, b)
    tail = bld.bind1(log1p_p, bld.bind1(exp_p, bld.bind1(neg_p, bld.bind1(abs_p, delta))))
    stable = bld.bind1(add_p, bld.bind1(max_p, a, b), tail)
    out = bld.bind1(select_n_p, bld.bind1(ne_p, delta, delta), stable, bld.bind1(add_p, a, b))
    return bld.build([a, b], [out])

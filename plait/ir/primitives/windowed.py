"""Windowed reductions (XLA's ``ReduceWindow``) and the two primitives that
differentiate the max and min ones (``SelectAndScatter`` and its gather twin).

Every primitive here slides a window of ``window_dimensions`` over its operand,
``window_strides`` apart, after dilating the operand by ``base_dilation`` and
padding it by ``padding`` (``(low, high)`` pairs); ``window_dilation`` spreads
the window's own elements.  The parameters and printed forms are JAX 0.10.2's:

- ``reduce_window_sum``/``_max``/``_min`` reduce each window with a monoid
  (padding holds its identity);
- ``reduce_window`` reduces several operands together with a user computation,
  a jaxpr from ``2n`` scalars (accumulators, then elements) to ``n``, starting
  from ``n`` scalar ``init_values`` (also the padding value);
- ``select_and_gather_add(tangents, operand)`` picks, in each window of
  ``operand``, the element that ``select_prim`` (``ge`` for max, ``le`` for min)
  prefers, and returns the tangent at that position: the JVP of a max pool;
- ``select_and_scatter_add(source, operand)`` adds each ``source`` element into
  the position of ``operand`` its window selects: the VJP of a max pool.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from plait.ir.avals import ShapedArray, shaped
from plait.ir.jaxpr import ClosedJaxpr, Jaxpr
from plait.ir.params import ParamDef, decode_ints, decode_nested_ints
from plait.ir.primitive import PRIMITIVES, Primitive
from plait.ir.primitives._typing import (
    ANY,
    NUM,
    ORDERED,
    check_dtype,
    check_same_dtypes,
    fail,
)
from plait.ir.primitives.elementwise import ge_p, le_p

__all__ = ["reduce_window_sum_p", "reduce_window_max_p", "reduce_window_min_p",
           "reduce_window_p", "select_and_scatter_add_p", "select_and_gather_add_p",
           "window_output_shape"]

Pairs = tuple[tuple[int, int], ...]


def _dilate(size: int, d: int) -> int:
    return 0 if size == 0 else (size - 1) * d + 1


def window_output_shape(shape: Sequence[int], window_dimensions: Sequence[int],
                        window_strides: Sequence[int], padding: Pairs,
                        base_dilation: Sequence[int] | None = None,
                        window_dilation: Sequence[int] | None = None) -> tuple[int, ...]:
    """The number of windows along each dimension (0 where the window does not fit)."""
    rank = len(shape)
    base = base_dilation or (1,) * rank
    wdil = window_dilation or (1,) * rank
    out = []
    for n, w, s, (lo, hi), bd, wd in zip(shape, window_dimensions, window_strides, padding,
                                         base, wdil):
        padded = _dilate(n, bd) + lo + hi
        span = _dilate(w, wd)
        out.append(0 if padded < span else (padded - span) // s + 1)
    return tuple(out)


def _check_window(operand: ShapedArray, window_dimensions: Sequence[int],
                  window_strides: Sequence[int], padding: Pairs,
                  base_dilation: Sequence[int] = (), window_dilation: Sequence[int] = ()
                  ) -> tuple[int, ...]:
    rank = operand.ndim
    named = [("window_dimensions", window_dimensions), ("window_strides", window_strides),
             ("padding", padding)]
    if base_dilation:
        named += [("base_dilation", base_dilation), ("window_dilation", window_dilation)]
    for what, value in named:
        if len(value) != rank:
            fail(f"expected {rank} entries in {what} for the operand {operand.str_short()}, "
                 f"but got {tuple(value)}")
    for what, value in named:
        if what != "padding" and any(type(v) is not int or v < 1 for v in value):
            fail(f"expected positive ints in {what}, but got {tuple(value)}")
    if any(len(p) != 2 for p in padding):
        fail(f"expected (low, high) padding pairs, but got {padding}")
    for n, (lo, hi), bd in zip(operand.shape, padding, base_dilation or (1,) * rank):
        if _dilate(n, bd) + lo + hi < 0:
            fail(f"expected padding no more negative than the operand, but got {padding} "
                 f"for {operand.str_short()}")
    return window_output_shape(operand.shape, window_dimensions, window_strides, padding,
                               base_dilation, window_dilation)


def _decode_padding(value: Any) -> Pairs:
    pairs = decode_nested_ints(value)
    return tuple((int(lo), int(hi)) for lo, hi in pairs)


_WINDOW = ParamDef("window_dimensions", decode=decode_ints)
_STRIDES = ParamDef("window_strides", decode=decode_ints)
_PADDING = ParamDef("padding", decode=_decode_padding)
_DILATIONS = (ParamDef("base_dilation", decode=decode_ints),
              ParamDef("window_dilation", decode=decode_ints))


def _monoid_rule(accepted: frozenset[Any]) -> Any:
    def rule(x: ShapedArray, *, window_dimensions: tuple[int, ...],
             window_strides: tuple[int, ...], padding: Pairs, base_dilation: tuple[int, ...],
             window_dilation: tuple[int, ...]) -> tuple[ShapedArray, ...]:
        check_dtype(x, accepted)
        shape = _check_window(x, window_dimensions, window_strides, padding, base_dilation,
                              window_dilation)
        return (x.update(shape=shape),)
    return rule


_MONOID_PARAMS = (_WINDOW, _STRIDES, _PADDING, *_DILATIONS)
reduce_window_sum_p = Primitive("reduce_window_sum", _monoid_rule(NUM), _MONOID_PARAMS)
reduce_window_max_p = Primitive("reduce_window_max", _monoid_rule(ANY), _MONOID_PARAMS)
reduce_window_min_p = Primitive("reduce_window_min", _monoid_rule(ANY), _MONOID_PARAMS)


# -- reduce_window with a computation -------------------------------------------------------

def _decode_jaxpr(value: Any) -> Jaxpr:
    if isinstance(value, Jaxpr):
        return value
    if isinstance(value, ClosedJaxpr) and not value.consts:
        return value.jaxpr
    raise ValueError(f"expected a jaxpr without constants, but got {value!r}")


def _decode_consts(value: Any) -> tuple[()]:
    if value != () and value != []:
        raise ValueError(f"expected consts=() (plait's window computations close over no "
                         f"constants), but got {value!r}")
    return ()


def _reduce_window_rule(*args: ShapedArray, jaxpr: Jaxpr, consts: tuple[()],
                        window_dimensions: tuple[int, ...], window_strides: tuple[int, ...],
                        padding: Pairs, base_dilation: tuple[int, ...],
                        window_dilation: tuple[int, ...]) -> tuple[ShapedArray, ...]:
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
    ins = [shaped(v.aval).update(weak_type=False) for v in jaxpr.invars]
    outs = [shaped(v.aval).update(weak_type=False) for v in jaxpr.outvars]
    if jaxpr.constvars or ins != scalars * 2 or outs != scalars:
        fail(f"expected a computation from ({', '.join(s.str_short() for s in scalars * 2)}) "
             f"to ({', '.join(s.str_short() for s in scalars)}), but got {jaxpr}")
    shape = _check_window(operands[0], window_dimensions, window_strides, padding,
                          base_dilation, window_dilation)
    return tuple(ShapedArray(shape, x.dtype) for x in operands)  # never weak, as in JAX


reduce_window_p = Primitive("reduce_window", _reduce_window_rule, (
    ParamDef("jaxpr", decode=_decode_jaxpr), ParamDef("consts", (), decode=_decode_consts),
    *_MONOID_PARAMS), multiple_results=True)


# -- select_and_scatter_add and select_and_gather_add ---------------------------------------

def _decode_select(value: Any) -> Primitive:
    prim = value if isinstance(value, Primitive) else PRIMITIVES.get(str(value))
    if prim not in (ge_p, le_p):
        raise ValueError(f"expected select_prim ge or le, but got {value!r}")
    return prim


def _encode_select(prim: Primitive) -> str:
    return prim.name


_SELECT = ParamDef("select_prim", decode=_decode_select, encode=_encode_select)


def _check_select(select_prim: Primitive, operand: ShapedArray) -> None:
    if select_prim not in (ge_p, le_p):
        fail(f"expected select_prim ge or le, but got {select_prim}")
    check_dtype(operand, ORDERED)


def _scatter_rule(source: ShapedArray, operand: ShapedArray, *, select_prim: Primitive,
                  window_dimensions: tuple[int, ...], window_strides: tuple[int, ...],
                  padding: Pairs) -> tuple[ShapedArray, ...]:
    _check_select(select_prim, operand)
    check_dtype(source, NUM, "source")
    shape = _check_window(operand, window_dimensions, window_strides, padding)
    if any(lo < 0 or hi < 0 for lo, hi in padding):
        fail(f"expected non-negative padding, but got {padding}")
    if source.shape != shape:
        fail(f"expected a source of the window grid's shape {shape}, but got "
             f"{source.str_short()} for the operand {operand.str_short()}")
    return (ShapedArray(operand.shape, source.dtype, source.weak_type and operand.weak_type),)


select_and_scatter_add_p = Primitive("select_and_scatter_add", _scatter_rule, (
    _SELECT, _WINDOW, _STRIDES, _PADDING))


def _gather_rule(tangents: ShapedArray, operand: ShapedArray, *, select_prim: Primitive,
                 window_dimensions: tuple[int, ...], window_strides: tuple[int, ...],
                 padding: Pairs, base_dilation: tuple[int, ...],
                 window_dilation: tuple[int, ...]) -> tuple[ShapedArray, ...]:
    _check_select(select_prim, operand)
    check_same_dtypes([tangents, operand])
    if tangents.shape != operand.shape:
        fail(f"expected tangents of the operand's shape, but got {tangents.str_short()} and "
             f"{operand.str_short()}")
    shape = _check_window(operand, window_dimensions, window_strides, padding, base_dilation,
                          window_dilation)
    return (ShapedArray(shape, tangents.dtype, tangents.weak_type and operand.weak_type),)


select_and_gather_add_p = Primitive("select_and_gather_add", _gather_rule, (
    _SELECT, *_MONOID_PARAMS))

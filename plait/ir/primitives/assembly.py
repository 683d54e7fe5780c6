"""Taking arrays apart and putting them together, as JAX 0.10.2's own primitives:
``split`` (into pieces of the given ``sizes`` along ``axis``), ``stack`` (equally
shaped operands along a new ``axis``), ``unstack`` (its inverse) and ``tile``
(``reps`` copies along each dimension).  ``jnp.split``, ``stack`` and ``tile``
print as these, as in JAX."""

from __future__ import annotations

from plait.ir.avals import ShapedArray
from plait.ir.params import ParamDef, decode_int, decode_ints
from plait.ir.primitive import Primitive
from plait.ir.primitives._typing import check_axes, check_same_dtypes, fail

__all__ = ["split_p", "stack_p", "unstack_p", "tile_p"]


def _split_rule(x: ShapedArray, *, sizes: tuple[int, ...], axis: int) -> tuple[ShapedArray, ...]:
    check_axes((axis,), x.ndim, "axis")
    if any(type(s) is not int or s < 0 for s in sizes):
        fail(f"expected non-negative sizes, but got {sizes}")
    if sum(sizes) != x.shape[axis]:
        fail(f"expected sizes summing to dimension {axis} of {x.str_short()}, "
             f"{x.shape[axis]}, but got {sizes}")
    return tuple(x.update(shape=x.shape[:axis] + (s,) + x.shape[axis + 1:]) for s in sizes)


split_p = Primitive("split", _split_rule, (ParamDef("sizes", decode=decode_ints),
                                           ParamDef("axis", decode=decode_int)),
                    multiple_results=True)


def _stack_rule(*xs: ShapedArray, axis: int) -> tuple[ShapedArray, ...]:
    if not xs:
        fail("expected at least one operand, but got none")
    check_same_dtypes(xs)
    if any(x.shape != xs[0].shape for x in xs):
        fail("expected operands of one shape, but got " + ", ".join(x.str_short() for x in xs))
    check_axes((axis,), xs[0].ndim + 1, "axis")
    shape = xs[0].shape[:axis] + (len(xs),) + xs[0].shape[axis:]
    return (ShapedArray(shape, xs[0].dtype, all(x.weak_type for x in xs)),)


stack_p = Primitive("stack", _stack_rule, (ParamDef("axis", decode=decode_int),))


def _unstack_rule(x: ShapedArray, *, axis: int) -> tuple[ShapedArray, ...]:
    check_axes((axis,), x.ndim, "axis")
    part = x.update(shape=x.shape[:axis] + x.shape[axis + 1:])
    return (part,) * x.shape[axis]


unstack_p = Primitive("unstack", _unstack_rule, (ParamDef("axis", decode=decode_int),),
                      multiple_results=True)


def _tile_rule(x: ShapedArray, *, reps: tuple[int, ...]) -> tuple[ShapedArray, ...]:
    if len(reps) != x.ndim:
        fail(f"expected one rep per dimension of {x.str_short()}, but got reps={reps}")
    if any(type(r) is not int or r < 0 for r in reps):
        fail(f"expected non-negative reps, but got {reps}")
    return (x.update(shape=tuple(r * d for r, d in zip(reps, x.shape))),)


tile_p = Primitive("tile", _tile_rule, (ParamDef("reps", decode=decode_ints),))

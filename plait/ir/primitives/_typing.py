"""Helpers shared by typing rules: dtype classes, shape checks, rule factories."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Final, NoReturn

import numpy as np

from plait.ir import dtypes as dt
from plait.ir.avals import ShapedArray
from plait.ir.errors import JaxprTypeError

Dtypes = frozenset[np.dtype[Any]]

BOOL: Final[Dtypes] = frozenset({dt.bool_})
SIGNED: Final[Dtypes] = frozenset({dt.int2, dt.int4, dt.int8, dt.int16, dt.int32, dt.int64})
UNSIGNED: Final[Dtypes] = frozenset(
    {dt.uint2, dt.uint4, dt.uint8, dt.uint16, dt.uint32, dt.uint64})
INT: Final[Dtypes] = SIGNED | UNSIGNED
FLOAT: Final[Dtypes] = frozenset(
    {dt.bfloat16, dt.float16, dt.float32, dt.float64, *dt.NARROW_FLOATS})
COMPLEX: Final[Dtypes] = frozenset({dt.complex64, dt.complex128})
INEXACT: Final[Dtypes] = FLOAT | COMPLEX
NUM: Final[Dtypes] = INT | INEXACT
ANY: Final[Dtypes] = NUM | BOOL
ORDERED: Final[Dtypes] = INT | FLOAT | BOOL
BOOL_OR_INT: Final[Dtypes] = BOOL | INT

_CLASS_NAMES: Final[dict[Dtypes, str]] = {
    BOOL: "bool", INT: "an integer dtype", FLOAT: "a floating dtype",
    COMPLEX: "a complex dtype", INEXACT: "a floating or complex dtype",
    NUM: "a numeric dtype (not bool)", ANY: "any dtype", ORDERED: "a real dtype",
    BOOL_OR_INT: "bool or an integer dtype", INT | FLOAT: "an integer or floating dtype",
    SIGNED | INEXACT: "a signed or inexact dtype",
}


def fail(message: str) -> NoReturn:
    """Raise the typing error ``message``."""
    raise JaxprTypeError(message)


def describe(accepted: Dtypes) -> str:
    """A phrase naming a dtype class, for error messages."""
    return _CLASS_NAMES.get(accepted) or "one of " + ", ".join(sorted(d.name for d in accepted))


def check_dtype(aval: ShapedArray, accepted: Dtypes, what: str = "operand") -> None:
    """Fail unless ``aval``'s dtype is in ``accepted``."""
    if aval.dtype not in accepted:
        if aval.dtype == dt.float0:
            fail(f"expected {describe(accepted)} for the {what}, but got a float0 value; "
                 "float0 is the tangent type of integer inputs and supports no operations")
        fail(f"expected {describe(accepted)} for the {what}, but got {aval.str_short()}")


def check_same_dtypes(avals: Sequence[ShapedArray]) -> None:
    """Fail unless all dtypes are equal (weak types may differ)."""
    d0 = avals[0].dtype
    for a in avals[1:]:
        if a.dtype != d0:
            fail("expected operands of equal dtypes, but got "
                 + ", ".join(x.str_short() for x in avals)
                 + " (lax does not promote: convert one with lax.convert_element_type, or "
                   "use the plait.numpy function, which promotes)")


def broadcast_shapes(avals: Sequence[ShapedArray]) -> tuple[int, ...]:
    """The result shape of an n-ary elementwise operation.

    As in JAX 0.10.2: rank-0 operands combine with anything; the others must
    have equal rank, and each dimension must agree or be 1.
    """
    shapes = [a.shape for a in avals if a.shape]
    if not shapes:
        return ()
    first = shapes[0]
    if all(s == first for s in shapes[1:]):
        return first
    if len({len(s) for s in shapes}) != 1:
        fail("expected operands of equal rank (or rank 0), but got "
             + ", ".join(a.str_short() for a in avals))
    out = []
    for ds in zip(*shapes):
        non1 = {d for d in ds if d != 1}
        if len(non1) > 1:
            fail("expected operand shapes that agree or are 1 in each dimension, but got "
                 + ", ".join(a.str_short() for a in avals))
        out.append(non1.pop() if non1 else 1)
    return tuple(out)


def unary(accepted: Dtypes, out_dtype: np.dtype[Any] | Callable[[np.dtype[Any]], np.dtype[Any]]
          | None = None, keep_weak: bool = True) -> Callable[..., tuple[ShapedArray, ...]]:
    """The typing rule of an elementwise unary op; extra params are ignored."""
    def rule(x: ShapedArray, **_: Any) -> tuple[ShapedArray, ...]:
        if x.dtype not in accepted:
            check_dtype(x, accepted)
        if out_dtype is None and keep_weak:
            return (x,)
        d = x.dtype if out_dtype is None else (
            out_dtype if isinstance(out_dtype, np.dtype) else out_dtype(x.dtype))
        return (ShapedArray(x.shape, d, x.weak_type and keep_weak),)
    return rule


def nary(accepted: Sequence[Dtypes], out_dtype: np.dtype[Any] | None = None,
         same_dtypes: bool = True) -> Callable[..., tuple[ShapedArray, ...]]:
    """The typing rule of an elementwise n-ary op with broadcasting of rank-0 and size-1 dims."""
    def rule(*avals: ShapedArray, **params: Any) -> tuple[ShapedArray, ...]:
        if out_dtype is None and len(avals) == 2 and not params.get("out_dtype"):
            a, b = avals
            if a.dtype in accepted[0] and b.dtype in accepted[1]:
                if a is b:
                    return (a,)  # the common case: identical operand types
                if a.dtype == b.dtype and (not b.shape or a.shape == b.shape):
                    return (ShapedArray(a.shape, a.dtype, a.weak_type and b.weak_type),)
        if len(avals) != len(accepted):
            fail(f"expected {len(accepted)} operands, but got {len(avals)}")
        for i, (a, ok) in enumerate(zip(avals, accepted)):
            if a.dtype not in ok:
                check_dtype(a, ok, f"operand at position {i}")
        if same_dtypes and params.get("out_dtype") is None:
            check_same_dtypes(avals)
        a0 = avals[0]
        shape = a0.shape if all(a.shape == a0.shape for a in avals) else broadcast_shapes(avals)
        d = out_dtype if out_dtype is not None else (params.get("out_dtype") or a0.dtype)
        return (ShapedArray(shape, d, all(a.weak_type for a in avals)),)
    return rule


def check_axes(axes: Sequence[int], ndim: int, what: str = "axes") -> None:
    """Fail unless ``axes`` are distinct, in range dimensions of an ``ndim``-array."""
    if len(set(axes)) != len(axes):
        fail(f"expected distinct {what}, but got {tuple(axes)}")
    for a in axes:
        if type(a) is not int or not 0 <= a < ndim:
            fail(f"expected {what} in [0, {ndim}), but got {tuple(axes)}")


def check_permutation(perm: Sequence[int], ndim: int, what: str = "permutation") -> None:
    """Fail unless ``perm`` is a permutation of ``range(ndim)``."""
    if sorted(perm) != list(range(ndim)):
        fail(f"expected a {what} of {tuple(range(ndim))}, but got {tuple(perm)}")

"""Shared machinery of the NumPy namespace: array conversion, promotion, broadcasting."""

from __future__ import annotations

import operator
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from plait.frontend import lax
from plait.frontend.core.array_base import Array
from plait.frontend.core.array_impl import ArrayImpl
from plait.frontend.core.host_values import numpy_scalar_literal, scalar_literal
from plait.frontend.core.promotion import dtype_and_weak, result_type_info
from plait.ir import dtypes as dt
from plait.ir.atoms import Literal
from plait.ir.avals import ShapedArray
from plait.ir.config import values as _config
from plait.ir.errors import ArgumentError, IncompatibleShapesError

__all__ = ["is_scalar", "aval_of", "promote", "promote_dtypes",
           "promote_to_inexact", "promote_dtypes_inexact", "promote_numeric", "broadcast_ranks",
           "canonical_axis", "canonical_axes", "ndim", "shape", "convert", "as_array", "dtype_of",
           "check_arraylike"]


def is_scalar(x: Any) -> bool:
    """A Python ``bool``, ``int``, ``float`` or ``complex`` (not a NumPy scalar)."""
    return isinstance(x, bool | int | float | complex) and not isinstance(x, np.generic)


def aval_of(x: Any) -> ShapedArray | None:
    """The abstract value of a plait Array (concrete or traced) or Literal, else ``None``."""
    if isinstance(x, Array) or type(x) is Literal:
        return x.aval
    return None


def check_arraylike(name: str, *args: Any) -> None:
    """Refuse arguments that are not arrays, NumPy values or Python scalars.

    Raises:
      TypeError: an argument is a list, tuple, string or other non-array
        object (as ``jax.numpy``, which refuses implicit list conversion).
    """
    for i, a in enumerate(args):
        if aval_of(a) is None and not is_scalar(a) and not isinstance(a, np.ndarray | np.generic) \
                and not hasattr(a, "__array__") and not hasattr(a, "__jax_array__"):
            raise TypeError(f"{name} requires ndarray or scalar arguments, but got "
                            f"{type(a).__name__} at position {i}")


def dtype_of(x: Any) -> np.dtype[Any]:
    """The (canonical) dtype ``x`` has as an operand."""
    return _type(x)[0]


def as_array(x: Any) -> Array:
    """``x`` as a plait Array: Arrays and tracers are returned as they are;
    Literals, Python scalars (weakly typed) and NumPy values become concrete Arrays."""
    if isinstance(x, Array):
        return x
    if hasattr(type(x), "__jax_array__"):
        return as_array(x.__jax_array__())
    if type(x) is Literal:
        return ArrayImpl.from_numpy(np.asarray(x.val, x.aval.dtype), x.aval.weak_type)
    if is_scalar(x):
        d, weak = dtype_and_weak(x)
        return ArrayImpl.from_numpy(np.asarray(x).astype(d), weak)
    return ArrayImpl.from_numpy(_host(x), False)


def _host(x: Any) -> np.ndarray:
    try:
        arr = np.asarray(x)
    except Exception:
        raise TypeError(f"expected an array-like value, but got {type(x).__name__}") from None
    if arr.dtype == object or arr.dtype not in dt._SHORT:
        raise TypeError(f"expected an array-like value of a supported dtype, but got "
                        f"{type(x).__name__} with dtype {arr.dtype}")
    target = dt.canonicalize(arr.dtype)
    return arr if arr.dtype == target else arr.astype(target)


def shape(a: Any) -> tuple[int, ...]:
    """The shape of an array-like value."""
    av = aval_of(a)
    if av is not None:
        return av.shape
    if type(a) is Literal:
        return ()
    return tuple(np.shape(a))


def ndim(a: Any) -> int:
    """The number of dimensions of an array-like value."""
    return len(shape(a))


def convert(x: Any, dtype: np.dtype[Any], weak: bool, rounded: bool = True) -> Any:
    """``x`` as an operand of ``dtype`` (weakly typed if ``weak``), staging a cast if needed.
    A Python float becomes a float32 literal rounded to float32, as JAX's type promotion
    makes it, unless not ``rounded`` (``full``'s fill value, which JAX's lax takes exact)."""
    make = numpy_scalar_literal if rounded else scalar_literal
    if type(x) is Literal:
        if x.aval.dtype == dtype and x.aval.weak_type == weak:
            return x
        return Literal(make(x.val, dtype).val, ShapedArray((), dtype, weak))
    av = aval_of(x)
    if av is not None:
        if av.dtype == dtype and av.weak_type == weak:
            return x
        return lax.convert_element_type(x, dtype, weak)
    if hasattr(type(x), "__jax_array__"):  # (flax's nnx.Variable: its value, as in JAX)
        return convert(x.__jax_array__(), dtype, weak, rounded)
    if is_scalar(x):
        lit = make(_wrap_int(x, dtype), dtype)
        return lit if weak else Literal(lit.val, lit.aval.strip_weak_type())
    arr = _host(x)
    arr = arr if arr.dtype == dtype else arr.astype(dtype)
    if weak:
        # A NumPy value promoted only against weak operands (a bool array plus a
        # Python int) becomes weakly typed, as a traced value would.
        return ArrayImpl.from_numpy(arr, True)
    return arr


def _wrap_int(x: Any, dtype: np.dtype[Any]) -> Any:
    """A Python int as an operand of ``dtype``: it must fit the default integer type
    (``OverflowError`` otherwise), and wraps around into a narrower integer dtype
    (``uint8`` array + 300 adds 44), as in JAX."""
    if type(x) is not int:
        return x
    default = dt.canonicalize(dt.int64)
    info = np.iinfo(default)
    if not info.min <= x <= info.max:
        raise OverflowError(f"Python int {x} too large to convert to {default}")
    if dt.is_integer(dtype):
        lo, hi = dt.int_range(dtype)
        if not lo <= x <= hi:
            return int(np.asarray(x, default).astype(dtype))
    return x


def _type(x: Any) -> tuple[np.dtype[Any], bool]:
    av = aval_of(x)
    if av is not None:
        return av.dtype, av.weak_type
    if hasattr(type(x), "__jax_array__"):
        return _type(x.__jax_array__())
    if not is_scalar(x) and not isinstance(x, np.ndarray | np.generic):
        return dt.canonicalize(_host(x).dtype), False
    return dtype_and_weak(x)


def promote(name: str, *args: Any) -> list[Any]:
    """Convert ``args`` to their common dtype (JAX's type promotion lattice) and rank."""
    return broadcast_ranks(promote_dtypes(name, *args), name)


def promote_dtypes(name: str, *args: Any) -> list[Any]:
    """Convert ``args`` to their common dtype, leaving shapes alone."""
    types = [_type(a) for a in args]
    dtype, weak = result_type_info(types)
    return [convert(a, dtype, weak) for a in args]


def promote_numeric(name: str, *args: Any) -> list[Any]:
    """Like :func:`promote`, then bools become the default int (weak types kept)."""
    types = [_type(a) for a in args]
    dtype, weak = result_type_info(types)
    if dtype == dt.bool_:
        dtype = dt.canonicalize(dt.int64)
    return broadcast_ranks([convert(a, dtype, weak) for a in args], name)


def _to_inexact(dtype: np.dtype[Any]) -> np.dtype[Any]:
    # As JAX 0.10.2's to_inexact_dtype: 64-bit integers become float64 (float32 unless
    # x64 is on), bool and the other integers float32, x64 or not.  It leaves int2 and
    # uint2 alone (its table predates them): sin refuses them, and true division
    # divides them as integers.
    if dt.is_inexact(dtype) or dtype in (dt.int2, dt.uint2):
        return dtype
    if dtype in (dt.int64, dt.uint64):
        return dt.canonicalize(dt.float64)
    return dt.float32


def promote_to_inexact(name: str, *args: Any) -> list[Any]:
    """Like :func:`promote`, then integers and bools become the default float."""
    types = [_type(a) for a in args]
    dtype, weak = result_type_info(types)
    return broadcast_ranks([convert(a, _to_inexact(dtype), weak) for a in args], name)


def promote_dtypes_inexact(name: str, *args: Any) -> list[Any]:
    """Like :func:`promote_dtypes` (shapes left alone), then integers and bools become
    the default float."""
    types = [_type(a) for a in args]
    dtype, weak = result_type_info(types)
    return [convert(a, _to_inexact(dtype), weak) for a in args]


def broadcast_ranks(args: list[Any], name: str = "broadcast") -> list[Any]:
    """Give arrays of differing ranks leading unit dimensions (NumPy broadcasting).

    Rank-0 operands, and operands of one common rank, are left alone: the
    primitives broadcast those themselves.

    Raises:
      IncompatibleShapesError: the shapes do not broadcast together; the message
        names them, in JAX's words (``add got incompatible shapes for broadcasting:
        (3,), (4,).`` or ``Incompatible shapes for broadcasting: shapes=[(2, 3), (4,)]``).
    """
    shapes = [shape(a) for a in args]
    nonscalar = [s for s in shapes if s]
    ranks = {len(s) for s in nonscalar}
    if len(ranks) > 1 and _config.numpy_rank_promotion != "allow":
        _rank_promotion(name, shapes)
    if len(nonscalar) > 1 and any(s != nonscalar[0] for s in nonscalar):
        nd = max(ranks)
        for i in range(1, nd + 1):
            dims = {s[-i] for s in nonscalar if len(s) >= i} - {1}
            if len(dims) > 1:
                if len(ranks) > 1:
                    raise IncompatibleShapesError(
                        f"Incompatible shapes for broadcasting: shapes={shapes}")
                raise IncompatibleShapesError(f"{name} got incompatible shapes for broadcasting: "
                                              + ", ".join(str(s) for s in shapes) + ".")
    if len(ranks) < 2:
        return args
    nd = max(ranks)
    out = []
    for a, s in zip(args, shapes):
        if len(s) == nd:
            out.append(a)
        else:
            new = (1,) * (nd - len(s)) + s
            out.append(lax.broadcast_in_dim(a, new, tuple(range(nd - len(s), nd))))
    return out


def _rank_promotion(name: str, shapes: Sequence[tuple[int, ...]]) -> None:
    listed = " ".join(map(str, shapes))
    if _config.numpy_rank_promotion == "warn":
        warnings.warn(f"Following NumPy automatic rank promotion for {name} on shapes "
                      f"{listed}. Set the jax_numpy_rank_promotion config option to 'allow' "
                      "to disable this warning.", stacklevel=4)
        return
    raise ValueError(f"Operands could not be broadcast together for {name} on shapes {listed} "
                     "and with the config option jax_numpy_rank_promotion='raise'.")


def canonical_axis(axis: int, nd: int, name: str = "axis") -> int:
    """``axis`` made non-negative.

    Raises:
      ArgumentError: ``axis`` is not an int.
      numpy.exceptions.AxisError: out of range for ``nd`` dimensions (a
        ``ValueError`` and an ``IndexError``).
    """
    try:
        a = operator.index(axis)
    except TypeError:
        raise ArgumentError(f"expected an int {name}, but got {axis!r}") from None
    if not -nd <= a < nd:
        # NumPy's AxisError is both a ValueError and an IndexError.
        raise np.exceptions.AxisError(
            f"{name} {axis} is out of bounds for an array of dimension {nd} (expected "
            f"{name} in [{-nd}, {nd}))")
    return a % nd if nd else 0


def canonical_axes(axis: int | Sequence[int] | None, nd: int) -> tuple[int, ...]:
    """Axes as a sorted tuple of non-negative ints; ``None`` means all."""
    if axis is None:
        return tuple(range(nd))
    if isinstance(axis, int | np.integer):
        return (canonical_axis(axis, nd),)
    axes = tuple(canonical_axis(a, nd) for a in axis)
    if len(set(axes)) != len(axes):
        raise ArgumentError(f"expected distinct axes, but got {tuple(axis)}")
    return tuple(sorted(axes))

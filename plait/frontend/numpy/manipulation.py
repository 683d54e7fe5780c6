"""Shape manipulation: reshape, transpose, concatenation, broadcasting, flipping, sorting,
trimming zeros."""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Sequence
from typing import Any, cast, overload

import numpy as np

from plait.frontend import lax
from plait.frontend.api.explicit_sharding import reshard
from plait.frontend.core.array_base import Array
from plait.frontend.core.x64_warnings import check_user_dtype
from plait.frontend.numpy._core import (
    as_array,
    canonical_axes,
    canonical_axis,
    check_arraylike,
    promote_dtypes,
    shape,
)
from plait.ir import dtypes as dt
from plait.ir.dims import as_dims, is_symbolic
from plait.ir.errors import IncompatibleShapesError
from plait.ir.primitives.indexing import GatherScatterMode, ScatterDimensionNumbers

__all__ = ["reshape", "ravel", "transpose", "swapaxes", "moveaxis", "expand_dims", "squeeze",
           "concatenate", "stack", "hstack", "vstack", "broadcast_to", "broadcast_shapes",
           "broadcast_arrays", "flip", "atleast_1d", "atleast_2d", "sort", "argsort", "split",
           "tile", "repeat", "permute_dims", "concat", "trim_zeros"]


def _as_array(name: str, a: Any) -> Array:
    check_arraylike(name, a)
    return as_array(a)


def _index_tuple(x: int | Sequence[int]) -> tuple[int, ...]:
    if is_symbolic(x):
        return (x,)  # type: ignore[return-value]  # (a symbolic size stands in for an int)
    try:
        return (operator.index(x),)  # type: ignore[arg-type]  # a sequence raises TypeError: below
    except TypeError:
        # Not an int, so (by the declared type) the sequence.
        return as_dims(cast(Sequence[int], x))  # type: ignore[return-value]  # (as above)


def _sequence(name: str, arrays: Any) -> list[Any]:
    """The operands of ``concatenate``/``stack``: a sequence of arrays, or an array
    (whose first axis is iterated over)."""
    if isinstance(arrays, Array | np.ndarray):
        return [arrays[i] for i in range(shape(arrays)[0])] if shape(arrays) else [arrays]
    if not isinstance(arrays, Sequence) or isinstance(arrays, str | bytes):
        raise TypeError(f"{name}: expected a sequence of arrays, but got {type(arrays).__name__}")
    check_arraylike(name, *arrays)
    return list(arrays)


def reshape(a: Any, shape: Any, order: str = "C", *, copy: bool | None = None,
            out_sharding: Any = None) -> Array:
    """The elements of ``a`` in a new shape; one dimension may be ``-1`` (``copy`` is
    accepted for the array API; arrays are immutable, so it changes nothing), its type
    sharded by ``out_sharding`` if given.  With ``order='F'`` the elements are read
    and placed in column-major order.

    Raises:
      ValueError: the sizes differ, more than one dimension is ``-1``, or ``order`` is
        not ``'C'``, ``'F'`` or ``'A'``.
      NotImplementedError: ``order='A'`` (as in JAX).
    """
    if order == "A":
        raise NotImplementedError("reshape: order='A' is not implemented (as in JAX); use "
                                  "'C' or 'F'")
    if order not in ("C", "F"):
        raise ValueError(f"reshape: expected order 'C' or 'F', but got {order!r}")
    arr = _as_array("reshape", a)
    dims = list(_index_tuple(shape))
    size = arr.size
    if dims.count(-1) > 1:
        raise ValueError(f"reshape: can only specify one unknown dimension (-1), but got "
                         f"new shape {tuple(dims)}")
    if any(d < -1 for d in dims):
        raise ValueError(f"reshape: negative dimension in new shape {tuple(dims)}")
    if -1 in dims:
        rest = math.prod(d for d in dims if d != -1)
        if rest == 0 or size % rest:
            raise IncompatibleShapesError(f"cannot reshape array of shape {arr.shape} (size "
                                          f"{size}) into "
                             f"shape {tuple(dims)}")
        dims[dims.index(-1)] = size // rest
    if math.prod(dims) != size:
        raise IncompatibleShapesError(f"cannot reshape array of shape {arr.shape} (size {size}) "
                                      "into shape "
                         f"{tuple(dims)} (size {math.prod(dims)})")
    if order == "F":
        # Column-major: the reversed reshape of the reversed axes, reversed back.
        flipped = lax.reshape(transpose(arr), dims[::-1])
        return transpose(flipped) if out_sharding is None else \
            lax.reshape(transpose(flipped), dims, out_sharding=out_sharding)
    if tuple(dims) == arr.shape and out_sharding is None:
        return arr
    return lax.reshape(arr, dims, out_sharding=out_sharding)


def ravel(a: Any, order: str = "C", *, out_sharding: Any = None) -> Array:
    """The elements as a 1-d array, in row-major (``order='C'``) or column-major
    (``'F'``) order.

    Raises:
      NotImplementedError: another ``order``.
    """
    a = _as_array("ravel", a)
    if order not in ("C", "F"):
        raise NotImplementedError(f"ravel: only order='C' and 'F' are supported, but got "
                                  f"{order!r}")
    return reshape(a, (a.size,), order, out_sharding=out_sharding)


def transpose(a: Any, axes: Sequence[int] | None = None) -> Array:
    """Permute dimensions (reverse them when ``axes`` is ``None``).

    Raises:
      TypeError: ``axes`` is not a permutation of the dimensions.
    """
    arr = _as_array("transpose", a)
    nd = arr.ndim
    if axes is None:
        perm = tuple(range(nd))[::-1]
    else:
        perm = tuple(canonical_axis(x, nd) for x in axes)
        if sorted(perm) != list(range(nd)):
            raise TypeError(f"transpose: axes {tuple(axes)} is not a permutation of the "
                             f"{nd} dimensions of an array of shape {arr.shape}")
    if perm == tuple(range(nd)):
        return arr
    return lax.transpose(arr, perm)


permute_dims = transpose


def swapaxes(a: Any, axis1: int, axis2: int) -> Array:
    """Exchange two dimensions."""
    a = _as_array("swapaxes", a)
    nd = a.ndim
    perm = list(range(nd))
    i, j = canonical_axis(axis1, nd, "axis1"), canonical_axis(axis2, nd, "axis2")
    perm[i], perm[j] = perm[j], perm[i]
    return transpose(a, perm)


def moveaxis(a: Any, source: int | Sequence[int], destination: int | Sequence[int]) -> Array:
    """Move dimensions ``source`` to positions ``destination``."""
    a = _as_array("moveaxis", a)
    nd = a.ndim
    src = [canonical_axis(s, nd, "source") for s in _index_tuple(source)]
    dst = [canonical_axis(d, nd, "destination") for d in _index_tuple(destination)]
    if len(src) != len(dst):
        raise ValueError(f"moveaxis: inconsistent number of elements: {len(src)} source "
                         f"axes vs {len(dst)} destination axes")
    order = [i for i in range(nd) if i not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return transpose(a, order)


def expand_dims(a: Any, axis: int | Sequence[int]) -> Array:
    """Insert size-1 dimensions at ``axis``."""
    a = _as_array("expand_dims", a)
    axes = _index_tuple(axis)
    nd = a.ndim + len(axes)
    dims = [canonical_axis(x, nd) for x in axes]
    if len(set(dims)) != len(dims):
        raise ValueError(f"expand_dims: repeated axis in {axes}")
    return lax.expand_dims(a, dims)


def squeeze(a: Any, axis: int | Sequence[int] | None = None) -> Array:
    """Remove size-1 dimensions (all of them, or those in ``axis``).

    Raises:
      ValueError: a dimension in ``axis`` is not of size 1.
    """
    arr = _as_array("squeeze", a)
    s = arr.shape
    if axis is None:
        axes = tuple(i for i, d in enumerate(s) if d == 1)
    else:
        axes = canonical_axes(_index_tuple(axis), len(s))
        bad = [i for i in axes if s[i] != 1]
        if bad:
            raise ValueError(f"cannot select an axis to squeeze out which has size not equal "
                             f"to one: dimension {bad[0]} of shape {s} has size {s[bad[0]]}")
    if not axes:
        return arr
    return lax.squeeze(arr, axes)


def concatenate(arrays: Sequence[Any], axis: int | None = 0, dtype: Any = None) -> Array:
    """Join arrays along ``axis`` (flattened first when ``axis`` is ``None``).

    Raises:
      ValueError: no arrays, or zero-dimensional arrays.
      TypeError: shapes that differ off ``axis`` (as in ``jax.numpy``).
    """
    xs = _sequence("concatenate", arrays)
    if not xs:
        raise ValueError("concatenate: need at least one array to concatenate")
    if axis is None:
        return concatenate([ravel(x) for x in xs], 0, dtype)
    arrs: list[Array]
    if dtype is not None:
        d = check_user_dtype(dtype, "asarray")
        arrs = [lax.convert_element_type(as_array(x), d) for x in xs]
    else:
        arrs = [as_array(x) for x in promote_dtypes("concatenate", *xs)]
    nd = arrs[0].ndim
    if nd == 0:
        raise ValueError("concatenate: zero-dimensional arrays cannot be concatenated")
    ax = canonical_axis(axis, nd)
    for x in arrs:
        if x.ndim != nd or any(d != e for i, (d, e) in enumerate(zip(x.shape, arrs[0].shape))
                               if i != ax):
            raise TypeError(
                "concatenate: all input array dimensions except the concatenation axis "
                f"({ax}) must match, but got shapes " + ", ".join(str(y.shape) for y in arrs))
    if len(arrs) == 1:
        return arrs[0]
    return lax.concatenate(arrs, ax)


concat = concatenate


def stack(arrays: Sequence[Any], axis: int = 0, out: None = None, dtype: Any = None) -> Array:
    """Join arrays of equal shape along a new ``axis``.

    Raises:
      ValueError: no arrays, or arrays of different shapes.
    """
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.stack is not supported.")
    xs = _sequence("stack", arrays)
    if not xs:
        raise ValueError("stack: need at least one array to stack")
    shapes = [shape(x) for x in xs]
    if any(s != shapes[0] for s in shapes):
        raise ValueError(f"stack: all input arrays must have the same shape, but got shapes "
                         f"{', '.join(str(s) for s in shapes)}")
    ax = canonical_axis(axis, len(shapes[0]) + 1)
    xs = promote_dtypes("stack", *xs) if dtype is None else [
        lax.convert_element_type(x, check_user_dtype(dtype, "asarray")) for x in xs]
    return lax.stack(xs, ax)


def hstack(tup: Sequence[Any], dtype: Any = None) -> Array:
    """Concatenate along the second axis (the first for 1-d arrays)."""
    xs = [atleast_1d(x) for x in _sequence("hstack", tup)]
    if not xs:
        raise ValueError("hstack: need at least one array to concatenate")
    return concatenate(xs, 0 if xs[0].ndim == 1 else 1, dtype)


def vstack(tup: Sequence[Any], dtype: Any = None) -> Array:
    """Concatenate along the first axis, after making arrays at least 2-d."""
    return concatenate([atleast_2d(x) for x in _sequence("vstack", tup)], 0, dtype)


@overload
def atleast_1d(a: Any, /) -> Array: ...
@overload
def atleast_1d(a: Any, b: Any, /, *arys: Any) -> list[Array]: ...
@overload
def atleast_1d() -> list[Array]: ...
def atleast_1d(*arys: Any) -> Array | list[Array]:
    """Each argument with at least one dimension; a list when there is not exactly one
    argument (as JAX)."""
    return each_array("atleast_1d", arys, _atleast_1d)


def each_array(name: str, arys: tuple[Any, ...],
               one: Callable[[Any], Array]) -> Array | list[Array]:
    """``one`` of each of ``arys`` (checked to be arrays): the array alone, or a list when
    there is not exactly one (the ``atleast_*d`` functions)."""
    check_arraylike(name, *arys)
    return one(arys[0]) if len(arys) == 1 else [one(a) for a in arys]


def _atleast_1d(a: Any) -> Array:
    a = as_array(a)
    return reshape(a, (1,)) if a.ndim == 0 else a


@overload
def atleast_2d(a: Any, /) -> Array: ...
@overload
def atleast_2d(a: Any, b: Any, /, *arys: Any) -> list[Array]: ...
@overload
def atleast_2d() -> list[Array]: ...
def atleast_2d(*arys: Any) -> Array | list[Array]:
    """Each argument with at least two dimensions (leading size-1 dimensions added); a
    list when there is not exactly one argument (as JAX)."""
    return each_array("atleast_2d", arys, _atleast_2d)


def _atleast_2d(a: Any) -> Array:
    a = as_array(a)
    return reshape(a, (1,) * (2 - a.ndim) + a.shape) if a.ndim < 2 else a


def broadcast_shapes(*shapes: Sequence[int]) -> tuple[int, ...]:
    """The NumPy broadcast of ``shapes``.

    Raises:
      IncompatibleShapesError: the shapes are incompatible (a ``ValueError``).
    """
    shapes_ = [_index_tuple(s) for s in shapes]
    nd = max((len(s) for s in shapes_), default=0)
    out = []
    for i in range(nd):
        dims = {s[len(s) - nd + i] for s in shapes_ if len(s) - nd + i >= 0}
        non1 = dims - {1}
        if len(non1) > 1:
            raise IncompatibleShapesError(f"Incompatible shapes for broadcasting: "
                                          f"shapes={shapes_}")
        out.append(non1.pop() if non1 else 1)
    return tuple(out)


def broadcast_to(array: Any, shape: int | Sequence[int], *, out_sharding: Any = None) -> Array:
    """``array`` broadcast to ``shape`` (NumPy rules), its type sharded by
    ``out_sharding`` if given.

    Raises:
      IncompatibleShapesError: ``a``'s shape does not broadcast to ``shape`` (a
        ``ValueError``).
    """
    arr = _as_array("broadcast_to", array)
    target = _index_tuple(shape)
    s = arr.shape
    if s == target and out_sharding is None:
        return arr
    lead = len(target) - len(s)
    if lead < 0 or any(d != 1 and d != target[lead + i] for i, d in enumerate(s)):
        raise IncompatibleShapesError(f"Incompatible shapes for broadcasting: {s} and "
                                      f"requested shape {target}")
    kept = [i for i, d in enumerate(s) if d == target[lead + i]]
    dims = tuple(range(lead, len(target)))
    if len(kept) < len(s):
        arr = lax.reshape(arr, tuple(s[i] for i in kept))
        dims = tuple(lead + i for i in kept)
    return lax.broadcast_in_dim(arr, target, dims, out_sharding=out_sharding)


def broadcast_arrays(*args: Any) -> list[Array]:
    """The arrays broadcast against each other (dtypes unchanged)."""
    xs = [_as_array("broadcast_arrays", a) for a in args]
    s = broadcast_shapes(*[x.shape for x in xs])
    return [broadcast_to(x, s) for x in xs]


def flip(m: Any, axis: int | Sequence[int] | None = None) -> Array:
    """Reverse the order of elements along ``axis`` (all axes when ``None``)."""
    a = _as_array("flip", m)
    axes = canonical_axes(None if axis is None else _index_tuple(axis), a.ndim)
    return lax.rev(a, axes)


def _no_kind_or_order(name: str, kind: None, order: None) -> None:
    # (JAX takes the arguments for NumPy's signature, and refuses anything but None.)
    if kind is not None:
        raise TypeError(f"'kind' argument to {name} is not supported. Use stable=True or "
                        "stable=False to specify sort stability.")
    if order is not None:
        raise TypeError(f"'order' argument to {name} is not supported.")


def sort(a: Any, axis: int | None = -1, *, kind: None = None, order: None = None,
         stable: bool = True, descending: bool = False) -> Array:
    """Sorted copy along ``axis`` (flattened when ``None``); NaNs sort last.

    Raises:
      TypeError: ``kind`` or ``order`` is given (``stable`` chooses a stable sort).
    """
    _no_kind_or_order("sort", kind, order)
    a = _as_array("sort", a)
    if axis is None:
        a, axis = ravel(a), 0
    if a.ndim == 0:
        raise np.exceptions.AxisError("sort: axis -1 is out of bounds for a 0-d array")
    ax = canonical_axis(axis, a.ndim)
    out = lax.sort(a, ax, is_stable=stable)
    return lax.rev(out, (ax,)) if descending else out


def argsort(a: Any, axis: int | None = -1, *, kind: None = None, order: None = None,
            stable: bool = True, descending: bool = False, dtype: Any = None) -> Array:
    """Indices that sort ``a`` along ``axis`` (of the flattened array when ``None``), of
    the default integer dtype or ``dtype``.

    Raises:
      TypeError: ``kind`` or ``order`` is given (``stable`` chooses a stable sort).
    """
    _no_kind_or_order("argsort", kind, order)
    index_dtype = dt.canonicalize(dt.int64) if dtype is None else \
        check_user_dtype(dtype, "argsort")
    arr = _as_array("argsort", a)
    if axis is None:
        arr, axis = ravel(arr), 0
    if arr.ndim == 0:
        raise np.exceptions.AxisError("argsort: axis -1 is out of bounds for a 0-d array")
    ax = canonical_axis(axis, arr.ndim)
    idx = lax.broadcasted_iota(index_dtype, arr.shape, ax)
    if descending:
        # Reversing, sorting stably and reversing back keeps equal keys in order.
        arr, idx = lax.rev(arr, (ax,)), lax.rev(idx, (ax,))
        _, perm = lax.sort((arr, idx), ax, is_stable=stable, num_keys=1)
        return lax.rev(perm, (ax,))
    _, perm = lax.sort((arr, idx), ax, is_stable=stable, num_keys=1)
    return perm


def split(ary: Any, indices_or_sections: int | Sequence[int] | Any,
          axis: int = 0) -> list[Array]:
    """Split along ``axis`` into equal sections or at the given indices.

    Raises:
      ValueError: ``indices_or_sections`` sections do not divide the axis equally, or
        the indices decrease or leave the axis.
    """
    a = _as_array("split", ary)
    ax = canonical_axis(axis, a.ndim)
    n = a.shape[ax]
    if isinstance(indices_or_sections, list | tuple) or np.ndim(indices_or_sections) > 0:
        cuts = [operator.index(i) for i in np.asarray(indices_or_sections).tolist()]
        bounds = [0] + cuts + [n]
    else:
        # (operator.index is the check that the 0-d value is an integer.)
        sections = operator.index(indices_or_sections)  # type: ignore[arg-type]  # checked here
        if sections <= 0:
            raise ValueError(f"split: number of sections must be larger than 0, but got "
                             f"{sections}")
        if n % sections:
            raise ValueError(f"array split does not result in an equal division: an axis of "
                             f"size {n} into {sections} sections")
        bounds = [i * (n // sections) for i in range(sections + 1)]
    sizes = [hi - lo for lo, hi in zip(bounds, bounds[1:])]
    if any(d < 0 for d in sizes):
        raise ValueError(f"split: the indices {bounds[1:-1]} must be nondecreasing and "
                         f"within [0, {n}] for an axis of size {n} (section sizes {sizes})")
    return lax.split(a, sizes, ax)


def tile(A: Any, reps: int | Sequence[int]) -> Array:
    """``A`` repeated ``reps`` times along each axis."""
    a = _as_array("tile", A)
    r = _index_tuple(reps)
    nd = max(a.ndim, len(r))
    if a.ndim < nd:  # leading dimensions of 1, as JAX adds them
        a = lax.broadcast_in_dim(a, (1,) * (nd - a.ndim) + a.shape,
                                 tuple(range(nd - a.ndim, nd)))
    return lax.tile(a, (1,) * (nd - len(r)) + r)


def repeat(a: Any, repeats: Any, axis: int | None = None, *,
           total_repeat_length: int | None = None, out_sharding: Any = None) -> Array:
    """Each element repeated ``repeats`` times along ``axis`` (flattened when ``None``);
    ``repeats`` is an int or an array of one count per element, concrete unless
    ``total_repeat_length`` fixes the length of the result (then the result is cut to it,
    or padded by repeating the last element, as JAX's); its type sharded by
    ``out_sharding`` if given."""
    out = _repeat(a, repeats, axis, total_repeat_length)
    return out if out_sharding is None else reshard(out, out_sharding)


def _repeat(a: Any, repeats: Any, axis: int | None, total_repeat_length: int | None) -> Array:
    a = _as_array("repeat", a)
    if np.ndim(repeats) != 0 or isinstance(repeats, list | tuple):
        check_arraylike("repeat", repeats)
    if axis is None:
        a, axis = ravel(a), 0
    ax = canonical_axis(axis, a.ndim)
    if total_repeat_length is not None:
        return _repeat_to_length(a, repeats, ax, operator.index(total_repeat_length))
    s = a.shape
    if np.ndim(repeats) == 0:
        k = operator.index(repeats)
        if k < 0:
            raise ValueError(f"repeat: repeats may not contain negative values, but got {k}")
        new = s[:ax + 1] + (k,) + s[ax + 1:]
        dims = tuple(i for i in range(len(new)) if i != ax + 1)
        b = lax.broadcast_in_dim(a, new, dims)
        return reshape(b, s[:ax] + (s[ax] * k,) + s[ax + 1:])
    counts = np.broadcast_to(np.asarray(repeats).ravel(), (s[ax],)).tolist()
    if any(c < 0 for c in counts):
        raise ValueError(f"repeat: repeats may not contain negative values, but got {counts}")
    pieces = []
    for i, c in enumerate(counts):
        if c:
            piece = lax.slice_in_dim(a, i, i + 1, axis=ax)
            pieces.append(broadcast_to(piece, s[:ax] + (c,) + s[ax + 1:]))
    if not pieces:
        return lax.slice_in_dim(a, 0, 0, axis=ax)
    return pieces[0] if len(pieces) == 1 else lax.concatenate(pieces, ax)



def _repeat_to_length(a: Array, repeats: Any, ax: int, total: int) -> Array:
    """``repeat`` with a fixed result length (``repeats`` may be traced): element ``j`` of
    the result is element ``i`` of ``a``, for the last ``i`` whose run starts at or before
    ``j``."""
    n = a.shape[ax]
    if total == 0 or n == 0:
        return lax.slice_in_dim(a, 0, 0, axis=ax) if total == 0 else a
    counts = lax.convert_element_type(
        broadcast_to(ravel(_as_array("repeat", repeats)), (n,)), dt.int32)
    starts = lax.sub(lax.cumsum(counts), counts)
    # A mark where each run starts (runs starting past the end are dropped); counting
    # the marks up to j numbers the run j belongs to.
    dnums = ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(0,),
                                    scatter_dims_to_operand_dims=(0,))
    marks = lax.scatter_add(lax.full((total,), 0, dt.int32), reshape(starts, (n, 1)),
                            lax.full((n,), 1, dt.int32), dnums,
                            mode=GatherScatterMode.FILL_OR_DROP)
    which = lax.sub(lax.cumsum(marks), np.int32(1))
    return moveaxis(lax.index_take(a, [which], [ax]), 0, ax)


def trim_zeros(filt: Any, trim: str = "fb", axis: int | Sequence[int] | None = None) -> Array:
    """``filt`` without its leading (``'f'`` in ``trim``) and trailing (``'b'``) slices that
    are all zero along each axis of ``axis`` (every axis when ``None``).  The result's
    shape depends on the values, so ``filt`` must be concrete (not traced under ``jit``).
    """
    a = _as_array("trim_zeros", filt)
    axes = set(canonical_axes(axis, a.ndim))
    front, back = "f" in trim.lower(), "b" in trim.lower()
    if not axes or not (front or back):
        return a

    def kept(ax: int) -> slice:
        if ax not in axes:
            return slice(None)
        mask = a.any(axis=tuple(i for i in range(a.ndim) if i != ax))
        if not bool(mask.any()):
            return slice(0, 0)
        return slice(int(mask.argmax()) if front else None,
                     a.shape[ax] - int(mask[::-1].argmax()) if back else None)

    return a[tuple(kept(ax) for ax in range(a.ndim))]

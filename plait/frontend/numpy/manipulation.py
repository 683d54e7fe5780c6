"""Shape manipulation: reshape, transpose, concatenation, broadcasting, flipping, sorting."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from plait.errors import ArgumentError
from plait.ir import dtypes as dt
from plait.frontend import lax
from plait.frontend.array_base import Array
from plait.frontend.numpy._core import (canonical_axes, canonical_axis, ndim, promote, shape)

__all__ = ["reshape", "ravel", "transpose", "swapaxes", "moveaxis", "expand_dims", "squeeze",
           "concatenate", "stack", "hstack", "vstack", "broadcast_to", "broadcast_shapes",
           "broadcast_arrays", "flip", "atleast_1d", "atleast_2d", "sort", "argsort", "split",
           "tile", "repeat", "permute_dims", "concat"]


def _as_array(a: Any) -> Any:
    x, = promote("array", a)
    return x


def reshape(a: Any, shape_: Any, order: str = "C") -> Array:
    """The elements of ``a`` in a new shape; one dimension may be ``-1``."""
    if order != "C":
        raise NotImplementedError("reshape: only order='C' is supported")
    a = _as_array(a)
    dims = [int(shape_)] if isinstance(shape_, int | np.integer) else [int(d) for d in shape_]
    size = int(np.prod(shape(a)))
    if dims.count(-1) > 1:
        raise ArgumentError(f"reshape: expected at most one -1 in the new shape, but got {tuple(dims)}")
    if -1 in dims:
        rest = int(np.prod([d for d in dims if d != -1]))
        if rest == 0 or size % rest:
            raise ArgumentError(f"reshape: cannot reshape an array of size {size} into shape "
                                f"{tuple(dims)}")
        dims[dims.index(-1)] = size // rest
    if int(np.prod(dims)) != size:
        raise ArgumentError(f"reshape: cannot reshape an array of shape {shape(a)} (size {size}) "
                            f"into shape {tuple(dims)}")
    if tuple(dims) == shape(a):
        return a  # type: ignore[no-any-return]
    return lax.reshape(a, dims)  # type: ignore[no-any-return]


def ravel(a: Any) -> Array:
    """The elements as a 1-d array."""
    return reshape(a, (-1,))


def transpose(a: Any, axes: Sequence[int] | None = None) -> Array:
    """Permute dimensions (reverse them when ``axes`` is ``None``)."""
    a = _as_array(a)
    nd = ndim(a)
    perm = tuple(range(nd))[::-1] if axes is None else tuple(canonical_axis(x, nd) for x in axes)
    if sorted(perm) != list(range(nd)):
        raise ArgumentError(f"transpose: expected a permutation of {tuple(range(nd))}, but got "
                            f"{tuple(axes or ())}")
    if perm == tuple(range(nd)):
        return a  # type: ignore[no-any-return]
    return lax.transpose(a, perm)  # type: ignore[no-any-return]


permute_dims = transpose


def swapaxes(a: Any, axis1: int, axis2: int) -> Array:
    """Exchange two dimensions."""
    a = _as_array(a)
    nd = ndim(a)
    perm = list(range(nd))
    i, j = canonical_axis(axis1, nd), canonical_axis(axis2, nd)
    perm[i], perm[j] = perm[j], perm[i]
    return transpose(a, perm)


def moveaxis(a: Any, source: int | Sequence[int], destination: int | Sequence[int]) -> Array:
    """Move dimensions ``source`` to positions ``destination``."""
    a = _as_array(a)
    nd = ndim(a)
    src = [source] if isinstance(source, int) else list(source)
    dst = [destination] if isinstance(destination, int) else list(destination)
    src = [canonical_axis(s, nd) for s in src]
    dst = [canonical_axis(d, nd) for d in dst]
    if len(src) != len(dst):
        raise ArgumentError("moveaxis: expected as many source as destination axes")
    order = [i for i in range(nd) if i not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return transpose(a, order)


def expand_dims(a: Any, axis: int | Sequence[int]) -> Array:
    """Insert size-1 dimensions at ``axis``."""
    a = _as_array(a)
    axes = [axis] if isinstance(axis, int) else list(axis)
    nd = ndim(a) + len(axes)
    return lax.expand_dims(a, [canonical_axis(x, nd) for x in axes])  # type: ignore[no-any-return]


def squeeze(a: Any, axis: int | Sequence[int] | None = None) -> Array:
    """Remove size-1 dimensions (all of them, or those in ``axis``)."""
    a = _as_array(a)
    s = shape(a)
    if axis is None:
        axes = tuple(i for i, d in enumerate(s) if d == 1)
    else:
        axes = canonical_axes(axis, len(s))
        bad = [i for i in axes if s[i] != 1]
        if bad:
            raise ArgumentError(f"squeeze: expected size-1 dimensions, but dimension {bad[0]} of "
                                f"shape {s} has size {s[bad[0]]}")
    if not axes:
        return a  # type: ignore[no-any-return]
    return lax.squeeze(a, axes)  # type: ignore[no-any-return]


def concatenate(arrays: Sequence[Any], axis: int | None = 0) -> Array:
    """Join arrays along ``axis`` (flattened first when ``axis`` is ``None``)."""
    if not len(arrays):
        raise ArgumentError("concatenate: expected at least one array")
    xs = promote("concatenate", *arrays)
    if axis is None:
        xs = [ravel(x) for x in xs]
        axis = 0
    nd = ndim(xs[0])
    if nd == 0:
        raise ArgumentError("concatenate: zero-dimensional arrays cannot be concatenated")
    if any(ndim(x) != nd for x in xs):
        raise ArgumentError("concatenate: expected arrays of equal rank, but got shapes "
                            + ", ".join(str(shape(x)) for x in xs))
    if len(xs) == 1:
        return xs[0]  # type: ignore[no-any-return]
    return lax.concatenate(xs, canonical_axis(axis, nd))  # type: ignore[no-any-return]


concat = concatenate


def stack(arrays: Sequence[Any], axis: int = 0) -> Array:
    """Join arrays of equal shape along a new ``axis``."""
    if not len(arrays):
        raise ArgumentError("stack: expected at least one array")
    xs = [_as_array(x) for x in arrays]
    shapes = {shape(x) for x in xs}
    if len(shapes) != 1:
        raise ArgumentError(f"stack: expected arrays of equal shapes, but got {sorted(shapes)}")
    ax = canonical_axis(axis, ndim(xs[0]) + 1)
    return concatenate([expand_dims(x, ax) for x in xs], ax)


def hstack(arrays: Sequence[Any]) -> Array:
    """Concatenate along the second axis (the first for 1-d arrays)."""
    xs = [atleast_1d(x) for x in arrays]
    return concatenate(xs, 0 if ndim(xs[0]) == 1 else 1)


def vstack(arrays: Sequence[Any]) -> Array:
    """Concatenate along the first axis, after making arrays at least 2-d."""
    return concatenate([atleast_2d(x) for x in arrays], 0)


def atleast_1d(a: Any) -> Array:
    """``a`` with at least one dimension."""
    a = _as_array(a)
    return reshape(a, (1,)) if ndim(a) == 0 else a  # type: ignore[no-any-return]


def atleast_2d(a: Any) -> Array:
    """``a`` with at least two dimensions."""
    a = _as_array(a)
    return reshape(a, (1,) * (2 - ndim(a)) + shape(a)) if ndim(a) < 2 else a  # type: ignore[no-any-return]


def broadcast_shapes(*shapes: Sequence[int]) -> tuple[int, ...]:
    """The NumPy broadcast of ``shapes``.

    Raises:
      ValueError: the shapes are incompatible.
    """
    nd = max((len(s) for s in shapes), default=0)
    out = []
    for i in range(nd):
        dims = {s[len(s) - nd + i] for s in shapes if len(s) - nd + i >= 0}
        non1 = dims - {1}
        if len(non1) > 1:
            raise ValueError(f"Incompatible shapes for broadcasting: shapes={[tuple(s) for s in shapes]}")
        out.append(non1.pop() if non1 else 1)
    return tuple(out)


def broadcast_to(a: Any, shape_: Sequence[int]) -> Array:
    """``a`` broadcast to ``shape`` (NumPy rules)."""
    a = _as_array(a)
    target = tuple(int(d) for d in shape_)
    s = shape(a)
    if s == target:
        return a  # type: ignore[no-any-return]
    if broadcast_shapes(s, target) != target:
        raise ValueError(f"broadcast_to: cannot broadcast an array of shape {s} to shape {target}")
    lead = len(target) - len(s)
    dims = tuple(range(lead, len(target)))
    kept = [i for i, d in enumerate(s) if d == target[lead + i]]
    if len(kept) < len(s):
        a = lax.reshape(a, tuple(s[i] for i in kept))
        dims = tuple(lead + i for i in kept)
    return lax.broadcast_in_dim(a, target, dims)  # type: ignore[no-any-return]


def broadcast_arrays(*args: Any) -> list[Array]:
    """The arrays broadcast against each other."""
    xs = [_as_array(a) for a in args]
    s = broadcast_shapes(*[shape(x) for x in xs])
    return [broadcast_to(x, s) for x in xs]


def flip(a: Any, axis: int | Sequence[int] | None = None) -> Array:
    """Reverse the order of elements along ``axis`` (all axes when ``None``)."""
    a = _as_array(a)
    return lax.rev(a, canonical_axes(axis, ndim(a)))  # type: ignore[no-any-return]


def sort(a: Any, axis: int | None = -1, stable: bool = True) -> Array:
    """Sorted copy along ``axis`` (flattened when ``None``); NaNs sort last."""
    a = _as_array(a)
    if axis is None:
        a, axis = ravel(a), 0
    return lax.sort(a, canonical_axis(axis, ndim(a)), is_stable=stable)  # type: ignore[no-any-return]


def argsort(a: Any, axis: int | None = -1, stable: bool = True) -> Array:
    """Indices that sort ``a`` along ``axis``."""
    a = _as_array(a)
    if axis is None:
        a, axis = ravel(a), 0
    ax = canonical_axis(axis, ndim(a))
    idx = lax.broadcasted_iota(dt.canonicalize(dt.int64), shape(a), ax)
    _, perm = lax.sort((a, idx), ax, is_stable=stable, num_keys=1)
    return perm  # type: ignore[no-any-return]


def split(a: Any, indices_or_sections: int | Sequence[int], axis: int = 0) -> list[Array]:
    """Split along ``axis`` into equal sections or at the given indices."""
    a = _as_array(a)
    ax = canonical_axis(axis, ndim(a))
    n = shape(a)[ax]
    if isinstance(indices_or_sections, int):
        if n % indices_or_sections:
            raise ArgumentError(f"split: array of size {n} along axis {ax} does not divide into "
                                f"{indices_or_sections} equal sections")
        step = n // indices_or_sections
        cuts = list(range(step, n, step))
    else:
        cuts = [int(i) for i in indices_or_sections]
    bounds = [0] + cuts + [n]
    return [lax.slice_in_dim(a, max(0, min(lo, n)), max(0, min(max(lo, hi), n)), axis=ax)
            for lo, hi in zip(bounds, bounds[1:])]


def tile(a: Any, reps: int | Sequence[int]) -> Array:
    """``a`` repeated ``reps`` times along each axis."""
    a = _as_array(a)
    r = (reps,) if isinstance(reps, int) else tuple(reps)
    nd = max(ndim(a), len(r))
    r = (1,) * (nd - len(r)) + r
    s = (1,) * (nd - ndim(a)) + shape(a)
    a = reshape(a, s)
    expanded = []
    for rep, d in zip(r, s):
        expanded += [rep, d]
    b = lax.broadcast_in_dim(a, expanded, tuple(range(1, 2 * nd, 2)))
    return reshape(b, tuple(rep * d for rep, d in zip(r, s)))


def repeat(a: Any, repeats: int, axis: int | None = None) -> Array:
    """Each element repeated ``repeats`` times along ``axis`` (flattened when ``None``)."""
    a = _as_array(a)
    if axis is None:
        a, axis = ravel(a), 0
    ax = canonical_axis(axis, ndim(a))
    s = shape(a)
    new = s[:ax + 1] + (int(repeats),) + s[ax + 1:]
    dims = tuple(i for i in range(len(new)) if i != ax + 1)
    b = lax.broadcast_in_dim(a, new, dims)
    return reshape(b, s[:ax] + (s[ax] * int(repeats),) + s[ax + 1:])

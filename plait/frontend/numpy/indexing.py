"""``x[index]``: basic NumPy indexing (ints, slices, ``None``, ``...``, traced scalar ints).

As ``jax.numpy`` does, an index of static, in-bounds ints and slices becomes a
``slice`` (then ``rev``, ``squeeze``, ``expand_dims``); one with a traced int or a
static int out of bounds becomes a ``dynamic_slice`` over every axis, whose start
indices XLA clamps into bounds: ``jnp.arange(10.)[11]`` is the last element, and
``[-12]`` the first (JAX documents this, where NumPy raises ``IndexError``).
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from plait.frontend import lax
from plait.frontend.core.array_base import Array
from plait.frontend.core.slices import Slice
from plait.frontend.core.tracing import Tracer
from plait.frontend.numpy._core import aval_of, ndim, promote, shape
from plait.frontend.numpy.gather_indexing import gather_getitem, is_advanced
from plait.frontend.numpy.slice_indexing import check_size, has_slice, peel
from plait.ir import dtypes as dt

__all__ = ["getitem"]


def _static_int(e: Any) -> int | None:
    if isinstance(e, bool | np.bool_):
        return None
    if isinstance(e, int | np.integer):
        return int(e)
    if isinstance(e, np.ndarray) and e.ndim == 0 and dt.is_integer(e.dtype):
        return int(e)
    av = aval_of(e)
    if av is not None and type(e) is not Tracer and av.shape == () and dt.is_integer(av.dtype):
        return int(np.asarray(e))
    return None


def _is_dynamic_int(e: Any) -> bool:
    av = aval_of(e)
    return av is not None and av.shape == () and dt.is_integer(av.dtype)


def _expand(index: Any, nd: int) -> list[Any]:
    idx = list(index) if isinstance(index, tuple) else [index]
    for e in idx:
        if not (e is None or e is Ellipsis or isinstance(e, slice | Slice)
                or _static_int(e) is not None or _is_dynamic_int(e)):
            raise _bad_index(e)
    if sum(e is Ellipsis for e in idx) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    n_real = sum(e is not None and e is not Ellipsis for e in idx)
    if n_real > nd:
        raise IndexError(f"too many indices for an array of {nd} dimensions: {n_real} were given")
    if any(e is Ellipsis for e in idx):
        k = next(i for i, e in enumerate(idx) if e is Ellipsis)
        idx[k:k + 1] = [slice(None)] * (nd - n_real)
    else:
        idx += [slice(None)] * (nd - n_real)
    return idx


def _bad_index(e: Any) -> TypeError:
    # Array-like and numeric scalars reach here only when they are not integers (array and
    # boolean indices are advanced indexing, handled by gather_indexing).
    if isinstance(e, str):
        return TypeError(f"plait does not support string indexing; got idx={e!r}")
    av = aval_of(e)
    if av is not None or isinstance(e, float | complex | np.generic | np.ndarray):
        dtype = av.dtype if av is not None else np.result_type(e)
        return TypeError(f"Indexer must have integer or boolean type, got indexer with type "
                         f"{np.dtype(dtype).name}")
    return TypeError(f"only integers, slices (`:`), ellipsis (`...`), None and integer or "
                     f"boolean arrays are valid indices, but got {e!r} of type "
                     f"{type(e).__name__}")


def getitem(x: Array, index: Any) -> Array:
    """``x[index]``; out-of-bounds ints are clamped, as in JAX."""
    x, = promote("getitem", x)
    if isinstance(index, list):
        raise TypeError("Using a non-tuple sequence for multidimensional indexing is not "
                        "allowed; use `arr[array(seq)]` instead of `arr[seq]`. See "
                        "https://github.com/jax-ml/jax/issues/4564 for more information.")
    if has_slice(index):
        tup = index if isinstance(index, tuple) else (index,)
        if is_advanced(tup) or any(type(e) is Slice and e.stride != 1 for e in tup):
            return peel(x, tup, getitem, write=False)
    if is_advanced(index):
        return gather_getitem(x, index)
    s = shape(x)
    idx = _expand(index, ndim(x))
    dims = [e for e in idx if e is not None]
    static = all(isinstance(e, slice) or _in_bounds(_static_int(e), n) for e, n in zip(dims, s))
    if not static and all(not isinstance(e, slice) or e.step in (None, 1, -1) for e in dims):
        return _dynamic_getitem(x, idx, s)
    if has_slice(index):  # (beside a strided slice)
        return peel(x, index if isinstance(index, tuple) else (index,), getitem, write=False)
    return _static_getitem(x, idx, s)


def _in_bounds(i: int | None, n: int) -> bool:
    return i is not None and -n <= i < n


def _dynamic_getitem(x: Array, idx: list[Any], s: tuple[int, ...]) -> Array:
    """JAX's dynamic-slice path: a start index and a size for every axis."""
    starts: list[Any] = []
    sizes: list[int] = []
    revs: list[int] = []
    squeezes: list[int] = []
    new_axes: list[int] = []
    for e in idx:
        if e is None:
            new_axes.append(len(starts) - len(squeezes) + len(new_axes))
            continue
        axis = len(starts)
        if type(e) is Slice:
            check_size(e, s[axis], axis)
            starts.append(e.start)
            sizes.append(e.size)
            continue
        if isinstance(e, slice):
            start, stop, step = e.indices(s[axis])
            if step < 0:  # the same elements in increasing order, reversed after
                starts.append(stop + 1)
                sizes.append(max(0, start - stop))
                revs.append(axis)
            else:
                starts.append(start)
                sizes.append(max(0, stop - start))
            continue
        if s[axis] == 0:
            raise IndexError(f"index is out of bounds for axis {axis} with size 0")
        i = _static_int(e)
        # A static index is a constant array (not a Python int, which dynamic_slice would
        # fold): its sign is tested in the program, as in JAX's printed jaxprs.
        starts.append(np.asarray(i, dt.int32) if i is not None else e)
        sizes.append(1)
        squeezes.append(axis)
    if len(starts) > 1:  # dynamic_slice needs start indices of one dtype
        starts = [lax.convert_element_type(i, dt.int32) for i in starts]
    x = lax.dynamic_slice(x, starts, sizes)
    if revs:
        x = lax.rev(x, revs)
    if squeezes:
        x = lax.squeeze(x, squeezes)
    if new_axes:
        x = lax.expand_dims(x, new_axes)
    return x


def _static_getitem(x: Array, idx: list[Any], s: tuple[int, ...]) -> Array:
    """Slices (then ``rev``, ``squeeze``, ``expand_dims``); a traced or out-of-bounds int
    next to a strided slice (a gather in JAX) is a ``dynamic_slice`` of the sliced array."""
    starts, limits, strides, revs, squeezes, dynamic = [], [], [], [], [], []
    new_axes: list[int] = []
    dim = 0
    out_pos = 0
    for e in idx:
        if e is None:
            new_axes.append(out_pos)
            out_pos += 1
            continue
        n = s[dim]
        i = _static_int(e)
        if isinstance(e, slice):
            if e.step is not None and operator.index(e.step) == 0:
                raise ValueError("slice step cannot be zero")
            # The bounds JAX gives lax.slice (a limit at the stop, not at the last element
            # taken), so that the printed equation is JAX's.
            start, stop, step = e.indices(n)
            if step > 0:
                starts.append(start)
                limits.append(max(start, stop))
                strides.append(step)
            else:
                # The same elements in increasing order, reversed after slicing.
                first = min(n, stop + 1 + abs(start - stop - 1) % -step)
                starts.append(first)
                limits.append(max(first, start + 1))
                strides.append(-step)
                revs.append(dim)
            out_pos += 1
        elif i is not None and _in_bounds(i, n):
            i %= n
            starts.append(i)
            limits.append(i + 1)
            strides.append(1)
            squeezes.append(dim)
        else:
            if n == 0:
                raise IndexError(f"index is out of bounds for axis {dim} with size 0")
            dynamic.append((dim, e if i is None else np.asarray(i, dt.int32)))
            starts.append(0)
            limits.append(n)
            strides.append(1)
            squeezes.append(dim)
        dim += 1
    if starts != [0] * len(s) or limits != list(s) or any(st != 1 for st in strides):
        x = lax.slice(x, starts, limits, None if all(st == 1 for st in strides) else strides)
    if revs:
        x = lax.rev(x, revs)
    if dynamic:
        cur = shape(x)
        index_ops: list[Any] = [0] * len(cur)
        sizes = list(cur)
        for d, e in dynamic:
            ix = e
            if not dt.is_signed(ix.dtype) or ix.dtype != dt.int32:
                ix = lax.convert_element_type(ix, dt.int32)
            index_ops[d] = lax.select(lax.lt(ix, 0), lax.add(ix, cur[d]), ix)
            sizes[d] = 1
        x = lax.bind_dynamic_slice(x, index_ops, sizes)
    if squeezes:
        x = lax.squeeze(x, squeezes)
    if new_axes:
        x = lax.expand_dims(x, new_axes)
    return x

"""The Refs a Pallas kernel gets, and the views ``ref.at[idx]`` makes of them.

A kernel's block is a :class:`~plait.frontend.core.refs.Ref` of the kernel's trace
(reads stage nothing, writes stage functional updates), with ``.at[idx]`` views as in
``jax.experimental.pallas``: a view reads and writes the part of the Ref its indices
name, through any number of ``.at[]``s.  Masked ``load`` and ``store`` (Triton's) read
and write a view without clamping its ``ds`` slices into bounds, so lanes the mask
keeps are the ones they name.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from plait.frontend import lax
from plait.frontend.core import refs as R
from plait.frontend.core.host_values import value_aval
from plait.frontend.core.slices import Slice
from plait.frontend.numpy import where
from plait.frontend.numpy.slice_indexing import slice_axes
from plait.ir import dtypes as dt
from plait.ir.errors import PallasError, RefError

__all__ = ["BlockRef", "RefView", "as_view", "load", "store"]


class BlockRef(R.Ref):
    """A Ref a Pallas kernel gets: its operand's block, or a scratch buffer."""

    __slots__ = ()

    @property
    def at(self) -> _ViewMaker:
        """``ref.at[idx]``: a view of the indexed part, read and written as a Ref."""
        return _ViewMaker(RefView(self, ()))


class _ViewMaker:
    __slots__ = ("view",)

    def __init__(self, view: RefView) -> None:
        self.view = view

    def __getitem__(self, index: Any) -> RefView:
        return RefView(self.view.ref, (*self.view.indices, index))


class RefView:
    """A part of a :class:`BlockRef`: ``ref.at[i].at[j]`` reads as ``ref[...][i][j]``."""

    __slots__ = ("ref", "indices")

    def __init__(self, ref: R.Ref, indices: tuple[Any, ...]) -> None:
        self.ref = ref
        self.indices = indices

    @property
    def at(self) -> _ViewMaker:
        """A view of a part of this view."""
        return _ViewMaker(self)

    def _value(self) -> Any:
        v = R.read(self.ref)
        for i in self.indices:
            v = v[i]
        return v

    @property
    def shape(self) -> tuple[int, ...]:
        """The shape of the part viewed (a slice past the end counts whole, as it does for
        a masked load)."""
        shape = self.ref.shape
        for index in self.indices:
            tup = index if isinstance(index, tuple) else (index,)
            padded = list(shape)
            for pos, axis in slice_axes(tup, len(shape)):
                padded[axis] += tup[pos].extent
            shape = R.indexed_shape(tuple(padded), index)
        return shape

    @property
    def dtype(self) -> np.dtype[Any]:
        """The Ref's dtype."""
        return self.ref.dtype

    @property
    def ndim(self) -> int:
        """The rank of the part viewed."""
        return len(self.shape)

    def __getitem__(self, index: Any) -> Any:
        return R.get(R.Ref(self._value()), index)

    def __setitem__(self, index: Any, value: Any) -> None:
        R.write(self.ref, _written(R.read(self.ref), self.indices, index, value))

    def __repr__(self) -> str:
        return f"RefView(shape={self.shape}, dtype={self.dtype})"


def _written(whole: Any, indices: Sequence[Any], index: Any, value: Any) -> Any:
    """``whole`` with ``value`` written at ``whole[indices...][index]``, checked as a Ref
    write is."""
    if not indices:
        tmp = R.Ref(whole)
        R.set_(tmp, index, value)
        return R.read(tmp)
    part = _written(whole[indices[0]], indices[1:], index, value)
    return whole.at[indices[0]].set(part)


def as_view(ref: Any, what: str) -> RefView:
    """``ref`` (a Pallas Ref or a view of one) as a view."""
    if isinstance(ref, RefView):
        return ref
    if isinstance(ref, R.Ref):
        return RefView(ref, ())
    raise PallasError(f"{what}: expected a Ref of a Pallas kernel or a view of one "
                      f"(ref.at[...]), but got {type(ref).__name__}")


def _room(value: Any, index: Any) -> tuple[Any, list[int]]:
    """``value`` padded after each axis a ``Slice`` of ``index`` takes, by that slice's
    extent, so that it is not clamped back into bounds; and the padding per axis."""
    shape = value_aval(value).shape
    pads = [0] * len(shape)
    tup = index if isinstance(index, tuple) else (index,)
    for pos, axis in slice_axes(tup, len(shape)):
        pads[axis] = tup[pos].extent
    if not any(pads):
        return value, pads
    zero = np.zeros((), value_aval(value).dtype)
    return lax.pad(value, zero, [(0, p, 0) for p in pads]), pads


def _is_scalar_int(e: Any) -> bool:
    if isinstance(e, int | np.integer) and not isinstance(e, bool):
        return True
    av = getattr(e, "aval", None)
    return av is not None and getattr(av, "shape", None) == () and dt.is_integer(av.dtype)


def _split(index: Any, ndim: int) -> tuple[tuple[Any, ...], tuple[Any, ...]] | None:
    """``index`` (of ints, slices and ``Slice``s) as two: the ints and slices, then the
    ``Slice``s on what they leave, so that only that (smaller) part is padded; ``None``
    for other indices, and for those without ints (nothing to take first)."""
    tup = index if isinstance(index, tuple) else (index,)
    if any(e is Ellipsis for e in tup):
        k = tup.index(Ellipsis)
        tup = tup[:k] + (slice(None),) * (ndim - len(tup) + 1) + tup[k + 1:]
    if not all(isinstance(e, slice | Slice) or _is_scalar_int(e) for e in tup) or not any(
            _is_scalar_int(e) for e in tup):
        return None
    pre = tuple(slice(None) if type(e) is Slice else e for e in tup)
    post = tuple(e if type(e) is Slice else slice(None) for e in tup
                 if isinstance(e, slice | Slice))
    return pre, post


def _masked_get(value: Any, indices: Sequence[Any]) -> Any:
    for index in indices:
        split = _split(index, len(value_aval(value).shape))
        if split is not None:
            value, index = value[split[0]], split[1]
        value = _room(value, index)[0][index]
    return value


def _masked_put(value: Any, indices: Sequence[Any], new: Callable[[Any], Any]) -> Any:
    """``value`` with its part at ``indices`` replaced by ``new(part)``."""
    if not indices:
        return new(value)
    split = _split(indices[0], len(value_aval(value).shape))
    if split is not None:
        pre, post = split
        return value.at[pre].set(_masked_put(value[pre], (post, *indices[1:]), new))
    padded, pads = _room(value, indices[0])
    part = _masked_put(padded[indices[0]], indices[1:], new)
    padded = padded.at[indices[0]].set(part)
    if not any(pads):
        return padded
    return lax.slice(padded, [0] * len(pads), value_aval(value).shape)


def load(ref: Any, *, mask: Any = None, other: Any = None, cache_modifier: str | None = None,
         eviction_policy: str | None = None, volatile: bool = False) -> Any:
    """The value of a Ref or view; where ``mask`` is False, ``other`` (or 0) instead, and
    the view's elements there need not exist (Triton's ``load``)."""
    view = as_view(ref, "load")
    if mask is None:
        return view[...]
    value = _masked_get(R.read(view.ref), view.indices)
    fill = np.zeros((), value_aval(value).dtype) if other is None else other
    return where(mask, value, fill).astype(value_aval(value).dtype)


def store(ref: Any, val: Any, *, mask: Any = None, eviction_policy: str | None = None) -> None:
    """Write ``val`` to a Ref or view; where ``mask`` is False nothing is written, and the
    view's elements there need not exist (Triton's ``store``)."""
    view = as_view(ref, "store")
    if mask is None:
        view[...] = val
        return
    shape = view.shape
    if tuple(np.shape(val)) not in ((), shape):
        raise RefError(f"Invalid shape for a masked store: expected the view's shape {shape}, "
                       f"but got a value of shape {tuple(np.shape(val))}")
    R.write(view.ref, _masked_put(R.read(view.ref), view.indices,
                                  lambda old: where(mask, val, old).astype(view.dtype)))

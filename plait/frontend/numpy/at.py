"""``x.at[index]``: functional indexed updates, as in ``jax.numpy``.

``x.at[idx].set(v)`` is the array ``x`` with ``x[idx]`` replaced by ``v`` (``x``
itself is unchanged).  Each update is one scatter over the windows that
``x[idx]`` gathers: repeated indices accumulate for ``add`` and ``multiply``,
and out-of-bounds indices are dropped unless ``mode='clip'``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from plait.frontend import lax
from plait.frontend.core.array_base import Array
from plait.frontend.core.promotion import result_type_info
from plait.frontend.numpy._core import as_array, aval_of, promote, shape
from plait.frontend.numpy.arithmetic import power
from plait.frontend.numpy.gather_indexing import gather_getitem, index_to_gather
from plait.frontend.numpy.manipulation import broadcast_to
from plait.frontend.numpy.slice_indexing import has_slice, peel
from plait.frontend.numpy.ufuncs import divide
from plait.ir import config
from plait.ir.primitives.indexing import GatherScatterMode, ScatterDimensionNumbers

__all__ = ["IndexUpdateHelper", "IndexUpdateRef"]

Mode = str | GatherScatterMode | None


class IndexUpdateHelper:
    """What ``x.at`` returns: index it to get an :class:`IndexUpdateRef`."""

    __slots__ = ("array",)

    def __init__(self, array: Array) -> None:
        self.array = array

    def __getitem__(self, index: Any) -> IndexUpdateRef:
        return IndexUpdateRef(self.array, index)

    def __repr__(self) -> str:
        return f"_IndexUpdateHelper({self.array!r})"


class IndexUpdateRef:
    """``x.at[index]``: its methods return updated copies of ``x``."""

    __slots__ = ("array", "index")

    def __init__(self, array: Array, index: Any) -> None:
        self.array = array
        self.index = index

    def __repr__(self) -> str:
        return f"_IndexUpdateRef({self.array!r}, {self.index!r})"

    def get(self, *, indices_are_sorted: bool = False, unique_indices: bool = False,
            mode: Mode = None, fill_value: Any = None, out_sharding: None = None,
            wrap_negative_indices: bool = True) -> Array:
        """``x[index]``, with the gather's out-of-bounds ``mode`` and ``fill_value``."""
        x, = promote("at.get", self.array)
        _no_sharding(out_sharding)
        if has_slice(self.index):
            def get(part: Array, rest: tuple[Any, ...]) -> Array:
                return IndexUpdateRef(part, rest).get(
                    indices_are_sorted=indices_are_sorted, unique_indices=unique_indices,
                    mode=mode, fill_value=fill_value, wrap_negative_indices=wrap_negative_indices)
            index = self.index if isinstance(self.index, tuple) else (self.index,)
            return peel(x, index, get, write=False)
        return gather_getitem(x, self.index, mode=mode, fill_value=fill_value,
                              indices_are_sorted=indices_are_sorted,
                              unique_indices=unique_indices,
                              normalize=wrap_negative_indices)

    def set(self, values: Any, *, indices_are_sorted: bool = False,
            unique_indices: bool = False, mode: Mode = None, out_sharding: None = None,
            wrap_negative_indices: bool = True) -> Array:
        """``x`` with ``x[index] = values``."""
        return _update(self, values, lax.scatter, indices_are_sorted, unique_indices, mode,
                       wrap_negative_indices, out_sharding)

    def add(self, values: Any, *, indices_are_sorted: bool = False,
            unique_indices: bool = False, mode: Mode = None, out_sharding: None = None,
            wrap_negative_indices: bool = True) -> Array:
        """``x`` with ``x[index] += values`` (repeated indices add up)."""
        return _update(self, values, lax.scatter_add, indices_are_sorted, unique_indices, mode,
                       wrap_negative_indices, out_sharding)

    def subtract(self, values: Any, *, indices_are_sorted: bool = False,
                 unique_indices: bool = False, mode: Mode = None, out_sharding: None = None,
            wrap_negative_indices: bool = True) -> Array:
        """``x`` with ``x[index] -= values``."""
        return _update(self, values, lax.scatter_sub, indices_are_sorted, unique_indices, mode,
                       wrap_negative_indices, out_sharding)

    def multiply(self, values: Any, *, indices_are_sorted: bool = False,
                 unique_indices: bool = False, mode: Mode = None, out_sharding: None = None,
            wrap_negative_indices: bool = True) -> Array:
        """``x`` with ``x[index] *= values`` (repeated indices multiply up)."""
        return _update(self, values, lax.scatter_mul, indices_are_sorted, unique_indices, mode,
                       wrap_negative_indices, out_sharding)

    mul = multiply

    def divide(self, values: Any, *, indices_are_sorted: bool = False,
               unique_indices: bool = False, mode: Mode = None, out_sharding: None = None,
            wrap_negative_indices: bool = True) -> Array:
        """``x`` with ``x[index] /= values``."""
        ones = IndexUpdateRef(lax.full_like(self.array, 1), self.index)
        return divide(self.array, _update(ones, values, lax.scatter_mul, indices_are_sorted,
                                          unique_indices, mode, wrap_negative_indices,
                                          out_sharding))

    def power(self, values: Any, *, indices_are_sorted: bool = False,
              unique_indices: bool = False, mode: Mode = None, out_sharding: None = None,
            wrap_negative_indices: bool = True) -> Array:
        """``x`` with ``x[index] **= values``."""
        ones = IndexUpdateRef(lax.full_like(self.array, 1), self.index)
        return power(self.array, _update(ones, values, lax.scatter_mul, indices_are_sorted,
                                          unique_indices, mode, wrap_negative_indices,
                                          out_sharding))

    def min(self, values: Any, *, indices_are_sorted: bool = False,
            unique_indices: bool = False, mode: Mode = None, out_sharding: None = None,
            wrap_negative_indices: bool = True) -> Array:
        """``x`` with ``x[index] = minimum(x[index], values)``."""
        return _update(self, values, lax.scatter_min, indices_are_sorted, unique_indices, mode,
                       wrap_negative_indices, out_sharding)

    def max(self, values: Any, *, indices_are_sorted: bool = False,
            unique_indices: bool = False, mode: Mode = None, out_sharding: None = None,
            wrap_negative_indices: bool = True) -> Array:
        """``x`` with ``x[index] = maximum(x[index], values)``."""
        return _update(self, values, lax.scatter_max, indices_are_sorted, unique_indices, mode,
                       wrap_negative_indices, out_sharding)

    def apply(self, func: Callable[[Any], Any], *, indices_are_sorted: bool = False,
              unique_indices: bool = False, mode: Mode = None,
              wrap_negative_indices: bool = True) -> Array:
        """``x`` with ``func`` applied to ``x[index]`` (once per repeated index)."""
        def op(x: Any, idx: Any, y: Any, dn: ScatterDimensionNumbers, **kw: Any) -> Array:
            return lax.scatter_apply(x, idx, func, dn, update_shape=shape(y), **kw)
        zeros = lax.full((), 0, aval_of(as_array(self.array)).dtype)  # type: ignore[union-attr]  # an Array
        return _update(self, zeros, op, indices_are_sorted, unique_indices, mode,
                       wrap_negative_indices)


def _no_sharding(out_sharding: None) -> None:
    if out_sharding is not None:
        raise NotImplementedError("out_sharding= is not supported yet (plait runs on one "
                                  "device); leave it None")


def _update(ref: IndexUpdateRef, values: Any, scatter: Callable[..., Array],
            indices_are_sorted: bool, unique_indices: bool, mode: Mode,
            wrap_negative_indices: bool = True, out_sharding: None = None) -> Array:
    _no_sharding(out_sharding)
    x = as_array(ref.array)
    if has_slice(ref.index):
        # The part a Slice names is updated by the rest of the index, then written back.
        def apply(part: Array, rest: tuple[Any, ...]) -> Array:
            return _update(IndexUpdateRef(part, rest), values, scatter, indices_are_sorted,
                           unique_indices, mode, wrap_negative_indices)
        index = ref.index if isinstance(ref.index, tuple) else (ref.index,)
        return peel(x, index, apply, write=True)
    xa = x.aval
    y = as_array(values)
    ix = index_to_gather(xa.shape, ref.index, normalize=wrap_negative_indices)
    if 0 in ix.slice_shape:
        return x
    if ix.scalar_bool_dims:
        x = lax.expand_dims(x, ix.scalar_bool_dims)
    if config.numpy_dtype_promotion() == "strict":
        # JAX promotes the operand and the updates together before scattering, so
        # strict promotion refuses updates of another dtype.
        result_type_info([(xa.dtype, xa.weak_type), (y.aval.dtype, y.aval.weak_type)])
    if y.aval.dtype != xa.dtype:
        y = lax.convert_element_type(y, xa.dtype)
    y = broadcast_to(y, ix.slice_shape)
    if ix.newaxis_dims:
        y = lax.squeeze(y, ix.newaxis_dims)
    if ix.reversed_y_dims:
        y = lax.rev(y, ix.reversed_y_dims)
    dn = ScatterDimensionNumbers(update_window_dims=ix.dnums.offset_dims,
                                 inserted_window_dims=ix.dnums.collapsed_slice_dims,
                                 scatter_dims_to_operand_dims=ix.dnums.start_index_map)
    out = scatter(x, ix.gather_indices, y, dn,
                  indices_are_sorted=indices_are_sorted or not ix.advanced,
                  unique_indices=unique_indices or not ix.advanced, mode=mode)
    if ix.scalar_bool_dims:
        out = lax.squeeze(out, ix.scalar_bool_dims)
    return out

"""``gather`` and the ``scatter`` family: XLA's general indexed reads and writes.

The parameters are JAX 0.10.2's: dimension numbers as
:class:`GatherDimensionNumbers` / :class:`ScatterDimensionNumbers` (printed as
their ``repr``), the out-of-bounds policy as a :class:`GatherScatterMode`, and
for scatters the combining function as ``update_jaxpr`` (``None`` for a plain
``scatter``, which overwrites).  As in JAX, the index vector is always the last
dimension of the indices.
"""

from __future__ import annotations

import enum
import functools
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

from plait.ir import dtypes as dt
from plait.ir.avals import ShapedArray, shaped
from plait.ir.builder import Builder, new_vars
from plait.ir.jaxpr import ClosedJaxpr, Jaxpr
from plait.ir.params import ParamDef, ParsedCall, decode_bool, decode_ints
from plait.ir.primitive import Primitive
from plait.ir.primitives._typing import INT, check_dtype, check_same_dtypes, fail
from plait.ir.primitives.elementwise import add_p, max_p, min_p, mul_p, sub_p

__all__ = ["GatherDimensionNumbers", "ScatterDimensionNumbers", "GatherScatterMode",
           "gather_p", "scatter_p", "scatter_add_p", "scatter_sub_p", "scatter_mul_p",
           "scatter_min_p", "scatter_max_p", "SCATTERS", "window_sizes", "inverse_gather",
           "default_fill_value", "combiner_jaxpr"]


class GatherDimensionNumbers(NamedTuple):
    """How a ``gather`` maps operand, indices and output dimensions (XLA's meaning)."""

    offset_dims: tuple[int, ...]
    """Output dimensions that index within each gathered slice, in increasing order."""
    collapsed_slice_dims: tuple[int, ...]
    """Operand dimensions of slice size 1 that the output drops."""
    start_index_map: tuple[int, ...]
    """For each entry of an index vector, the operand dimension it starts."""
    operand_batching_dims: tuple[int, ...] = ()
    """Operand dimensions paired one to one with index batch dimensions."""
    start_indices_batching_dims: tuple[int, ...] = ()
    """The index dimensions paired with :attr:`operand_batching_dims`."""


class ScatterDimensionNumbers(NamedTuple):
    """How a scatter maps operand, indices and updates dimensions (XLA's meaning)."""

    update_window_dims: tuple[int, ...]
    """Updates dimensions that index within each window, in increasing order."""
    inserted_window_dims: tuple[int, ...]
    """Operand dimensions of window size 1 that the updates do not have."""
    scatter_dims_to_operand_dims: tuple[int, ...]
    """For each entry of an index vector, the operand dimension it starts."""
    operand_batching_dims: tuple[int, ...] = ()
    """Operand dimensions paired one to one with index batch dimensions."""
    scatter_indices_batching_dims: tuple[int, ...] = ()
    """The index dimensions paired with :attr:`operand_batching_dims`."""


class GatherScatterMode(enum.Enum):
    """What happens to out-of-bounds indices.

    ``CLIP`` clamps each start so the whole window is in bounds;
    ``FILL_OR_DROP`` makes a gather return ``fill_value`` for the whole window
    and a scatter skip the whole window; ``PROMISE_IN_BOUNDS`` promises they do
    not occur (XLA then clamps gathers and drops scatters).
    """

    CLIP = 1
    FILL_OR_DROP = 2
    PROMISE_IN_BOUNDS = 3
    ONE_HOT = 4

    @staticmethod
    def from_any(s: str | GatherScatterMode | None) -> GatherScatterMode:
        """The mode named by ``s`` (``'clip'``, ``'fill'``/``'drop'``/``None``,
        ``'promise_in_bounds'``, ``'one_hot'``), as ``jax.lax`` reads it."""
        if isinstance(s, GatherScatterMode):
            return s
        named = {"clip": GatherScatterMode.CLIP, None: GatherScatterMode.FILL_OR_DROP,
                 "fill": GatherScatterMode.FILL_OR_DROP, "drop": GatherScatterMode.FILL_OR_DROP,
                 "promise_in_bounds": GatherScatterMode.PROMISE_IN_BOUNDS,
                 "one_hot": GatherScatterMode.ONE_HOT}
        if isinstance(s, str | None) and s in named:
            return named[s]
        raise ValueError(f'Unknown gather mode "{s}"')


def default_fill_value(dtype: np.dtype[Any]) -> Any:
    """The value a ``FILL_OR_DROP`` gather reads out of bounds when none is given
    (JAX's choice): NaN, the lowest signed or highest unsigned integer, or True."""
    if dt.is_inexact(dtype):
        return float("nan")
    if dtype == dt.bool_:
        return True
    lo, hi = dt.int_range(dtype)
    return lo if dt.is_signed(dtype) else hi


def _decode_record(cls: Any, value: Any) -> Any:
    if isinstance(value, cls):
        return value
    if not isinstance(value, ParsedCall) or value.name != cls.__name__:
        raise ValueError(f"expected {cls.__name__}(...), but got {value!r}")
    kwargs = dict(value.kwargs)
    unknown = set(kwargs) - set(cls._fields)
    if unknown:
        raise ValueError(f"expected fields among {cls._fields}, but got {sorted(unknown)}")
    return cls(**{k: decode_ints(v) for k, v in kwargs.items()})


def _decode_gather_dnums(value: Any) -> GatherDimensionNumbers:
    d: GatherDimensionNumbers = _decode_record(GatherDimensionNumbers, value)
    return d


def _decode_scatter_dnums(value: Any) -> ScatterDimensionNumbers:
    d: ScatterDimensionNumbers = _decode_record(ScatterDimensionNumbers, value)
    return d


def _decode_mode(value: Any) -> GatherScatterMode:
    if isinstance(value, GatherScatterMode):
        return value
    prefix = "GatherScatterMode."
    if isinstance(value, str) and value.startswith(prefix):
        try:
            return GatherScatterMode[value[len(prefix):]]
        except KeyError:
            pass
    raise ValueError(f"expected a GatherScatterMode such as GatherScatterMode.CLIP, "
                     f"but got {value!r}")


def _decode_fill_value(value: Any) -> Any:
    if value is None or type(value) in (int, float, bool, complex):
        return value
    raise ValueError(f"expected None or a Python scalar, but got {value!r}")


def _decode_update_jaxpr(value: Any) -> Jaxpr | None:
    if value is None or isinstance(value, Jaxpr):
        return value
    if isinstance(value, ClosedJaxpr) and not value.consts:
        return value.jaxpr
    raise ValueError(f"expected None or a jaxpr, but got {value!r}")


def _decode_update_consts(value: Any) -> tuple[()]:
    if value != () and value != []:
        raise ValueError(f"expected () (plait's update jaxprs have no constants), "
                         f"but got {value!r}")
    return ()


# -- shared checks ----------------------------------------------------------------

def _check_sorted_dims(dims: Sequence[int], rank: int, what: str) -> None:
    if any(type(d) is not int for d in dims) or list(dims) != sorted(set(dims)):
        fail(f"expected {what} to be distinct and increasing, but got {tuple(dims)}")
    if dims and not 0 <= dims[0] <= dims[-1] < rank:
        fail(f"expected {what} in [0, {rank}), but got {tuple(dims)}")


def _check_dims(dims: Sequence[int], rank: int, what: str) -> None:
    if any(type(d) is not int for d in dims) or len(set(dims)) != len(dims):
        fail(f"expected {what} to be distinct ints, but got {tuple(dims)}")
    if any(not 0 <= d < rank for d in dims):
        fail(f"expected {what} in [0, {rank}), but got {tuple(dims)}")


def _check_indices(indices: ShapedArray, index_map: Sequence[int], what: str) -> None:
    check_dtype(indices, INT, "indices")
    if indices.ndim == 0:
        fail(f"expected indices with a trailing index vector dimension, but got "
             f"{indices.str_short()}")
    if indices.shape[-1] != len(index_map):
        fail(f"expected the last dimension of the indices to have size "
             f"len({what}) = {len(index_map)}, but got {indices.str_short()}")


def _check_batching(operand: ShapedArray, indices: ShapedArray, operand_dims: Sequence[int],
                    index_dims: Sequence[int], index_what: str) -> None:
    _check_sorted_dims(operand_dims, operand.ndim, "operand_batching_dims")
    _check_dims(index_dims, indices.ndim - 1, index_what)
    if len(operand_dims) != len(index_dims):
        fail(f"expected as many {index_what} as operand_batching_dims "
             f"{tuple(operand_dims)}, but got {tuple(index_dims)}")
    for o, i in zip(operand_dims, index_dims):
        if operand.shape[o] != indices.shape[i]:
            fail(f"expected operand dimension {o} of {operand.str_short()} to equal indices "
                 f"dimension {i} of {indices.str_short()}, but got {operand.shape[o]} and "
                 f"{indices.shape[i]}")


# -- gather --------------------------------------------------------------------------

def _gather_rule(operand: ShapedArray, indices: ShapedArray, *,
                 dimension_numbers: GatherDimensionNumbers, slice_sizes: tuple[int, ...],
                 indices_are_sorted: bool, unique_indices: bool, mode: GatherScatterMode,
                 fill_value: Any) -> tuple[ShapedArray, ...]:
    dn = dimension_numbers
    if not isinstance(dn, GatherDimensionNumbers):
        fail(f"expected GatherDimensionNumbers, but got {dn!r}")
    _check_indices(indices, dn.start_index_map, "start_index_map")
    _check_dims(dn.start_index_map, operand.ndim, "start_index_map")
    if len(slice_sizes) != operand.ndim:
        fail(f"expected {operand.ndim} slice_sizes for {operand.str_short()}, "
             f"but got {slice_sizes}")
    for s, d in zip(slice_sizes, operand.shape):
        if not 0 <= s <= d:
            fail(f"expected slice_sizes within the operand shape {operand.shape}, "
                 f"but got {slice_sizes}")
    _check_sorted_dims(dn.collapsed_slice_dims, operand.ndim, "collapsed_slice_dims")
    _check_batching(operand, indices, dn.operand_batching_dims, dn.start_indices_batching_dims,
                    "start_indices_batching_dims")
    dropped = set(dn.collapsed_slice_dims) | set(dn.operand_batching_dims)
    if len(dropped) != len(dn.collapsed_slice_dims) + len(dn.operand_batching_dims):
        fail(f"expected disjoint collapsed_slice_dims and operand_batching_dims, but got "
             f"{dn.collapsed_slice_dims} and {dn.operand_batching_dims}")
    if set(dn.start_index_map) & set(dn.operand_batching_dims):
        fail(f"expected start_index_map disjoint from operand_batching_dims, but got "
             f"{dn.start_index_map} and {dn.operand_batching_dims}")
    for d in sorted(dropped):
        if slice_sizes[d] > 1:
            fail(f"expected slice size at most 1 in collapsed or batching dimension {d}, "
                 f"but got slice_sizes {slice_sizes}")
    offsets = [s for d, s in enumerate(slice_sizes) if d not in dropped]
    batch = list(indices.shape[:-1])
    rank = len(offsets) + len(batch)
    if len(dn.offset_dims) != len(offsets):
        fail(f"expected {len(offsets)} offset_dims (one per kept slice dimension), "
             f"but got {dn.offset_dims}")
    _check_sorted_dims(dn.offset_dims, rank, "offset_dims")
    if mode == GatherScatterMode.ONE_HOT:
        fail("expected mode CLIP, FILL_OR_DROP or PROMISE_IN_BOUNDS, but got "
             "GatherScatterMode.ONE_HOT (not supported by plait)")
    offset_set = set(dn.offset_dims)
    shape = tuple(offsets.pop(0) if d in offset_set else batch.pop(0) for d in range(rank))
    return (ShapedArray(shape, operand.dtype, operand.weak_type),)


gather_p = Primitive("gather", _gather_rule, (
    ParamDef("dimension_numbers", decode=_decode_gather_dnums, encode=repr),
    ParamDef("slice_sizes", decode=decode_ints),
    ParamDef("indices_are_sorted", False, decode=decode_bool),
    ParamDef("unique_indices", False, decode=decode_bool),
    ParamDef("mode", decode=_decode_mode),
    ParamDef("fill_value", None, decode=_decode_fill_value),
))


# -- scatters ------------------------------------------------------------------------

def window_sizes(dn: ScatterDimensionNumbers, operand_ndim: int,
                 updates_shape: Sequence[int]) -> tuple[int, ...]:
    """The window (slice) size in each operand dimension that a scatter writes."""
    sizes = []
    pos = 0
    for d in range(operand_ndim):
        if d in dn.inserted_window_dims or d in dn.operand_batching_dims:
            sizes.append(1)
        else:
            sizes.append(int(updates_shape[dn.update_window_dims[pos]]))
            pos += 1
    return tuple(sizes)


def inverse_gather(dn: ScatterDimensionNumbers) -> GatherDimensionNumbers:
    """The gather that reads what a scatter with ``dn`` writes (its windows)."""
    return GatherDimensionNumbers(
        offset_dims=dn.update_window_dims, collapsed_slice_dims=dn.inserted_window_dims,
        start_index_map=dn.scatter_dims_to_operand_dims,
        operand_batching_dims=dn.operand_batching_dims,
        start_indices_batching_dims=dn.scatter_indices_batching_dims)


def _scatter_rule(operand: ShapedArray, indices: ShapedArray, updates: ShapedArray, *,
                  dimension_numbers: ScatterDimensionNumbers, indices_are_sorted: bool,
                  unique_indices: bool, mode: GatherScatterMode, update_jaxpr: Jaxpr | None,
                  update_consts: tuple[()]) -> tuple[ShapedArray, ...]:
    dn = dimension_numbers
    if not isinstance(dn, ScatterDimensionNumbers):
        fail(f"expected ScatterDimensionNumbers, but got {dn!r}")
    check_same_dtypes([operand, updates])
    _check_indices(indices, dn.scatter_dims_to_operand_dims, "scatter_dims_to_operand_dims")
    _check_dims(dn.scatter_dims_to_operand_dims, operand.ndim, "scatter_dims_to_operand_dims")
    _check_sorted_dims(dn.inserted_window_dims, operand.ndim, "inserted_window_dims")
    _check_batching(operand, indices, dn.operand_batching_dims,
                    dn.scatter_indices_batching_dims, "scatter_indices_batching_dims")
    _check_sorted_dims(dn.update_window_dims, updates.ndim, "update_window_dims")
    window = [d for d in range(operand.ndim)
              if d not in dn.inserted_window_dims and d not in dn.operand_batching_dims]
    if len(window) != len(dn.update_window_dims) or \
            len(dn.inserted_window_dims) + len(dn.operand_batching_dims) + len(window) \
            != operand.ndim:
        fail(f"expected {len(window)} update_window_dims (operand rank {operand.ndim} minus "
             f"inserted and batching dims), but got {dn.update_window_dims}")
    if set(dn.scatter_dims_to_operand_dims) & set(dn.operand_batching_dims):
        fail(f"expected scatter_dims_to_operand_dims disjoint from operand_batching_dims, "
             f"but got {dn.scatter_dims_to_operand_dims} and {dn.operand_batching_dims}")
    scatter_shape = tuple(s for d, s in enumerate(updates.shape)
                          if d not in dn.update_window_dims)
    if scatter_shape != indices.shape[:-1]:
        fail(f"expected updates whose non-window dimensions {scatter_shape} equal the index "
             f"batch shape {indices.shape[:-1]}, but got {updates.str_short()} and "
             f"{indices.str_short()}")
    for od, ud in zip(window, dn.update_window_dims):
        if updates.shape[ud] > operand.shape[od]:
            fail(f"expected update window dimension {ud} of {updates.str_short()} no larger "
                 f"than operand dimension {od} of {operand.str_short()}")
    if mode == GatherScatterMode.ONE_HOT:
        fail("expected mode CLIP, FILL_OR_DROP or PROMISE_IN_BOUNDS, but got "
             "GatherScatterMode.ONE_HOT (not supported by plait)")
    if update_jaxpr is not None:
        scalar = ShapedArray((), operand.dtype)
        if len(update_jaxpr.invars) != 2 or len(update_jaxpr.outvars) != 1 or any(
                shaped(v.aval).update(weak_type=False) != scalar
                for v in (*update_jaxpr.invars, *update_jaxpr.outvars)):
            fail(f"expected an update_jaxpr from two {scalar.str_short()} to one, but got "
                 f"{update_jaxpr}")
    return (operand,)


_SCATTER_PARAMS = (
    ParamDef("dimension_numbers", decode=_decode_scatter_dnums, encode=repr),
    ParamDef("indices_are_sorted", False, decode=decode_bool),
    ParamDef("unique_indices", False, decode=decode_bool),
    ParamDef("mode", decode=_decode_mode),
    ParamDef("update_jaxpr", None, decode=_decode_update_jaxpr),
    ParamDef("update_consts", (), decode=_decode_update_consts),
)

scatter_p = Primitive("scatter", _scatter_rule, _SCATTER_PARAMS)
scatter_add_p = Primitive("scatter-add", _scatter_rule, _SCATTER_PARAMS)
scatter_sub_p = Primitive("scatter-sub", _scatter_rule, _SCATTER_PARAMS)
scatter_mul_p = Primitive("scatter-mul", _scatter_rule, _SCATTER_PARAMS)
scatter_min_p = Primitive("scatter-min", _scatter_rule, _SCATTER_PARAMS)
scatter_max_p = Primitive("scatter-max", _scatter_rule, _SCATTER_PARAMS)

_COMBINE: dict[Primitive, Primitive] = {}


def combiner_jaxpr(prim: Primitive, dtype: np.dtype[Any]) -> Jaxpr | None:
    """The ``update_jaxpr`` of scatter ``prim`` on ``dtype`` (``None`` for ``scatter``):
    ``{ lambda ; a b. let c = add a b in (c,) }`` for ``scatter-add``."""
    op = _COMBINE.get(prim)
    if op is None:
        return None
    return _combiner(op, np.dtype(dtype))


@functools.cache
def _combiner(op: Primitive, dtype: np.dtype[Any]) -> Jaxpr:
    scalar = ShapedArray((), dtype)
    x, y = new_vars([scalar, scalar])
    b = Builder()
    return b.build([x, y], [b.bind1(op, x, y)])


SCATTERS = (scatter_p, scatter_add_p, scatter_sub_p, scatter_mul_p, scatter_min_p,
            scatter_max_p)
"""Every scatter primitive; they share parameters and typing."""

_COMBINE.update({scatter_add_p: add_p, scatter_sub_p: sub_p, scatter_mul_p: mul_p,
                 scatter_min_p: min_p, scatter_max_p: max_p})

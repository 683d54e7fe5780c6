"""``plait.scipy.ndimage``: ``map_coordinates``, as JAX 0.10.2's ``jax.scipy.ndimage``.

An array is sampled at arbitrary (fractional) coordinates by nearest-neighbour
(``order=0``) or linear (``order=1``) interpolation: each output value is a weighted sum
of the input values at the integer neighbours of its coordinates, the neighbours
outside the input moved back inside (or replaced by ``cval``) by ``mode``.  As JAX's,
the modes follow SciPy's documentation rather than its code: ``'constant'`` and
``'wrap'`` behave as SciPy's ``'grid-constant'`` and ``'grid-wrap'``.
"""

from __future__ import annotations

import functools
import itertools
import operator
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from plait.frontend import lax
from plait.frontend import numpy as pnp
from plait.frontend.api.jit import jit
from plait.frontend.core.array_base import Array
from plait.frontend.numpy._core import check_arraylike
from plait.ir import dtypes as dt

__all__ = ["map_coordinates"]

IndexFixer = Callable[[Array, int], Array]


def _mirror(index: Array, size: int) -> Array:
    # A triangle wave of half period size - 1: ... 2 1 0 1 2 ... size-1 size-2 ...
    s = size - 1
    return pnp.abs((index + s) % (2 * s) - s)


def _reflect(index: Array, size: int) -> Array:
    # The mirror of the half-pixel grid, each edge pixel repeated: ... 1 0 0 1 ...
    return pnp.floor_divide(_mirror(2 * index + 1, 2 * size + 1) - 1, 2)


_FIXERS: dict[str, IndexFixer] = {
    "constant": lambda index, size: index,
    "nearest": lambda index, size: pnp.clip(index, 0, size - 1),
    "wrap": lambda index, size: index % size,
    "mirror": _mirror,
    "reflect": _reflect,
}


def _round(x: Array) -> Array:
    # Half away from zero; integers as they are.
    return x if dt.is_integer(x.dtype) else lax.round(x)


def _nearest(coordinate: Array) -> list[tuple[Array, Any]]:
    # The weight is a NumPy scalar of the coordinate's dtype: strongly typed.
    return [(_round(coordinate).astype(np.int32), coordinate.dtype.type(1))]


def _linear(coordinate: Array) -> list[tuple[Array, Any]]:
    lower = pnp.floor(coordinate)
    upper_weight = coordinate - lower
    index = lower.astype(np.int32)
    return [(index, 1 - upper_weight), (index + 1, upper_weight)]


def _map_coordinates(input: Any, coordinates: Sequence[Any], order: int, mode: str,
                     cval: Any) -> Array:
    x = pnp.asarray(input)
    coords = [pnp.asarray(c) for c in coordinates]
    fill = pnp.asarray(cval, x.dtype)
    fix = _FIXERS[mode]
    nodes = _nearest if order == 0 else _linear
    per_axis = []
    for coordinate, size in zip(coords, x.shape, strict=True):
        axis_nodes = []
        for index, weight in nodes(coordinate):
            valid: Any = (0 <= index) & (index < size) if mode == "constant" else True
            axis_nodes.append((fix(index, size), valid, weight))
        per_axis.append(axis_nodes)
    terms: list[Array] = []
    # Every combination of one neighbour per axis, in itertools.product's order.
    for corner in itertools.product(*per_axis):
        indices = tuple(c[0] for c in corner)
        valids = [c[1] for c in corner]
        weights = [c[2] for c in corner]
        value = x[indices]
        if not all(v is True for v in valids):
            value = pnp.where(functools.reduce(operator.and_, valids), value, fill)
        terms.append(functools.reduce(operator.mul, weights) * value)
    result: Array = functools.reduce(operator.add, terms[1:], terms[0])
    if dt.is_integer(x.dtype):
        result = _round(result)
    return result.astype(x.dtype)


_map_coordinates.__name__ = _map_coordinates.__qualname__ = "_map_coordinates"
_map_coordinates_jit = jit(_map_coordinates, static_argnames=("order", "mode", "cval"))


def map_coordinates(input: Any, coordinates: Sequence[Any], order: int,
                    mode: str = "constant", cval: Any = 0.0) -> Array:
    """``input`` interpolated at ``coordinates`` (one array of coordinates per dimension
    of ``input``, broadcast together), by nearest neighbour (``order=0``, halves rounded
    away from zero) or linearly (``order=1``).  Points outside are filled by ``mode``:
    ``'constant'`` (``cval``; SciPy's ``'grid-constant'``), ``'nearest'``, ``'wrap'``
    (SciPy's ``'grid-wrap'``), ``'mirror'`` or ``'reflect'``.  The result has
    ``input``'s dtype (integer results rounded half away from zero).

    Raises:
      ValueError: not one coordinate array per dimension of ``input``, or an unhashable
        ``cval`` (it is a static argument, as in JAX).
      NotImplementedError: another ``order`` or ``mode``.
      TypeError: ``input`` or a coordinate is not an array.
    """
    check_arraylike("map_coordinates", input)
    n = len(coordinates)
    check_arraylike("map_coordinates", *[coordinates[i] for i in range(n)])
    if n != pnp.ndim(input):
        raise ValueError(f"coordinates must be a sequence of length input.ndim, but "
                         f"{n} != {pnp.ndim(input)}")
    if mode not in _FIXERS:
        raise NotImplementedError(
            f"plait.scipy.ndimage.map_coordinates does not yet support mode {mode!r}: "
            f"expected one of {sorted(_FIXERS)}")
    if order not in (0, 1):
        raise NotImplementedError(
            f"plait.scipy.ndimage.map_coordinates currently requires order<=1: expected "
            f"0 or 1, but got {order!r}")
    try:
        hash(cval)
    except TypeError:
        raise ValueError(
            f"Non-hashable static arguments are not supported: cval is static (as in "
            f"JAX), expected a hashable value such as a Python scalar, but got "
            f"{type(cval).__name__}") from None
    return _map_coordinates_jit(input, coordinates, order=int(order), mode=mode, cval=cval)

"""``plait.scipy.interpolate``: ``RegularGridInterpolator``, as JAX 0.10.2's
``jax.scipy.interpolate`` (itself SciPy's algorithm).

A query point is located on each axis by a binary search of the grid coordinates (the
cell ``[g[i], g[i+1]]`` whose lower end is the last coordinate below it, clamped to the
first and last cells, so points outside extrapolate from the end cells); ``"linear"``
weighs the ``2**n`` corners of its cell by the products of the normalized distances,
``"nearest"`` takes the closest corner (ties go to the lower one).  Points outside the
grid get ``fill_value`` unless it is ``None``.  The interpolator is a pytree whose
children are the grid, the values and the fill value (``method`` and ``bounds_error``
are static), so it can be passed through ``jit`` and ``vmap``.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

import numpy as np

from plait.frontend import numpy as pnp
from plait.frontend.core.array_base import Array
from plait.frontend.core.tree_util import register_pytree_node
from plait.frontend.numpy._core import check_arraylike, dtype_of, ndim, promote_dtypes_inexact

__all__ = ["RegularGridInterpolator"]

_METHODS = ("linear", "nearest")


def _check_method(method: Any) -> None:
    if method not in _METHODS:
        raise ValueError(f"method {method!r} is not defined")


def _points_array(xi: Any, n: int) -> Array:
    """The query points ``xi`` as one array whose last axis has the coordinates: a
    tuple of coordinate arrays (broadcast together) is stacked into the default float
    dtype; a 1-D array is read as points of ``n`` coordinates."""
    if isinstance(xi, tuple) and len(xi) == 1:
        xi = xi[0]
    if isinstance(xi, tuple):
        parts = pnp.broadcast_arrays(*xi)
        out = pnp.empty(parts[0].shape + (len(parts),), dtype=float)
        for j, part in enumerate(parts):
            out = out.at[..., j].set(part)
        return out
    check_arraylike("RegularGridInterpolator", xi)
    arr = pnp.asarray(xi)
    return arr.reshape(-1, n) if arr.ndim == 1 else arr


class RegularGridInterpolator:
    """Interpolation of data on a rectangular grid of any dimension.

    Args:
      points: one strictly increasing 1-D array of coordinates per grid axis.
      values: the data; its leading ``len(points)`` axes run along the grid, further
        axes are carried along (each query gives an array of their shape).  Integers
        and bools become the default float.
      method: ``"linear"`` or ``"nearest"``.
      bounds_error: must be false (a traced program cannot raise on the values).
      fill_value: the result for points outside the grid; ``None`` extrapolates.

    Raises:
      ValueError: an unknown ``method``; more point arrays than ``values`` has axes; a
        ``fill_value`` that does not cast to ``values``' dtype (complex into real).
      NotImplementedError: ``bounds_error`` is true.
      TypeError: ``values``, ``fill_value`` or a point array is not an array or scalar.
    """

    grid: tuple[Array, ...]
    values: Array
    fill_value: Array | None
    method: str
    bounds_error: bool

    def __init__(self, points: Sequence[Any], values: Any, method: str = "linear",
                 bounds_error: bool = False, fill_value: Any = np.nan) -> None:
        _check_method(method)
        self.method = method
        self.bounds_error = bounds_error
        if bounds_error:
            raise NotImplementedError("`bounds_error` takes no effect under JIT")
        check_arraylike("RegularGridInterpolator", values)
        if len(points) > ndim(values):
            raise ValueError(f"there are {len(points)} point arrays, but values has "
                             f"{ndim(values)} dimensions")
        values = pnp.asarray(promote_dtypes_inexact("RegularGridInterpolator", values)[0])
        if fill_value is not None:
            check_arraylike("RegularGridInterpolator", fill_value)
            fill_value = pnp.asarray(fill_value)
            if not np.can_cast(dtype_of(fill_value), values.dtype, casting="same_kind"):
                raise ValueError("fill_value must be either 'None' or of a type compatible "
                                 "with values")
        self.fill_value = fill_value
        check_arraylike("RegularGridInterpolator", *points)
        self.grid = tuple(pnp.asarray(p) for p in points)
        self.values = values

    def __call__(self, xi: Any, method: str | None = None) -> Array:
        """The interpolated values at the points ``xi``: an array whose last axis has
        one coordinate per grid axis (a 1-D array is read as a list of points), or a
        tuple of coordinate arrays.  The result has ``xi``'s leading shape followed by
        ``values``' trailing axes.  ``method`` overrides the interpolator's.

        Raises:
          ValueError: an unknown ``method``; points whose dimension is not the grid's.
        """
        method = self.method if method is None else method
        _check_method(method)
        n = len(self.grid)
        pts = _points_array(xi, n)
        if pts.shape[-1] != n:
            raise ValueError(f"the requested sample points xi have dimension {pts.shape[-1]}, "
                             f"but this RegularGridInterpolator has dimension {n}")
        lead = pts.shape[:-1]
        flat = pts.reshape(-1, n)
        lower, frac, outside = self._locate(flat.T)
        out = self._linear(lower, frac) if method == "linear" else self._nearest(lower, frac)
        if self.fill_value is not None:
            mask = outside.reshape(out.shape[:1] + (1,) * (out.ndim - 1))
            out = pnp.where(mask, self.fill_value, out)
        return out.reshape(lead + self.values.shape[n:])

    def _locate(self, coords: Array) -> tuple[list[Array], list[Array], Array]:
        """Per axis, the index of each point's cell and its position in the cell (0 at
        the lower end, 1 at the upper); and which points lie outside the grid."""
        lower: list[Array] = []
        frac: list[Array] = []
        outside = pnp.zeros((coords.shape[1],), dtype=bool)
        for x, g in zip(coords, self.grid):
            i = pnp.searchsorted(g, x) - 1
            i = pnp.where(i < 0, 0, i)
            i = pnp.where(i > g.size - 2, g.size - 2, i)
            lower.append(i)
            frac.append((x - g[i]) / (g[i + 1] - g[i]))
            outside = outside + (x < g[0])
            outside = outside + (x > g[-1])
        return lower, frac, outside

    def _linear(self, lower: list[Array], frac: list[Array]) -> Array:
        # Values' trailing axes: the weights broadcast over them.
        expand = (slice(None),) + (None,) * (self.values.ndim - len(lower))
        total: Array = pnp.asarray(0.0)
        # The 2**n corners, each axis taking its lower (0) or upper (1) end.
        for corner in itertools.product((0, 1), repeat=len(lower)):
            weight: Array = pnp.asarray(1.0)
            for up, t in zip(corner, frac):
                weight = weight * (t if up else 1 - t)
            index = tuple(i + 1 if up else i for up, i in zip(corner, lower))
            total = total + self.values[index] * weight[expand]
        return total

    def _nearest(self, lower: list[Array], frac: list[Array]) -> Array:
        index = tuple(pnp.where(t <= 0.5, i, i + 1) for i, t in zip(lower, frac))
        return self.values[index]


def _flatten(obj: RegularGridInterpolator) -> tuple[tuple[Any, ...], tuple[str, bool]]:
    return (obj.grid, obj.values, obj.fill_value), (obj.method, obj.bounds_error)


def _unflatten(aux: tuple[str, bool], children: Any) -> RegularGridInterpolator:
    # Rebuilt as is, without __init__'s checks: transformations rebuild the pytree
    # around placeholders (vmap's out_axes) and tracers.
    obj = object.__new__(RegularGridInterpolator)
    obj.grid, obj.values, obj.fill_value = children
    obj.method, obj.bounds_error = aux
    return obj


register_pytree_node(RegularGridInterpolator, _flatten, _unflatten)

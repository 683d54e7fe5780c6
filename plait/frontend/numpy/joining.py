"""Joining and splitting: ``atleast_3d``, ``column_stack``, ``dstack``, ``append``,
``array_split``, ``hsplit``, ``vsplit``, ``dsplit``."""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any, overload

import numpy as np

from plait.frontend import lax
from plait.frontend.core.array_base import Array
from plait.frontend.numpy._core import as_array, canonical_axis, check_arraylike
from plait.frontend.numpy.manipulation import (
    _sequence,
    atleast_2d,
    concatenate,
    each_array,
    ravel,
    transpose,
)

__all__ = ["atleast_3d", "column_stack", "dstack", "append", "array_split", "hsplit",
           "vsplit", "dsplit"]


@overload
def atleast_3d(a: Any, /) -> Array: ...
@overload
def atleast_3d(a: Any, b: Any, /, *arys: Any) -> list[Array]: ...
@overload
def atleast_3d() -> list[Array]: ...
def atleast_3d(*arys: Any) -> Array | list[Array]:
    """Each argument with at least three dimensions: ``(n,)`` becomes ``(1, n, 1)``
    and ``(m, n)`` becomes ``(m, n, 1)``; a list when there is not exactly one."""
    return each_array("atleast_3d", arys, _atleast_3d)


def _atleast_3d(a: Any) -> Array:
    x = as_array(a)
    dims = {0: (0, 1, 2), 1: (0, 2), 2: (2,)}.get(x.ndim)
    return x if dims is None else lax.expand_dims(x, dims)


def column_stack(tup: Any) -> Array:
    """1-d arrays as the columns of a 2-d array (2-d arrays joined along axis 1)."""
    xs = [as_array(x) for x in _sequence("column_stack", tup)]
    return concatenate([transpose(atleast_2d(x)) if x.ndim < 2 else x for x in xs], axis=1)


def dstack(tup: Any, dtype: Any = None) -> Array:
    """Join along the third axis, after making arrays at least 3-d."""
    return concatenate([_atleast_3d(x) for x in _sequence("dstack", tup)], axis=2, dtype=dtype)


def append(arr: Any, values: Any, axis: int | None = None) -> Array:
    """``values`` joined after ``arr`` along ``axis`` (both flattened when ``None``)."""
    if axis is None:
        return concatenate([ravel(arr), ravel(values)], 0)
    return concatenate([arr, values], axis=axis)


def _split(name: str, ary: Any, indices_or_sections: Any, axis: int) -> list[Array]:
    check_arraylike(name, ary)
    a = as_array(ary)
    ax = canonical_axis(axis, a.ndim)
    size = a.shape[ax]
    if isinstance(indices_or_sections, list | tuple) or np.ndim(indices_or_sections) > 0:
        cuts = [operator.index(i) for i in np.asarray(indices_or_sections).tolist()]
        bounds = [0, *cuts, size]
        sizes = [hi - lo for lo, hi in zip(bounds, bounds[1:])]
    else:
        sections = operator.index(indices_or_sections)
        if sections <= 0:
            raise ValueError(f"{name}: number of sections must be larger than 0, but got "
                             f"{sections}")
        part, rest = divmod(size, sections)
        if rest and name != "array_split":
            raise ValueError(f"array split does not result in an equal division: rest is {rest}")
        sizes = [part + 1] * rest + [part] * (sections - rest)
    if any(s < 0 for s in sizes):
        raise ValueError(f"{name}: the indices {indices_or_sections} must be nondecreasing and "
                         f"within [0, {size}] for an axis of size {size}")
    return lax.split(a, sizes, ax)


def array_split(ary: Any, indices_or_sections: int | Sequence[int] | Any,
                axis: int = 0) -> list[Array]:
    """Split along ``axis`` at the given indices, or into sections whose sizes differ
    by at most one (the longer ones first)."""
    return _split("array_split", ary, indices_or_sections, axis)


def vsplit(ary: Any, indices_or_sections: int | Sequence[int] | Any) -> list[Array]:
    """Split along the first axis into equal sections or at the given indices."""
    return _split("vsplit", ary, indices_or_sections, 0)


def hsplit(ary: Any, indices_or_sections: int | Sequence[int] | Any) -> list[Array]:
    """Split along the second axis (the first for 1-d arrays)."""
    check_arraylike("hsplit", ary)
    return _split("hsplit", ary, indices_or_sections, 0 if as_array(ary).ndim == 1 else 1)


def dsplit(ary: Any, indices_or_sections: int | Sequence[int] | Any) -> list[Array]:
    """Split along the third axis."""
    return _split("dsplit", ary, indices_or_sections, 2)

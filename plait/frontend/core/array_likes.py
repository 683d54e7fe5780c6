"""Types a library registers as array-like, as it registers them with JAX: how plait reads
their type (``jax.core.pytype_aval_mappings``) and their data
(``jax.interpreters.xla.canonicalize_dtype_handlers``).

Both tables start with NumPy's arrays and scalars and Python's scalars, so that a library
can register its own class as one of those (TensorFlow Probability registers its NumPy
variables as ``ndarray``). plait consults an entry only for values it cannot read
otherwise: an array, a scalar or a plait value never reaches the tables.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from plait.ir import dtypes as dt
from plait.ir.avals import ShapedArray

__all__ = ["aval_mappings", "canonicalize_handlers"]


def _ndarray_aval(x: Any) -> ShapedArray:
    return ShapedArray(tuple(np.shape(x)), dt.canonicalize(np.asarray(x).dtype))


def _scalar_aval(x: Any) -> ShapedArray:
    # (A Python scalar is weakly typed, as in a trace.)
    return ShapedArray((), dt.canonicalize(np.asarray(x).dtype), type(x) is not bool)


def _canonical_data(x: Any) -> np.ndarray:
    arr = np.asarray(x)
    return arr.astype(dt.canonicalize(arr.dtype), copy=False)


# (float0 and key dtypes are structured: their scalar types are np.void's.)
_NUMPY_TYPES: tuple[type, ...] = (
    np.ndarray, *(d.type for d in dt._SHORT if not issubclass(d.type, np.void)))

aval_mappings: dict[type, Callable[[Any], ShapedArray]] = {
    **{t: _ndarray_aval for t in _NUMPY_TYPES},
    **{t: _scalar_aval for t in (bool, int, float, complex)}}
"""By type: the function giving a value's type (JAX's ``pytype_aval_mappings``)."""

canonicalize_handlers: dict[type, Callable[[Any], np.ndarray]] = {
    t: _canonical_data for t in (*_NUMPY_TYPES, bool, int, float, complex)}
"""By type: the function giving a value's data as a NumPy array of a canonical dtype
(JAX's ``canonicalize_dtype_handlers``)."""

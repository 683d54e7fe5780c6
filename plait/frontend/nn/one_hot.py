"""``one_hot``, as JAX 0.10.2's ``jax.nn.one_hot``: indices compared with an ``iota``
along the new axis, so out-of-range indices give all-zero rows."""

from __future__ import annotations

import operator
import warnings
from typing import Any

import numpy as np

from plait.frontend import lax
from plait.frontend import numpy as pnp
from plait.frontend.core.array_base import Array
from plait.frontend.core.x64_warnings import check_user_dtype
from plait.frontend.nn._util import jit_as
from plait.frontend.numpy._core import canonical_axis
from plait.ir import dtypes as dt

__all__ = ["one_hot"]


def _one_hot_fun(x: Array, num_classes: int, dtype: np.dtype[Any], axis: int) -> Array:
    out_axis = canonical_axis(axis, x.ndim + 1)
    lhs = lax.expand_dims(x, (out_axis,))
    rhs_shape = [1] * x.ndim
    rhs_shape.insert(out_axis, num_classes)
    rhs = lax.broadcasted_iota(x.dtype, tuple(rhs_shape), out_axis)
    return (lhs == rhs).astype(dtype)


_one_hot = jit_as("_one_hot", _one_hot_fun, static_argnames=("num_classes", "dtype", "axis"))


def one_hot(x: Any, num_classes: int, *, dtype: Any = None, axis: int = -1) -> Array:
    """One-hot encode the indices ``x``: a new axis ``axis`` of length ``num_classes``
    holds 1 at each index and 0 elsewhere (all 0 for an index outside
    ``[0, num_classes)``), in ``dtype`` (the default float unless given).

    Raises:
      ConcretizationTypeError: ``num_classes`` is traced.
      TypeError: ``num_classes`` or ``axis`` is not an int (plait has no named axes).
      numpy.exceptions.AxisError: ``axis`` is out of range for ``x.ndim + 1`` dimensions.
    """
    try:
        n = operator.index(num_classes)
    except TypeError as e:
        if isinstance(num_classes, Array):
            raise  # a tracer: its own error names the concretization
        raise TypeError(f"one_hot: expected an int num_classes, but got "
                        f"{type(num_classes).__name__}") from e
    if not isinstance(axis, int | np.integer):
        raise TypeError(f"one_hot: expected an int axis, but got {axis!r} (plait has no "
                        "named axes)")
    x_arr = pnp.asarray(x)
    if not dt.is_integer(x_arr.dtype):
        # JAX deprecated float (and bool) indices in 0.5.0 but still accepts them.
        warnings.warn(f"jax.nn.one_hot input should be integer-typed; got dtype={x_arr.dtype}",
                      DeprecationWarning, stacklevel=2)
    out_dtype = dt.canonicalize(np.dtype(float)) if dtype is None \
        else check_user_dtype(dtype, "one_hot")
    return _one_hot(x_arr, num_classes=n, dtype=out_dtype, axis=int(axis))

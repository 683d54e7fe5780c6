"""``device_put``: place the array leaves of a pytree on a device."""

from __future__ import annotations

from typing import Any

import numpy as np

from plait.frontend.core.array_impl import ArrayImpl
from plait.frontend.core.tracing import Tracer, as_host_array, scalar_literal
from plait.frontend.core.tree_util import tree_map

__all__ = ["device_put"]


def device_put(x: Any, device: Any = None) -> Any:
    """Put every array leaf of pytree ``x`` on ``device`` (the default device if ``None``).

    Python scalars become weakly typed arrays, as in JAX; traced values are
    returned as they are (inside a trace there is nothing to move).

    Raises:
      TypeError: a leaf that is not array data (a string, an arbitrary object).
      OverflowError: a Python int that does not fit the default integer dtype.
    """
    def put(leaf: Any) -> Any:
        if type(leaf) is Tracer:
            return leaf
        if type(leaf) is ArrayImpl:
            if device is None or leaf.device == device:
                return leaf
            return ArrayImpl.from_numpy(np.asarray(leaf), leaf.weak_type, device)
        if isinstance(leaf, bool | int | float | complex) and not isinstance(leaf, np.generic):
            lit = scalar_literal(leaf)
            return ArrayImpl.from_numpy(np.asarray(lit.val, lit.aval.dtype),
                                        lit.aval.weak_type, device)
        return ArrayImpl.from_numpy(as_host_array(leaf), False, device)

    return tree_map(put, x)

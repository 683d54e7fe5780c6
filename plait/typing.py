"""Type aliases for annotating code that uses plait.

``Array`` is the type of every plait array, concrete or traced; ``ArrayLike``
is anything the array functions accept in its place (Python and NumPy
scalars, NumPy arrays); ``DTypeLike`` is anything that names a dtype;
``Shape`` is a sequence of dimension sizes.  They mirror ``jax.typing``::

    from plait.typing import Array, ArrayLike

    def scale(x: ArrayLike, s: float) -> Array:
        return plait.numpy.asarray(x) * s
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol, TypeAlias

import numpy as np

from plait.frontend.core.array_base import Array

__all__ = ["Array", "ArrayLike", "DTypeLike", "Shape", "SupportsDType"]


class SupportsDType(Protocol):
    """An object with a ``dtype`` attribute (such as ``plait.ShapeDtypeStruct``)."""

    @property
    def dtype(self) -> np.dtype[Any]: ...


# ArrayLike: a value the array functions accept as an array.  DTypeLike: a value naming a
# dtype (``"float32"``, ``np.float32``, ``np.dtype('f4')``, ``float``).
if TYPE_CHECKING:
    ArrayLike: TypeAlias = Array | np.ndarray[Any, Any] | np.bool_ | np.number[Any] | bool \
        | int | float | complex
    DTypeLike: TypeAlias = str | type[Any] | np.dtype[Any] | SupportsDType
else:
    # At run time the NumPy types unsubscripted, as JAX's: libraries that check values
    # against these hints (plum, beartype) take no parametrized ndarray.
    ArrayLike = Array | np.ndarray | np.bool_ | np.number | bool | int | float | complex
    DTypeLike = str | type[Any] | np.dtype | SupportsDType

Shape: TypeAlias = Sequence[int]
"""Dimension sizes."""

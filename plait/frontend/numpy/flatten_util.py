"""``ravel_pytree``: a pytree of arrays as one flat vector, and the function that
rebuilds the pytree from such a vector (JAX 0.10.2's ``jax.flatten_util``).

The leaves are raveled in the order :func:`tree_flatten` gives them and joined into
one 1-D array of the leaves' common dtype (JAX's promotion of the leaves' dtypes, each
taken as a strong type: a Python ``int`` counts as the default integer).  When the
leaves already share one dtype nothing is converted, and the rebuilding function
accepts a vector of any dtype; otherwise it requires the common dtype and casts each
piece back to its leaf's dtype.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs
import numpy as np

from plait.frontend import lax
from plait.frontend.core.array_base import Array
from plait.frontend.core.promotion import result_type_info
from plait.frontend.core.tree_util import PyTreeDef, tree_flatten, tree_unflatten
from plait.frontend.numpy._core import aval_of, dtype_of, shape

__all__ = ["ravel_pytree"]


@attrs.frozen
class _Unravel:
    """The inverse of one :func:`ravel_pytree`: a flat vector back to the pytree.

    Hashable, and equal to the unravel function of any pytree of the same structure,
    shapes and dtypes (so it can be a static argument of ``jit``).
    """

    treedef: PyTreeDef
    sizes: tuple[int, ...]
    shapes: tuple[tuple[int, ...], ...]
    from_dtypes: tuple[np.dtype[Any], ...] | None  # None: one dtype, no casts
    to_dtype: np.dtype[Any] | None

    def __call__(self, flat: Any) -> Any:
        """The pytree whose leaves are the consecutive pieces of ``flat``.

        Raises:
          TypeError: the leaves had different dtypes and ``flat`` is not of their
            common dtype (or is not an array).
          ValueError: ``flat``'s leading dimension is not the total size of the leaves.
        """
        if not self.sizes:
            return tree_unflatten(self.treedef, [])
        if self.from_dtypes is None:
            pieces = lax.split(flat, self.sizes)
            leaves = [p.reshape(s) for p, s in zip(pieces, self.shapes)]
        else:
            if aval_of(flat) is None and not isinstance(flat, np.ndarray | np.generic):
                raise TypeError(f"unravel function expected an array of dtype {self.to_dtype}, "
                                f"but got {type(flat).__name__}")
            got = dtype_of(flat)
            if got != self.to_dtype:
                raise TypeError(f"unravel function given array of dtype {got}, "
                                f"but expected dtype {self.to_dtype}")
            pieces = lax.split(flat, self.sizes)
            leaves = [lax.convert_element_type(p.reshape(s), d)
                      for p, s, d in zip(pieces, self.shapes, self.from_dtypes)]
        return tree_unflatten(self.treedef, leaves)


def ravel_pytree(pytree: Any) -> tuple[Array, Callable[[Array], Any]]:
    """Ravel a pytree of arrays and scalars into one 1-D array.

    Returns ``(flat, unravel)``: ``flat`` joins the raveled leaves, in the dtype their
    dtypes promote to; ``unravel(flat)`` rebuilds a pytree of ``pytree``'s structure,
    each leaf with its original shape and dtype.  A pytree without leaves gives an
    empty ``float32`` vector.

    Raises:
      TypeError: a leaf is not an array or scalar.
    """
    leaves, treedef = tree_flatten(pytree)
    if not leaves:
        return lax.full((0,), 0, "float32"), _Unravel(treedef, (), (), None, None)
    from_dtypes = tuple(dtype_of(x) for x in leaves)
    to_dtype = result_type_info([(d, False) for d in from_dtypes])[0]
    shapes = tuple(shape(x) for x in leaves)
    sizes = tuple(int(np.prod(s, dtype=np.int64)) for s in shapes)
    if all(d == to_dtype for d in from_dtypes):
        flat = lax.concatenate([lax.reshape(x, (n,)) for x, n in zip(leaves, sizes)], 0)
        return flat, _Unravel(treedef, sizes, shapes, None, None)
    flat = lax.concatenate([lax.reshape(lax.convert_element_type(x, to_dtype), (n,))
                            for x, n in zip(leaves, sizes)], 0)
    return flat, _Unravel(treedef, sizes, shapes, from_dtypes, to_dtype)

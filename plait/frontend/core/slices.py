"""``Slice`` and ``ds``: a slice whose start may be traced, as ``jax.ds`` makes.

``x[i:i + 2]`` needs a static ``i``; ``x[plait.ds(i, 2)]`` takes a traced one, as
``lax.dynamic_slice_in_dim`` does: a negative start counts from the end, and the window
is then clamped into bounds.  A strided ``Slice`` clamps each element's index instead
(``ds(6, 3, 3)`` of ten elements is elements 6, 9, 9), as in JAX.  See ``docs/numpy.md``.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from plait.frontend.core.tree_util import register_pytree_node

__all__ = ["Slice", "ds", "dslice", "is_static_int"]


def is_static_int(x: Any) -> bool:
    """Whether ``x`` is a Python or NumPy integer (not a bool, not a traced value)."""
    return isinstance(x, int | np.integer) and not isinstance(x, bool | np.bool_)


@dataclasses.dataclass(frozen=True)
class Slice:
    """``size`` elements from ``start`` (an int or a traced integer scalar), every
    ``stride``-th.  An index of ``Array``s and of ``Ref``s, and of Pallas kernels' blocks."""

    start: Any
    """The first index: a static int or a traced integer scalar."""
    size: int
    """How many elements: a static int."""
    stride: int = 1
    """The step between elements: a static positive int."""

    def __post_init__(self) -> None:
        if not is_static_int(self.size):
            raise TypeError(f"the size of a Slice must be a static int, but got {self.size!r}; "
                            "a traced size would give an array of unknown shape")
        if not is_static_int(self.stride) or self.stride < 1:
            raise ValueError(f"the stride of a Slice must be a static int >= 1, but got "
                             f"{self.stride!r}")
        if self.size < 0:
            raise ValueError(f"the size of a Slice must be >= 0, but got {self.size}")

    @property
    def extent(self) -> int:
        """How many elements the slice spans, from its first to its last."""
        return (self.size - 1) * self.stride + 1 if self.size else 0


def _flatten(s: Slice) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
    # A static start is part of the structure, as in JAX: only a traced one is a leaf.
    if is_static_int(s.start):
        return (), (int(s.start), s.size, s.stride)
    return (s.start,), (None, s.size, s.stride)


def _unflatten(aux: tuple[Any, ...], children: Any) -> Slice:
    start, size, stride = aux
    kids = list(children)
    return Slice(kids[0] if start is None else start, size, stride)


register_pytree_node(Slice, _flatten, _unflatten)


def ds(start: Any, size: int | None = None, stride: int | None = None) -> slice | Slice:
    """A slice by start and size, as ``jax.ds``: ``ds(None)`` is ``:``, ``ds(j)`` is
    ``:j``, ``ds(i, j)`` is ``i:i+j`` and ``ds(i, j, k)`` is ``i:i+j*k:k``, where ``i``
    may be traced."""
    if start is None:
        return slice(None)
    if size is None:
        return Slice(0, start, 1 if stride is None else stride)
    return Slice(start, size, 1 if stride is None else stride)


dslice = ds

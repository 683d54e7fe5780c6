"""``JAXSparse``: the base class every sparse array format of this package derives from
(JAX 0.10.2's ``jax.experimental.sparse.JAXSparse``), so that a program can ask
``isinstance(x, sparse.JAXSparse)`` whatever the format.

A format supplies its buffers (as a pytree, ``data`` first), ``nse``, ``todense`` and
``transpose``; the dtype and shape bookkeeping and the operators a format does not
support (each raising ``NotImplementedError`` naming the class and the operation) are
shared here.
"""

from __future__ import annotations

import abc
import math
import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

from plait.frontend.core.array_base import Array
from plait.frontend.core.tracing import Tracer

__all__ = ["JAXSparse", "Shape"]

Shape = tuple[int, ...]


class JAXSparse(abc.ABC):
    """A sparse array: buffers holding the stored elements of an array of ``shape``.

    Subclasses (``BCOO``, ``BCSR``, ``COO``, ``CSR``, ``CSC``) are pytrees whose children
    are their buffers, ``data`` (the stored values) first.
    """

    data: Array
    """The stored values."""
    shape: Shape
    """The shape of the dense array this one stands for."""

    # Unhashable, as JAX's (the value is in arrays).
    __hash__ = None  # type: ignore[assignment]  # object's hash, disabled

    def __init__(self, args: tuple[Any, ...], *, shape: Sequence[int]) -> None:
        del args  # (the subclass stores its buffers)
        self.shape = tuple(operator.index(s) for s in shape)

    @property
    def dtype(self) -> np.dtype[Any]:
        """The dtype of the stored values."""
        return np.dtype(self.data.dtype)

    @property
    @abc.abstractmethod
    def nse(self) -> int:
        """The number of stored elements (per batch element, for batched formats)."""

    @abc.abstractmethod
    def tree_flatten(self) -> tuple[tuple[Array, ...], Any]:
        """The buffers (``data`` first) and the static part of the array."""

    @classmethod
    @abc.abstractmethod
    def tree_unflatten(cls, aux: Any, children: Sequence[Any]) -> Any:
        """The array of buffers ``children`` and static part ``aux``."""

    @abc.abstractmethod
    def todense(self) -> Array:
        """The dense array (duplicate entries summed)."""

    @abc.abstractmethod
    def transpose(self, axes: Sequence[int] | None = None) -> Any:
        """The array with its dimensions permuted (reversed by default)."""

    @property
    def T(self) -> Any:
        """The transpose (all dimensions reversed)."""
        return self.transpose()

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def __len__(self) -> int:
        return self.shape[0]

    def __repr__(self) -> str:
        text = f"{type(self).__name__}({self.dtype}{list(self.shape)}, nse={self.nse})"
        if isinstance(self.data, Tracer):
            text = f"{type(self.data).__name__}[{text}]"
        return text

    def block_until_ready(self) -> Any:
        """Waits for every buffer; returns the array."""
        for buf in self.tree_flatten()[0]:
            buf.block_until_ready()
        return self

    def _unsupported(self, what: str) -> NotImplementedError:
        return NotImplementedError(f"{type(self).__name__}.{what} is not supported by this "
                                   "sparse format; convert it (for example to BCOO) first")

    def sum(self, *args: Any, **kwargs: Any) -> Any:
        raise self._unsupported("sum")

    def __neg__(self) -> Any:
        raise self._unsupported("__neg__")

    def __pos__(self) -> Any:
        raise self._unsupported("__pos__")

    def __matmul__(self, other: Any) -> Any:
        raise self._unsupported("__matmul__")

    def __rmatmul__(self, other: Any) -> Any:
        raise self._unsupported("__rmatmul__")

    def __mul__(self, other: Any) -> Any:
        raise self._unsupported("__mul__")

    def __rmul__(self, other: Any) -> Any:
        raise self._unsupported("__rmul__")

    def __add__(self, other: Any) -> Any:
        raise self._unsupported("__add__")

    def __radd__(self, other: Any) -> Any:
        raise self._unsupported("__radd__")

    def __sub__(self, other: Any) -> Any:
        raise self._unsupported("__sub__")

    def __rsub__(self, other: Any) -> Any:
        raise self._unsupported("__rsub__")

    def __getitem__(self, item: Any) -> Any:
        raise self._unsupported("__getitem__")

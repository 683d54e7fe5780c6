"""``PartitionSpec``: which mesh axes split each dimension of an array.

It names axes only, so it depends on no mesh; :mod:`plait.ir.sharding` pairs it with
one in a ``NamedSharding``."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Final

__all__ = ["PartitionSpec", "UNCONSTRAINED", "SpecEntry", "names_of"]


class _Unconstrained:
    def __repr__(self) -> str:
        return "UNCONSTRAINED"


UNCONSTRAINED: Final = _Unconstrained()
"""A spec entry leaving the dimension's sharding to the compiler (``P.UNCONSTRAINED``)."""

SpecEntry = str | tuple[str, ...] | None


def _entry(e: Any) -> SpecEntry | _Unconstrained:
    if e is None or isinstance(e, str) or e is UNCONSTRAINED:
        return e
    if isinstance(e, tuple | list) and all(isinstance(n, str) for n in e):
        t = tuple(e)
        return None if not t else (t[0] if len(t) == 1 else t)
    raise TypeError(f"expected a mesh axis name, a tuple of them or None in a PartitionSpec, "
                    f"but got {e!r}")


class PartitionSpec:
    """Per array dimension, the mesh axes splitting it: a name, a tuple of names (split
    over their product, first axis outermost), or ``None`` (not split).  Missing
    trailing entries are ``None``."""

    __slots__ = ("_parts",)
    UNCONSTRAINED: Final = UNCONSTRAINED

    def __init__(self, *parts: Any) -> None:
        self._parts: tuple[Any, ...] = tuple(_entry(p) for p in parts)
        names = [n for p in self._parts for n in names_of(p)]
        if len(set(names)) != len(names):
            raise ValueError(f"expected each mesh axis at most once in a PartitionSpec, but "
                             f"got {self!r}")

    def __len__(self) -> int:
        return len(self._parts)

    def __iter__(self) -> Iterator[Any]:
        return iter(self._parts)

    def __getitem__(self, i: Any) -> Any:
        return self._parts[i]

    def __eq__(self, other: object) -> bool:
        # (As in JAX 0.10.2: P('x') != P('x', None).)
        if isinstance(other, PartitionSpec):
            return self._parts == other._parts
        if isinstance(other, tuple):
            return self._parts == tuple(_entry(p) for p in other)
        return NotImplemented

    def __hash__(self) -> int:
        return hash(("P", self._parts))

    def __repr__(self) -> str:
        inner = ", ".join(repr(p) for p in self._parts)
        return f"P({inner}{',' if len(self._parts) == 1 else ''})"

    __str__ = __repr__

    def index(self, entry: Any) -> int:
        """The position of the first dimension with ``entry`` (as a tuple's).

        Raises:
          ValueError: no dimension has it.
        """
        return self._parts.index(_entry(entry))

    def count(self, entry: Any) -> int:
        """How many dimensions have ``entry`` (as a tuple's)."""
        return self._parts.count(_entry(entry))

    @property
    def partitions(self) -> tuple[Any, ...]:
        """The entries, as a tuple."""
        return self._parts

    @property
    def reduced(self) -> frozenset[str]:
        """Mesh axes over which the value is reduced (JAX's; always empty in plait,
        which has no reduced or unreduced values)."""
        return frozenset()

    @property
    def unreduced(self) -> frozenset[str]:
        """Mesh axes over which the value awaits a sum (JAX's; always empty in plait)."""
        return frozenset()

    def padded(self, ndim: int) -> tuple[Any, ...]:
        """The entries for an array of ``ndim`` dimensions (``None``-padded).

        Raises:
          ValueError: the spec has more entries than the array has dimensions.
        """
        if len(self._parts) > ndim:
            raise ValueError(f"expected a PartitionSpec of at most {ndim} entries for an "
                             f"array of rank {ndim}, but got {self!r}")
        return self._parts + (None,) * (ndim - len(self._parts))

    def axis_names(self) -> tuple[str, ...]:
        """Every mesh axis the spec uses, in order."""
        return tuple(n for p in self._parts for n in names_of(p))


def names_of(entry: Any) -> tuple[str, ...]:
    """The mesh axes of one spec entry (none for ``None`` and ``UNCONSTRAINED``)."""
    if entry is None or entry is UNCONSTRAINED:
        return ()
    return (entry,) if isinstance(entry, str) else tuple(entry)

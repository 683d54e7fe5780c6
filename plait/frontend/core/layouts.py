"""Memory layouts, as ``jax.experimental.layout``: ``Layout``, ``Format`` (a layout with a
sharding) and ``with_layout_constraint``.

plait compiles every program with XLA's default layouts (row-major: the last dimension
varies fastest).  These classes let code written for JAX's layout API run: a ``Format``
passed to ``jit``'s ``in_shardings``/``out_shardings`` gives its sharding, and a layout
that is the default (or ``Layout.AUTO``, which XLA resolves to the default on the CPU) is
accepted; any other layout raises ``NotImplementedError``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from plait.frontend.core.host_values import value_aval
from plait.frontend.core.tree_util import broadcast_prefix, tree_flatten
from plait.ir.sharding import NamedSharding, PartitionSpec, Sharding

__all__ = ["AutoLayout", "Format", "Layout", "default_sharding_of", "with_layout_constraint"]


class _AutoLayout:
    """``Layout.AUTO``: let the compiler choose (the default layout, on the CPU)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "AUTO"


AutoLayout: Final = _AutoLayout()


class Layout:
    """How an array's elements lie in memory: ``major_to_minor`` lists the dimensions from
    the slowest varying to the fastest (``(0, 1)`` is row-major for a matrix); ``tiling``
    and ``sub_byte_element_size_in_bits`` as XLA's."""

    __slots__ = ("major_to_minor", "tiling", "sub_byte_element_size_in_bits")
    AUTO: Final = AutoLayout

    def __init__(self, major_to_minor: Sequence[int],
                 tiling: Sequence[Sequence[int]] | None = None,
                 sub_byte_element_size_in_bits: int = 0) -> None:
        self.major_to_minor = tuple(int(d) for d in major_to_minor)
        self.tiling = None if tiling is None else tuple(tuple(t) for t in tiling)
        self.sub_byte_element_size_in_bits = int(sub_byte_element_size_in_bits)

    def _key(self) -> tuple[Any, ...]:
        return (self.major_to_minor, self.tiling, self.sub_byte_element_size_in_bits)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Layout) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return (f"Layout(major_to_minor={self.major_to_minor}, tiling={self.tiling}, "
                f"sub_byte_element_size_in_bits={self.sub_byte_element_size_in_bits})")

    @classmethod
    def default(cls, ndim: int) -> Layout:
        """XLA's default layout of an array of ``ndim`` dimensions (row-major), as JAX
        reports it (``tiling=()``)."""
        return cls(range(ndim), tiling=())

    def update(self, **changes: Any) -> Layout:
        """A copy with the fields given changed."""
        fields = dict(zip(self.__slots__, self._key()))
        unknown = set(changes) - set(fields)
        if unknown:
            raise TypeError(f"Layout.update: expected fields among {sorted(fields)}, but got "
                            f"{sorted(unknown)}")
        fields.update(changes)
        return Layout(**fields)

    def is_default(self, ndim: int | None = None) -> bool:
        """Whether this is XLA's default layout (of an array of ``ndim`` dimensions)."""
        n = len(self.major_to_minor)
        return (self.major_to_minor == tuple(range(n)) and (ndim is None or ndim == n)
                and not self.tiling and self.sub_byte_element_size_in_bits == 0)


class Format:
    """A layout and a sharding, as JAX's ``Format``: where ``jit`` takes a sharding, it
    takes a ``Format`` too."""

    __slots__ = ("layout", "sharding")

    def __init__(self, layout: Layout | _AutoLayout | None = None,
                 sharding: Any = None) -> None:
        if isinstance(layout, Layout) and sharding is None:
            raise ValueError(f"Format: a concrete layout {layout!r} needs a concrete "
                             "sharding: pass a NamedSharding or SingleDeviceSharding too")
        if not isinstance(layout, Layout | _AutoLayout | None):
            raise TypeError(f"Format: expected the layout None, Layout.AUTO or a Layout, but "
                            f"got {layout!r} of type {type(layout).__name__}")
        if not isinstance(sharding, Sharding | None):
            raise TypeError(f"Format: expected the sharding None or a Sharding, but got "
                            f"{sharding!r} of type {type(sharding).__name__}")
        self.layout = layout
        self.sharding = sharding

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Format) and (self.layout, self.sharding) == (
            other.layout, other.sharding)

    def __hash__(self) -> int:
        return hash((self.layout, self.sharding))

    def __repr__(self) -> str:
        return f"Format(layout={self.layout}, sharding={self.sharding})"


def _check_default(layout: Any, ndim: int | None, where: str) -> None:
    if layout is None or layout is AutoLayout:
        return
    if not isinstance(layout, Layout):
        raise TypeError(f"{where}: expected a Layout, Layout.AUTO, Format or None, but got "
                        f"{layout!r} of type {type(layout).__name__}")
    if not layout.is_default(ndim):
        default = tuple(range(len(layout.major_to_minor) if ndim is None else ndim))
        raise NotImplementedError(
            f"{where}: expected XLA's default layout (major_to_minor={default}, no tiling), "
            f"but got {layout!r}: plait compiles with the default layouts only; transpose the "
            "array instead (or pass Layout.AUTO)")


def default_sharding_of(spec: Any, where: str) -> NamedSharding | PartitionSpec | Any:
    """The sharding of ``spec`` where a sharding is expected: a ``Format``'s own (its
    layout checked to be the default), anything else as given."""
    if not isinstance(spec, Format):
        return spec
    _check_default(spec.layout, None, where)
    return spec.sharding


def with_layout_constraint(x: Any, layouts: Any) -> Any:
    """``x``, which must have the layouts given (a pytree prefix of ``x`` of ``Layout``,
    ``Layout.AUTO`` or ``None``).  Only the default layout is available in plait, so
    ``x`` is returned as it is.

    Raises:
      NotImplementedError: a layout other than the default.
    """
    leaves, _ = tree_flatten(x)
    per_leaf = broadcast_prefix(layouts, x, "with_layout_constraint layouts")
    for i, (leaf, layout) in enumerate(zip(leaves, per_leaf)):
        _check_default(layout, value_aval(leaf).ndim, f"with_layout_constraint (leaf {i})")
    return x

"""The text of Shardy's attributes (the ``sdy`` dialect JAX 0.10.2 lowers shardings to)."""

from __future__ import annotations

from typing import Any

from plait.ir.sharding import PartitionSpec

__all__ = ["sharding_attr"]


def _entry_text(entry: Any) -> str:
    if entry is None:
        return "{}"
    names = (entry,) if isinstance(entry, str) else tuple(entry)
    return "{" + ", ".join(f'"{n}"' for n in names) + "}"


def sharding_attr(spec: PartitionSpec, ndim: int) -> str:
    """The per-dimension sharding of a value of rank ``ndim`` over ``@mesh``:
    ``<@mesh, [{"x"}, {}]>``."""
    parts = spec.padded(ndim)
    return "<@mesh, [" + ", ".join(_entry_text(p) for p in parts) + "]>"

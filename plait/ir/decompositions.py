"""Primitives lowered through a jaxpr of simpler primitives, as JAX lowers some with
``mlir.lower_fun`` (the incomplete gamma and beta functions, whose series and
continued fractions are loops).

The layer that can build such jaxprs (the frontend, from ``plait.lax`` code) registers
a builder here; the lowering asks for the jaxpr of an equation's types and params.
Jaxprs are built once per signature.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from plait.ir.avals import ShapedArray
from plait.ir.caches import LRUCache
from plait.ir.jaxpr import ClosedJaxpr
from plait.ir.primitive import Primitive

__all__ = ["DecompositionBuilder", "register_decomposition", "decomposition"]

DecompositionBuilder = Callable[..., ClosedJaxpr]
"""``builder(*in_avals, **params) -> ClosedJaxpr`` computing the primitive's results."""

_builders: dict[Primitive, DecompositionBuilder] = {}
_cache: LRUCache[tuple[Any, ...], ClosedJaxpr] = LRUCache("decompositions")


def register_decomposition(prim: Primitive, builder: DecompositionBuilder) -> None:
    """Make ``builder`` the source of ``prim``'s decomposition."""
    _builders[prim] = builder


def decomposition(prim: Primitive, in_avals: Sequence[ShapedArray],
                  params: dict[str, Any]) -> ClosedJaxpr:
    """The jaxpr computing ``prim`` on operands of types ``in_avals``.

    Raises:
      LookupError: nothing registered a decomposition of ``prim`` (``import plait``
        registers them all).
    """
    key = (prim, tuple(in_avals), tuple(sorted(params.items())))
    hit = _cache.get(key)
    if hit is not None:
        return hit
    builder = _builders.get(prim)
    if builder is None:
        raise LookupError(f"no decomposition of '{prim.name}' is registered; it is "
                          "registered by importing plait")
    closed = builder(*in_avals, **params)
    _cache[key] = closed
    return closed

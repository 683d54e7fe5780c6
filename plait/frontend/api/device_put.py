"""``device_put``: place the array leaves of a pytree on a device, or over a mesh."""

from __future__ import annotations

from typing import Any

import numpy as np

from plait.frontend.core.array_impl import ArrayImpl
from plait.frontend.core.host_values import as_host_array, scalar_literal
from plait.frontend.core.layouts import Format, Layout
from plait.frontend.core.tracing import Tracer
from plait.frontend.core.tree_util import broadcast_prefix, tree_flatten, tree_unflatten
from plait.frontend.lax.parallel import constrain
from plait.ir.sharding import NamedSharding, PartitionSpec, resolve
from plait.lowering import guards, runtime

__all__ = ["device_put"]


def _is_placement(x: Any) -> bool:
    return x is None or isinstance(x, NamedSharding | PartitionSpec | runtime.Sharding | Format) \
        or hasattr(x, "id")


def device_put(x: Any, device: Any = None, *, src: Any = None, donate: Any = False,
               may_alias: Any = None) -> Any:
    """Put every array leaf of pytree ``x`` on ``device``: a device (the default device if
    ``None``), a ``SingleDeviceSharding``, a :class:`~plait.sharding.NamedSharding` (each
    of the mesh's devices gets its part; a bare ``PartitionSpec`` lays out over the mesh
    set by ``plait.set_mesh``), or a pytree prefix of ``x`` of them.

    Python scalars become weakly typed arrays, as in JAX; traced values are
    returned as they are, or constrained to a ``NamedSharding``.  The transfers are
    explicit ones for the transfer guards (``plait.transfer_guard``).  As in JAX,
    ``may_alias=False`` (a bool or a pytree prefix of them) always makes new buffers,
    and so does ``donate`` (by default an array already in place is returned as it
    is); donation is JAX's "best effort": on the CPU the input stays valid, as JAX's
    does.  ``src`` is accepted (a plait array knows where it lives).

    Raises:
      TypeError: a leaf that is not array data (a string, an arbitrary object).
      OverflowError: a Python int that does not fit the default integer dtype.
      ValueError: an array's dimensions do not divide over the mesh, or ``donate`` and
        ``may_alias`` both true for a leaf.
      JaxRuntimeError: a transfer guard set to ``'disallow_explicit'`` refuses a transfer.
    """
    del src
    leaves, tree = tree_flatten(x)
    places = _per_leaf(device, x, len(leaves), "device_put device", _is_placement)
    donates = _per_leaf(donate, x, len(leaves), "device_put donate", _is_flag)
    aliases = _per_leaf(may_alias, x, len(leaves), "device_put may_alias", _is_flag)
    with guards.explicit_put():
        return tree_unflatten(tree, [_put_copied(leaf, p, d, a) for leaf, p, d, a
                                     in zip(leaves, places, donates, aliases)])


def _is_flag(x: Any) -> bool:
    return x is None or isinstance(x, bool | np.bool_)


def _per_leaf(value: Any, x: Any, n: int, what: str, is_value: Any) -> list[Any]:
    """``value`` for each of the ``n`` leaves of ``x`` (one value, or a pytree prefix)."""
    if is_value(value):
        return [value] * n
    return broadcast_prefix(value, x, what, is_value)


def _put_copied(leaf: Any, place: Any, donate: Any, may_alias: Any) -> Any:
    """:func:`_put`, with JAX's copy semantics: an input that may not be aliased (or is
    donated) is never returned as it is."""
    if may_alias and donate:
        raise ValueError("may_alias and donate cannot be True at the same time.")
    alias = not donate if may_alias is None else bool(may_alias)
    out = _put(leaf, place)
    if out is leaf and not alias and type(leaf) is ArrayImpl:
        return _fresh(leaf)
    return out


def _fresh(leaf: ArrayImpl) -> ArrayImpl:
    """A copy of ``leaf`` in new buffers, laid out as ``leaf`` is."""
    s = leaf.sharding
    place = s if isinstance(s, NamedSharding) else next(iter(leaf.devices()))
    return ArrayImpl.from_numpy(np.asarray(leaf), leaf.weak_type, place)


def _put(leaf: Any, place: Any) -> Any:
    if isinstance(place, Format):
        place = _format_sharding(leaf, place)
    place = resolve(place, "device_put")
    if isinstance(place, runtime.Sharding):
        place = place._device
    if type(leaf) is Tracer:
        return constrain(leaf, place) if isinstance(place, NamedSharding) \
            else leaf
    if type(leaf) is ArrayImpl:
        if place is None or leaf.sharding == place or \
                (not isinstance(place, NamedSharding) and leaf.devices() == {place}):
            return leaf
        dst = place if isinstance(place, NamedSharding) else runtime.sharding_for(place)
        with guards.device_to_device(leaf.aval, leaf.sharding, dst):
            return ArrayImpl.from_numpy(np.asarray(leaf), leaf.weak_type, place)
    if isinstance(leaf, bool | int | float | complex) and not isinstance(leaf, np.generic):
        lit = scalar_literal(leaf)
        return ArrayImpl.from_numpy(np.asarray(lit.val, lit.aval.dtype), lit.aval.weak_type,
                                    place)
    return ArrayImpl.from_numpy(as_host_array(leaf), False, place)


def _format_sharding(leaf: Any, place: Format) -> Any:
    """The sharding of ``place`` (a :class:`Format`), whose layout must be XLA's default:
    the only one plait lays arrays out in."""
    layout = place.layout
    if layout is not None and not (isinstance(layout, Layout) and layout.is_default(
            np.ndim(leaf))):
        raise NotImplementedError(f"device_put: expected a Format with the default layout "
                                  f"(or None), but got {layout!r}: plait lays arrays out "
                                  "in XLA's default layout only")
    return place.sharding

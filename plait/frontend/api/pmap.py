"""``pmap``: map a function over devices, one element of the mapped axis per device.

As JAX 0.10.2 builds it: a ``jit`` (named ``_fun``) around a ``shard_map`` over a
one-axis mesh of the first ``n`` devices (``n`` the mapped size), whose body takes
its block of size 1 along the mapped axis, squeezes it, calls the function, and
puts the axis back; collectives in the function act over ``axis_name``.
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from plait.frontend.api.jit import jit
from plait.frontend.api.shard_map import shard_map_call
from plait.frontend.core.arguments import abstractify, fun_name, wraps
from plait.frontend.core.traceback_util import api_boundary
from plait.frontend.core.tree_util import (
    broadcast_prefix,
    tree_flatten,
    tree_unflatten,
)
from plait.frontend.lax.ops import broadcast_in_dim, squeeze
from plait.ir.sharding import Mesh, PartitionSpec
from plait.lowering import runtime

__all__ = ["pmap"]

_DEFAULT_AXIS = "_internal_pmap_axis_name"


def _spec(axis: int | None, name: str) -> PartitionSpec:
    return PartitionSpec() if axis is None else PartitionSpec(*([None] * axis), name)


def pmap(fun: Callable[..., Any], axis_name: str | None = None, *, in_axes: Any = 0,
         out_axes: Any = 0, static_broadcasted_argnums: int | Sequence[int] = (),
         devices: Sequence[Any] | None = None, backend: str | None = None,
         axis_size: int | None = None, donate_argnums: int | Sequence[int] = ()
         ) -> Callable[..., Any]:
    """Run ``fun`` on several devices at once, device ``i`` on element ``i`` of the mapped
    axis of each argument (``in_axes``: per positional argument, as in ``vmap``; ``None``:
    the whole argument on every device; keyword arguments are mapped over their first
    axis); results are stacked along ``out_axes``.

    The mapped size must not exceed the number of devices (or of ``devices``).  Inside
    ``fun``, collectives over ``axis_name`` act across the devices.
    """
    if not callable(fun):
        raise TypeError(f"pmap: expected a callable, but got {fun!r}")
    if backend not in (None, "cpu"):
        raise ValueError(f"Unknown backend {backend!r}: plait runs on 'cpu' only")
    name = axis_name if axis_name is not None else _DEFAULT_AXIS
    statics = (static_broadcasted_argnums,) if isinstance(static_broadcasted_argnums, int) \
        else tuple(static_broadcasted_argnums)
    donated = (donate_argnums,) if isinstance(donate_argnums, int) \
        else tuple(donate_argnums or ())
    if isinstance(in_axes, list):
        in_axes = tuple(in_axes)
    out_key = _Prefix(out_axes)

    def prepare(args: tuple[Any, ...], kwargs: dict[str, Any]
                ) -> tuple[Callable[..., Any], tuple[Any, ...]]:
        """The jitted program for these arguments, and the dynamic positional ones."""
        static = {i % len(args): args[i] for i in statics if -len(args) <= i < len(args)}
        dyn = tuple(a for i, a in enumerate(args) if i not in static)
        axes_prefix = in_axes
        if isinstance(in_axes, tuple) and static:
            if len(in_axes) != len(args):
                raise ValueError(f"pmap in_axes: expected one entry per positional argument "
                                 f"({len(args)}), but got {len(in_axes)}")
            axes_prefix = tuple(a for i, a in enumerate(in_axes) if i not in static)
        # (As in JAX, in_axes covers the positional arguments; keyword arguments are
        # mapped over their leading axis.)
        leaves, tree = tree_flatten((dyn, kwargs))
        per_dyn = broadcast_prefix(axes_prefix, dyn, "pmap in_axes")
        per_leaf = [*per_dyn, *[0] * (len(leaves) - len(per_dyn))]
        avals = [abstractify(x, f"argument {i}", "pmap") for i, x in enumerate(leaves)]
        norm: list[int | None] = []
        sizes = set()
        for i, (a, ax) in enumerate(zip(avals, per_leaf)):
            if ax is None:
                norm.append(None)
                continue
            ax = operator.index(ax)
            if not -a.ndim <= ax < a.ndim:
                raise ValueError(f"pmap in_axes: axis {ax} is out of bounds for argument leaf "
                                 f"{i} of type {a.str_short()}")
            norm.append(ax % a.ndim)
            sizes.add(a.shape[ax % a.ndim])
        if not sizes and axis_size is None:
            raise ValueError("pmap requires at least one argument with a mapped axis.")
        if len(sizes) > 1:
            raise ValueError(f"pmap got inconsistent sizes for array axes to be mapped: "
                             f"{sorted(sizes)}")
        n = next(iter(sizes)) if sizes else int(axis_size or 0)
        pool = list(devices) if devices is not None else runtime.local_devices()
        if n > len(pool):
            raise ValueError(f"compiling computation that requires {n} logical devices, but "
                             f"only {len(pool)} XLA devices are available (num_replicas={n})")
        mesh = _mesh(tuple(pool[:n]), name)
        # (Donated positions counted among the dynamic arguments, as the program takes them.)
        dyn_pos = [i for i in range(len(args)) if i not in static]
        donate = tuple(dyn_pos.index(i % len(args)) for i in donated
                       if -len(args) <= i < len(args) and i % len(args) in dyn_pos)
        program = _mapped(fun, static, tuple(norm), tree, mesh, name, out_key, donate)
        return program, dyn

    @wraps(fun)
    @api_boundary
    def pmapped(*args: Any, **kwargs: Any) -> Any:
        program, dyn = prepare(args, kwargs)
        return program(*dyn, **kwargs)

    def lower(*args: Any, **kwargs: Any) -> Any:
        """Lower for these arguments; the compiled program is called with the same
        arguments (JAX's ``pmap(f).lower``)."""
        program, dyn = prepare(args, kwargs)
        return program.lower(*dyn, **kwargs)  # type: ignore[attr-defined]  # (a jit wrapper)

    pmapped.lower = lower  # type: ignore[attr-defined]  # (as JAX's pmap has it)
    return pmapped


@functools.lru_cache(maxsize=64)
def _mesh(devices: tuple[Any, ...], name: str) -> Mesh:
    return Mesh(devices, (name,))


@functools.lru_cache(maxsize=256)
def _cached(fun: Callable[..., Any], static_items: tuple[tuple[int, Any], ...],
            in_dims: tuple[int | None, ...], tree: Any, mesh: Mesh, name: str,
            out_axes: _Prefix, donate: tuple[int, ...]) -> Callable[..., Any]:
    static = dict(static_items)

    def body(*leaves: Any) -> Any:
        dyn, kwargs = tree_unflatten(tree, [x if d is None else squeeze(x, (d,))
                                            for x, d in zip(leaves, in_dims)])
        it = iter(dyn)
        full = [static[i] if i in static else next(it) for i in range(len(dyn) + len(static))]
        out = fun(*full, **kwargs)
        outs, out_tree = tree_flatten(out)
        per = broadcast_prefix(out_axes.value, out, "pmap out_axes")
        expanded = []
        specs = []
        for y, ax in zip(outs, per):
            if ax is None:  # the same on every device: returned once
                expanded.append(y)
                specs.append(PartitionSpec())
                continue
            shape = tuple(np.shape(y))  # (a Python scalar result too, as in JAX)
            ax = operator.index(ax) % (len(shape) + 1)
            new_shape = shape[:ax] + (1,) + shape[ax:]
            dims = tuple(i for i in range(len(new_shape)) if i != ax)
            expanded.append(broadcast_in_dim(y, new_shape, dims))
            specs.append(_spec(ax, name))
        specs_out.append(specs)
        return tree_unflatten(out_tree, expanded)

    specs_out: list[Any] = []

    def _fun(*dyn: Any, **kwargs: Any) -> Any:
        leaves = tree_flatten((dyn, kwargs))[0]
        in_specs = tuple(_spec(d, name) for d in in_dims)
        specs_out.clear()
        # out_specs are known once the body is traced: a callable prefix resolves them.
        return shard_map_call(body, leaves, mesh, in_specs, _LazySpecs(specs_out), False,
                              frozenset({name}), name=fun_name(fun))
    return jit(_fun, donate_argnums=donate)


def _mapped(fun: Callable[..., Any], static: dict[int, Any], in_dims: tuple[int | None, ...],
            tree: Any, mesh: Mesh, name: str, out_axes: _Prefix,
            donate: tuple[int, ...]) -> Callable[..., Any]:
    items = tuple(sorted(static.items()))
    try:
        return _cached(fun, items, in_dims, tree, mesh, name, out_axes, donate)
    except TypeError:  # an unhashable static argument: no reuse
        return _cached.__wrapped__(fun, items, in_dims, tree, mesh, name, out_axes, donate)


class _Prefix:
    """A pytree prefix (``out_axes``) compared by its structure and leaves, so that one
    holding lists is a cache key too."""

    __slots__ = ("value", "key")

    def __init__(self, value: Any) -> None:
        self.value = value
        leaves, tree = tree_flatten(value, is_leaf=lambda x: x is None)
        self.key = (tree, tuple(leaves))

    def __hash__(self) -> int:
        return hash(self.key)

    def __eq__(self, other: object) -> bool:
        return type(other) is _Prefix and self.key == other.key


class _LazySpecs:
    """The out_specs of a pmap body, known once it is traced (one per flat result)."""

    def __init__(self, box: list[Any]) -> None:
        self.box = box

    def __call__(self) -> list[PartitionSpec]:
        specs: list[PartitionSpec] = self.box[-1]
        return specs

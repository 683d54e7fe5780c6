"""Collectives over named axes, with ``jax.lax``'s signatures: ``psum``, ``pmean``,
``pmax``, ``pmin``, ``all_gather``, ``psum_scatter``, ``ppermute``, ``pshuffle``,
``pbroadcast``, ``axis_index``, ``axis_size``, ``all_to_all``, ``pcast``, and
``with_sharding_constraint``.

The axes are those of an enclosing ``shard_map`` or ``pmap`` (devices) or
``vmap(..., axis_name=...)`` (array elements).  Naming an axis none of them binds
is a ``NameError``, as in JAX.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

from plait.frontend.core.host_values import value_aval
from plait.frontend.core.tracing import bind1, bind_n
from plait.frontend.core.tree_util import tree_flatten, tree_map, tree_unflatten
from plait.frontend.lax.ops import _operands
from plait.ir import axis_env
from plait.ir import primitives as P
from plait.ir.sharding import AxisType, NamedSharding, PartitionSpec, resolve

__all__ = ["psum", "pmean", "pmax", "pmin", "all_gather", "psum_scatter", "ppermute",
           "pshuffle", "pbroadcast", "axis_index", "axis_size", "all_to_all", "pswapaxes",
           "pcast",
           "with_sharding_constraint"]


def _names(axis_name: Any) -> tuple[str, ...]:
    names = tuple(axis_name) if isinstance(axis_name, tuple | list) else (axis_name,)
    for n in names:
        if not isinstance(n, str):
            raise TypeError(f"expected an axis name (a string) or a tuple of them, but got "
                            f"{axis_name!r}")
    return names


def _bound(names: tuple[str, ...], what: str) -> int:
    env = axis_env.bound_axes()
    for n in names:
        if n not in env:
            raise NameError(f"Found an unbound axis name: {n}. To fix this, please call {what} "
                            f"under `plait.shard_map`.")
    return axis_env.axis_size(names)


def _reduce(prim: Any, x: Any, axis_name: Any, what: str) -> Any:
    names = _names(axis_name)
    n = _bound(names, what)
    leaves, tree = tree_flatten(x)
    ops = [_operands(what, leaf)[0] for leaf in leaves]
    outs: list[Any] = []
    for leaf, op in zip(leaves, ops):
        if isinstance(leaf, int | float | complex) and prim is P.psum_p:
            # A Python constant is the same on every device: its sum is a product.
            outs.append(leaf * n)
        else:
            outs.append(bind_n(prim, op, axes=names, axis_index_groups=None)[0])
    return tree_unflatten(tree, outs)


def psum(x: Any, axis_name: Any, *, axis_index_groups: None = None) -> Any:
    """The sum of ``x`` (a pytree) over the devices of ``axis_name`` (a name or a tuple
    of names), on every device."""
    _no_groups(axis_index_groups)
    return _reduce(P.psum_p, x, axis_name, "psum")


def pmean(x: Any, axis_name: Any, *, axis_index_groups: None = None) -> Any:
    """The mean of ``x`` over the devices of ``axis_name``."""
    _no_groups(axis_index_groups)
    n = _bound(_names(axis_name), "psum")
    total = psum(x, axis_name)
    return tree_map(lambda t: t / n, total)


def pmax(x: Any, axis_name: Any, *, axis_index_groups: None = None) -> Any:
    """The maximum of ``x`` over the devices of ``axis_name``."""
    _no_groups(axis_index_groups)
    return _reduce(P.pmax_p, x, axis_name, "psum")


def pmin(x: Any, axis_name: Any, *, axis_index_groups: None = None) -> Any:
    """The minimum of ``x`` over the devices of ``axis_name``."""
    _no_groups(axis_index_groups)
    return _reduce(P.pmin_p, x, axis_name, "psum")


def _no_groups(groups: object) -> None:
    if groups is not None:
        raise NotImplementedError("axis_index_groups are not supported by plait; use a mesh "
                                  "with one more axis instead")


def _axis(axis: int, ndim: int, what: str) -> int:
    axis = operator.index(axis)
    if not -ndim <= axis < ndim:
        raise ValueError(f"{what}: expected an axis in [{-ndim}, {ndim}), but got {axis}")
    return axis % ndim


def _check_split(what: str, shape: tuple[int, ...], d: int, n: int, tiled: bool) -> None:
    """Fail unless dimension ``d`` splits into ``n`` parts (tiled) or has size ``n``."""
    if tiled and shape[d] % n:
        raise ValueError(f"{what}: expected dimension {d} of shape {shape} to be divisible "
                         f"by the axis size {n}, but it is not")
    if not tiled and shape[d] != n:
        raise ValueError(f"{what}: expected dimension {d} of shape {shape} to equal the axis "
                         f"size {n} (or tiled=True), but it does not")


def all_gather(x: Any, axis_name: Any, *, axis_index_groups: None = None, axis: int = 0,
               tiled: bool = False) -> Any:
    """Every device's ``x``, stacked along a new dimension ``axis`` (or concatenated
    along ``axis`` when ``tiled``), on every device."""
    _no_groups(axis_index_groups)
    names = _names(axis_name)
    n = _bound(names, "all_gather")

    def one(leaf: Any) -> Any:
        (op,) = _operands("all_gather", leaf)
        ndim = value_aval(op).ndim
        d = _axis(axis, ndim if tiled else ndim + 1, "all_gather")
        return bind1(P.all_gather_p, op, all_gather_dimension=d, axis_index_groups=None,
                     axis_name=names, axis_size=n, tiled=bool(tiled))
    return tree_map(one, x)


def psum_scatter(x: Any, axis_name: Any, *, scatter_dimension: int = 0,
                 axis_index_groups: None = None, tiled: bool = False) -> Any:
    """The sum of ``x`` over the devices of ``axis_name``, each device keeping its part
    of dimension ``scatter_dimension`` (which then disappears, unless ``tiled``)."""
    _no_groups(axis_index_groups)
    names = _names(axis_name)
    n = _bound(names, "psum_scatter")

    def one(leaf: Any) -> Any:
        (op,) = _operands("psum_scatter", leaf)
        shape = value_aval(op).shape
        d = _axis(scatter_dimension, len(shape), "psum_scatter")
        _check_split("psum_scatter", shape, d, n, tiled)
        return bind1(P.reduce_scatter_p, op, axis_index_groups=None, axis_name=names,
                     axis_size=n, scatter_dimension=d, tiled=bool(tiled))
    return tree_map(one, x)


def ppermute(x: Any, axis_name: Any, perm: Sequence[tuple[int, int]]) -> Any:
    """Send each device's ``x`` along ``axis_name``: ``perm`` holds (source, destination)
    index pairs; a device no pair sends to receives zeros."""
    names = _names(axis_name)
    n = _bound(names, "ppermute")
    pairs = tuple((operator.index(s), operator.index(d)) for s, d in perm)
    for s, d in pairs:
        if not (0 <= s < n and 0 <= d < n):
            raise ValueError(f"ppermute: expected indices in [0, {n}) (the size of axis "
                             f"{axis_name!r}), but got the pair {(s, d)}")
    srcs, dsts = [s for s, _ in pairs], [d for _, d in pairs]
    if len(set(srcs)) != len(srcs) or len(set(dsts)) != len(dsts):
        raise ValueError(f"ppermute sources and destinations must be unique, got {pairs}.")
    return tree_map(lambda leaf: bind1(P.ppermute_p, *_operands("ppermute", leaf),
                                       axis_name=names, perm=pairs), x)


def pshuffle(x: Any, axis_name: Any, perm: Sequence[int]) -> Any:
    """Device ``i`` receives the ``x`` of device ``perm[i]`` (``perm`` a permutation)."""
    perm = [operator.index(p) for p in perm]
    if sorted(perm) != list(range(len(perm))):
        raise ValueError(f"`perm` does not represent a permutation: {perm}")
    return ppermute(x, axis_name, [(src, dst) for dst, src in enumerate(perm)])


def pbroadcast(x: Any, axis_name: Any, source: int) -> Any:
    """Every device receives the ``x`` of the device at index ``source`` of the axis."""
    names = _names(axis_name)
    n = _bound(names, "ppermute")
    source = operator.index(source)
    if not 0 <= source < n:
        raise ValueError(f"pbroadcast: expected a source in [0, {n}), but got {source}")
    name: Any = names[0] if len(names) == 1 else names
    return tree_map(lambda leaf: bind1(P.pbroadcast_p, *_operands("pbroadcast", leaf),
                                       axis_name=name, source=source), x)


_PCAST_TO = ("varying", "reduced", "unreduced")


def pcast(x: Any, axis_name: Any, *, to: str) -> Any:
    """Cast ``x`` (a pytree) between varying-manual-axes types over ``axis_name``:
    ``to='varying'`` marks a value the same on every device of the axes as one that may
    vary over them (JAX's ``pvary``; no data moves), as JAX 0.10 asks where such a value
    meets varying ones in a ``scan`` carry, a ``cond`` branch or a ``custom_vjp``.

    plait's values carry no varying-axes type: a value that already varies is accepted
    (JAX refuses it), and ``to='reduced'``/``'unreduced'`` (JAX's reduced and unreduced
    shardings) are not supported.

    Raises:
      TypeError: ``axis_name`` is a set.
      ValueError: ``to`` is not one of JAX's, or an axis is not a ``shard_map`` axis.
      NotImplementedError: ``to='reduced'`` or ``'unreduced'``.
    """
    if isinstance(axis_name, set | frozenset):
        raise TypeError(f"axis_name={axis_name!r} must be a tuple or a str. Got {axis_name!r}")
    names = _names(axis_name)
    if not names:
        return x
    if to not in _PCAST_TO:
        raise ValueError(f"pcast: expected to= to be one of {list(_PCAST_TO)}, but got {to!r}")
    if to != "varying":
        raise NotImplementedError(
            f"pcast(..., to={to!r}): plait has no reduced or unreduced shardings (JAX "
            "0.10's sharding-in-types feature); compute the sum with lax.psum instead")
    bound = axis_env.bound_axes()
    for n in names:
        if n not in bound:
            raise ValueError(f"pcast(..., to='varying') must be called under plait.shard_map "
                             f"over a mesh with the axis {n!r} (bound axes: {list(bound)})")
    ordered = tuple(n for n in bound if n in names)  # (in mesh order, as JAX prints them)
    return tree_map(lambda leaf: bind1(P.pvary_p, *_operands("pcast", leaf), axes=ordered), x)


def axis_index(axis_name: Any) -> Any:
    """This device's index along ``axis_name`` (row-major over a tuple of axes), int32."""
    names = _names(axis_name)
    _bound(names, "axis_index")
    if len(names) == 1:
        return bind1(P.axis_index_p, axis_name=names[0])
    # Row-major over the names, built as JAX builds it (innermost axis first).
    index: Any = 0
    inner = 1
    for name in reversed(names):
        index = index + bind1(P.axis_index_p, axis_name=name) * inner
        inner *= axis_env.axis_size(name)
    return index


def axis_size(axis_name: Any) -> int:
    """The number of devices (or elements) along ``axis_name``."""
    return _bound(_names(axis_name), "axis_size")


def all_to_all(x: Any, axis_name: Any, split_axis: int, concat_axis: int, *,
               axis_index_groups: None = None, tiled: bool = False) -> Any:
    """Split dimension ``split_axis`` into one part per device, send part ``j`` to
    device ``j``, and concatenate what arrives along ``concat_axis`` (untiled: the
    split dimension, of the axis size, moves to ``concat_axis``)."""
    _no_groups(axis_index_groups)
    names = _names(axis_name)
    n = _bound(names, "all_to_all")
    name: Any = names[0] if len(names) == 1 else names

    def one(leaf: Any) -> Any:
        (op,) = _operands("all_to_all", leaf)
        shape = value_aval(op).shape
        s = _axis(split_axis, len(shape), "all_to_all")
        c = _axis(concat_axis, len(shape), "all_to_all")
        _check_split("all_to_all", shape, s, n, tiled)
        # (The size is a param only where the types depend on it: see all_to_all_p.)
        size = n if tiled and s != c and n > 1 else 0
        return bind1(P.all_to_all_p, op, axis_index_groups=None, axis_name=name,
                     axis_size=size, concat_axis=c, split_axis=s, tiled=bool(tiled))
    return tree_map(one, x)


def pswapaxes(x: Any, axis_name: Any, axis: int, *, axis_index_groups: None = None) -> Any:
    """Swap the mapped axis ``axis_name`` with dimension ``axis`` of ``x`` (a pytree),
    whose size must be the axis size: ``all_to_all(x, axis_name, axis, axis)``."""
    return all_to_all(x, axis_name, axis, axis, axis_index_groups=axis_index_groups)


def with_sharding_constraint(x: Any, shardings: Any) -> Any:
    """``x`` (a pytree) unchanged, asking the compiler to lay it out by ``shardings``
    (a :class:`NamedSharding`, or a ``PartitionSpec`` over the mesh set by
    ``plait.set_mesh``, or a pytree of them matching ``x``)."""
    leaves, tree = tree_flatten(x)
    if isinstance(shardings, NamedSharding | PartitionSpec):
        specs = [shardings] * len(leaves)
    else:
        specs = tree_flatten(shardings, is_leaf=lambda s: isinstance(
            s, NamedSharding | PartitionSpec))[0]
        if len(specs) != len(leaves):
            raise ValueError(f"with_sharding_constraint: expected one sharding per array "
                             f"({len(leaves)}), but got {len(specs)}")
    outs = []
    for i, (leaf, s) in enumerate(zip(leaves, specs)):
        s = resolve(s, "with_sharding_constraint")
        if not isinstance(s, NamedSharding):
            raise TypeError(f"with_sharding_constraint: expected a NamedSharding for leaf "
                            f"{i}, but got {type(s).__name__}")
        explicit = [n for n, t in zip(s.mesh.axis_names, s.mesh.axis_types)
                    if t == AxisType.Explicit and n in s.spec.axis_names()]
        if explicit:  # (an Explicit axis is part of the type: reshard changes it)
            raise ValueError(
                f"The spec of NamedSharding passed to with_sharding_constraint can only refer "
                f"to Auto axes of the mesh. Got spec={s.spec!r} and mesh={s.mesh!r}. You "
                f"probably meant to use `reshard` API?")
        outs.append(constrain(leaf, s))
    return tree_unflatten(tree, outs)


def constrain(x: Any, s: NamedSharding) -> Any:
    """The array ``x`` held to ``s`` (over any axes: ``jit``'s and ``device_put``'s
    placements inside a trace, where ``s`` may name the type's Explicit axes)."""
    (op,) = _operands("with_sharding_constraint", x)
    try:
        s.shard_shape(value_aval(op).shape)
    except ValueError as e:
        raise ValueError(f"with_sharding_constraint: {e}") from None
    return bind1(P.sharding_constraint_p, op, sharding=s, layout=None,
                 unconstrained_dims=frozenset(), context_mesh=None)


"""Many devices: ``shard_map`` (a per-device body over a mesh), the collectives its
body (or a ``vmap`` with an axis name) communicates with, and ``sharding_constraint``.

Printed as JAX 0.10.2 prints them (``psum[axes=('i',) axis_index_groups=None]``,
``shard_map[check_vma=False in_specs=(P('i',),) jaxpr={...} mesh=Mesh('i': 8,
axis_types=(Auto,)) newly_manual_axes=frozenset({'i'}) out_specs=(P('i',),)]``).
A collective names mesh axes (strings); after ``vmap`` has turned a named axis into
an array dimension, ``psum``/``pmax``/``pmin`` may also name dimensions (ints),
which they reduce, as in JAX.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from plait.ir import axis_env
from plait.ir import dtypes as dt
from plait.ir.avals import AbstractValue, ShapedArray, shaped, type_sharding
from plait.ir.errors import JaxprTypeError
from plait.ir.jaxpr import ClosedJaxpr
from plait.ir.params import Derived, ParamDef, decode_bool, decode_int
from plait.ir.primitive import Primitive
from plait.ir.primitives._typing import ANY, NUM, ORDERED, check_dtype, fail
from plait.ir.primitives.control_flow import body_effects
from plait.ir.sharding import EXPLICIT, Mesh, NamedSharding, PartitionSpec

__all__ = ["psum_p", "pmax_p", "pmin_p", "all_gather_p", "reduce_scatter_p", "ppermute_p",
           "axis_index_p", "all_to_all_p", "pbroadcast_p", "pvary_p", "shard_map_p",
           "sharding_constraint_p", "reshard_p",
           "AxisName", "named_axes", "block_aval", "global_aval",
           "frozenset_str"]

AxisName = str | tuple[str, ...]


def named_axes(axis_name: Any) -> tuple[str, ...]:
    """The mesh axes a collective's ``axis_name``/``axes`` names (ints dropped)."""
    names = axis_name if isinstance(axis_name, tuple) else (axis_name,)
    return tuple(n for n in names if isinstance(n, str))


def _unsupported_groups(name: str, groups: object) -> None:
    if groups is not None:
        fail(f"{name}: expected axis_index_groups=None (groups are not supported), but got "
             f"{groups!r}")


def _reduce_rule(accepted: frozenset[Any]) -> Any:
    def rule(*xs: AbstractValue, axes: tuple[Any, ...],
             axis_index_groups: object) -> tuple[AbstractValue, ...]:
        _unsupported_groups("psum", axis_index_groups)
        outs = []
        for x in xs:
            a = shaped(x)
            check_dtype(a, accepted)
            dims = [d for d in axes if isinstance(d, int)]
            if any(not 0 <= d < a.ndim for d in dims):
                fail(f"expected reduced dimensions in [0, {a.ndim}), but got {tuple(dims)}")
            shape = tuple(s for i, s in enumerate(a.shape) if i not in dims)
            outs.append(a.update(shape=shape, weak_type=False))
        return tuple(outs)
    return rule


def _decode_axes(value: Any) -> tuple[Any, ...]:
    if not isinstance(value, tuple) or not all(isinstance(n, str | int) for n in value):
        raise ValueError(f"expected a tuple of axis names, but got {value!r}")
    return value


def _decode_axis_name(value: Any) -> AxisName:
    if isinstance(value, str):
        return value
    if isinstance(value, tuple) and all(isinstance(n, str) for n in value):
        return value
    raise ValueError(f"expected an axis name or a tuple of them, but got {value!r}")


def _decode_groups(value: Any) -> None:
    if value is not None:
        raise ValueError(f"expected None, but got {value!r}")


_REDUCE_PARAMS = (ParamDef("axes", decode=_decode_axes),
                  ParamDef("axis_index_groups", None, decode=_decode_groups))

psum_p = Primitive("psum", _reduce_rule(NUM), _REDUCE_PARAMS,
                   multiple_results=True)
"""Sum over the devices of the named axes (and over array dimensions named by int)."""
pmax_p = Primitive("pmax", _reduce_rule(ORDERED), _REDUCE_PARAMS, multiple_results=True)
"""Maximum over the devices of the named axes."""
pmin_p = Primitive("pmin", _reduce_rule(ORDERED), _REDUCE_PARAMS, multiple_results=True)
"""Minimum over the devices of the named axes."""


def _axis(a: ShapedArray, d: int, ndim: int, what: str) -> None:
    if not 0 <= d < ndim:
        fail(f"expected {what} in [0, {ndim}), but got {d} for an operand of type "
             f"{a.str_short()}")


def _all_gather_rule(x: AbstractValue, *, all_gather_dimension: int, axis_index_groups: object,
                     axis_name: AxisName, axis_size: int, tiled: bool) -> tuple[ShapedArray]:
    _unsupported_groups("all_gather", axis_index_groups)
    a = shaped(x)
    check_dtype(a, ANY)
    shape = list(a.shape)
    if tiled:
        _axis(a, all_gather_dimension, a.ndim, "all_gather_dimension")
        shape[all_gather_dimension] *= axis_size
    else:
        _axis(a, all_gather_dimension, a.ndim + 1, "all_gather_dimension")
        shape.insert(all_gather_dimension, axis_size)
    return (a.update(shape=tuple(shape), weak_type=False),)


all_gather_p = Primitive("all_gather", _all_gather_rule, (
    ParamDef("all_gather_dimension", decode=decode_int),
    ParamDef("axis_index_groups", None, decode=_decode_groups),
    ParamDef("axis_name", decode=_decode_axis_name),
    ParamDef("axis_size", decode=decode_int),
    ParamDef("tiled", decode=decode_bool)))
"""Concatenate (``tiled``) or stack the devices' values along a dimension."""


def _reduce_scatter_rule(x: AbstractValue, *, axis_index_groups: object, axis_name: AxisName,
                         axis_size: int, scatter_dimension: int, tiled: bool) -> tuple[ShapedArray]:
    _unsupported_groups("psum_scatter", axis_index_groups)
    a = shaped(x)
    check_dtype(a, NUM)
    _axis(a, scatter_dimension, a.ndim, "scatter_dimension")
    shape = list(a.shape)
    if tiled:
        if shape[scatter_dimension] % axis_size:
            fail(f"expected the scattered dimension {scatter_dimension} of {a.str_short()} to "
                 f"be divisible by the axis size {axis_size}, but it is not")
        shape[scatter_dimension] //= axis_size
    else:
        if shape[scatter_dimension] != axis_size:
            fail(f"expected the scattered dimension {scatter_dimension} of {a.str_short()} to "
                 f"equal the axis size {axis_size}, but it does not")
        del shape[scatter_dimension]
    return (a.update(shape=tuple(shape), weak_type=False),)


reduce_scatter_p = Primitive("reduce_scatter", _reduce_scatter_rule, (
    ParamDef("axis_index_groups", None, decode=_decode_groups),
    ParamDef("axis_name", decode=_decode_axis_name),
    ParamDef("axis_size", decode=decode_int),
    ParamDef("scatter_dimension", decode=decode_int),
    ParamDef("tiled", decode=decode_bool)))
"""Sum over the devices, each keeping its part of the scattered dimension (``psum_scatter``)."""


def _decode_perm(value: Any) -> tuple[tuple[int, int], ...]:
    if isinstance(value, tuple) and all(isinstance(p, tuple) and len(p) == 2
                                        and all(type(i) is int for i in p) for p in value):
        return value
    raise ValueError(f"expected a tuple of (source, destination) pairs, but got {value!r}")


def _ppermute_rule(x: AbstractValue, *, axis_name: AxisName,
                   perm: tuple[tuple[int, int], ...]) -> tuple[AbstractValue]:
    srcs, dsts = [s for s, _ in perm], [d for _, d in perm]
    if len(set(srcs)) != len(srcs) or len(set(dsts)) != len(dsts):
        fail(f"ppermute: expected each device at most once as a source and once as a "
             f"destination, but got perm={perm}")
    return (shaped(x).update(weak_type=False),)


ppermute_p = Primitive("ppermute", _ppermute_rule, (
    ParamDef("axis_name", decode=_decode_axis_name),
    ParamDef("perm", decode=_decode_perm)))
"""Send each device's value to another (``perm``: (source, destination) index pairs);
devices no pair sends to receive zeros."""


def _pbroadcast_rule(x: AbstractValue, *, axis_name: AxisName, source: int) -> tuple[AbstractValue]:
    return (shaped(x).update(weak_type=False),)


pbroadcast_p = Primitive("pbroadcast", _pbroadcast_rule, (
    ParamDef("axis_name", decode=_decode_axis_name),
    ParamDef("source", decode=decode_int)))
"""Every device receives the value of the device at index ``source`` along the axis."""


def _pvary_rule(x: AbstractValue, *, axes: tuple[str, ...]) -> tuple[AbstractValue]:
    return (shaped(x),)


def _decode_names(value: Any) -> tuple[str, ...]:
    if not isinstance(value, tuple) or not all(isinstance(n, str) for n in value):
        raise ValueError(f"expected a tuple of mesh axis names, but got {value!r}")
    return value


pvary_p = Primitive("pvary", _pvary_rule, (ParamDef("axes", decode=_decode_names),))
"""The identity on a value the same on every device of ``axes``, marking it as one that
may vary over them (``lax.pcast(x, axes, to='varying')``; JAX's ``pvary``).  It moves
no data; ``shard_map``'s check of its ``out_specs`` sees the value as varying."""


def _axis_index_rule(*, axis_name: AxisName) -> tuple[ShapedArray]:
    return (ShapedArray((), dt.int32),)


axis_index_p = Primitive("axis_index", _axis_index_rule, (
    ParamDef("axis_name", decode=_decode_axis_name),))
"""This device's index along the named axis (or axes, row-major)."""


def _all_to_all_rule(x: AbstractValue, *, axis_index_groups: object, axis_name: AxisName,
                     axis_size: int, concat_axis: int, split_axis: int,
                     tiled: bool) -> tuple[ShapedArray]:
    _unsupported_groups("all_to_all", axis_index_groups)
    a = shaped(x)
    check_dtype(a, ANY)
    _axis(a, split_axis, a.ndim, "split_axis")
    _axis(a, concat_axis, a.ndim, "concat_axis")
    shape = list(a.shape)
    if axis_size:  # a tiled exchange between different dimensions
        if shape[split_axis] % axis_size:
            fail(f"expected the split dimension {split_axis} of {a.str_short()} to be "
                 f"divisible by the axis size {axis_size}, but it is not")
        shape[split_axis] //= axis_size
        shape[concat_axis] *= axis_size
    elif not tiled:  # the split dimension, of the axis size, moves to concat_axis
        shape.insert(concat_axis, shape.pop(split_axis))
    return (a.update(shape=tuple(shape), weak_type=False),)


def _all_to_all_size(ins: Sequence[AbstractValue], outs: Sequence[AbstractValue]) -> int:
    """The ``axis_size`` param, which JAX does not print: implied by the types."""
    a, b = shaped(ins[0]), shaped(outs[0])
    grown = [o // i for i, o in zip(a.shape, b.shape) if i and o > i]
    return grown[0] if grown else 0


all_to_all_p = Primitive("all_to_all", _all_to_all_rule, (
    ParamDef("axis_index_groups", None, decode=_decode_groups),
    ParamDef("axis_name", decode=_decode_axis_name),
    ParamDef("axis_size", Derived(_all_to_all_size), show="never", decode=decode_int),
    ParamDef("concat_axis", decode=decode_int),
    ParamDef("split_axis", decode=decode_int),
    ParamDef("tiled", decode=decode_bool)))
"""Split a dimension into one part per device, send part ``j`` to device ``j``, and
concatenate what arrives along another dimension.  ``axis_size`` is the number of
devices when the types depend on it (a tiled exchange between two dimensions), else 0."""


# -- shard_map -----------------------------------------------------------------------


def _spec_axes(spec: PartitionSpec) -> tuple[tuple[str, ...], ...]:
    return tuple(() if p is None else (p,) if isinstance(p, str) else tuple(p) for p in spec)


def _factors(mesh: Mesh, spec: PartitionSpec, aval: ShapedArray, manual: frozenset[str],
             what: str) -> list[int]:
    """Per dimension ``spec`` names, the number of devices splitting it."""
    parts = _spec_axes(spec)
    if len(parts) > aval.ndim:
        fail(f"expected a PartitionSpec of at most {aval.ndim} entries for {what} of type "
             f"{aval.str_short()}, but got {spec!r}")
    return [mesh.axis_size([x for x in names if x in manual]) for names in parts]


def block_aval(mesh: Mesh, spec: PartitionSpec, aval: ShapedArray,
               manual: frozenset[str]) -> ShapedArray:
    """The per-device type of an argument of type ``aval`` laid out by ``spec``.

    Raises:
      JaxprTypeError: a dimension does not divide, or the spec is too long.
    """
    shape = list(aval.shape)
    for d, n in enumerate(_factors(mesh, spec, aval, manual, "an argument")):
        if shape[d] % n:
            fail(f"expected dimension {d} of {aval.str_short()} to be divisible by {n} (the "
                 f"devices along {spec[d]!r} of {mesh}), but it is not")
        shape[d] //= n
    # Inside, the manual axes split nothing in the types: each device has its block.
    return aval.update(shape=tuple(shape), sharding=None)


def global_aval(mesh: Mesh, spec: PartitionSpec, aval: ShapedArray,
                manual: frozenset[str]) -> ShapedArray:
    """The global type of a result whose per-device type is ``aval``, laid out by ``spec``."""
    shape = list(aval.shape)
    for d, n in enumerate(_factors(mesh, spec, aval, manual, "a result")):
        shape[d] *= n
    # Over Explicit axes, the result's type is split as its spec says (as in JAX).
    typed = NamedSharding(mesh.abstract_mesh, spec) if EXPLICIT.seen else None
    return aval.update(shape=tuple(shape), sharding=typed)


def _shard_map_rule(*avals: AbstractValue, jaxpr: ClosedJaxpr, mesh: Mesh,
                    in_specs: tuple[PartitionSpec, ...], out_specs: tuple[PartitionSpec, ...],
                    check_vma: bool, newly_manual_axes: frozenset[str]
                    ) -> tuple[AbstractValue, ...]:
    if len(in_specs) != len(avals) or len(out_specs) != len(jaxpr.out_avals):
        fail(f"shard_map: expected {len(avals)} in_specs and {len(jaxpr.out_avals)} out_specs, "
             f"but got {len(in_specs)} and {len(out_specs)}")
    for spec in in_specs + out_specs:
        for n in spec.axis_names():
            if n not in newly_manual_axes:
                fail(f"shard_map: expected spec axes among the manual axes "
                     f"{sorted(newly_manual_axes)}, but got {n!r} in {spec!r}")
    blocks = [block_aval(mesh, s, shaped(a), newly_manual_axes) for s, a in zip(in_specs, avals)]
    expected = jaxpr.in_avals
    for i, (b, e) in enumerate(zip(blocks, expected)):
        if b.strip_weak_type() is not shaped(e).strip_weak_type():
            fail(f"shard_map: expected argument {i}'s per-device type {b.str_short()} to be the "
                 f"body's parameter type {e.str_short()}, but it is not")
    return tuple(global_aval(mesh, s, shaped(a), newly_manual_axes)
                 for s, a in zip(out_specs, jaxpr.out_avals))


def _decode_unparsed(what: str) -> Any:
    def decode(value: Any) -> Any:
        raise ValueError(f"expected a {what} object, but got text: a {what} is not read back "
                         "from printed jaxprs")
    return decode


def manual_axes_sizes(params: Mapping[str, Any]) -> dict[str, int]:
    """The axes a ``shard_map`` body sees bound (its manual mesh axes)."""
    mesh: Mesh = params["mesh"]
    return {n: s for n, s in zip(mesh.axis_names, mesh.axis_sizes)
            if n in params["newly_manual_axes"]}


def frozenset_str(value: frozenset[str]) -> str:
    """A set of axis names as JAX prints it: ``frozenset({'x', 'y'})``."""
    return "frozenset({" + ", ".join(repr(n) for n in sorted(value)) + "})"


def _specs_str(value: tuple[PartitionSpec, ...]) -> str:
    return "(" + ", ".join(map(repr, value)) + ("," if len(value) == 1 else "") + ")"


shard_map_p = Primitive("shard_map", _shard_map_rule, (
    ParamDef("check_vma", decode=decode_bool),
    ParamDef("in_specs", decode=_decode_unparsed("PartitionSpec"), encode=_specs_str),
    ParamDef("jaxpr", decode=_decode_unparsed("jaxpr")),
    ParamDef("mesh", decode=_decode_unparsed("Mesh")),
    ParamDef("newly_manual_axes", decode=_decode_unparsed("frozenset"), encode=frozenset_str),
    ParamDef("out_specs", decode=_decode_unparsed("PartitionSpec"), encode=_specs_str),
), multiple_results=True, effects_rule=body_effects)
"""Apply ``jaxpr`` on each device of ``mesh`` to its block of the arguments (cut by
``in_specs``); the per-device results form the global results by ``out_specs``."""

axis_env.body_axes[shard_map_p] = manual_axes_sizes


def _sharding_constraint_rule(x: AbstractValue, *, sharding: NamedSharding, layout: None,
                              unconstrained_dims: frozenset[int], context_mesh: object
                              ) -> tuple[AbstractValue]:
    a = shaped(x)
    try:
        sharding.shard_shape(a.shape)
    except ValueError as e:
        fail(f"sharding_constraint: {e}")
    return (a,)


sharding_constraint_p = Primitive("sharding_constraint", _sharding_constraint_rule, (
    ParamDef("context_mesh", None, show="never", decode=_decode_unparsed("Mesh")),
    ParamDef("layout", None, decode=_decode_unparsed("layout")),
    ParamDef("sharding", decode=_decode_unparsed("NamedSharding")),
    ParamDef("unconstrained_dims", frozenset(), decode=_decode_unparsed("frozenset"),
             encode=lambda v: "frozenset({" + ", ".join(map(str, sorted(v))) + "})"),
))
"""The identity, asking the compiler to lay the value out by ``sharding``."""


def _reshard_rule(x: AbstractValue, *, dst_sharding: NamedSharding) -> tuple[AbstractValue]:
    a = shaped(x)
    try:
        return (a.update(sharding=type_sharding(dst_sharding, a.shape)),)
    except JaxprTypeError as e:
        fail(f"reshard: {e}")


reshard_p = Primitive("reshard", _reshard_rule, (
    ParamDef("dst_sharding", Derived(lambda ins, outs: shaped(outs[0]).sharding),
             show="never"),
))
"""The identity on values, changing the sharding in the type to ``dst_sharding`` (the
compiler moves the data)."""

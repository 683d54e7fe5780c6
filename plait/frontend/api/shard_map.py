"""``shard_map``: run a function on each device of a mesh, on its block of the arguments.

``shard_map(f, mesh=mesh, in_specs=P('x'), out_specs=P('x'))`` cuts each argument into
blocks by its spec (the dimensions a spec names are split over those mesh axes; the
others are whole on every device), calls ``f`` once per device on its blocks inside
which collectives over the mesh axes communicate, and assembles the results by
``out_specs`` (a result whose spec leaves out an axis is taken to be the same on every
device along it).  Staged as one ``shard_map`` equation; compiled as an SPMD program
that XLA runs on all of the mesh's devices at once.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from plait.frontend.api.jit import jit
from plait.frontend.core.arguments import abstractify, arg_path, fun_name, wraps
from plait.frontend.core.trace_to_jaxpr import trace_to_jaxpr
from plait.frontend.core.traceback_util import api_boundary
from plait.frontend.core.tracing import _state, bind
from plait.frontend.core.tree_util import (
    broadcast_prefix,
    keystr,
    tree_flatten_with_path,
    tree_leaves,
    tree_map,
    tree_unflatten,
)
from plait.ir import axis_env
from plait.ir.avals import ShapedArray
from plait.ir.debug_info import DebugInfo
from plait.ir.errors import JaxprTypeError
from plait.ir.jaxpr import ClosedJaxpr, convert_constvars
from plait.ir.primitives import shard_map_p
from plait.ir.primitives.parallel import block_aval, frozenset_str
from plait.ir.sharding import (
    AxisType,
    Mesh,
    PartitionSpec,
    abstract_mesh_of,
    current_mesh,
    use_abstract_mesh,
)
from plait.transforms.replication import varying_axes

__all__ = ["shard_map", "shard_map_call", "experimental_shard_map", "smap"]

F = TypeVar("F", bound=Callable[..., Any])


def _spec_error(spec: Any, what: str) -> None:
    if spec is not None and not isinstance(spec, PartitionSpec):
        raise TypeError(f"shard_map {what}: expected PartitionSpecs (a pytree prefix of the "
                        f"{'arguments' if what == 'in_specs' else 'results'}), but got "
                        f"{type(spec).__name__}: {spec!r}")


def _typed_spec(aval: ShapedArray) -> PartitionSpec:
    s = aval.explicit_sharding
    return PartitionSpec() if s is None else PartitionSpec(*s.spec)


def _as_spec(s: Any) -> PartitionSpec:
    return PartitionSpec() if s is None else s


def _manual(mesh: Mesh, axis_names: Any) -> frozenset[str]:
    if not axis_names:
        return frozenset(mesh.axis_names)
    names = frozenset(axis_names)
    if names != frozenset(mesh.axis_names):
        raise NotImplementedError(
            f"shard_map over some of the mesh axes (axis_names={sorted(names)} of "
            f"{mesh.axis_names}): plait's shard_map makes every mesh axis manual")
    return names


def shard_map_call(f: Callable[..., Any], args: Sequence[Any], mesh: Mesh, in_specs: Any,
                   out_specs: Any, check_vma: bool, manual: frozenset[str],
                   name: str | None = None) -> Any:
    """Stage ``f`` applied per device to ``args`` as one ``shard_map`` equation (inside a
    trace); returns the assembled results."""
    pairs, in_tree = tree_flatten_with_path(tuple(args))
    leaves = [x for _, x in pairs]
    names = tuple(f"args{keystr(p)}" for p, _ in pairs)
    in_avals = [abstractify(x, arg_path(names, i), "shard_map") for i, x in enumerate(leaves)]
    if in_specs is None:  # over Explicit axes: each argument as its type splits it
        specs: list[Any] = [_typed_spec(a) for a in in_avals]
    elif isinstance(in_specs, PartitionSpec):
        specs = [in_specs] * len(leaves)
    else:
        specs = broadcast_prefix(tuple(in_specs) if isinstance(in_specs, list) else in_specs,
                                 tuple(args), "shard_map in_specs")
    for s in specs:
        _spec_error(s, "in_specs")
    specs = [_as_spec(s) for s in specs]
    blocks = []
    for i, (a, s) in enumerate(zip(in_avals, specs)):
        try:
            blocks.append(block_aval(mesh, s, a, manual))
        except JaxprTypeError as e:
            raise ValueError(
                f"shard_map applied to the function {name or fun_name(f)!r} was given an "
                f"argument {names[i]} of type {a.str_short()} that does not divide by its "
                f"in_specs entry {s!r} over {mesh}: {e}") from None
    sizes = {n: s for n, s in zip(mesh.axis_names, mesh.axis_sizes) if n in manual}
    debug = DebugInfo(name or fun_name(f), names, ())
    inside = abstract_mesh_of(mesh)
    inside = inside.update(axis_types=[AxisType.Manual if n in manual else t for n, t in
                                       zip(inside.axis_names, inside.axis_types)])
    with axis_env.frame(sizes), use_abstract_mesh(inside, _any_size=True):
        traced = trace_to_jaxpr(f, in_tree, blocks, "shard_map", debug)
    jaxpr = convert_constvars(traced.closed.jaxpr).replace(debug_info=None)
    consts = traced.closed.consts
    out_avals = traced.out_avals
    outs_example = tree_unflatten(traced.out_tree, [0] * len(out_avals))
    if isinstance(out_specs, PartitionSpec):
        out_per = [out_specs] * len(out_avals)
    elif callable(out_specs):  # (pmap's: resolved by its body as it was traced)
        out_per = list(out_specs())
    else:
        # (A None result is an empty subtree, with no spec of its own, as in JAX.)
        out_per = broadcast_prefix(tuple(out_specs) if isinstance(out_specs, list)
                                   else out_specs, outs_example, "shard_map out_specs")
    for s in out_per:
        _spec_error(s, "out_specs")
    out_specs_t = tuple(_as_spec(s) for s in out_per)
    for i, (a, s) in enumerate(zip(out_avals, out_specs_t)):
        if len(s) > a.ndim:
            raise ValueError(f"shard_map out_specs: expected at most {a.ndim} entries for "
                             f"result {traced.debug_info.result_paths[i]} of type "
                             f"{a.str_short()}, but got {s!r}")
    if check_vma:
        _check_replication(name or fun_name(f), jaxpr, mesh, manual, len(consts), specs,
                           out_specs_t)
    outs = bind(shard_map_p, *consts, *leaves, jaxpr=ClosedJaxpr(jaxpr), mesh=mesh,
                in_specs=(PartitionSpec(),) * len(consts) + tuple(specs),
                out_specs=out_specs_t, check_vma=check_vma, newly_manual_axes=manual)
    return tree_unflatten(traced.out_tree, outs)


def _spec_axes(spec: PartitionSpec) -> frozenset[str]:
    names: set[str] = set()
    for entry in spec:
        names.update(entry if isinstance(entry, tuple) else () if entry is None else (entry,))
    return frozenset(names)


def _axes_str(axes: frozenset[str]) -> str:
    return "{" + ", ".join(sorted(axes)) + "}"


def _check_replication(name: str, jaxpr: Any, mesh: Mesh, manual: frozenset[str],
                       n_consts: int, in_specs: Sequence[PartitionSpec],
                       out_specs: Sequence[PartitionSpec]) -> None:
    """Refuse an ``out_specs`` entry that leaves out a mesh axis its result may vary
    over: its global value would silently be one device's block (JAX's check_vma)."""
    ins = [frozenset[str]()] * n_consts + [_spec_axes(s) & manual for s in in_specs]
    for spec, varying in zip(out_specs, varying_axes(jaxpr, ins)):
        unclaimed = (varying & manual) - _spec_axes(spec)
        if unclaimed:
            raise ValueError(
                f"shard_map applied to the function {name!r} was given out_specs which "
                f"require replication which can't be statically inferred given the mesh:\n\n"
                f"The mesh given has shape {tuple(mesh.axis_sizes)} with corresponding axis "
                f"names {tuple(mesh.axis_names)}.\n\nout_specs is {spec!r} which implies "
                f"that the corresponding output value is only varying across mesh axes "
                f"{_axes_str(_spec_axes(spec))} and not {_axes_str(unclaimed)}, but it was "
                f"inferred to be possibly varying over {_axes_str(varying & manual)}\n\n"
                f"Check if these output values are meant to be replicated over those mesh "
                f"axes: reduce them (lax.psum, lax.all_gather) over the axes, or name the "
                f"axes in out_specs. If they are replicated, pass check_vma=False to "
                f"shard_map to skip this check.")


def shard_map(f: F | None = None, /, *, out_specs: Any, in_specs: Any = None,
              mesh: Mesh | None = None, axis_names: Any = frozenset(),
              check_vma: bool = True) -> Any:
    """Map ``f`` over the devices of ``mesh``: each device calls ``f`` on its blocks of the
    arguments (cut by ``in_specs``, a pytree prefix of the positional arguments of
    :class:`~plait.sharding.PartitionSpec`\\ s), and the per-device results form the global
    results by ``out_specs``.  Inside ``f``, collectives (``lax.psum(x, 'x')`` ...) act
    over the mesh axes.  Without ``mesh``, the mesh set by ``plait.set_mesh`` is used.

    With ``check_vma=True`` (the default), a result whose ``out_specs`` entry leaves
    out a mesh axis it may vary over is a ``ValueError`` (reduce it over the axis, or
    name the axis); plait infers this from the body's collectives and data flow, as
    JAX's old ``check_rep`` did, but values carry no varying-axes type (no ``{V:i}`` in
    ``typeof``; ``lax.pcast(x, axes, to='varying')`` marks a value as varying, as JAX's
    ``pvary``, for that analysis only).  Every mesh axis is manual.
    """
    if f is None:
        return functools.partial(shard_map, out_specs=out_specs, in_specs=in_specs, mesh=mesh,
                                 axis_names=axis_names, check_vma=check_vma)
    if not callable(f):
        raise TypeError(f"shard_map requires a callable for its first argument, but got {f!r}")
    def over(mesh: Any) -> tuple[Callable[..., Any], Callable[..., Any]]:
        """The staged and the compiled program over ``mesh`` (checked)."""
        if not isinstance(mesh, Mesh):
            raise TypeError(f"shard_map requires a plait.sharding.Mesh for mesh=, but got "
                            f"{type(mesh).__name__}")
        manual = _manual(mesh, axis_names)
        explicit = all(t is AxisType.Explicit for n, t in zip(mesh.axis_names, mesh.axis_types)
                       if n in manual)
        if in_specs is None and not explicit:  # (JAX infers them only over Explicit axes)
            raise TypeError("shard_map in_specs argument must be a pytree of "
                            "`plait.sharding.PartitionSpec` instances, but it was `None` when "
                            f"axis_names={frozenset_str(manual)} are of type "
                            + ", ".join(str(t) for n, t in zip(mesh.axis_names,
                                                               mesh.axis_types)
                                        if n in manual))

        def staged(*args: Any) -> Any:
            return shard_map_call(f, args, mesh, in_specs, out_specs, bool(check_vma), manual)
        staged.__name__ = fun_name(f)
        return staged, jit(staged)

    # Without mesh=, the mesh is the one current at each call (as in JAX), not at
    # definition: a function defined under one mesh may run under another.
    fixed = over(mesh) if mesh is not None else None
    by_mesh: dict[Mesh, tuple[Callable[..., Any], Callable[..., Any]]] = {}

    @wraps(f)
    @api_boundary
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if kwargs:
            raise TypeError("shard_map'd functions take positional arguments only (in_specs "
                            f"is a prefix of them), but got keywords {sorted(kwargs)}")
        programs = fixed
        if programs is None:
            current = current_mesh()
            if current is None:
                raise ValueError("shard_map: expected mesh=, or a mesh set with plait.set_mesh")
            programs = by_mesh.get(current)
            if programs is None:
                programs = by_mesh[current] = over(current)
        staged, compiled = programs
        if _state.stack:
            return staged(*args)
        return compiled(*args)  # (outside a trace: compiled once per signature)
    return wrapper



class _InferFromArgs:
    """``smap``'s default ``in_axes``: the mapped axes read off the arguments' shardings
    (over ``Explicit`` mesh axes), as JAX's ``Infer``."""

    def __repr__(self) -> str:
        return "Infer"


Infer = _InferFromArgs()


def smap(f: F | None = None, /, *, in_axes: Any = Infer, out_axes: Any,
         axis_name: str) -> Any:
    """``shard_map`` over one mesh axis, with ``vmap``-style axes: ``in_axes`` (an int,
    None, or a tuple with one entry per positional argument) names the dimension of
    each argument split over ``axis_name``, and ``out_axes`` the dimension of each
    result the devices' results are concatenated along (None: the same on every
    device).  The mesh is the current one (``plait.set_mesh``).  plait's ``shard_map``
    makes every mesh axis manual, so the mesh must have ``axis_name`` as its only axis.

    Raises:
      TypeError: malformed ``axis_name``, ``in_axes`` or ``out_axes``.
      NotImplementedError: the mesh has other axes.
    """
    if f is None:
        return functools.partial(smap, in_axes=in_axes, out_axes=out_axes, axis_name=axis_name)
    if isinstance(axis_name, list | tuple):
        raise TypeError(f"smap axis_name should be a `str` or a `Hashable`, but got "
                        f"{axis_name}")
    if in_axes is not None and in_axes is not Infer and not isinstance(in_axes, int | tuple):
        raise TypeError("smap in_axes must be an int, None, Infer, or a tuple of entries "
                        "corresponding to the positional arguments passed to the function, "
                        f"but got {in_axes}.")
    if in_axes is not Infer and not all(isinstance(a, int) for a in tree_leaves(in_axes)):
        raise TypeError("smap in_axes must be an int, None, Infer, or (nested) container "
                        f"with those types as leaves, but got {in_axes}.")
    if not all(isinstance(a, int) for a in tree_leaves(out_axes)):
        raise TypeError("smap out_axes must be an int, None, or (nested) container with "
                        f"those types as leaves, but got {out_axes}.")

    def spec(axis: int | None) -> PartitionSpec:
        return PartitionSpec() if axis is None else PartitionSpec(*[None] * axis, axis_name)
    in_specs = (None if in_axes is Infer else
                tree_map(spec, in_axes, is_leaf=lambda a: a is None))
    return shard_map(f, in_specs=in_specs, axis_names=frozenset({axis_name}),
                     out_specs=tree_map(spec, out_axes, is_leaf=lambda a: a is None))


def experimental_shard_map(f: Callable[..., Any], mesh: Mesh, in_specs: Any, out_specs: Any,
                           check_rep: bool = True,
                           auto: frozenset[str] = frozenset()) -> Callable[..., Any]:
    """``jax.experimental.shard_map.shard_map``, the first form of :func:`shard_map`: the
    mesh and the specs positional, ``check_rep`` for ``check_vma``, and ``auto`` naming
    the axes left to the partitioner instead of those made manual."""
    return shard_map(f, mesh=mesh, in_specs=in_specs, out_specs=out_specs,  # type: ignore[no-any-return]  # (shard_map returns the wrapper when given f)
                     check_vma=check_rep,
                     axis_names=frozenset(mesh.axis_names) - frozenset(auto))

"""``plait.vmap``: vectorizing a function by rewriting its jaxpr."""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any, ParamSpec, TypeVar

import attrs

from plait.frontend.api.refs import pure_with_refs
from plait.frontend.core.apply_jaxpr import apply_jaxpr
from plait.frontend.core.arguments import ShapeDtypeStruct, abstractify, arg_path, wraps
from plait.frontend.core.refs import check_distinct, read, ref_leaves, write
from plait.frontend.core.trace_to_jaxpr import FlatCall, flatten_call, trace_function
from plait.frontend.core.traceback_util import api_boundary
from plait.frontend.core.tracing import is_traced
from plait.frontend.core.tree_util import (
    TreePrefixError,
    broadcast_prefix,
    tree_leaves,
    tree_structure,
    tree_unflatten,
)
from plait.ir import axis_env
from plait.ir import dtypes as dt
from plait.ir.avals import ShapedArray, shaped
from plait.ir.jaxpr import consts_as_invars
from plait.transforms.vmap import vmap_jaxpr

__all__ = ["vmap"]


P = ParamSpec("P")
R = TypeVar("R")

def _type_name(a: ShapedArray) -> str:
    dtype = dt.key_field(a.dtype) if dt.is_key(a.dtype) else a.dtype.name  # (key<fry>)
    return f"{dtype}[{','.join(map(str, a.shape))}]"


def _size_error(groups: dict[int, list[str]]) -> ValueError:
    lines = []
    for size, where in sorted(groups.items(), key=lambda kv: -len(kv[1])):
        if len(where) == 1:
            lines.append(f"  * one axis had size {size}: {where[0]}")
        else:
            lines.append(f"  * {len(where)} axes had size {size}, e.g. {where[0]}")
    return ValueError("vmap got inconsistent sizes for array axes to be mapped:\n"
                      + ";\n".join(lines))


def _in_dims(in_axes: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[Any]:
    if isinstance(in_axes, tuple) and len(in_axes) != len(args):
        raise TreePrefixError(
            "vmap in_axes must be an int, None, or a tuple of entries corresponding to the "
            f"positional arguments passed to the function, but got len(in_axes)={len(in_axes)}, "
            f"len(args)={len(args)}")
    # Keyword arguments are always mapped over their axis 0.
    return (broadcast_prefix(in_axes, args, "vmap in_axes")
            + [0] * len(tree_leaves(kwargs)))


def _check_axes_spec(axes: Any, what: str) -> None:
    if not all(type(leaf) is int for leaf in tree_leaves(axes)):
        raise TypeError(f"vmap {what} must be an int, None, or (nested) container with those "
                        f"types as leaves, but got {axes!r}.")


def vmap(fun: Callable[P, R], in_axes: Any = 0, out_axes: Any = 0,
         axis_name: str | None = None, axis_size: int | None = None,
         spmd_axis_name: str | tuple[str, ...] | None = None) -> Callable[P, R]:
    """Vectorize ``fun`` over an axis of its arguments.

    ``in_axes`` (an int, ``None``, or a tuple with one entry per positional
    argument, each a pytree prefix) gives the mapped axis of each argument
    (``None``: not mapped); keyword arguments are mapped over axis 0.
    ``out_axes`` places the mapped axis in the outputs.  ``axis_size`` is
    needed only when no argument is mapped.  With ``axis_name``, collectives
    (``lax.psum(x, axis_name)``, ``lax.axis_index`` ...) in ``fun`` act across the
    mapped elements.  ``spmd_axis_name`` (a mesh axis name, or a tuple of them) splits
    the mapped axis over those mesh axes in the sharding constraints and reshards inside
    ``fun`` (without it, the mapped axis is whole on every device).
    """
    if axis_name is not None and not isinstance(axis_name, str):
        raise TypeError(f"vmap axis_name: expected a string, but got {axis_name!r}")
    if isinstance(spmd_axis_name, list):
        spmd_axis_name = tuple(spmd_axis_name)
    if not (spmd_axis_name is None or isinstance(spmd_axis_name, str) or (
            isinstance(spmd_axis_name, tuple) and spmd_axis_name
            and all(isinstance(n, str) for n in spmd_axis_name))):
        raise TypeError(f"vmap spmd_axis_name: expected a mesh axis name or a tuple of them, "
                        f"but got {spmd_axis_name!r}")
    if isinstance(in_axes, list):
        # Lists and tuples are interchangeable here, as in JAX (a list can never be a
        # tree prefix of the positional arguments' tuple).
        in_axes = tuple(in_axes)
    if not (in_axes is None or type(in_axes) in (int, tuple)):
        raise TypeError("vmap in_axes must be an int, None, or a tuple of entries corresponding "
                        f"to the positional arguments passed to the function, but got {in_axes!r}.")
    _check_axes_spec(in_axes, "in_axes")
    _check_axes_spec(out_axes, "out_axes")

    @wraps(fun)
    @api_boundary
    def vmap_f(*args: Any, **kwargs: Any) -> Any:
        call = flatten_call(fun, args, kwargs, (), ())
        names = call.debug_info.arg_names
        dims = _in_dims(in_axes, args, kwargs)
        pos = ref_leaves(call.leaves)
        if pos:
            return _vmap_refs(fun, call, pos, dims, out_axes, axis_name, axis_size,
                              spmd_axis_name)
        # Unmapped leaves may be any Python object (they are not traced).
        avals = [abstractify(x, arg_path(names, i), "vmap") if d is not None else None
                 for i, (x, d) in enumerate(zip(call.leaves, dims))]
        norm: list[int | None] = []
        groups: dict[int, list[str]] = {}
        for i, (d, a) in enumerate(zip(dims, avals)):
            if d is None or a is None:
                norm.append(None)
                continue
            if not -a.ndim <= d < a.ndim:
                raise ValueError(
                    f"vmap was requested to map its argument along axis {d}, which implies that "
                    f"its rank should be at least {d + 1 if d >= 0 else -d}, but is only "
                    f"{a.ndim} (its shape is {a.shape}) for {arg_path(names, i)}")
            d %= a.ndim
            norm.append(d)
            groups.setdefault(a.shape[d], []).append(
                f"axis {d} of argument {arg_path(names, i)} of type {_type_name(a)}")
        if len(groups) > 1:
            raise _size_error(groups)
        if groups:
            size = next(iter(groups))
            if axis_size is not None and axis_size != size:
                raise ValueError(f"vmap got axis_size={axis_size} but the mapped axes have size "
                                 f"{size}")
        elif axis_size is None:
            raise ValueError("vmap must have at least one non-None value in in_axes, or an "
                             "axis_size")
        else:
            size = axis_size
        # Only the mapped leaves are traced; the unmapped ones are closed over as they
        # are, so they stay concrete (static arguments of an inner jit, Python control
        # flow), as in JAX.
        mapped = [i for i, d in enumerate(norm) if d is not None]

        def mapped_fun(*xs: Any) -> Any:
            if xs and is_traced(xs[0]):  # (what the tracers print: tracer_reprs)
                xs[0]._trace.batch = (size, {x._var: norm[i] for x, i in zip(xs, mapped)})
            full = list(call.leaves)
            for i, x in zip(mapped, xs):
                full[i] = x
            a, k = tree_unflatten(call.in_tree, full)
            return fun(*a, **k)
        mapped_fun.__name__ = call.debug_info.func_name
        inner = []
        for i in mapped:
            a, d = avals[i], norm[i]
            assert a is not None and d is not None
            inner.append(ShapeDtypeStruct(a.shape[:d] + a.shape[d + 1:], a.dtype, a.weak_type))
        inner_call = call.__class__(inner, tree_structure((tuple(inner), {})), ((), ()),
                                    attrs.evolve(call.debug_info,
                                                 arg_names=tuple(names[i] for i in mapped)),
                                    [call.paths[i] for i in mapped])
        with axis_env.frame({axis_name: size} if axis_name is not None else {}):
            traced = trace_function(mapped_fun, inner_call, "vmap", constants_known=True)
        closed, consts = consts_as_invars(traced.closed)
        out_example = tree_unflatten(traced.out_tree, [0] * traced.out_tree.num_leaves)
        # (Only the prefix's Nones are leaves: a None among the results is an empty
        # subtree, with no axis of its own.)
        out_dims = broadcast_prefix(out_axes, out_example, "vmap out_axes")
        out_norm: list[int | None] = []
        for i, (d, out_aval) in enumerate(zip(out_dims, closed.out_avals)):
            if d is None:
                out_norm.append(None)
                continue
            nd = shaped(out_aval).ndim + 1
            if not -nd <= d < nd:
                raise ValueError(f"vmap out_axes {d} is out of range for a batched output of "
                                 f"rank {nd} (output {traced.debug_info.result_paths[i]})")
            out_norm.append(d % nd)
        batched = vmap_jaxpr(closed.jaxpr, size, [None] * len(consts) + [norm[i] for i in mapped],
                             out_norm, axis_name, spmd_axis_name)
        outs = apply_jaxpr(batched, (), [*consts, *[call.leaves[i] for i in mapped]],
                           f"vmap_{traced.debug_info.func_name}")
        return tree_unflatten(traced.out_tree, outs)

    return vmap_f


def _vmap_refs(fun: Callable[..., Any], call: FlatCall, pos: list[int],
               dims: Sequence[int | None], out_axes: Any, axis_name: str | None,
               axis_size: int | None, spmd_axis_name: str | tuple[str, ...] | None) -> Any:
    """vmap of a call with Ref arguments: of the function of their values (mapped as the
    Refs are), each Ref's final value written back along the same axis."""
    refs = [call.leaves[i] for i in pos]
    check_distinct(refs, f"vmap({call.debug_info.func_name})")
    others = [x for i, x in enumerate(call.leaves) if i not in pos]
    ref_dims = [dims[i] for i in pos]
    pure = pure_with_refs(fun, call.in_tree, pos, None, lambda: refs)
    functools.update_wrapper(pure, fun)
    mapped = vmap(pure, in_axes=(ref_dims, [d for i, d in enumerate(dims) if i not in pos]),
                  out_axes=(out_axes, ref_dims), axis_name=axis_name, axis_size=axis_size,
                  spmd_axis_name=spmd_axis_name)
    out, finals = mapped([read(r) for r in refs], others)
    for r, v in zip(refs, finals):
        write(r, v)
    return out

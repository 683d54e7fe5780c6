"""``plait.vmap``: vectorizing a function by rewriting its jaxpr."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from plait.errors import ArgumentError
from plait.ir.avals import ShapedArray
from plait.transforms.vmap import vmap_jaxpr
from plait.frontend.api_util import ShapeDtypeStruct, abstractify, arg_path
from plait.frontend.apply import apply_jaxpr
from plait.frontend.jit import consts_as_invars
from plait.frontend.trace_fun import flatten_call, trace_function
from plait.frontend.traceback_util import api_boundary
from plait.frontend.tree_util import broadcast_prefix, tree_unflatten

__all__ = ["vmap"]


def _type_name(a: ShapedArray) -> str:
    return f"{a.dtype.name}[{','.join(map(str, a.shape))}]"


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
    if isinstance(in_axes, list):
        raise ArgumentError(
            "vmap in_axes must be an int, None, or a tuple of entries corresponding to the "
            f"positional arguments passed to the function, but got {in_axes!r}.")
    if isinstance(in_axes, tuple) and len(in_axes) != len(args):
        raise ArgumentError(
            f"vmap in_axes must be a tuple with one entry per positional argument: got "
            f"{len(in_axes)} entries for {len(args)} arguments")
    prefix = (in_axes, {k: 0 for k in kwargs})
    return broadcast_prefix(prefix, (args, kwargs), "vmap in_axes")


def vmap(fun: Callable[..., Any], in_axes: Any = 0, out_axes: Any = 0,
         axis_name: str | None = None, axis_size: int | None = None) -> Callable[..., Any]:
    """Vectorize ``fun`` over an axis of its arguments.

    ``in_axes`` (an int, ``None``, or a tuple with one entry per positional
    argument, each a pytree prefix) gives the mapped axis of each argument
    (``None``: not mapped); keyword arguments are mapped over axis 0.
    ``out_axes`` places the mapped axis in the outputs.  ``axis_size`` is
    needed only when no argument is mapped.
    """
    if axis_name is not None:
        raise NotImplementedError("vmap axis_name (collectives) is not supported yet")

    @functools.wraps(fun)
    @api_boundary
    def vmap_f(*args: Any, **kwargs: Any) -> Any:
        call = flatten_call(fun, args, kwargs, (), ())
        names = call.debug_info.arg_names
        dims = _in_dims(in_axes, args, kwargs)
        avals = [abstractify(x, arg_path(names, i), "vmap") for i, x in enumerate(call.leaves)]
        norm: list[int | None] = []
        groups: dict[int, list[str]] = {}
        for i, (d, a) in enumerate(zip(dims, avals)):
            if d is None:
                norm.append(None)
                continue
            if not isinstance(d, int):
                raise ArgumentError(f"vmap in_axes leaves must be ints or None, but got {d!r}")
            if not -a.ndim <= d < a.ndim:
                raise ArgumentError(
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
            raise ArgumentError("vmap must have at least one non-None value in in_axes, or an "
                                "axis_size")
        else:
            size = axis_size
        inner = [ShapeDtypeStruct(a.shape[:d] + a.shape[d + 1:], a.dtype, a.weak_type)
                 if d is not None else ShapeDtypeStruct(a.shape, a.dtype, a.weak_type)
                 for a, d in zip(avals, norm)]
        inner_call = call.__class__(inner, call.in_tree, call.static_key, call.debug_info,
                                    call.paths)
        traced = trace_function(fun, inner_call, "vmap")
        closed, consts = consts_as_invars(traced.closed)
        out_example = tree_unflatten(traced.out_tree, [0] * traced.out_tree.num_leaves)
        out_dims = broadcast_prefix(out_axes, out_example, "vmap out_axes",
                                    is_leaf=lambda x: x is None)
        out_norm = []
        for d, a in zip(out_dims, closed.out_avals):
            if d is None:
                out_norm.append(None)
                continue
            nd = a.ndim + 1  # type: ignore[attr-defined]
            if not -nd <= d < nd:
                raise ArgumentError(f"vmap out_axes {d} is out of range for an output of rank {nd}")
            out_norm.append(d % nd)
        batched = vmap_jaxpr(closed.jaxpr, size, [None] * len(consts) + norm, out_norm)
        outs = apply_jaxpr(batched, (), [*consts, *call.leaves],
                           f"vmap_{traced.debug_info.func_name}")
        return tree_unflatten(traced.out_tree, outs)

    return vmap_f

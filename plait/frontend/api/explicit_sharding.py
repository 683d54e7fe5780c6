"""Sharding in types: ``reshard`` and the ``out_sharding=`` of array constructors.

Over a mesh with ``Explicit`` axes, an array's type says how it is split
(``typeof(x)`` prints ``f32[8@X,4]``), each operation's sharding rule gives its
result's, and :func:`reshard` changes it.  The rules themselves are IR
(:mod:`plait.ir.sharding_rules`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from plait.frontend.core.arguments import wraps
from plait.frontend.core.array_base import Array
from plait.frontend.core.host_values import value_aval
from plait.frontend.core.tracing import Tracer, bind1
from plait.frontend.core.tree_util import broadcast_prefix, tree_flatten, tree_unflatten
from plait.frontend.lax.ops import _operands
from plait.ir import primitives as P
from plait.ir.avals import type_sharding
from plait.ir.errors import JaxprTypeError
from plait.ir.sharding import (
    AbstractMesh,
    AxisType,
    Mesh,
    NamedSharding,
    PartitionSpec,
    current_mesh,
    get_abstract_mesh,
    set_mesh,
    type_sharding_of,
    use_abstract_mesh,
)

__all__ = ["reshard", "auto_axes", "explicit_axes"]


def _is_sharding(s: Any) -> bool:
    return isinstance(s, NamedSharding | PartitionSpec)


def reshard(xs: Any, out_shardings: Any) -> Any:
    """``xs`` (a pytree of arrays) with the sharding in their types changed to
    ``out_shardings`` (a ``PartitionSpec`` over the current mesh, a ``NamedSharding``, or
    a pytree prefix of ``xs`` of them): the values are the same, the compiler moves the
    data.  Works under ``jit`` and on concrete arrays.

    Raises:
      TypeError: a leaf is not an array, or a sharding is neither kind.
      ValueError: a spec does not fit its array (rank, divisibility, non-``Explicit``
        axes), or no mesh is set for a bare spec.
    """
    leaves, tree = tree_flatten(xs)
    if _is_sharding(out_shardings):
        per = [out_shardings] * len(leaves)
    else:
        per = broadcast_prefix(out_shardings, xs, "reshard out_shardings", _is_sharding)
    outs = []
    for i, (leaf, s) in enumerate(zip(leaves, per)):
        dst = type_sharding_of(s, "reshard")
        (op,) = _operands("reshard", leaf)
        aval = value_aval(op)
        entries = tuple(dst.spec)
        if len(entries) > aval.ndim and all(e is None for e in entries[aval.ndim:]):
            # Entries of None past the rank are dropped, as JAX's reshard drops them.
            dst = dst.update(spec=entries[:aval.ndim])
        try:
            type_sharding(dst, aval.shape)
        except JaxprTypeError as e:
            where = f" (leaf {i})" if len(leaves) > 1 else ""
            raise ValueError(f"reshard{where}: {e}") from None
        mesh = getattr(s, "mesh", None)
        if isinstance(mesh, Mesh) and current_mesh() is None and not isinstance(op, Tracer):
            # A concrete array resharded onto a mesh of devices, with no mesh set: the
            # sharding's mesh is where the result lives, as in JAX.
            with set_mesh(mesh):
                outs.append(bind1(P.reshard_p, op, dst_sharding=dst))
        else:
            outs.append(bind1(P.reshard_p, op, dst_sharding=dst))
    return tree_unflatten(tree, outs)



def _switched(axes: str | tuple[str, ...] | None, kind: AxisType, what: str
              ) -> tuple[AbstractMesh, AbstractMesh] | None:
    """The current abstract mesh and the same with ``axes`` (default: all) of type
    ``kind``; ``None`` when no mesh is set."""
    prev = get_abstract_mesh()
    if prev.empty:
        return None
    names = prev.axis_names if axes is None else (axes,) if isinstance(axes, str) else axes
    unknown = [n for n in names if n not in prev.axis_names]
    if unknown:
        raise ValueError(f"{what}: expected axes of the current mesh {prev}, but got "
                         f"{', '.join(map(repr, unknown))}")
    types = [kind if n in names else t for n, t in zip(prev.axis_names, prev.axis_types)]
    return prev, prev.update(axis_types=types)


def _cast(xs: Any) -> Any:
    """The array leaves of ``xs`` typed over the current abstract mesh, split as before
    over the axes still ``Explicit`` (their data is not moved)."""
    leaves, tree = tree_flatten(xs)
    return tree_unflatten(tree, [
        reshard(x, PartitionSpec(*value_aval(x).sharding.spec)) if isinstance(x, Array)
        else x for x in leaves])


def _keyword(given: Any, kwargs: dict[str, Any], name: str) -> Any:
    value = given if given is not None else kwargs.pop(name, None)
    if value is None:
        raise TypeError(f"Missing required keyword argument: {name!r}")
    return value


def auto_axes(f: Callable[..., Any] | None = None, /, *,
              axes: str | tuple[str, ...] | None = None, out_sharding: Any = None) -> Any:
    """``f`` run with mesh ``axes`` (default: all) of type ``Auto``: inside, types do not
    say how those axes split values and the partitioner decides; the results are
    resharded to ``out_sharding`` (given here or as a keyword of the call).  A decorator,
    with or without arguments, as JAX's.

    Raises:
      TypeError: no ``out_sharding`` is given.
      ValueError: ``axes`` names an axis the current mesh does not have.
    """
    def decorate(fun: Callable[..., Any]) -> Callable[..., Any]:
        @wraps(fun)
        def run(*args: Any, **kwargs: Any) -> Any:
            sharding = _keyword(out_sharding, kwargs, "out_sharding")
            info = _switched(axes, AxisType.Auto, "auto_axes")
            if info is None or info[0] == info[1]:
                return fun(*args, **kwargs)
            with use_abstract_mesh(info[1]):
                args, kwargs = _cast((args, kwargs))
                out = fun(*args, **kwargs)
            return reshard(out, sharding)
        return run
    return decorate if f is None else decorate(f)


def explicit_axes(f: Callable[..., Any] | None = None, /, *,
                  axes: str | tuple[str, ...] | None = None, in_sharding: Any = None) -> Any:
    """``f`` run with mesh ``axes`` (default: all) of type ``Explicit``, its arguments
    resharded to ``in_sharding`` (given here or as a keyword of the call); the results
    leave typed over the caller's mesh.  The inverse of :func:`auto_axes`.

    Raises:
      TypeError: no ``in_sharding`` is given.
      ValueError: no mesh is set, or ``axes`` names an axis it does not have.
    """
    def decorate(fun: Callable[..., Any]) -> Callable[..., Any]:
        @wraps(fun)
        def run(*args: Any, **kwargs: Any) -> Any:
            sharding = _keyword(in_sharding, kwargs, "in_sharding")
            info = _switched(axes, AxisType.Explicit, "explicit_axes")
            if info is None:
                raise ValueError("explicit_axes: expected a current mesh, but none is set: "
                                 "use `with plait.set_mesh(mesh):`")
            with use_abstract_mesh(info[1]):
                args = reshard(args, sharding)
                out = fun(*args, **kwargs)
            return _cast(out)
        return run
    return decorate if f is None else decorate(f)

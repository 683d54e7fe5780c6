"""The user API of the foundation: ``make_jaxpr``."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Literal, ParamSpec, overload

from plait.frontend.api.refs import with_finals
from plait.frontend.core.arguments import ShapeDtypeStruct, static_args, struct_of, wraps
from plait.frontend.core.refs import Ref, carrying_refs
from plait.frontend.core.trace_to_jaxpr import flatten_call, trace_function
from plait.frontend.core.traceback_util import api_boundary
from plait.frontend.core.tree_util import PyTreeDef, tree_flatten, tree_unflatten
from plait.ir.avals import shaped_avals
from plait.ir.axis_env import frame as axis_env_frame
from plait.ir.jaxpr import ClosedJaxpr

__all__ = ["make_jaxpr", "eval_shape"]


P = ParamSpec("P")

@overload
def make_jaxpr(fun: Callable[P, Any], static_argnums: int | Sequence[int] = (),
               axis_env: Sequence[tuple[str, int]] | None = None, *,
               static_argnames: str | Sequence[str] = (),
               return_shape: Literal[False] = False) -> Callable[P, ClosedJaxpr]: ...
@overload
def make_jaxpr(fun: Callable[P, Any], static_argnums: int | Sequence[int] = (),
               axis_env: Sequence[tuple[str, int]] | None = None, *,
               static_argnames: str | Sequence[str] = (),
               return_shape: Literal[True]) -> Callable[P, tuple[ClosedJaxpr, Any]]: ...
@overload
def make_jaxpr(fun: Callable[P, Any], static_argnums: int | Sequence[int] = (),
               axis_env: Sequence[tuple[str, int]] | None = None, *,
               static_argnames: str | Sequence[str] = (),
               return_shape: bool) -> Callable[P, Any]: ...
def make_jaxpr(fun: Callable[P, Any], static_argnums: int | Sequence[int] = (),
               axis_env: Sequence[tuple[str, int]] | None = None, *,
               static_argnames: str | Sequence[str] = (),
               return_shape: bool = False) -> Callable[P, Any]:
    """A function that traces ``fun`` and returns its :class:`~plait.ir.ClosedJaxpr`.

    Arguments may be pytrees of arrays, Python scalars and
    :class:`ShapeDtypeStruct`\\ s.  With ``return_shape=True`` it returns
    ``(closed_jaxpr, out_shapes)`` where ``out_shapes`` is a pytree of
    :class:`ShapeDtypeStruct`. ``axis_env`` names axes (``[('i', 4)]``) that collectives
    in ``fun`` may use, as if an enclosing map bound them.
    """
    nums, names = static_args(static_argnums, static_argnames)

    @wraps(fun)
    @api_boundary
    def make_jaxpr_f(*args: Any, **kwargs: Any) -> Any:
        def attempt(token: object, refs: tuple[Ref, ...]) -> Any:
            # A Ref of the caller the function uses: its value is a constant of the
            # program and its final value one more output (nothing is written).
            f = with_finals(fun, refs, False) if refs else fun
            call = flatten_call(f, args, kwargs, nums, names)
            with axis_env_frame(dict(axis_env or ())):
                traced = trace_function(f, call, "make_jaxpr", refs=token)
            closed: ClosedJaxpr = traced.closed
            if not return_shape:
                return closed
            shapes = [struct_of(a) for a in shaped_avals(closed.out_avals)]
            out = tree_unflatten(traced.out_tree, shapes)
            return closed, out[0] if refs else out
        return carrying_refs(attempt)

    return make_jaxpr_f


def eval_shape(fun: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """The shapes and dtypes of ``fun(*args, **kwargs)``, found by tracing only.

    Arguments may be arrays, scalars or :class:`ShapeDtypeStruct`\\ s; nothing is
    compiled or run.  Returns a pytree of ``ShapeDtypeStruct`` shaped like the result
    (a ``ShapeDtypeStruct`` the function returns is returned as it is, as in JAX).
    """
    def attempt(token: object, refs: tuple[Ref, ...]) -> Any:
        # Refs the function uses are read, never written: nothing runs.
        f = with_finals(fun, refs, False) if refs else fun
        given: dict[int, ShapeDtypeStruct] = {}
        tree: list[PyTreeDef] = []

        def traced_leaves(*a: Any, **k: Any) -> list[Any]:
            leaves, out_tree = tree_flatten(f(*a, **k))
            given.update((i, x) for i, x in enumerate(leaves) if type(x) is ShapeDtypeStruct)
            tree.append(out_tree)
            return [x for i, x in enumerate(leaves) if i not in given]

        call = flatten_call(f, args, kwargs, (), ())
        traced = trace_function(traced_leaves, call, "eval_shape", refs=token)
        shapes = iter([struct_of(a) for a in shaped_avals(traced.closed.out_avals)])
        out = tree_unflatten(tree[0], [given[i] if i in given else next(shapes)
                                       for i in range(tree[0].num_leaves)])
        return out[0] if refs else out
    return carrying_refs(attempt)

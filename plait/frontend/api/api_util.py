"""Helpers of JAX's ``jax.api_util`` for code that builds its own transformations on
:mod:`~plait.frontend.api.linear_util`'s wrapped functions: flattening a function's
arguments and results, fixing some arguments, donation vectors, debug info."""

from __future__ import annotations

import inspect
import operator
from collections.abc import Callable, Sequence
from typing import Any

from plait.frontend.api.linear_util import (
    Store,
    WrappedFun,
    transformation2,
    transformation_with_aux2,
)
from plait.frontend.core.arguments import abstractify, debug_info_for
from plait.frontend.core.tree_util import (
    PyTreeDef,
    broadcast_prefix,
    tree_flatten,
    tree_flatten_with_path,
    tree_unflatten,
    treedef_children,
)
from plait.ir.avals import AbstractValue
from plait.ir.debug_info import DebugInfo

__all__ = ["argnums_partial", "debug_info", "donation_vector", "flatten_axes", "flatten_fun",
           "flatten_fun_nokwargs", "infer_argnums_and_argnames", "rebase_donate_argnums",
           "safe_map", "shaped_abstractify"]


def _flatten_fun(f: Callable[..., Any], store: Store, in_tree: PyTreeDef,
                 *args_flat: Any) -> list[Any]:
    args, kwargs = tree_unflatten(in_tree, args_flat)
    out, out_tree = tree_flatten(f(*args, **kwargs))
    store.store(out_tree)
    return out


flatten_fun: Callable[[WrappedFun, PyTreeDef], tuple[WrappedFun, Callable[[], PyTreeDef]]] = (
    transformation_with_aux2(_flatten_fun))
"""``flatten_fun(fun, in_tree)``: ``fun`` taking the flat leaves of an ``(args, kwargs)``
tree of structure ``in_tree`` and returning a flat list, and a thunk giving the output tree
once it has run."""


def _flatten_fun_nokwargs(f: Callable[..., Any], store: Store, in_tree: PyTreeDef,
                          *args_flat: Any) -> list[Any]:
    out, out_tree = tree_flatten(f(*tree_unflatten(in_tree, args_flat)))
    store.store(out_tree)
    return out


flatten_fun_nokwargs: Callable[[WrappedFun, PyTreeDef],
                               tuple[WrappedFun, Callable[[], PyTreeDef]]] = (
    transformation_with_aux2(_flatten_fun_nokwargs))
"""As :data:`flatten_fun`, for an ``in_tree`` of the positional arguments' tuple only."""


class _Fixed:
    """A fixed argument in a WrappedFun's key: equal to another of the same type and
    value (``1`` and ``1.0`` are different arguments)."""

    __slots__ = ("val",)

    def __init__(self, val: Any) -> None:
        self.val = val

    def __hash__(self) -> int:
        return hash(self.val)

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, _Fixed) and type(self.val) is type(other.val)
                and bool(self.val == other.val))


class _Unhashable(_Fixed):
    """A fixed argument that is not hashable: equal only to itself."""

    __slots__ = ()

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Unhashable) and self.val is other.val

    __hash__ = object.__hash__


def _inbounds(num_args: int, argnums: Sequence[int], allow_invalid: bool) -> tuple[int, ...]:
    out = []
    for i in argnums:
        if i >= num_args and allow_invalid:
            continue
        if not -num_args <= i < num_args:
            raise ValueError(f"expected argument indices from {-num_args} to {num_args - 1} "
                             f"(for {num_args} arguments), but got {i}")
        out.append(i % num_args)
    return tuple(out)


def _index_tuple(x: int | Sequence[int]) -> tuple[int, ...]:
    try:
        return (operator.index(x),)  # type: ignore[arg-type]  # (an int, or else a sequence)
    except TypeError:
        return tuple(map(operator.index, x))  # type: ignore[arg-type]  # (a sequence)


def _str_tuple(x: str | Sequence[str]) -> tuple[str, ...]:
    return (x,) if isinstance(x, str) else tuple(x)


def infer_argnums_and_argnames(sig: inspect.Signature, argnums: int | Sequence[int] | None,
                               argnames: str | Sequence[str] | None
                               ) -> tuple[tuple[int, ...], tuple[str, ...]]:
    """Complete argument positions from names, or names from positions, by ``sig``: the
    positional-or-keyword parameters named or at a position given count. Both given, or
    neither (``((), ())``), they are returned as tuples, unchecked.

    Raises:
      TypeError: a position is not an integer.
    """
    if argnums is None and argnames is None:
        return (), ()
    if argnums is not None and argnames is not None:
        return _index_tuple(argnums), _str_tuple(argnames)
    either = [(i, p.name) for i, p in enumerate(sig.parameters.values())
              if p.kind == inspect.Parameter.POSITIONAL_OR_KEYWORD]
    if argnums is None:
        names = _str_tuple(argnames)  # type: ignore[arg-type]  # (not None: see above)
        return tuple(i for i, name in either if name in names), names
    nums = _index_tuple(argnums)
    return nums, tuple(name for i, name in either if i in nums)


def _with_fixed(f: Callable[..., Any], dyn_argnums: tuple[int, ...],
                fixed: tuple[_Fixed, ...], *dyn_args: Any, **kwargs: Any) -> Any:
    args: list[Any] = [None] * (len(fixed) + len(dyn_args))
    dyn = dict(zip(dyn_argnums, dyn_args))
    rest = iter(fixed)
    for i in range(len(args)):
        args[i] = dyn[i] if i in dyn else next(rest).val
    return f(*args, **kwargs)


_add_fixed = transformation2(_with_fixed)


def argnums_partial(f: WrappedFun, dyn_argnums: int | Sequence[int], args: Sequence[Any],
                    require_static_args_hashable: bool = True
                    ) -> tuple[WrappedFun, tuple[Any, ...]]:
    """``f`` with the arguments not in ``dyn_argnums`` fixed to their values in ``args``,
    and the dynamic arguments to call it with.

    Raises:
      ValueError: an index is out of range, or (with ``require_static_args_hashable``)
        a fixed argument is not hashable.
    """
    dyn = _inbounds(len(args), _index_tuple(dyn_argnums), False)
    fixed: list[_Fixed] = []
    for i, arg in enumerate(args):
        if i in dyn:
            continue
        if not require_static_args_hashable:
            fixed.append(_Unhashable(arg))
            continue
        try:
            hash(arg)
        except TypeError:
            raise ValueError(f"argnums_partial: expected hashable fixed arguments, but "
                             f"argument {i} of {f.__name__} is a {type(arg).__name__}, "
                             "which is not hashable") from None
        fixed.append(_Fixed(arg))
    wrapped: WrappedFun = _add_fixed(f, dyn, tuple(fixed))
    return wrapped, tuple(args[i] for i in dyn)


def donation_vector(donate_argnums: Sequence[int], donate_argnames: Sequence[str],
                    in_tree: PyTreeDef, kws: bool = True) -> tuple[bool, ...]:
    """One flag per leaf of ``in_tree`` (an ``(args, kwargs)`` tree, or with
    ``kws=False`` the positional arguments' tuple): whether it is donated."""
    if kws:
        args_tree, kwargs_tree = treedef_children(in_tree)
    else:
        args_tree, kwargs_tree = in_tree, None
    out: list[bool] = []
    for i, arg in enumerate(args_tree.children()):
        out += [i in donate_argnums] * arg.num_leaves
    if kwargs_tree is not None:
        keys = list(tree_unflatten(kwargs_tree, [0] * kwargs_tree.num_leaves))  # (in order)
        for key, val in zip(keys, kwargs_tree.children()):
            out += [key in donate_argnames] * val.num_leaves
    return tuple(out)


def rebase_donate_argnums(donate_argnums: Sequence[int],
                          static_argnums: Sequence[int]) -> tuple[int, ...]:
    """``donate_argnums`` renumbered among the arguments left once ``static_argnums`` are
    removed (sorted, without repeats).

    Raises:
      ValueError: an argument is both static and donated.
    """
    static = set(static_argnums)
    both = static.intersection(donate_argnums)
    if both:
        raise ValueError(f"expected static_argnums {sorted(static)} and donate_argnums "
                         f"{sorted(set(donate_argnums))} to be disjoint, but both hold "
                         f"{sorted(both)}")
    return tuple(d - sum(s < d for s in static) for d in sorted(set(donate_argnums)))


def safe_map(f: Callable[..., Any], *args: Any) -> list[Any]:
    """``list(map(f, *args))``, checking the iterables have one length.

    Raises:
      ValueError: they do not.
    """
    lists = [list(a) for a in args]
    lengths = [len(a) for a in lists]
    if len(set(lengths)) > 1:
        raise ValueError(f"safe_map: expected arguments of one length, but got lengths "
                         f"{lengths}")
    return list(map(f, *lists))


def flatten_axes(name: str, treedef: PyTreeDef, axis_tree: Any, *, kws: bool = False,
                 tupled_args: bool = False) -> list[Any]:
    """``axis_tree`` (a tree prefix of ``treedef``, ``None`` a leaf of it, as ``vmap``'s
    ``in_axes``) broadcast to one value per leaf of ``treedef``.

    Raises:
      ValueError: ``axis_tree`` is not a tree prefix of ``treedef`` (the message, naming
        ``name``, gives the key path where they differ).
    """
    del kws, tupled_args  # (JAX only words its error message after them)
    full = tree_unflatten(treedef, [object()] * treedef.num_leaves)
    return broadcast_prefix(axis_tree, full, name)


def shaped_abstractify(x: Any) -> AbstractValue:
    """The abstract value (shape, dtype, weak type) of an array, scalar or
    ``ShapeDtypeStruct`` (an abstract value is returned as it is).

    Raises:
      TypeError: ``x`` is none of those.
    """
    if isinstance(x, AbstractValue):
        return x
    return abstractify(x, "its argument", "shaped_abstractify")


def debug_info(traced_for: str, fun: Callable[..., Any], args: Sequence[Any],
               kwargs: dict[str, Any], *, static_argnums: Sequence[int] = (),
               static_argnames: Sequence[str] = (),
               result_paths_thunk: Callable[[], tuple[str, ...]] | None = None,
               sourceinfo: str | None = None,
               signature: inspect.Signature | None = None) -> DebugInfo:
    """plait's :class:`~plait.ir.debug_info.DebugInfo` for tracing ``fun`` on ``args`` and
    ``kwargs`` (the static ones named by ``static_argnums``/``static_argnames`` get no
    argument names): its name, source (or ``sourceinfo``), and one name per leaf of the
    non-static arguments.  Result paths are known only after tracing: they are ``()``
    here.  ``traced_for`` (what traces it, for JAX's messages), ``result_paths_thunk``
    and ``signature`` (plait reads ``fun``'s own) are accepted and unused."""
    del traced_for, signature, result_paths_thunk
    static = _inbounds(len(args), static_argnums, True)
    dyn_args = [None if i in static else x for i, x in enumerate(args)]
    dyn_kwargs = {k: None if k in static_argnames else v for k, v in kwargs.items()}
    paths = [p for p, _ in tree_flatten_with_path((tuple(dyn_args), dyn_kwargs))[0]]
    info = debug_info_for(fun, args, kwargs, paths)
    if sourceinfo is not None:
        info = DebugInfo(info.func_name, info.arg_names, (), sourceinfo)
    return info

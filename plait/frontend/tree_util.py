"""Pytrees: nested containers of arrays, flattened to leaves and a structure.

Built on the C++ pytree registry that ships in ``jaxlib``.  Lists, tuples,
dicts (keys sorted), namedtuples, ``None``, ``OrderedDict`` and
``defaultdict`` are containers; everything else is a leaf unless registered
with :func:`register_pytree_node` or :func:`register_pytree_node_class`.
A :class:`PyTreeDef` prints as in seed 003: ``PyTreeDef((*, [*, *]))``.
"""

from __future__ import annotations

import collections
import functools
from collections.abc import Callable, Hashable, Iterable, Sequence
from typing import Any, TypeAlias, TypeVar

from jaxlib import _jax

from plait.errors import ArgumentError

__all__ = [
    "PyTreeDef", "tree_flatten", "tree_unflatten", "tree_map", "tree_leaves", "tree_structure",
    "register_pytree_node", "register_pytree_node_class", "tree_flatten_with_path",
    "tree_leaves_with_path", "tree_map_with_path", "keystr", "KeyPath", "treedef_is_leaf",
    "all_leaves", "tree_all", "DictKey", "SequenceKey", "GetAttrKey", "FlattenedIndexKey",
    "broadcast_prefix",
]

_pt = _jax.pytree
PyTreeDef: TypeAlias = _pt.PyTreeDef
DictKey = _pt.DictKey
SequenceKey = _pt.SequenceKey
GetAttrKey = _pt.GetAttrKey
FlattenedIndexKey = _pt.FlattenedIndexKey
KeyPath: TypeAlias = tuple[Any, ...]

_registry = _pt.PyTreeRegistry(enable_none=True, enable_tuple=True, enable_namedtuple=True,
                               enable_list=True, enable_dict=True)

T = TypeVar("T")
LeafPredicate: TypeAlias = Callable[[Any], bool] | None


def tree_flatten(tree: Any, is_leaf: LeafPredicate = None) -> tuple[list[Any], PyTreeDef]:
    """The leaves of ``tree`` (left to right, dict keys sorted) and its structure."""
    return _registry.flatten(tree, is_leaf)  # type: ignore[no-any-return]


def tree_unflatten(treedef: PyTreeDef, leaves: Iterable[Any]) -> Any:
    """Rebuild a tree of structure ``treedef`` from ``leaves``."""
    return treedef.unflatten(leaves)


def tree_leaves(tree: Any, is_leaf: LeafPredicate = None) -> list[Any]:
    """The leaves of ``tree``."""
    return _registry.flatten(tree, is_leaf)[0]  # type: ignore[no-any-return]


def tree_structure(tree: Any, is_leaf: LeafPredicate = None) -> PyTreeDef:
    """The structure of ``tree`` (its leaves replaced by ``*``)."""
    return _registry.flatten(tree, is_leaf)[1]


def treedef_is_leaf(treedef: PyTreeDef) -> bool:
    """Whether ``treedef`` is a single leaf."""
    return treedef.num_nodes == 1 and treedef.num_leaves == 1  # type: ignore[no-any-return]


def all_leaves(iterable: Iterable[Any]) -> bool:
    """Whether every element is a leaf."""
    return all(treedef_is_leaf(tree_structure(x)) for x in iterable)


def tree_map(f: Callable[..., Any], tree: Any, *rest: Any, is_leaf: LeafPredicate = None) -> Any:
    """Apply ``f`` to corresponding leaves of ``tree`` and ``rest`` (same structure).

    Raises:
      ValueError: a tree in ``rest`` does not have ``tree``'s structure.
    """
    leaves, treedef = tree_flatten(tree, is_leaf)
    all_leaves_ = [leaves] + [treedef.flatten_up_to(r) for r in rest]
    return treedef.unflatten(f(*xs) for xs in zip(*all_leaves_))


def tree_all(tree: Any) -> bool:
    """Whether every leaf is truthy."""
    return all(tree_leaves(tree))


def tree_flatten_with_path(tree: Any, is_leaf: Callable[..., bool] | None = None
                           ) -> tuple[list[tuple[KeyPath, Any]], PyTreeDef]:
    """Like :func:`tree_flatten`, each leaf paired with its key path."""
    return _registry.flatten_with_path(tree, is_leaf)  # type: ignore[no-any-return]


def tree_leaves_with_path(tree: Any, is_leaf: Callable[..., bool] | None = None
                          ) -> list[tuple[KeyPath, Any]]:
    """The (key path, leaf) pairs of ``tree``."""
    return tree_flatten_with_path(tree, is_leaf)[0]


def tree_map_with_path(f: Callable[..., Any], tree: Any, *rest: Any) -> Any:
    """Like :func:`tree_map`, calling ``f(path, *leaves)``."""
    pairs, treedef = tree_flatten_with_path(tree)
    others = [treedef.flatten_up_to(r) for r in rest]
    return treedef.unflatten(f(p, x, *xs) for (p, x), *xs in zip(pairs, *others))


def keystr(path: KeyPath) -> str:
    """The text of a key path, such as ``[1]['w']`` or ``.x``."""
    return "".join(str(k) for k in path)


def register_pytree_node(nodetype: type[T], flatten_func: Callable[[T], tuple[Iterable[Any], Hashable]],
                         unflatten_func: Callable[[Any, Iterable[Any]], T]) -> None:
    """Make ``nodetype`` a container: ``flatten_func(x) -> (children, aux_data)``,
    ``unflatten_func(aux_data, children) -> x``."""
    _registry.register_node(nodetype, flatten_func, unflatten_func)


def register_pytree_node_class(cls: type[T]) -> type[T]:
    """Class decorator: register ``cls`` using its ``tree_flatten`` method and
    ``tree_unflatten`` classmethod."""
    register_pytree_node(cls, lambda x: x.tree_flatten(), cls.tree_unflatten)  # type: ignore[attr-defined]
    return cls


def _ordered_dict_flatten(d: collections.OrderedDict[Any, Any]) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
    return tuple(d.values()), tuple(d.keys())


def _ordered_dict_with_keys(d: collections.OrderedDict[Any, Any]) -> tuple[list[tuple[Any, Any]], tuple[Any, ...]]:
    return [(DictKey(k), v) for k, v in d.items()], tuple(d.keys())


_registry.register_node(
    collections.OrderedDict, _ordered_dict_flatten,
    lambda keys, values: collections.OrderedDict(zip(keys, values)), _ordered_dict_with_keys)


def _defaultdict_flatten(d: collections.defaultdict[Any, Any]) -> tuple[tuple[Any, ...], Any]:
    keys = sorted(d)
    return tuple(d[k] for k in keys), (d.default_factory, tuple(keys))


def _defaultdict_with_keys(d: collections.defaultdict[Any, Any]) -> tuple[list[tuple[Any, Any]], Any]:
    keys = sorted(d)
    return [(DictKey(k), d[k]) for k in keys], (d.default_factory, tuple(keys))


_registry.register_node(
    collections.defaultdict, _defaultdict_flatten,
    lambda aux, values: collections.defaultdict(aux[0], zip(aux[1], values)),
    _defaultdict_with_keys)


def broadcast_prefix(prefix: Any, full: Any, what: str, is_leaf: LeafPredicate = None) -> list[Any]:
    """Expand ``prefix`` (a tree prefix of ``full``) to one value per leaf of ``full``.

    Raises:
      ArgumentError: ``prefix`` is not a tree prefix of ``full``; the message
        names the path where the structures differ.
    """
    out: list[Any] = []
    full_leaves, full_def = tree_flatten(full, is_leaf)
    try:
        subtrees = tree_structure(prefix, is_leaf=lambda x: x is None).flatten_up_to(full)
    except ValueError as e:
        raise ArgumentError(
            f"{what} must be a tree prefix of the arguments' structure {full_def}, but it is "
            f"{tree_structure(prefix, is_leaf=lambda x: x is None)}: {e}") from None
    prefix_leaves = tree_leaves(prefix, is_leaf=lambda x: x is None)
    for p, sub in zip(prefix_leaves, subtrees):
        out.extend([p] * len(tree_leaves(sub, is_leaf)))
    assert len(out) == len(full_leaves)
    return out


@functools.cache
def _tuple_def(n: int) -> PyTreeDef:
    return tree_structure((0,) * n)


def tuple_treedef(n: int) -> PyTreeDef:
    """The structure of an ``n``-tuple of leaves."""
    return _tuple_def(n)


def flatten_args(args: Sequence[Any], kwargs: dict[str, Any]) -> tuple[list[Any], PyTreeDef]:
    """Flatten a call's ``(args, kwargs)`` together."""
    return tree_flatten((tuple(args), kwargs))

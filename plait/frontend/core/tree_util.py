"""Pytrees: nested containers of arrays, flattened to leaves and a structure.

Built on the C++ pytree registry that ships in ``jaxlib``.  Lists, tuples,
dicts (keys sorted), namedtuples, ``None``, ``OrderedDict`` and
``defaultdict`` are containers; everything else is a leaf unless registered
with :func:`register_pytree_node` or :func:`register_pytree_node_class`.
A :class:`PyTreeDef` prints as in JAX's "Pytrees" documentation: ``PyTreeDef((*, [*, *]))``.
"""

from __future__ import annotations

import collections
import functools
from collections.abc import Callable, Container, Hashable, Iterable, Sequence
from typing import TYPE_CHECKING, Any, Final, Protocol, TypeAlias, TypeVar, cast, runtime_checkable

import jaxlib._jax as _jax

from plait.ir.errors import TreePrefixError

__all__ = [
    "PyTreeDef", "tree_flatten", "tree_unflatten", "tree_map", "tree_leaves", "tree_structure",
    "register_pytree_node", "register_pytree_node_class", "tree_flatten_with_path",
    "tree_leaves_with_path", "tree_map_with_path", "keystr", "KeyPath", "treedef_is_leaf",
    "all_leaves", "tree_all", "DictKey", "SequenceKey", "GetAttrKey", "FlattenedIndexKey",
    "broadcast_prefix", "tree_reduce", "tree_transpose", "treedef_children", "treedef_tuple",
    "flatten_one_level", "register_pytree_with_keys", "register_pytree_with_keys_class",
    "TreePrefixError", "tree_reduce_associative", "tree_broadcast", "is_tree_node",
    "flatten_one_level_with_keys", "default_registry", "KeyEntry",
]

KeyEntry = TypeVar("KeyEntry", bound=Any)
"""One key of a key path (:class:`DictKey`, :class:`SequenceKey`, :class:`GetAttrKey`,
:class:`FlattenedIndexKey`, or a custom node's own), as ``jax.tree_util.KeyEntry``."""
KeyPath: TypeAlias = tuple[Any, ...]

if TYPE_CHECKING:
    # jaxlib's C++ pytree module ships no stubs: these are the types of the parts used
    # here, as its own signatures give them (``help(jaxlib._jax.pytree.PyTreeDef)``).
    @runtime_checkable
    class PyTreeDef(Protocol):
        """The structure of a pytree (jaxlib's ``PyTreeDef``)."""

        @property
        def num_leaves(self) -> int: ...
        @property
        def num_nodes(self) -> int: ...
        def unflatten(self, leaves: Iterable[Any], /) -> Any: ...
        def flatten_up_to(self, tree: Any, /) -> list[Any]: ...
        def children(self) -> list[PyTreeDef]: ...
        def compose(self, inner: PyTreeDef, /) -> PyTreeDef: ...

    class _Registry(Protocol):
        def flatten(self, tree: Any, leaf_predicate: Callable[[Any], bool] | None = None, /
                    ) -> tuple[list[Any], PyTreeDef]: ...
        def flatten_with_path(self, tree: Any, leaf_predicate: Callable[..., bool] | None = None,
                              /) -> tuple[list[tuple[KeyPath, Any]], PyTreeDef]: ...
        def flatten_one_level(self, tree: Any, /) -> tuple[Iterable[Any], Hashable] | None: ...
        def flatten_one_level_with_keys(self, tree: Any, /
                                        ) -> tuple[Iterable[tuple[Any, Any]], Hashable] | None: ...
        def register_node(self, nodetype: type[Any], flatten: Callable[[Any], Any],
                          unflatten: Callable[[Any, Any], Any],
                          flatten_with_keys: Callable[[Any], Any] | None = None, /) -> Any: ...
        def register_dataclass_node(self, nodetype: type[Any], data_fields: Sequence[str],
                                    meta_fields: Sequence[str], /) -> Any: ...
        def is_node(self, nodetype: type[Any], /) -> bool: ...

    class _PyTreeModule(Protocol):
        DictKey: Any
        SequenceKey: Any
        GetAttrKey: Any
        FlattenedIndexKey: Any

        def PyTreeRegistry(self, *, enable_none: bool, enable_tuple: bool,
                           enable_namedtuple: bool, enable_list: bool, enable_dict: bool
                           ) -> _Registry: ...
        def all_leaves(self, registry: _Registry, iterable: Iterable[Any], /) -> bool: ...
        def treedef_tuple(self, registry: _Registry, treedefs: Sequence[PyTreeDef], /
                          ) -> PyTreeDef: ...

else:
    PyTreeDef = _jax.pytree.PyTreeDef

_pt: _PyTreeModule = _jax.pytree
DictKey = _pt.DictKey
SequenceKey = _pt.SequenceKey
GetAttrKey = _pt.GetAttrKey
FlattenedIndexKey = _pt.FlattenedIndexKey

_registry = _pt.PyTreeRegistry(enable_none=True, enable_tuple=True, enable_namedtuple=True,
                               enable_list=True, enable_dict=True)
default_registry = _registry
"""The registry every pytree function of plait flattens with (jaxlib's
``PyTreeRegistry``; plait's own, not JAX's)."""

dispatch_registry = _pt.PyTreeRegistry(enable_none=True, enable_tuple=True,
                                       enable_namedtuple=True, enable_list=True, enable_dict=True)
"""The registry jit's C++ dispatch flattens calls with: every node of the user registry,
and concrete Arrays as nodes whose one child is their device buffer, so that
jaxlib's dispatcher can read the buffers and rebuild Arrays around its results."""

class _NodeTypes(Container[type]):
    """The types :data:`default_registry` flattens as nodes (``t in node_types``), but
    for named tuples not registered themselves, as JAX's ``tree_util._registry``."""

    def __contains__(self, t: object) -> bool:
        if not (isinstance(t, type) and _registry.is_node(t)):
            return False
        return t is tuple or not issubclass(t, tuple) or t in unflatten_functions

    def __repr__(self) -> str:
        return "<the node types of plait's pytree registry>"


node_types: Final = _NodeTypes()
"""Whether a type is a pytree node (``type(x) in node_types``): the built-in containers
and every registered type."""

unflatten_functions: dict[type, Callable[[Any, Iterable[Any]], Any]] = {}
"""The ``unflatten_func`` of each type registered with :func:`register_pytree_node`."""

T = TypeVar("T")
C = TypeVar("C", bound=type[Any])  # a class whose methods are only known at run time
LeafPredicate: TypeAlias = Callable[[Any], bool] | None


def tree_flatten(tree: Any, is_leaf: LeafPredicate = None) -> tuple[list[Any], PyTreeDef]:
    """The leaves of ``tree`` (left to right, dict keys sorted) and its structure."""
    return _registry.flatten(tree, is_leaf)


def tree_unflatten(treedef: PyTreeDef, leaves: Iterable[Any]) -> Any:
    """Rebuild a tree of structure ``treedef`` from ``leaves``."""
    return treedef.unflatten(leaves)


def tree_leaves(tree: Any, is_leaf: LeafPredicate = None) -> list[Any]:
    """The leaves of ``tree``."""
    return _registry.flatten(tree, is_leaf)[0]


def tree_structure(tree: Any, is_leaf: LeafPredicate = None) -> PyTreeDef:
    """The structure of ``tree`` (its leaves replaced by ``*``)."""
    return _registry.flatten(tree, is_leaf)[1]


def treedef_is_leaf(treedef: PyTreeDef) -> bool:
    """Whether ``treedef`` has a single node: a leaf, or an empty container such as
    ``None`` or ``()`` (as ``jax.tree_util.treedef_is_leaf``)."""
    return treedef.num_nodes == 1


def all_leaves(iterable: Iterable[Any], is_leaf: LeafPredicate = None) -> bool:
    """Whether every element is a leaf (``None`` is not: it is an empty container)."""
    if is_leaf is None:
        return _pt.all_leaves(_registry, iterable)
    items = list(iterable)
    return tree_leaves(items, is_leaf) == items


def _flatten_up_to(treedef: PyTreeDef, prefix: Any, full: Any, name: str,
                   is_leaf: LeafPredicate = None) -> list[Any]:
    """``treedef.flatten_up_to(full)``, where ``treedef`` is the structure of ``prefix``.

    Raises:
      TreePrefixError: ``full`` does not extend ``prefix``'s structure.
    """
    try:
        return treedef.flatten_up_to(full)
    except (ValueError, TypeError) as e:
        why = _first_mismatch(prefix, full, (), is_leaf)
        raise TreePrefixError(f"pytree structure mismatch: {why or e}".replace(
            "{name}", name)) from None


def _children_with_keys(x: Any) -> tuple[list[tuple[Any, Any]], Any] | None:
    one = _registry.flatten_one_level_with_keys(x)
    if one is None:
        return None
    pairs, aux = one
    pairs = list(pairs)
    fields = getattr(type(x), "_fields", None)
    if isinstance(x, tuple) and fields is not None:
        # (The C++ registry names every namedtuple child after the first field.)
        pairs = [(GetAttrKey(f), c) for f, (_, c) in zip(fields, pairs)]
    return pairs, aux


def _describe(x: Any, children: list[Any]) -> str:
    name = type(x).__name__
    article = "an" if name[:1] in tuple("aeiouAEIOU") else "a"
    if x is None:
        return "None"
    if type(x) is dict:
        return f"a dict with keys {sorted(x, key=repr)}"
    if isinstance(x, dict):
        return f"{article} {name} with keys {list(x)}"
    if isinstance(x, tuple) and hasattr(type(x), "_fields"):
        return f"a namedtuple {name} of length {len(x)}"
    if isinstance(x, list | tuple):
        return f"a {name} of length {len(x)}"
    return f"{article} {name} node with {len(children)} children"


def _first_mismatch(prefix: Any, full: Any, path: KeyPath, is_leaf: LeafPredicate) -> str | None:
    """Where ``full`` stops extending the structure of ``prefix`` (a message), or ``None``."""
    if is_leaf is not None and is_leaf(prefix):
        return None
    p = _children_with_keys(prefix)
    if p is None:
        return None  # a leaf of the prefix matches any subtree
    where = "{name}" + keystr(path)
    f = _children_with_keys(full)
    if f is None:
        return (f"at key path {where} the first tree has {_describe(prefix, p[0])} but the "
                f"other tree has a leaf of type {type(full).__name__}")
    (p_pairs, p_aux), (f_pairs, f_aux) = p, f
    if type(prefix) is not type(full):
        return (f"at key path {where} the first tree has {_describe(prefix, p_pairs)} but the "
                f"other tree has {_describe(full, f_pairs)}")
    if len(p_pairs) != len(f_pairs) or p_aux != f_aux:
        return (f"at key path {where} the first tree has {_describe(prefix, p_pairs)} but the "
                f"other tree has {_describe(full, f_pairs)}"
                + ("" if isinstance(prefix, list | tuple | dict)
                   else f" (node data {p_aux!r} vs {f_aux!r})"))
    for (k, pc), (_, fc) in zip(p_pairs, f_pairs):
        why = _first_mismatch(pc, fc, path + (k,), is_leaf)
        if why is not None:
            return why
    return None


def tree_map(f: Callable[..., Any], tree: Any, *rest: Any, is_leaf: LeafPredicate = None) -> Any:
    """Apply ``f`` to corresponding leaves of ``tree`` and ``rest``.

    Each tree in ``rest`` must have ``tree``'s structure, or extend it: a leaf
    of ``tree`` matches any subtree, which is passed to ``f`` whole.

    Raises:
      TreePrefixError: a tree in ``rest`` does not have ``tree``'s structure (a
        ``ValueError``); the message names the first key path where they differ.
    """
    leaves, treedef = tree_flatten(tree, is_leaf)
    all_leaves_ = [leaves] + [_flatten_up_to(treedef, tree, r, "tree_map tree", is_leaf)
                              for r in rest]
    return treedef.unflatten(f(*xs) for xs in zip(*all_leaves_))


def tree_reduce(function: Callable[[Any, Any], Any], tree: Any, initializer: Any = ...,
                is_leaf: LeafPredicate = None) -> Any:
    """Fold ``function`` over the leaves of ``tree``, left to right.

    Raises:
      TypeError: an empty tree and no ``initializer``.
    """
    if initializer is ...:
        return functools.reduce(function, tree_leaves(tree, is_leaf))
    return functools.reduce(function, tree_leaves(tree, is_leaf), initializer)


def treedef_children(treedef: PyTreeDef) -> list[PyTreeDef]:
    """The structures of the children of ``treedef``'s root."""
    return treedef.children()


def treedef_tuple(treedefs: Iterable[PyTreeDef]) -> PyTreeDef:
    """The structure of a tuple whose children have the structures ``treedefs``."""
    return _pt.treedef_tuple(_registry, list(treedefs))


def flatten_one_level(tree: Any) -> tuple[Iterable[Any], Hashable]:
    """The children and node data of the root of ``tree``.

    Raises:
      ValueError: ``tree`` is a leaf.
    """
    return _not_leaf(tree, _registry.flatten_one_level(tree))


def flatten_one_level_with_keys(tree: Any) -> tuple[Iterable[tuple[Any, Any]], Hashable]:
    """The (key, child) pairs and node data of the root of ``tree``.

    Raises:
      ValueError: ``tree`` is a leaf.
    """
    return _not_leaf(tree, _registry.flatten_one_level_with_keys(tree))


def _not_leaf(tree: Any, out: T | None) -> T:
    if out is None:
        raise ValueError(f"can't flatten a leaf of type {type(tree).__name__} one level")
    return out


def tree_transpose(outer_treedef: PyTreeDef, inner_treedef: PyTreeDef | None,
                   pytree_to_transpose: Any) -> Any:
    """Turn a tree of structure ``outer`` of trees of structure ``inner`` into a
    tree of structure ``inner`` of trees of structure ``outer``.

    Raises:
      TypeError: the tree is not ``outer`` composed with ``inner``.
    """
    flat, treedef = tree_flatten(pytree_to_transpose)
    if inner_treedef is None:
        inner_treedef = tree_structure(outer_treedef.flatten_up_to(pytree_to_transpose)[0])
    n_in, n_out = inner_treedef.num_leaves, outer_treedef.num_leaves
    if treedef.num_leaves != n_in * n_out:
        raise TypeError(f"tree_transpose: expected a tree of structure "
                        f"{outer_treedef.compose(inner_treedef)}, but got {treedef}")
    rows = [flat[i * n_in:(i + 1) * n_in] for i in range(n_out)]
    return inner_treedef.unflatten(outer_treedef.unflatten(col) for col in zip(*rows))


def tree_all(tree: Any, *, is_leaf: LeafPredicate = None) -> bool:
    """Whether every leaf is truthy."""
    return all(tree_leaves(tree, is_leaf))


def tree_reduce_associative(operation: Callable[[T, T], T], tree: Any, *,
                            identity: Any = ..., is_leaf: LeafPredicate = None) -> T:
    """Combine the leaves of ``tree`` with the associative ``operation``, pairing them
    as a balanced tree (halves first, as JAX does, so rounding matches).

    Raises:
      TypeError: an empty tree and no ``identity``.
    """
    def reduce(xs: list[Any]) -> Any:
        if len(xs) == 1:
            return xs[0]
        half = len(xs) // 2
        return operation(reduce(xs[:half]), reduce(xs[half:]))
    leaves = tree_leaves(tree, is_leaf)
    if not leaves:
        if identity is ...:
            raise TypeError("tree_reduce_associative: expected an identity for an empty "
                            "tree, but got none; pass identity=...")
        return cast(T, identity)
    return cast(T, reduce(leaves))


def tree_broadcast(prefix_tree: Any, full_tree: Any, is_leaf: LeafPredicate = None) -> Any:
    """``full_tree``'s structure, each leaf the leaf of ``prefix_tree`` above it.

    Raises:
      TreePrefixError: ``prefix_tree`` is not a tree prefix of ``full_tree``.
    """
    leaves, treedef = tree_flatten(prefix_tree, is_leaf)
    subtrees = _flatten_up_to(treedef, prefix_tree, full_tree, "tree_broadcast prefix_tree",
                              is_leaf)
    out: list[Any] = []
    for leaf, sub in zip(leaves, subtrees):
        out.extend([leaf] * tree_structure(sub).num_leaves)
    return tree_structure(full_tree).unflatten(out)


def is_tree_node(typ: type) -> bool:
    """Whether instances of ``typ`` are pytree nodes (built in, namedtuple or registered)."""
    return bool(_registry.is_node(typ))


def _path_predicate(is_leaf: Callable[..., bool] | None, takes_path: bool
                    ) -> Callable[[Any, Any], bool] | None:
    """The ``(path, x)`` predicate jaxlib's flatten_with_path calls."""
    if is_leaf is None or takes_path:
        return is_leaf
    return lambda _, x: is_leaf(x)


def tree_flatten_with_path(tree: Any, is_leaf: Callable[..., bool] | None = None,
                           is_leaf_takes_path: bool = False
                           ) -> tuple[list[tuple[KeyPath, Any]], PyTreeDef]:
    """Like :func:`tree_flatten`, each leaf paired with its key path.  ``is_leaf``
    takes the node, or its key path and the node with ``is_leaf_takes_path=True``."""
    return _registry.flatten_with_path(tree, _path_predicate(is_leaf, is_leaf_takes_path))


def tree_leaves_with_path(tree: Any, is_leaf: Callable[..., bool] | None = None,
                          is_leaf_takes_path: bool = False) -> list[tuple[KeyPath, Any]]:
    """The (key path, leaf) pairs of ``tree``."""
    return tree_flatten_with_path(tree, is_leaf, is_leaf_takes_path)[0]


def tree_map_with_path(f: Callable[..., Any], tree: Any, *rest: Any,
                       is_leaf: Callable[..., bool] | None = None,
                       is_leaf_takes_path: bool = False) -> Any:
    """Like :func:`tree_map`, calling ``f(path, *leaves)``.

    Raises:
      TreePrefixError: a tree in ``rest`` does not have ``tree``'s structure.
    """
    pairs, treedef = tree_flatten_with_path(tree, is_leaf, is_leaf_takes_path)
    # (The error message's walk asks is_leaf about nodes without their paths.)
    plain = None if is_leaf_takes_path else is_leaf
    others = [_flatten_up_to(treedef, tree, r, "tree_map_with_path tree", plain) for r in rest]
    return treedef.unflatten(f(p, x, *xs) for (p, x), *xs in zip(pairs, *others))


def _simple_key(k: Any) -> str:
    for attr in ("idx", "key", "name"):
        if hasattr(k, attr):
            return str(getattr(k, attr))
    return str(k)


def keystr(keys: KeyPath, *, simple: bool = False, separator: str = "") -> str:
    """The text of a key path, such as ``[1]['w']`` or ``.x``; with ``simple=True``
    only the keys themselves (``1``, ``w``, ``x``), joined by ``separator``."""
    return separator.join((_simple_key if simple else str)(k) for k in keys)


def register_pytree_node(nodetype: type[T],
                         flatten_func: Callable[[T], tuple[Iterable[Any], Hashable]],
                         unflatten_func: Callable[[Any, Iterable[Any]], T],
                         flatten_with_keys_func: Callable[[T], tuple[Iterable[tuple[Any, Any]],
                                                                     Hashable]] | None = None
                         ) -> None:
    """Make ``nodetype`` a container: ``flatten_func(x) -> (children, aux_data)``,
    ``unflatten_func(aux_data, children) -> x``; ``flatten_with_keys_func(x) ->
    ((key, child) pairs, aux_data)`` names the children in key paths.

    Raises:
      ValueError: ``nodetype`` is already registered.
    """
    unflatten_functions[nodetype] = unflatten_func
    for registry in (_registry, dispatch_registry):
        if flatten_with_keys_func is None:
            registry.register_node(nodetype, flatten_func, unflatten_func)
        else:
            registry.register_node(nodetype, flatten_func, unflatten_func, flatten_with_keys_func)


def register_pytree_with_keys(nodetype: type[T],
                              flatten_with_keys: Callable[[T], tuple[Iterable[tuple[Any, Any]],
                                                                     Hashable]],
                              unflatten_func: Callable[[Any, Iterable[Any]], T],
                              flatten_func: Callable[[T], tuple[Iterable[Any], Hashable]]
                              | None = None) -> None:
    """Register ``nodetype`` by a flattening that names its children (their keys
    appear in :func:`tree_flatten_with_path` paths)."""
    def flatten_without_keys(x: T) -> tuple[Iterable[Any], Hashable]:
        pairs, aux = flatten_with_keys(x)
        return [c for _, c in pairs], aux
    register_pytree_node(nodetype, flatten_func or flatten_without_keys, unflatten_func,
                         flatten_with_keys)


def register_pytree_with_keys_class(cls: C) -> C:
    """Class decorator: register ``cls`` using its ``tree_flatten_with_keys`` method and
    ``tree_unflatten`` classmethod (and ``tree_flatten`` if it has one)."""
    flatten = getattr(cls, "tree_flatten", None)
    register_pytree_with_keys(cls, lambda x: x.tree_flatten_with_keys(), cls.tree_unflatten,
                              None if flatten is None else (lambda x: x.tree_flatten()))
    return cls


def register_pytree_node_class(cls: C) -> C:
    """Class decorator: register ``cls`` using its ``tree_flatten`` method and
    ``tree_unflatten`` classmethod."""
    register_pytree_node(cls, lambda x: x.tree_flatten(), cls.tree_unflatten)
    return cls


def _ordered_dict_flatten(d: collections.OrderedDict[Any, Any]
                          ) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
    return tuple(d.values()), tuple(d.keys())


def _ordered_dict_with_keys(d: collections.OrderedDict[Any, Any]
                            ) -> tuple[list[tuple[Any, Any]], tuple[Any, ...]]:
    return [(DictKey(k), v) for k, v in d.items()], tuple(d.keys())


register_pytree_node(
    collections.OrderedDict, _ordered_dict_flatten,
    lambda keys, values: collections.OrderedDict(zip(keys, values)), _ordered_dict_with_keys)


def _defaultdict_flatten(d: collections.defaultdict[Any, Any]) -> tuple[tuple[Any, ...], Any]:
    keys = sorted(d)
    return tuple(d[k] for k in keys), (d.default_factory, tuple(keys))


def _defaultdict_with_keys(d: collections.defaultdict[Any, Any]
                           ) -> tuple[list[tuple[Any, Any]], Any]:
    keys = sorted(d)
    return [(DictKey(k), d[k]) for k in keys], (d.default_factory, tuple(keys))


register_pytree_node(
    collections.defaultdict, _defaultdict_flatten,
    lambda aux, values: collections.defaultdict(aux[0], zip(aux[1], values)),
    _defaultdict_with_keys)


def broadcast_prefix(prefix: Any, full: Any, what: str, is_leaf: LeafPredicate = None) -> list[Any]:
    """Expand ``prefix`` (a tree prefix of ``full``) to one value per leaf of ``full``.

    A ``None`` in ``prefix`` is a leaf (as in ``vmap``'s ``in_axes``): it applies
    to the whole subtree of ``full`` at its position.

    Raises:
      TreePrefixError: ``prefix`` is not a tree prefix of ``full`` (an
        :class:`~plait.errors.ArgumentError` and a ``ValueError``); the message
        names the key path where the structures differ.
    """
    out: list[Any] = []
    full_leaves, full_def = tree_flatten(full, is_leaf)
    prefix_def = tree_structure(prefix, is_leaf=_is_none)
    try:
        subtrees = prefix_def.flatten_up_to(full)
    except (ValueError, TypeError) as e:
        why = _first_mismatch(prefix, full, (), _is_none) or str(e)
        raise TreePrefixError(
            f"{what} must be a tree prefix of the arguments' structure {full_def}, but it is "
            f"{prefix_def}: {why.replace('{name}', what)}") from None
    prefix_leaves = tree_leaves(prefix, is_leaf=_is_none)
    for p, sub in zip(prefix_leaves, subtrees):
        out.extend([p] * len(tree_leaves(sub, is_leaf)))
    assert len(out) == len(full_leaves)
    return out


def _is_none(x: Any) -> bool:
    return x is None

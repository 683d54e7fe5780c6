"""Pytrees (seed 003, "Pytrees"): plait.tree_util against jax.tree_util on the same inputs.

Every example of the seed is flattened by both libraries; leaves, the printed
``PyTreeDef`` and the unflattened value must agree.  Key paths, ``tree_map``
over several trees, ``broadcast_prefix`` (vmap's ``in_axes``) and structure
mismatch errors are checked too.
"""

from __future__ import annotations

import collections
import operator
from collections import OrderedDict, defaultdict, namedtuple
from typing import Any

import jax.numpy as jnp
import jax.tree_util as jtu
import numpy as np
import pytest
from jax._src.api_util import flatten_axes

import plait.numpy as pnp
import plait.tree_util as ptu
from plait.errors import ArgumentError

Point = namedtuple("Point", ["x", "y"])


class Special:
    """The seed's unregistered class: a leaf."""

    def __init__(self, x: Any, y: Any) -> None:
        self.x = x
        self.y = y

    def __repr__(self) -> str:
        return f"Special(x={self.x}, y={self.y})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, type(self)) and (self.x, self.y) == (other.x, other.y)


class RegisteredSpecial(Special):
    def __repr__(self) -> str:
        return f"RegisteredSpecial(x={self.x}, y={self.y})"


def special_flatten(v: RegisteredSpecial) -> tuple[tuple[Any, Any], None]:
    return (v.x, v.y), None


def special_unflatten(aux_data: None, children: Any) -> RegisteredSpecial:
    return RegisteredSpecial(*children)


for _lib in (jtu, ptu):
    _lib.register_pytree_node(RegisteredSpecial, special_flatten, special_unflatten)


def _register_both(cls: type) -> type:
    jtu.register_pytree_node_class(cls)
    return ptu.register_pytree_node_class(cls)


@_register_both
class RegisteredSpecial2(Special):
    def __repr__(self) -> str:
        return f"RegisteredSpecial2(x={self.x}, y={self.y})"

    def tree_flatten(self) -> tuple[tuple[Any, Any], None]:
        return (self.x, self.y), None

    @classmethod
    def tree_unflatten(cls, aux_data: None, children: Any) -> RegisteredSpecial2:
        return cls(*children)


class WithAux:
    """A node whose aux data (a static name) is part of the structure."""

    def __init__(self, name: str, a: Any, b: Any) -> None:
        self.name, self.a, self.b = name, a, b

    def __eq__(self, other: object) -> bool:
        return isinstance(other, WithAux) and (self.name, self.a, self.b) == (
            other.name, other.a, other.b)


for _lib in (jtu, ptu):
    _lib.register_pytree_node(WithAux, lambda w: ((w.a, w.b), w.name),
                              lambda name, ch: WithAux(name, *ch))


class Keyed:
    """A node registered with named children (key paths show ``.a``, ``.b``)."""

    def __init__(self, a: Any, b: Any) -> None:
        self.a, self.b = a, b

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Keyed) and (self.a, self.b) == (other.a, other.b)


for _lib in (jtu, ptu):
    _lib.register_pytree_with_keys(
        Keyed, lambda k, lib=_lib: (((lib.GetAttrKey("a"), k.a), (lib.GetAttrKey("b"), k.b)), None),
        lambda _, ch: Keyed(*ch))


@_register_both
class MyTree:
    """The seed's "custom PyTrees and initialization" example, with an __init__
    that accepts the placeholder objects transformations pass."""

    def __init__(self, a: Any) -> None:
        if not (type(a) is object or a is None or isinstance(a, MyTree)):
            a = np.asarray(a)
        self.a = a

    def tree_flatten(self) -> tuple[tuple[Any], None]:
        return (self.a,), None

    @classmethod
    def tree_unflatten(cls, aux_data: None, children: Any) -> MyTree:
        obj = object.__new__(cls)
        obj.a = children[0]
        return obj


_SENTINEL = object()

# The seed's examples, and more containers (None, empty ones, OrderedDict, defaultdict).
SEED_EXAMPLES: list[Any] = [
    [1, "a", _SENTINEL],
    (1, (2, 3), ()),
    [1, {"k1": 2, "k2": (3, 4)}, 5],
    [1.0, (2.0, 3.0)],
    (1.0, [2.0, 3.0]),
    (1.0, {"b": 2.0, "a": 3.0}),
    1.0,
    None,
    Point(1.0, 2.0),
    Special(1.0, 2.0),
    RegisteredSpecial(1.0, 2.0),
    RegisteredSpecial2(1.0, 2.0),
]
MORE_EXAMPLES: list[Any] = [
    [None, (None,), {"a": None}],
    [(), [], {}],
    OrderedDict([("b", 1), ("a", 2)]),
    defaultdict(int, {"b": 1, "a": 2}),
    {"z": [1, Point(2, (3,))], "y": OrderedDict(q=4)},
    WithAux("w", 1, [2, 3]),
    Keyed(1, {"c": 2}),
    {1: "one", 0: "zero"},
    [RegisteredSpecial(RegisteredSpecial2(1, 2), [3]), Point(None, 4)],
    MyTree([1.0, 2.0]),
]
EXAMPLES = SEED_EXAMPLES + MORE_EXAMPLES


def _same(a: Any, b: Any) -> bool:
    """Equality that also compares arrays and the seed's objects."""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return bool(np.array_equal(a, b))
    if type(a) is not type(b):
        return False
    if isinstance(a, MyTree):
        return _same(a.a, b.a)
    if isinstance(a, list | tuple):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    return bool(a == b) if a is not _SENTINEL else a is b


@pytest.mark.parametrize("tree", EXAMPLES, ids=lambda t: type(t).__name__)
def test_flatten_matches_jax(tree: Any) -> None:
    leaves, treedef = ptu.tree_flatten(tree)
    jleaves, jtreedef = jtu.tree_flatten(tree)
    assert _same(leaves, jleaves)
    assert str(treedef) == str(jtreedef)
    assert repr(treedef) == repr(jtreedef)
    assert treedef.num_leaves == jtreedef.num_leaves  # type: ignore[attr-defined]  # no jaxlib stubs
    assert treedef.num_nodes == jtreedef.num_nodes  # type: ignore[attr-defined]  # no jaxlib stubs
    assert _same(ptu.tree_unflatten(treedef, leaves), jtu.tree_unflatten(jtreedef, jleaves))
    assert ptu.tree_leaves(tree) == leaves
    assert ptu.tree_structure(tree) == treedef
    assert ptu.treedef_is_leaf(treedef) == jtu.treedef_is_leaf(jtreedef)
    assert [str(c) for c in ptu.treedef_children(treedef)] == [
        str(c) for c in jtu.treedef_children(jtreedef)]


def test_the_seed_printed_examples() -> None:
    """The exact text seed 003 prints for its examples."""
    value_flat, value_tree = ptu.tree_flatten([1.0, (2.0, 3.0)])
    assert value_flat == [1.0, 2.0, 3.0]
    assert str(value_tree) == "PyTreeDef([*, (*, *)])"
    transformed = ptu.tree_unflatten(value_tree, [v * 2.0 for v in value_flat])
    assert transformed == [2.0, (4.0, 6.0)]

    expected = [
        ((1.0, [2.0, 3.0]), [1.0, 2.0, 3.0], "PyTreeDef((*, [*, *]))"),
        ((1.0, {"b": 2.0, "a": 3.0}), [1.0, 3.0, 2.0], "PyTreeDef((*, {'a': *, 'b': *}))"),
        (1.0, [1.0], "PyTreeDef(*)"),
        (None, [], "PyTreeDef(None)"),
        (Point(1.0, 2.0), [1.0, 2.0], "PyTreeDef(CustomNode(namedtuple[Point], [*, *]))"),
        (Special(1.0, 2.0), [Special(1.0, 2.0)], "PyTreeDef(*)"),
        (RegisteredSpecial(1.0, 2.0), [1.0, 2.0],
         "PyTreeDef(CustomNode(RegisteredSpecial[None], [*, *]))"),
        (RegisteredSpecial2(1.0, 2.0), [1.0, 2.0],
         "PyTreeDef(CustomNode(RegisteredSpecial2[None], [*, *]))"),
    ]
    for structured, flat, tree in expected:
        leaves, treedef = ptu.tree_flatten(structured)
        assert leaves == flat
        assert str(treedef) == tree
        assert ptu.tree_unflatten(treedef, leaves) == structured
    # The dict example unflattens with its keys sorted.
    back = ptu.tree_unflatten(*reversed(ptu.tree_flatten((1.0, {"b": 2.0, "a": 3.0}))))
    assert list(back[1]) == ["a", "b"]
    # The leaf counts of the seed's "example pytrees".
    assert [len(ptu.tree_leaves(t)) for t in SEED_EXAMPLES[:3]] == [3, 3, 5]


def test_arrays_are_leaves() -> None:
    z = pnp.zeros(2)
    leaves, treedef = ptu.tree_flatten(z)
    assert leaves[0] is z and str(treedef) == "PyTreeDef(*)"
    assert str(treedef) == str(jtu.tree_structure(jnp.zeros(2)))
    leaves, treedef = ptu.tree_flatten({"w": np.ones(3), "b": [pnp.ones(()), 2]})
    assert str(treedef) == "PyTreeDef({'b': [*, *], 'w': *})"
    assert len(leaves) == 3


def test_custom_node_init_with_placeholders() -> None:
    """Seed 003's MyTree: unflattening with object() leaves must not validate."""
    tree = MyTree(np.arange(5.0))
    treedef = ptu.tree_structure(tree)
    assert str(treedef) == str(jtu.tree_structure(tree)) == \
        "PyTreeDef(CustomNode(MyTree[None], [*]))"
    placeholder = ptu.tree_unflatten(treedef, [object()])
    assert type(placeholder.a) is object


def test_aux_data_is_part_of_the_structure() -> None:
    a, b = ptu.tree_structure(WithAux("x", 1, 2)), ptu.tree_structure(WithAux("y", 1, 2))
    assert a != b and a == ptu.tree_structure(WithAux("x", 3, 4))
    assert hash(a) == hash(ptu.tree_structure(WithAux("x", 3, 4)))
    assert str(a) == str(jtu.tree_structure(WithAux("x", 1, 2)))


def test_is_leaf() -> None:
    tree = [1, (2, 3), {"a": (4,)}]
    for pred in (lambda x: isinstance(x, tuple), lambda x: x == 1, lambda x: isinstance(x, dict)):
        leaves, treedef = ptu.tree_flatten(tree, is_leaf=pred)
        jleaves, jtreedef = jtu.tree_flatten(tree, is_leaf=pred)
        assert leaves == jleaves and str(treedef) == str(jtreedef)
    none_leaves = ptu.tree_leaves([None, 1, (None,)], is_leaf=lambda x: x is None)
    assert none_leaves == jtu.tree_leaves([None, 1, (None,)], is_leaf=lambda x: x is None)


@pytest.mark.parametrize("tree", EXAMPLES, ids=lambda t: type(t).__name__)
def test_paths_match_jax(tree: Any) -> None:
    pairs, treedef = ptu.tree_flatten_with_path(tree)
    jpairs, jtreedef = jtu.tree_flatten_with_path(tree)
    assert str(treedef) == str(jtreedef)
    assert [ptu.keystr(p) for p, _ in pairs] == [jtu.keystr(p) for p, _ in jpairs]
    assert [ptu.keystr(p, simple=True, separator="/") for p, _ in pairs] == [
        jtu.keystr(p, simple=True, separator="/") for p, _ in jpairs]
    assert [repr(p) for p, _ in pairs] == [repr(p) for p, _ in jpairs]
    assert _same([x for _, x in pairs], [x for _, x in jpairs])
    assert [p for p, _ in ptu.tree_leaves_with_path(tree)] == [p for p, _ in pairs]


def test_keystr_examples() -> None:
    params = {"foo": {"bar": {"baz": 1, "bat": [2, 3]}}}
    paths = [ptu.keystr(p) for p, _ in ptu.tree_leaves_with_path(params)]
    assert paths == ["['foo']['bar']['bat'][0]", "['foo']['bar']['bat'][1]",
                     "['foo']['bar']['baz']"]
    simple = [ptu.keystr(p, simple=True, separator="/")
              for p, _ in ptu.tree_leaves_with_path(params)]
    assert simple == ["foo/bar/bat/0", "foo/bar/bat/1", "foo/bar/baz"]
    (path, _), = ptu.tree_leaves_with_path(Point(None, 5))
    assert ptu.keystr(path) == ".y"


def test_tree_map_several_trees() -> None:
    a = {"w": [1.0, 2.0], "b": (3.0, Point(4.0, 5.0))}
    b = {"w": [10.0, 20.0], "b": (30.0, Point(40.0, 50.0))}
    c = {"w": [100.0, 200.0], "b": (300.0, Point(400.0, 500.0))}
    ours = ptu.tree_map(lambda x, y, z: x + y * z, a, b, c)
    assert ours == jtu.tree_map(lambda x, y, z: x + y * z, a, b, c)
    assert ours["b"][1] == Point(4.0 + 40.0 * 400.0, 5.0 + 50.0 * 500.0)
    # A leaf of the first tree matches a whole subtree of the others.
    ours = ptu.tree_map(lambda x, sub: (x, sub), [1, 2], [[3, 4], {"k": 5}])
    assert ours == jtu.tree_map(lambda x, sub: (x, sub), [1, 2], [[3, 4], {"k": 5}])
    # None is an empty node: it is kept, not passed to f.
    assert ptu.tree_map(lambda x: x + 1, [1, None, (2,)]) == [2, None, (3,)]
    # is_leaf.
    got = ptu.tree_map(lambda t: len(t), [(1, 2), [(3,)]], is_leaf=lambda x: isinstance(x, tuple))
    assert got == jtu.tree_map(lambda t: len(t), [(1, 2), [(3,)]],
                               is_leaf=lambda x: isinstance(x, tuple)) == [2, [1]]
    # Custom nodes map to custom nodes.
    assert ptu.tree_map(operator.neg, RegisteredSpecial(1, 2)) == RegisteredSpecial(-1, -2)
    assert ptu.tree_map(lambda x: x * 2, WithAux("n", 1, [2])) == WithAux("n", 2, [4])


def test_tree_map_with_path() -> None:
    tree = {"a": [1, 2], "b": Point(3, 4)}
    ours = ptu.tree_map_with_path(lambda p, x, y: (ptu.keystr(p), x + y), tree, tree)
    theirs = jtu.tree_map_with_path(lambda p, x, y: (jtu.keystr(p), x + y), tree, tree)
    assert ours == theirs
    assert ours["b"].y == ("['b'].y", 8)


MISMATCHES = [
    ([1, 2], [3, 4, 5], "tree_map tree", ["length 2", "length 3"]),
    ([1, 2], (3, 4), "tree_map tree", ["list", "tuple"]),
    ({"a": 1}, {"b": 2}, "tree_map tree", ["'a'", "'b'"]),
    ([1, {"a": 2, "b": [3, 4]}], [1, {"a": 2, "b": [3]}], "tree_map tree[1]['b']",
     ["length 2", "length 1"]),
    (Point(1, 2), (1, 2), "tree_map tree", ["Point", "tuple"]),
    ([1, None], [1, 2], "tree_map tree[1]", ["None", "int"]),
    ((1, [2]), (1, 2), "tree_map tree[1]", ["list", "leaf"]),
    (OrderedDict(a=1, b=2), OrderedDict(b=1, a=2), "tree_map tree", ["OrderedDict"]),
    (WithAux("x", 1, 2), WithAux("y", 1, 2), "tree_map tree", ["WithAux", "'x'", "'y'"]),
]


@pytest.mark.parametrize("first, other, where, words", MISMATCHES)
def test_tree_map_mismatch_is_a_clear_value_error(first: Any, other: Any, where: str,
                                                  words: list[str]) -> None:
    with pytest.raises(ValueError) as jax_err:
        jtu.tree_map(lambda *xs: xs, first, other)
    with pytest.raises(ValueError) as ours:
        ptu.tree_map(lambda *xs: xs, first, other)
    message = str(ours.value)
    # The path where the structures differ, in JAX's words.
    assert f"key path {where} " in message
    assert where in str(jax_err.value)
    for w in words:
        assert w in message
    assert isinstance(ours.value, ptu.TreePrefixError)


def test_unflatten_with_wrong_leaf_count() -> None:
    treedef = ptu.tree_structure([1, (2, 3)])
    for n in (2, 4):
        with pytest.raises(ValueError) as ours:
            ptu.tree_unflatten(treedef, list(range(n)))
        with pytest.raises(ValueError) as theirs:
            jtu.tree_unflatten(jtu.tree_structure([1, (2, 3)]), list(range(n)))
        assert str(ours.value) == str(theirs.value)


def test_registering_twice_is_an_error() -> None:
    with pytest.raises(ValueError, match="RegisteredSpecial"):
        ptu.register_pytree_node(RegisteredSpecial, special_flatten, special_unflatten)


def test_reduce_transpose_tuple_and_one_level() -> None:
    tree = [1, (2, 3), {"a": 4}]
    assert ptu.tree_reduce(operator.add, tree) == jtu.tree_reduce(operator.add, tree) == 10
    assert ptu.tree_reduce(operator.add, tree, 100) == 110
    assert ptu.tree_reduce(operator.add, [], 7) == 7
    with pytest.raises(TypeError):
        ptu.tree_reduce(operator.add, [])
    outer = ptu.tree_structure([0, 0])
    inner = ptu.tree_structure({"a": 0, "b": 0})
    value = [{"a": 1, "b": 2}, {"a": 3, "b": 4}]
    ours = ptu.tree_transpose(outer, inner, value)
    theirs = jtu.tree_transpose(jtu.tree_structure([0, 0]), jtu.tree_structure({"a": 0, "b": 0}),
                                value)
    assert ours == theirs == {"a": [1, 3], "b": [2, 4]}
    assert ptu.tree_transpose(outer, None, value) == ours
    with pytest.raises(TypeError):
        ptu.tree_transpose(outer, inner, [{"a": 1, "b": 2}, {"a": 3}])
    tup = ptu.treedef_tuple([ptu.tree_structure([0]), ptu.tree_structure(None)])
    theirs = jtu.treedef_tuple([jtu.tree_structure([0]), jtu.tree_structure(None)])
    assert str(tup) == str(theirs) == "PyTreeDef(([*], None))"
    children, aux = ptu.flatten_one_level({"b": 1, "a": [2]})
    assert (list(children), aux) == ([[2], 1], ("a", "b"))
    with pytest.raises(ValueError):
        ptu.flatten_one_level(3)
    assert ptu.all_leaves([1, 2.0, "x"]) and not ptu.all_leaves([1, [2]])
    assert ptu.tree_all([1, (True,)]) and not ptu.tree_all([1, (0,)])


# vmap's in_axes examples of seed 003: the full value (a1, {"k1": a2, "k2": a3}).
FULL = (1, {"k1": 2, "k2": 3})
PREFIXES = [
    (None, {"k1": None, "k2": 0}),
    (None, 0),
    0,
    None,
    (0, None),
    (1, {"k1": 0, "k2": None}),
]


@pytest.mark.parametrize("prefix", PREFIXES, ids=repr)
def test_broadcast_prefix_matches_jax_in_axes(prefix: Any) -> None:
    ours = ptu.broadcast_prefix(prefix, FULL, "in_axes")
    theirs = flatten_axes("in_axes", jtu.tree_structure(FULL), prefix)
    assert ours == theirs


def test_broadcast_prefix_seed_cases() -> None:
    assert ptu.broadcast_prefix((None, {"k1": None, "k2": 0}), FULL, "in_axes") == [None, None, 0]
    assert ptu.broadcast_prefix((None, 0), FULL, "in_axes") == [None, 0, 0]
    assert ptu.broadcast_prefix(0, FULL, "in_axes") == [0, 0, 0]
    # Nested containers and empty subtrees.
    full = ([1, 2], {"a": (3, 4), "b": ()}, None, 5)
    assert ptu.broadcast_prefix(([0, 1], 2, None, 3), full, "x") == [0, 1, 2, 2, 3]
    assert ptu.broadcast_prefix(([0, 1], 2, None, 3), full, "x") == flatten_axes(
        "x", jtu.tree_structure(full), ([0, 1], 2, None, 3))
    # is_leaf on the full tree: None outputs count as leaves.
    assert ptu.broadcast_prefix(0, (1, None), "out_axes", is_leaf=lambda x: x is None) == [0, 0]


@pytest.mark.parametrize("prefix, where", [
    ((None, 0, 1), "in_axes"),
    ((None, {"k3": 0}), "in_axes[1]"),
    ([0, {"k1": 0, "k2": 0}], "in_axes"),
    ((0, {"k1": [0], "k2": 0}), "in_axes[1]['k1']"),
])
def test_broadcast_prefix_errors_name_the_path(prefix: Any, where: str) -> None:
    with pytest.raises(ValueError):
        flatten_axes("in_axes", jtu.tree_structure(FULL), prefix)
    with pytest.raises(ArgumentError) as info:
        ptu.broadcast_prefix(prefix, FULL, "in_axes")
    assert isinstance(info.value, ValueError)
    message = str(info.value)
    assert f"at key path {where} " in message
    assert "PyTreeDef((*, {'k1': *, 'k2': *}))" in message


def test_containers_registered_by_default() -> None:
    for tree in ([1], (1,), {"a": 1}, None, Point(1, 2), OrderedDict(a=1),
                 collections.defaultdict(int, a=1)):
        assert not ptu.treedef_is_leaf(ptu.tree_structure(tree)) or tree is None
    assert ptu.treedef_is_leaf(ptu.tree_structure(Special(1, 2)))
    assert ptu.treedef_is_leaf(ptu.tree_structure(np.ones(3)))
    dd = ptu.tree_unflatten(*reversed(ptu.tree_flatten(collections.defaultdict(list, b=1, a=2))))
    assert isinstance(dd, collections.defaultdict) and dd.default_factory is list

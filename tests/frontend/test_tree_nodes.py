"""Dataclass, static and ``Partial`` pytree nodes, and the smaller pytree functions
(``tree_reduce_associative``, ``tree_broadcast``, ``is_tree_node``, key-path
predicates), against jax.tree_util 0.10.2 on the same inputs."""

from __future__ import annotations

import dataclasses
import functools
import operator
from typing import Any

import jax
import jax.numpy as jnp
import jax.tree_util as jtu
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import plait
import plait.numpy as pnp
import plait.tree_util as ptu
from tests.frontend.jax_oracle import assert_close

LIBS = [(jax, jtu, jnp), (plait, ptu, pnp)]


def _struct_classes(L: Any, T: Any) -> tuple[Any, Any, Any]:
    """The same three classes, registered with one library."""
    @T.register_dataclass
    @dataclasses.dataclass
    class Inferred:
        x: Any
        y: Any
        op: str = L.tree.static(default="add")

    @functools.partial(T.register_dataclass, data_fields=["w"], meta_fields=["name"])
    class Explicit:
        def __init__(self, w: Any, name: str) -> None:
            self.w, self.name = w, name

    @functools.partial(T.register_dataclass, data_fields=["a"], meta_fields=["n"],
                       drop_fields=["cache"])
    @dataclasses.dataclass
    class Dropping:
        a: Any
        cache: Any = None
        n: int = dataclasses.field(default=3, metadata={"static": True})
        derived: int = dataclasses.field(init=False, default=0)

    return Inferred, Explicit, Dropping


def _trees(L: Any, T: Any, np_: Any) -> list[Any]:
    Inferred, Explicit, Dropping = _struct_classes(L, T)
    return [Inferred(np_.ones(3), np_.arange(3.0)),
            Inferred(1.0, [2.0, {"k": 3.0}], op="mul"),
            Explicit(np_.ones((2, 2)), "layer"),
            Dropping(np_.zeros(2), n=5),
            [Inferred(None, (1.0,)), Dropping(2.0)]]


def test_register_dataclass_flattens_as_jax() -> None:
    (_, jt, jn), (_, pt, pn) = LIBS
    for want, got in zip(_trees(jax, jt, jn), _trees(plait, pt, pn)):
        jl, jd = jt.tree_flatten(want)
        pl, pd = pt.tree_flatten(got)
        assert str(pd).replace("plait", "jax") == str(jd)
        assert_close(pl, [np.asarray(x) for x in jl])
        assert [p for p, _ in pt.tree_flatten_with_path(got)[0]] == \
            [p for p, _ in jt.tree_flatten_with_path(want)[0]]
        back = pt.tree_unflatten(pd, pl)
        assert type(back) is type(got)
        assert pt.tree_structure(back) == pd


def test_inferred_fields_leave_out_dropped_and_non_init_fields() -> None:
    # (JAX 0.10.2 infers them as data fields, then refuses them: a documented difference.)
    @functools.partial(ptu.register_dataclass, drop_fields=["cache"])
    @dataclasses.dataclass
    class D:
        a: Any
        cache: Any = None
        n: int = plait.tree.static(default=3)
        derived: int = dataclasses.field(init=False, default=0)
    leaves, treedef = ptu.tree_flatten(D(1.0, cache="c", n=4))
    assert leaves == [1.0]
    assert str(treedef) == "PyTreeDef(CustomNode(D[(4,)], [*]))"
    back = ptu.tree_unflatten(treedef, [2.0])
    assert (back.a, back.cache, back.n, back.derived) == (2.0, None, 4, 0)


def test_register_dataclass_under_jit_grad_vmap() -> None:
    def program(L: Any, T: Any, np_: Any) -> Any:
        Inferred, _, _ = _struct_classes(L, T)

        def f(m: Any) -> Any:
            return np_.sum(np_.sin(m.x) * m.y) if m.op == "add" else np_.sum(m.x)
        m = Inferred(np_.linspace(0.0, 1.0, 4), np_.arange(4.0))
        g = L.jit(L.grad(f))(m)
        assert type(g) is Inferred and g.op == "add"
        batched = L.vmap(lambda m: m.x * 2.0)(Inferred(np_.ones((3, 2)), np_.ones((3, 2))))
        out = L.jit(lambda m: Inferred(m.y, m.x, op="mul"))(m)
        return g.x, g.y, batched, out.x, out.op
    got, want = program(*LIBS[1]), program(*LIBS[0])
    assert got[-1] == want[-1] == "mul"
    assert_close(got[:-1], want[:-1])


def test_meta_fields_are_part_of_the_jit_key() -> None:
    Inferred, _, _ = _struct_classes(plait, ptu)
    traces = []

    @plait.jit
    def f(m: Any) -> Any:
        traces.append(m.op)
        return m.x * (2.0 if m.op == "double" else 3.0)
    assert float(f(Inferred(1.0, 0.0, op="double"))) == 2.0
    assert float(f(Inferred(1.0, 0.0, op="triple"))) == 3.0
    assert float(f(Inferred(5.0, 0.0, op="double"))) == 10.0
    assert traces == ["double", "triple"]


@pytest.mark.parametrize("case", ["one_list", "not_dataclass", "missing", "unexpected", "overlap"])
def test_register_dataclass_errors_match_jax(case: str) -> None:
    def attempt(T: Any) -> BaseException:
        @dataclasses.dataclass
        class D:
            a: Any
            b: Any
        args: dict[str, Any] = {
            "one_list": {"data_fields": ["a"]},
            "not_dataclass": {},
            "missing": {"data_fields": ["a"], "meta_fields": []},
            "unexpected": {"data_fields": ["a", "b", "c"], "meta_fields": []},
            "overlap": {"data_fields": ["a", "b"], "meta_fields": ["a"]},
        }[case]
        with pytest.raises((TypeError, ValueError)) as info:
            T.register_dataclass(object if case == "not_dataclass" else D, **args)
        return info.value
    want, got = attempt(jtu), attempt(ptu)
    assert type(got) is type(want)
    expected = {"one_list": "expected both data_fields and meta_fields or neither",
                "not_dataclass": "expected a dataclass",
                "missing": "missing ['b'] (add them to drop_fields",
                "unexpected": "unexpected ['c']",
                "overlap": "not to overlap, but both name ['a']"}[case]
    assert expected in str(got)


def test_register_static_makes_a_static_argument() -> None:
    for L, T, _ in LIBS:
        @T.register_static
        class Mode(str):
            pass
        traces: list[Any] = []

        def f(x: Any, mode: Any, traces: list[Any] = traces) -> Any:
            traces.append(mode)
            return x + 1.0 if mode == "add" else x - 1.0
        g = L.jit(f)
        assert float(g(1.0, Mode("add"))) == 2.0
        assert float(g(1.0, Mode("sub"))) == 0.0
        assert float(g(3.0, Mode("add"))) == 4.0
        assert traces == ["add", "sub"]
        assert T.tree_leaves(Mode("x")) == []
        assert str(T.tree_structure([Mode("x")])).startswith("PyTreeDef([CustomNode(Mode[x]")


def test_partial_is_a_pytree_through_jit() -> None:
    def program(L: Any, T: Any, np_: Any) -> Any:
        scale = T.Partial(np_.multiply, np_.arange(3.0))
        nested = T.Partial(functools.partial(np_.add, 1.0), np_.ones(3))
        call = L.jit(lambda f, x: f(x))
        made = L.jit(lambda a: T.Partial(np_.multiply, a))(np_.full(3, 2.0))
        leaves = T.tree_leaves(nested)
        return (call(scale, 2.0), L.jit(lambda f: f())(nested), made(np_.ones(3)), len(leaves),
                L.grad(lambda a: np_.sum(T.Partial(np_.multiply, a)(a)))(np_.arange(3.0)))
    want, got = program(*LIBS[0]), program(*LIBS[1])
    assert got[3] == want[3] == 1  # the nested partial's own argument is not a child
    assert_close(got, want)
    assert ptu.Partial(operator.add, 1)(2) == 3
    p = ptu.Partial(operator.add, 1)
    assert ptu.tree_unflatten(ptu.tree_structure(p), [5])(1) == 6


@given(st.lists(st.integers(0, 9), max_size=12),
       st.lists(st.integers(0, 3), max_size=5))
def test_reduce_associative_groups_leaves_as_jax(leaves: list[int], cuts: list[int]) -> None:
    # A non-associative operation shows the grouping, which fixes float rounding.
    tree: list[Any] = [leaves[:2], {"a": tuple(leaves[2:5]), "b": leaves[5:]}, cuts]
    def show(a: Any, b: Any) -> str:
        return f"({a} {b})"
    if not leaves and not cuts:
        for T in (jtu, ptu):
            with pytest.raises(TypeError, match="identity"):
                T.tree_reduce_associative(show, tree)
            assert T.tree_reduce_associative(show, tree, identity="e") == "e"
        return
    assert ptu.tree_reduce_associative(show, tree) == jtu.tree_reduce_associative(show, tree)
    assert plait.tree.reduce_associative(operator.add, tree) == \
        jax.tree.reduce_associative(operator.add, tree)


def test_broadcast_and_its_error() -> None:
    cases = [([1, {"a": 2}], [[3, 4], {"a": (5, 6)}]),
             (7, {"x": [1, 2], "y": None}),
             ({"p": 1, "q": None}, {"p": (1, 2), "q": None})]
    for prefix, full in cases:
        assert ptu.tree_broadcast(prefix, full) == jtu.tree_broadcast(prefix, full)
        assert plait.tree.broadcast(prefix, full) == jax.tree.broadcast(prefix, full)
    with pytest.raises(ValueError, match=r"at key path tree_broadcast prefix_tree\[1\]"):
        ptu.tree_broadcast([1, {"a": 2}], [[3, 4], [5, 6]])
    with pytest.raises(ValueError):
        jtu.tree_broadcast([1, {"a": 2}], [[3, 4], [5, 6]])


def test_small_functions_match_jax() -> None:
    Inferred, _, _ = _struct_classes(plait, ptu)
    JInferred, _, _ = _struct_classes(jax, jtu)
    for typ, jtyp in [(list, list), (dict, dict), (int, int), (type(None), type(None)),
                      (Inferred, JInferred), (ptu.Partial, jtu.Partial)]:
        assert ptu.is_tree_node(typ) == jtu.is_tree_node(jtyp)
    tree = {"a": [1, (2, 3)], "b": [4]}
    one = lambda x: isinstance(x, tuple)  # noqa: E731
    with_path = lambda p, x: len(p) == 2  # noqa: E731
    cases: list[dict[str, Any]] = [{"is_leaf": one},
                                   {"is_leaf": with_path, "is_leaf_takes_path": True}]
    for args in cases:
        assert ptu.tree_flatten_with_path(tree, **args)[0] == \
            jtu.tree_flatten_with_path(tree, **args)[0]
        assert ptu.tree_leaves_with_path(tree, **args) == jtu.tree_leaves_with_path(tree, **args)
        f = lambda p, x: jtu.keystr(p)  # noqa: E731
        assert ptu.tree_map_with_path(f, tree, **args) == jtu.tree_map_with_path(f, tree, **args)
    assert ptu.tree_all([1, [0]], is_leaf=lambda x: x == [0]) == \
        jtu.tree_all([1, [0]], is_leaf=lambda x: x == [0]) is True
    pairs, aux = ptu.flatten_one_level_with_keys({"b": 1, "a": 2})
    jpairs, jaux = jtu.flatten_one_level_with_keys({"b": 1, "a": 2})
    assert list(pairs) == list(jpairs) and aux == jaux
    with pytest.raises(ValueError, match="can't flatten a leaf of type int"):
        ptu.flatten_one_level_with_keys(3)
    assert ptu.keystr(keys=(jtu.DictKey("w"),)) == "['w']"
    assert ptu.default_registry.flatten([1, (2,)])[0] == [1, 2]

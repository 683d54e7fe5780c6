"""``einsum``'s contraction order (``optimize=``) and ``einsum_path``, against JAX 0.10.2.

JAX asks ``opt_einsum`` for the order; plait searches by its own code, which must
find the same paths (ties included) for every strategy, report the same table, and
so trace the same jaxpr and compute the same numbers.
"""

from __future__ import annotations

import string
from typing import Any

import hypothesis.strategies as st
import jax
import jax.numpy as jjnp
import numpy as np
import pytest
from hypothesis import given, settings

import plait
import plait.numpy as pjnp

Spec = tuple[str, list[tuple[int, ...]]]


@st.composite
def einsums(draw: st.DrawFn, max_operands: int = 9, repeats: bool = False,
            broadcast: bool = False) -> Spec:
    """An einsum over 1 to ``max_operands`` operands and the operands' shapes:
    labels repeated within an operand (diagonals) with ``repeats``, size-1 axes
    against longer ones with ``broadcast``."""
    labels = string.ascii_lowercase[:draw(st.integers(2, 7))]
    sizes = {c: draw(st.integers(1, 5)) for c in labels}
    n = draw(st.integers(1, max_operands))
    term = (st.lists(st.sampled_from(labels), max_size=3).map("".join) if repeats else
            st.lists(st.sampled_from(labels), max_size=3, unique=True).map("".join))
    terms = [draw(term) for _ in range(n)]
    used = sorted(set("".join(terms)))
    output = "".join(draw(st.lists(st.sampled_from(used), max_size=3, unique=True))
                     if used else [])
    def dim(t: str, c: str) -> int:
        one = broadcast and t.count(c) == 1 and draw(st.integers(0, 6)) == 0
        return 1 if one else sizes[c]
    return ",".join(terms) + "->" + output, [tuple(dim(t, c) for c in t) for t in terms]


def _operands(shapes: list[tuple[int, ...]], dtype: Any = np.float32) -> list[np.ndarray]:
    rng = np.random.default_rng(len(shapes))
    return [rng.standard_normal(s).astype(dtype) for s in shapes]


@settings(max_examples=60, deadline=None)
@given(spec=einsums(max_operands=18),
       optimize=st.sampled_from(["auto", "greedy", "branch-2", "branch-1", False, True]))
def test_paths_and_reports_are_jaxs(spec: Spec, optimize: Any) -> None:
    subscripts, shapes = spec
    # (The exhaustive searches take long over many operands, in JAX as in plait.)
    if optimize is True and len(shapes) > 5 or optimize == "branch-2" and len(shapes) > 9:
        optimize = "branch-1"
    ops = [np.zeros(s, np.float32) for s in shapes]
    theirs, their_info = jjnp.einsum_path(subscripts, *ops, optimize=optimize)
    mine, my_info = pjnp.einsum_path(subscripts, *ops, optimize=optimize)
    assert mine == [tuple(p) for p in theirs]
    assert str(my_info) == str(their_info)


@settings(max_examples=40, deadline=None)
@given(spec=einsums(max_operands=7), optimize=st.sampled_from(["auto", "greedy", False]))
def test_traces_jaxs_jaxpr(spec: Spec, optimize: Any) -> None:
    subscripts, shapes = spec
    ops = _operands(shapes)
    def theirs(*xs: Any) -> Any:
        return jjnp.einsum(subscripts, *xs, optimize=optimize)
    def mine(*xs: Any) -> Any:
        return pjnp.einsum(subscripts, *xs, optimize=optimize)
    assert str(plait.make_jaxpr(mine)(*ops)) == str(jax.make_jaxpr(theirs)(*ops))
    np.testing.assert_allclose(np.asarray(mine(*ops)), np.asarray(theirs(*ops)),
                               rtol=1e-5, atol=1e-5)


@settings(max_examples=40, deadline=None)
@given(spec=einsums(max_operands=6, repeats=True, broadcast=True))
def test_values_with_diagonals_and_broadcasts(spec: Spec) -> None:
    """A label repeated within an operand takes a diagonal, a size-1 axis broadcasts
    (plait's jaxprs differ there: a strided slice, and an early squeeze)."""
    subscripts, shapes = spec
    ops = _operands(shapes)
    expected = np.asarray(jjnp.einsum(subscripts, *ops))
    got = np.asarray(pjnp.einsum(subscripts, *ops))
    assert got.shape == expected.shape
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)


def test_the_order_saves_work() -> None:
    """Left to right, ``ij,jk,k->i`` is a matrix product; JAX's order (and plait's)
    contracts the vector first, so no ``f32[n,n]`` intermediate is made."""
    n = 64
    a, b, v = _operands([(n, n), (n, n), (n,)])
    text = str(plait.make_jaxpr(lambda *x: pjnp.einsum("ij,jk,k->i", *x))(a, b, v))
    assert f"f32[{n},{n}] = dot_general" not in text
    left = str(plait.make_jaxpr(lambda *x: pjnp.einsum("ij,jk,k->i", *x,
                                                       optimize=[(0, 1), (0, 1)]))(a, b, v))
    assert f"f32[{n},{n}] = dot_general" in left
    np.testing.assert_allclose(np.asarray(pjnp.einsum("ij,jk,k->i", a, b, v)),
                               np.asarray(jjnp.einsum("ij,jk,k->i", a, b, v)), rtol=1e-4)


@pytest.mark.parametrize("optimize", [[(1, 2), (0, 1)], [(0, 2), (0, 1)], "optimal", "eager",
                                      "opportunistic", "branch-all"])
def test_given_paths_and_names(optimize: Any) -> None:
    ops = _operands([(2, 3), (3, 4), (4, 5)])
    expected = jjnp.einsum("ij,jk,kl->il", *ops, optimize=optimize)
    got = pjnp.einsum("ij,jk,kl->il", *ops, optimize=optimize)
    np.testing.assert_allclose(np.asarray(got), np.asarray(expected), rtol=1e-6, atol=1e-7)


def test_a_step_may_contract_three_operands() -> None:
    """(JAX refuses such a path: "does not support simultaneous contraction of 3 or
    more operands"; plait contracts them pairwise.)"""
    ops = _operands([(2, 3), (3, 4), (4, 5)])
    got = pjnp.einsum("ij,jk,kl->il", *ops, optimize=[(0, 1, 2)])
    expected = np.einsum("ij,jk,kl->il", *[o.astype(np.float64) for o in ops])
    np.testing.assert_allclose(np.asarray(got), expected, rtol=1e-5, atol=1e-5)


def test_path_from_einsum_path_and_interleaved_form() -> None:
    ops = _operands([(2, 3), (3, 100), (100, 5)])
    path, info = pjnp.einsum_path("ij,jk,kl", *ops, optimize="optimal")
    theirs, their_info = jjnp.einsum_path("ij,jk,kl", *ops, optimize="optimal")
    assert path == [tuple(p) for p in theirs] and repr(info) == repr(their_info)
    assert info.opt_cost < info.naive_cost
    got = pjnp.einsum(ops[0], [0, 1], ops[1], [1, 2], ops[2], [2, 3], optimize=path)
    np.testing.assert_allclose(np.asarray(got), ops[0] @ ops[1] @ ops[2], rtol=1e-4)
    mine_interleaved, _ = pjnp.einsum_path(ops[0], [0, 1], ops[1], [1, 2], ops[2], [2, 3])
    assert mine_interleaved == path


def test_gradients_and_vmap_follow_the_path() -> None:
    ops = _operands([(3, 4), (4, 5), (5,), (3,)])
    spec = "ij,jk,k,i->"
    mine = plait.grad(lambda *x: pjnp.einsum(spec, *x), argnums=(0, 1, 2, 3))(*ops)
    theirs = jax.grad(lambda *x: jjnp.einsum(spec, *x), argnums=(0, 1, 2, 3))(*ops)
    for m, t in zip(mine, theirs):
        np.testing.assert_allclose(np.asarray(m), np.asarray(t), rtol=1e-5, atol=1e-6)
    batch = _operands([(6, 3, 4)])[0]
    mine_v = plait.vmap(lambda a: pjnp.einsum(spec, a, *ops[1:]))(batch)
    theirs_v = jax.vmap(lambda a: jjnp.einsum(spec, a, *ops[1:]))(batch)
    np.testing.assert_allclose(np.asarray(mine_v), np.asarray(theirs_v), rtol=1e-5)


@pytest.mark.parametrize("optimize, message", [
    ("fastest", "einsum: unknown optimize strategy 'fastest'; expected one of"),
    (3, "einsum: expected optimize to be a bool, a strategy name or a path"),
    ([(0, 1)], r"einsum: the path \[\(0, 1\)\] leaves 2 operands of 3; expected its steps "
               "to contract them all into one"),
    ([(0, 3), (0, 1)], r"einsum: the path \[\(0, 3\), \(0, 1\)\] is not valid for 3 operands: "
                       r"expected each step to be a tuple of distinct positions among the 3 "
                       r"operands left, but got \(0, 3\)"),
    ([(0, 0), (0, 1)], r"but got \(0, 0\)"),
])
def test_bad_optimize(optimize: Any, message: str) -> None:
    ops = _operands([(2, 3), (3, 4), (4, 5)])
    with pytest.raises(ValueError, match=message):
        pjnp.einsum("ij,jk,kl->il", *ops, optimize=optimize)
    with pytest.raises(ValueError, match=message):
        pjnp.einsum_path("ij,jk,kl->il", *ops, optimize=optimize)


@pytest.mark.parametrize("spec", ["...qhgd,...kh1d->...hgqk", "ab,b1->a1", "αβ,β->α"])
def test_any_character_but_a_dot_is_a_label_as_in_jax(spec: str) -> None:
    # (flax's grouped-query attention names a size-1 dimension '1')
    table: dict[str, list[tuple[int, ...]]] = {
        "...qhgd,...kh1d->...hgqk": [(2, 3, 4, 2, 5), (2, 6, 4, 1, 5)],
        "ab,b1->a1": [(2, 3), (3, 1)], "αβ,β->α": [(2, 3), (3,)]}
    shapes = table[spec]
    rng = np.random.default_rng(0)
    ops = [rng.normal(size=s).astype(np.float32) for s in shapes]
    np.testing.assert_allclose(np.asarray(pjnp.einsum(spec, *ops)),
                               np.asarray(jjnp.einsum(spec, *ops)), rtol=1e-5)

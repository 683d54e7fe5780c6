"""plait.flatten_util.ravel_pytree against jax.flatten_util.ravel_pytree 0.10.2: the flat
vector (values, dtype, weak type), the rebuilt pytree, dtype promotion of mixed leaves,
empty pytrees and scalars, the unravel function's checks, hashing, and composition with
jit, grad and vmap."""

from __future__ import annotations

from collections import namedtuple
from functools import partial
from typing import Any

import hypothesis.extra.numpy as hnp
import jax
import jax.flatten_util
import jax.numpy as jjnp
import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import plait
import plait.flatten_util
import plait.numpy as pnp
from tests.frontend.jax_oracle import both_x64, raised

Pair = namedtuple("Pair", ["a", "b"])


def _weak(x: Any) -> bool:
    return bool(x.aval.weak_type) if isinstance(x, plait.Array) else bool(x.weak_type)


def same(got: Any, want: Any) -> None:
    """Equal structures; leaves of equal shape, dtype, weak type and values."""
    g_leaves, g_tree = jax.tree_util.tree_flatten(got)
    w_leaves, w_tree = jax.tree_util.tree_flatten(want)
    assert str(g_tree) == str(w_tree)
    for g, w in zip(g_leaves, w_leaves):
        assert np.shape(g) == np.shape(w) and np.asarray(g).dtype == np.asarray(w).dtype, (g, w)
        assert _weak(g) == _weak(w), (g, w)
        np.testing.assert_array_equal(np.asarray(g), np.asarray(w))


def _p(tree: Any) -> Any:
    return jax.tree_util.tree_map(lambda x: pnp.asarray(x) if isinstance(x, np.ndarray) else x,
                                  tree)


f32 = np.float32
TREES: dict[str, Any] = {
    "dict": {"a": np.arange(3, dtype=f32), "b": np.ones((2, 2), f32)},
    "nested": [np.arange(2, dtype=f32), (np.ones(3, f32), {"z": f32(4.0)}), Pair(f32(1), None)],
    "python_float": 2.0,
    "python_int": 2,
    "python_scalars": (1, 2.5),
    "empty_leaf": {"e": np.zeros((0, 3), f32), "x": np.ones(2, f32)},
    "mixed_int_float": {"i": np.arange(3, dtype=np.int32), "f": np.ones(2, f32)},
    "int_float16_bool": (2, np.float16(1), True),
    "float16_bool": (np.ones(2, np.float16), True),
    "bool_only": (np.array([True, False]), np.bool_(True)),
    "int8_uint8": (np.ones(2, np.int8), np.ones(3, np.uint8)),
    "bfloat16_float32": (np.ones(2, ml_dtypes.bfloat16), np.ones(1, f32)),
    "complex_real": (np.ones(2, np.complex64), np.ones(2, f32)),
    "float64_numpy": np.arange(4.0),
}
EMPTY: dict[str, Any] = {"list": [], "dict": {}, "none": None, "nested": ([], {"a": None})}


@pytest.mark.parametrize("name", sorted(TREES))
def test_ravel_and_unravel_match_jax(name: str) -> None:
    tree = TREES[name]
    flat, unravel = plait.flatten_util.ravel_pytree(_p(tree))
    jflat, junravel = jax.flatten_util.ravel_pytree(tree)
    same(flat, jflat)
    same(unravel(flat), junravel(jflat))
    # Eager and jitted unravel agree.
    same(plait.jit(unravel)(flat), junravel(jflat))


@pytest.mark.parametrize("name", sorted(EMPTY))
def test_empty_pytrees_give_an_empty_float32_vector(name: str) -> None:
    flat, unravel = plait.flatten_util.ravel_pytree(EMPTY[name])
    jflat, junravel = jax.flatten_util.ravel_pytree(EMPTY[name])
    same(flat, jflat)
    same(unravel(flat), junravel(jflat))
    # No leaves: whatever vector is given, the empty structure comes back.
    same(unravel(pnp.ones(3)), junravel(jjnp.ones(3)))


def test_single_dtype_unravel_accepts_any_dtype() -> None:
    tree = {"a": np.ones(2, f32), "b": np.zeros(1, f32)}
    _, unravel = plait.flatten_util.ravel_pytree(tree)
    _, junravel = jax.flatten_util.ravel_pytree(tree)
    for v in (np.arange(3, dtype=np.int32), np.arange(3.0, dtype=np.float16)):
        same(unravel(pnp.asarray(v)), junravel(jjnp.asarray(v)))


def test_x64_mode() -> None:
    trees = [np.arange(3.0), (np.ones(2, f32), np.ones(1)), (1, 2.0), (np.ones(2, np.int64), 1.5)]
    with both_x64(True):
        for tree in trees:
            flat, unravel = plait.flatten_util.ravel_pytree(_p(tree))
            jflat, junravel = jax.flatten_util.ravel_pytree(tree)
            same(flat, jflat)
            same(unravel(flat), junravel(jflat))


def test_unravel_errors_match_jax() -> None:
    mixed = {"i": np.arange(3, dtype=np.int32), "f": np.ones(1, f32)}
    _, unravel = plait.flatten_util.ravel_pytree(mixed)
    _, junravel = jax.flatten_util.ravel_pytree(mixed)
    # Wrong dtype (leaves of several dtypes): TypeError naming both dtypes.
    e, je = raised(lambda: unravel(pnp.ones(4, pnp.int32))), raised(
        lambda: junravel(jjnp.ones(4, jjnp.int32)))
    assert type(e) is type(je) is TypeError
    assert str(e) == str(je) == "unravel function given array of dtype int32, but expected " \
                                "dtype float32"
    # Wrong length, wrong rank: ValueError, as JAX's split gives.
    for bad in ((5,), (2, 2)):
        e, je = raised(partial(unravel, pnp.ones(bad))), raised(partial(junravel, jjnp.ones(bad)))
        assert type(e) is type(je) is ValueError
        assert str(e) == str(je)
    single = {"a": np.ones(2, f32), "b": np.ones(2, f32)}
    _, unravel = plait.flatten_util.ravel_pytree(single)
    _, junravel = jax.flatten_util.ravel_pytree(single)
    e, je = raised(lambda: unravel(pnp.ones(3))), raised(lambda: junravel(jjnp.ones(3)))
    assert type(e) is type(je) is ValueError and str(e) == str(je)
    # A list is not an array.
    unravel_any: Any = plait.flatten_util.ravel_pytree(mixed)[1]
    e = raised(lambda: unravel_any([1.0, 2.0, 3.0, 4.0]))
    assert isinstance(e, TypeError) and "expected an array" in str(e) and "list" in str(e)


def test_non_array_leaves_are_refused() -> None:
    e = raised(lambda: plait.flatten_util.ravel_pytree({"a": "text"}))
    assert isinstance(e, TypeError)
    assert isinstance(raised(lambda: jax.flatten_util.ravel_pytree({"a": "text"})), TypeError)


def test_unravel_is_hashable_and_equal_for_equal_layouts() -> None:
    a = plait.flatten_util.ravel_pytree({"x": np.ones(2, f32), "n": 1})[1]
    b = plait.flatten_util.ravel_pytree({"x": np.zeros(2, f32), "n": 5})[1]
    c = plait.flatten_util.ravel_pytree({"x": np.zeros(3, f32), "n": 5})[1]
    assert a == b and hash(a) == hash(b) and a != c
    # So it can be a static argument of jit.
    f = plait.jit(lambda u, v: u(v)["x"].sum(), static_argnums=0)
    assert float(f(a, pnp.arange(3.0))) == 3.0  # keys sorted: n, then x


def _loss(np_: Any, ravel: Any, tree: Any) -> Any:
    flat, unravel = ravel(tree)
    back = unravel(flat * 2.0)
    return np_.sum(flat ** 2) + np_.sum(back["w"] * back["b"].sum())


def test_jit_grad_and_vmap_match_jax() -> None:
    tree = {"w": np.arange(6, dtype=f32).reshape(2, 3) / 5, "b": np.array([0.5, -1.0], f32)}
    p = plait.flatten_util.ravel_pytree
    j = jax.flatten_util.ravel_pytree
    same(plait.jit(lambda t: p(t)[0])(_p(tree)), jax.jit(lambda t: j(t)[0])(tree))
    g = plait.grad(lambda t: _loss(pnp, p, t))(_p(tree))
    jg = jax.grad(lambda t: _loss(jjnp, j, t))(tree)
    for k in tree:
        np.testing.assert_allclose(np.asarray(g[k]), np.asarray(jg[k]), rtol=1e-6)
    # grad through a function of the flat vector, unraveled inside.
    flat, unravel = p(_p(tree))
    jflat, junravel = j(tree)
    gf = plait.grad(lambda v: pnp.sum(unravel(v)["w"] ** 3))(flat)
    jgf = jax.grad(lambda v: jjnp.sum(junravel(v)["w"] ** 3))(jflat)
    np.testing.assert_allclose(np.asarray(gf), np.asarray(jgf), rtol=1e-6)
    # vmap over a batch of pytrees: one flat vector per member.
    batch = {"w": np.arange(12, dtype=f32).reshape(2, 2, 3), "b": np.ones((2, 2), f32)}
    same(plait.vmap(lambda t: p(t)[0])(_p(batch)), jax.vmap(lambda t: j(t)[0])(batch))
    # vmap over flat vectors, unraveled with one function.
    vs = np.arange(16, dtype=f32).reshape(2, 8)
    same(plait.vmap(unravel)(pnp.asarray(vs)), jax.vmap(junravel)(jjnp.asarray(vs)))


LEAF_DTYPES = [np.float32, np.int32, np.bool_, np.float16, np.int8, np.uint32]


LEAVES = st.lists(st.tuples(st.sampled_from(LEAF_DTYPES),
                            hnp.array_shapes(min_dims=0, max_dims=2, min_side=0, max_side=3)),
                  min_size=1, max_size=4)


def _leaf(rng: np.random.Generator, dtype: Any, shape: tuple[int, ...]) -> np.ndarray:
    values = rng.standard_normal(shape) * 3
    # (Unsigned leaves from nonnegative values: casting a negative float to an unsigned
    # integer is undefined, and the huge values it may give overflow float16.)
    return (np.abs(values) if np.issubdtype(dtype, np.unsignedinteger) else values).astype(dtype)


def _round_trip(leaves: list[tuple[Any, tuple[int, ...]]]) -> None:
    rng = np.random.default_rng(0)
    tree = [_leaf(rng, d, s) for d, s in leaves]
    flat, unravel = plait.flatten_util.ravel_pytree(_p(tree))
    jflat, junravel = jax.flatten_util.ravel_pytree(tree)
    same(flat, jflat)
    same(unravel(flat), junravel(jflat))


@settings(max_examples=5, deadline=None)
@given(LEAVES)
def test_random_pytrees_ravel_as_jax(leaves: list[tuple[Any, tuple[int, ...]]]) -> None:
    _round_trip(leaves)


@pytest.mark.slow
@settings(max_examples=60, deadline=None)
@given(LEAVES)
def test_random_pytrees_ravel_as_jax_exhaustive(leaves: list[tuple[Any, tuple[int, ...]]]
                                               ) -> None:
    _round_trip(leaves)

"""Index arrays and grids (``plait/frontend/numpy/index_tricks.py``) against jax.numpy."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import plait
import plait.numpy as pnp
from plait.errors import ConcretizationTypeError

COVERED = {"tril_indices", "triu_indices", "tril_indices_from", "triu_indices_from",
           "diag_indices", "diag_indices_from", "indices", "ix_", "unravel_index",
           "ravel_multi_index"}
"""The functions this file tests (the namespace coverage test of test_numpy.py reads it)."""


def assert_same(ours: Any, theirs: Any, what: str) -> None:
    """Equal structure, dtypes, shapes and values."""
    if isinstance(theirs, tuple | list):
        assert type(ours) is type(theirs) and len(ours) == len(theirs), what
        for o, t in zip(ours, theirs):
            assert_same(o, t, what)
        return
    o, t = np.asarray(ours), np.asarray(theirs)
    assert (o.dtype, o.shape) == (t.dtype, t.shape), \
        f"{what}: {o.dtype}{o.shape} vs {t.dtype}{t.shape}"
    np.testing.assert_array_equal(o, t, err_msg=what)


@pytest.mark.parametrize("name, args", [
    ("tril_indices", (3,)), ("tril_indices", (3, 1, 4)), ("tril_indices", (4, -2)),
    ("triu_indices", (3,)), ("triu_indices", (2, 0, 5)), ("triu_indices", (0,)),
    ("diag_indices", (3,)), ("diag_indices", (4, 3)), ("diag_indices", (0, 1)),
    ("indices", ((2, 3),)), ("indices", ((2, 0, 3),)), ("indices", ((),)),
    ("indices", ((4,), np.int8)),
])
def test_constructors_match_jax(name: str, args: tuple[Any, ...]) -> None:
    assert_same(getattr(pnp, name)(*args), getattr(jnp, name)(*args), f"{name}{args}")


def test_sparse_indices_and_ix_() -> None:
    assert_same(pnp.indices((2, 3, 4), sparse=True), jnp.indices((2, 3, 4), sparse=True), "")
    args = (np.array([0, 1]), np.array([2, 3, 4], np.int8), np.array([1]))
    assert_same(pnp.ix_(*args), jnp.ix_(*args), "ix_")
    assert_same(pnp.ix_(), jnp.ix_(), "ix_()")


@pytest.mark.parametrize("k", [-1, 0, 2])
def test_from_matrix_shapes(k: int) -> None:
    for a in (np.ones((3, 4)), np.ones((5, 2))):
        assert_same(pnp.tril_indices_from(a, k), jnp.tril_indices_from(a, k), "tril_from")
        assert_same(pnp.triu_indices_from(a, k), jnp.triu_indices_from(a, k), "triu_from")
    assert_same(pnp.diag_indices_from(np.ones((3, 3, 3))),
                jnp.diag_indices_from(jnp.ones((3, 3, 3))), "diag_from")


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(1, 5), min_size=1, max_size=3),
       st.lists(st.integers(-200, 200), min_size=1, max_size=8))
def test_unravel_index_clips_like_jax(shape: list[int], flat: list[int]) -> None:
    i = np.array(flat, np.int32)
    assert_same(pnp.unravel_index(i, shape), jnp.unravel_index(i, shape), "eager")
    ours = plait.jit(lambda i: pnp.unravel_index(i, tuple(shape)))(i)
    assert_same(ours, jax.jit(lambda i: jnp.unravel_index(i, tuple(shape)))(i), "jit")


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(1, 5), min_size=1, max_size=3), st.data())
def test_ravel_multi_index_modes_like_jax(dims: list[int], data: st.DataObject) -> None:
    n = data.draw(st.integers(1, 5))
    coords = tuple(np.array(data.draw(st.lists(st.integers(-8, 8), min_size=n, max_size=n)),
                            np.int32) for _ in dims)
    for mode in ("clip", "wrap"):
        for order in ("C", "F"):
            ours = plait.jit(lambda *c, mode=mode, order=order: pnp.ravel_multi_index(
                c, dims, mode=mode, order=order))(*coords)
            theirs = jnp.ravel_multi_index(coords, dims, mode=mode, order=order)
            assert_same(ours, theirs, f"{mode} {order}")
    inside = tuple(np.mod(c, d).astype(np.int32) for c, d in zip(coords, dims))
    assert_same(pnp.ravel_multi_index(inside, dims), jnp.ravel_multi_index(inside, dims),
                "raise")


def test_ravel_multi_index_errors() -> None:
    bad = (np.array([1, 4]), np.array([0, 0]))
    with pytest.raises(ValueError):
        jnp.ravel_multi_index(bad, (4, 5))
    with pytest.raises(ValueError, match=r"invalid entry in coordinates array 0: expected "
                                         r"values in \[0, 4\)"):
        pnp.ravel_multi_index(bad, (4, 5))
    with pytest.raises(ConcretizationTypeError):
        plait.jit(lambda a, b: pnp.ravel_multi_index((a, b), (4, 5)))(*bad)
    with pytest.raises(TypeError, match="only int indices"):
        pnp.ravel_multi_index((np.array([1.0]), np.array([0])), (4, 5))
    with pytest.raises(ValueError, match="expected mode"):
        pnp.ravel_multi_index(bad, (4, 5), mode="nope")


@pytest.mark.parametrize("key", [
    np.s_[0:3, 0:2], np.s_[0:1:3j], np.s_[0:1:5j, 2:4], np.s_[1:3], np.s_[0:1:0.25],
    np.s_[-2:2:2, 0:4]], ids=repr)
def test_grids_match_jax(key: Any) -> None:
    assert_same(pnp.mgrid[key], jnp.mgrid[key], "mgrid")
    assert_same(pnp.ogrid[key], jnp.ogrid[key], "ogrid")


def test_complex_grid_bounds_are_refused_as_in_jax() -> None:
    # A complex step is a count; a complex start or stop is an error in JAX 0.10.
    with pytest.raises(ValueError):
        jnp.mgrid[0:3j]
    with pytest.raises(ValueError, match="complex"):
        pnp.mgrid[0:3j]


def test_index_expressions_are_numpy_objects() -> None:
    assert pnp.s_[1:2, ::-1] == jnp.s_[1:2, ::-1] == (slice(1, 2), slice(None, None, -1))
    assert pnp.index_exp[1] == jnp.index_exp[1] == (1,)


def test_bad_inputs() -> None:
    with pytest.raises(ValueError, match=r"expected a 2-d input array, but got shape \(3,\)"):
        pnp.tril_indices_from(np.ones(3))
    with pytest.raises(ValueError, match=r"expected all dimensions of equal length, but got "
                                         r"shape \(3, 4\)"):
        pnp.diag_indices_from(np.ones((3, 4)))
    with pytest.raises(ValueError, match="must be nonnegative, got -1"):
        pnp.diag_indices(-1)
    with pytest.raises(ValueError, match=r"expected 1-d arguments, but argument 0 has shape"):
        pnp.ix_(np.ones((2, 2), np.int32))
    with pytest.raises(TypeError, match="boolean arguments are not supported"):
        pnp.ix_(np.array([True, False]))
    with pytest.raises(TypeError, match="expected an integer dtype"):
        pnp.indices((2,), np.float32)
    with pytest.raises(ConcretizationTypeError):
        plait.jit(lambda n: pnp.tril_indices(n))(3)


X1 = np.array([1, 2, 3])
Y2 = np.array([[4.0, 5.0], [6.0, 7.0]])
R_KEYS = [np.s_[1:4, 0, X1], np.s_["0,2", [1, 2], [3, 4]], np.s_["1,2,0", [1, 2], [3, 4]],
          np.s_["r", [1, 2]], np.s_["c", [1, 2, 3]], np.s_[X1, X1], np.s_["-1,3,1", X1],
          np.s_[0:1:4j, 2], np.s_[Y2, Y2], np.s_["1", Y2, Y2], np.s_[2.5, True]]
C_KEYS = [np.s_[X1, X1], np.s_[np.array([[1, 2], [3, 4]]), np.array([[5], [6]])],
          np.s_[1:4, X1], np.s_["0", X1, X1]]


@pytest.mark.parametrize("key", R_KEYS, ids=repr)
def test_r_matches_jax(key: Any) -> None:
    assert_same(pnp.r_[key], jnp.r_[key], "r_")


@pytest.mark.parametrize("key", C_KEYS, ids=repr)
def test_c_matches_jax(key: Any) -> None:
    assert_same(pnp.c_[key], jnp.c_[key], "c_")


def test_concatenator_errors() -> None:
    with pytest.raises(TypeError):
        jnp.c_[X1, 7, X1]
    with pytest.raises(TypeError, match="concatenation axis"):
        pnp.c_[X1, 7, X1]
    with pytest.raises(ValueError, match="string directive must come first"):
        pnp.r_[X1, "0"]
    with pytest.raises(ValueError, match="could not understand directive 'a,b'"):
        pnp.r_["a,b", X1]
    assert len(pnp.r_) == len(jnp.r_) == 0

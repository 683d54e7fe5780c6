"""take, take_along_axis, put, put_along_axis, place, compress, extract, nonzero,
flatnonzero, argwhere, one-argument where, lexsort, partition, argpartition,
sort_complex, insert, delete and lax.top_k against jax 0.10.2."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import plait
import plait.lax as plax
import plait.numpy as pnp

COVERED = {"take", "take_along_axis", "put", "put_along_axis", "place", "compress", "extract",
           "nonzero", "flatnonzero", "argwhere", "lexsort", "partition", "argpartition",
           "sort_complex", "insert", "delete"}
"""The functions this file tests (the namespace coverage test of test_numpy.py reads it)."""

RNG = np.random.default_rng(11)
X = RNG.normal(size=(4, 5)).astype(np.float32)
XI = RNG.integers(0, 4, size=(4, 5)).astype(np.int32)
IDX = np.array([[0, 4, -1], [2, 9, -7]])
ORDER = np.argsort(X, axis=1)

Case = Callable[[Any, Any], Any]

CASES: dict[str, Case] = {
    "take": lambda L, x: L.take(x, IDX), "take_axis": lambda L, x: L.take(x, IDX, axis=1),
    "take_clip": lambda L, x: L.take(x, IDX, axis=0, mode="clip"),
    "take_wrap": lambda L, x: L.take(x, IDX, axis=1, mode="wrap"),
    "take_fill": lambda L, x: L.take(x, IDX, axis=1, fill_value=-2.0),
    "take_empty": lambda L, x: L.take(x, np.zeros((0,), np.int32), axis=1),
    "take_along": lambda L, x: L.take_along_axis(x, ORDER, axis=1),
    "take_along_0": lambda L, x: L.take_along_axis(x, ORDER[:2] % 4, axis=0),
    "take_along_broadcast": lambda L, x: L.take_along_axis(x, ORDER[:1], axis=1),
    "take_along_flat": lambda L, x: L.take_along_axis(x, np.array([3, 0, 19, -1]), axis=None),
    "take_along_clip": lambda L, x: L.take_along_axis(x, ORDER + 3, axis=1, mode="clip"),
    "take_along_one_hot": lambda L, x: L.take_along_axis(x, ORDER[:, :3], axis=1,
                                                         mode="one_hot"),
    "take_along_one_hot_1d": lambda L, x: L.take_along_axis(x[0], ORDER[0], axis=0,
                                                            mode="one_hot"),
    "put_along": lambda L, x: L.put_along_axis(x, ORDER[:, :2], 9.0, axis=1, inplace=False),
    "put": lambda L, x: L.put(x, np.array([0, 3, 30]), np.array([1.0, 2.0], np.float32),
                              inplace=False),
    "put_clip": lambda L, x: L.put(x, np.array([0, -3, 30]), 5.0, mode="clip", inplace=False),
    "put_wrap": lambda L, x: L.put(x, np.array([0, -3, 30]), 5.0, mode="wrap", inplace=False),
    "place": lambda L, x: L.place(x, x > 0, np.array([7.0, 8.0], np.float32), inplace=False),
    "compress": lambda L, x: L.compress(np.array([True, False, True]), x, axis=1),
    "compress_flat": lambda L, x: L.compress(np.array([True, False, True]), x),
    "compress_size": lambda L, x: L.compress(np.array([1, 0, 1, 1]), x, axis=0, size=3,
                                             fill_value=-1),
    "extract": lambda L, x: L.extract(x > 0, x),
    "extract_size": lambda L, x: L.extract(x > 0, x, size=20, fill_value=0.5),
    "nonzero": lambda L, x: L.nonzero(x > 0),
    "nonzero_size": lambda L, x: L.nonzero(x > 0, size=15, fill_value=-1),
    "nonzero_ints": lambda L, x: L.nonzero(XI),
    "flatnonzero": lambda L, x: L.flatnonzero(x > 0.5),
    "argwhere": lambda L, x: L.argwhere(x > 0.5),
    "argwhere_size": lambda L, x: L.argwhere(x > 0.5, size=3),
    "argwhere_0d": lambda L, x: L.argwhere(x[0, 0] > 0),
    "where_one": lambda L, x: L.where(x > 1.0),
    "where_one_size": lambda L, x: L.where(x > 1.0, size=2, fill_value=(9, 8)),
    "lexsort": lambda L, x: L.lexsort((XI[0], XI[1])),
    "lexsort_axis0": lambda L, x: L.lexsort([XI, XI * 2], axis=0),
    "partition": lambda L, x: L.partition(XI, 3), "partition_0": lambda L, x: L.partition(x, 1, 0),
    "partition_u8": lambda L, x: L.partition(XI.astype(np.uint8), 4),
    "argpartition": lambda L, x: L.argpartition(XI, 2),
    "argpartition_u8": lambda L, x: L.argpartition(XI.astype(np.uint8), 4),
    "sort_complex": lambda L, x: L.sort_complex(x),
    "sort_complex_int": lambda L, x: L.sort_complex(XI),
    "delete_int": lambda L, x: L.delete(x, 1), "delete_axis": lambda L, x: L.delete(x, -1, 1),
    "delete_slice": lambda L, x: L.delete(x, slice(1, None, 2), axis=1),
    "delete_array": lambda L, x: L.delete(x, np.array([0, 5, 5, -1])),
    "delete_mask": lambda L, x: L.delete(x, np.array([True, False, True, False]), axis=0),
    "delete_unique": lambda L, x: L.delete(x, np.array([3, 0]), axis=1,
                                           assume_unique_indices=True),
    "insert_int": lambda L, x: L.insert(x, 1, 9.0),
    "insert_axis": lambda L, x: L.insert(x, 2, np.array([7.0, 8.0, 9.0, 1.0]), axis=1),
    "insert_array": lambda L, x: L.insert(x, np.array([0, 2, 2]), np.array([-1.0, -2.0, -3.0]),
                                          axis=1),
    "insert_slice": lambda L, x: L.insert(x, slice(0, 4, 2), 5.0, axis=1),
    "insert_row": lambda L, x: L.insert(x, 4, np.array([1.0, 2, 3, 4, 5]), axis=0),
    "insert_negative": lambda L, x: L.insert(x, -1, 0.5),
}


def _leaves(x: Any) -> list[np.ndarray]:
    return [np.asarray(v) for v in (x if isinstance(x, tuple) else (x,))]


def assert_same(ours: Any, theirs: Any, what: str) -> None:
    o, t = _leaves(ours), _leaves(theirs)
    assert len(o) == len(t), what
    for a, b in zip(o, t):
        assert (a.dtype, a.shape) == (b.dtype, b.shape), f"{what}: {a.dtype}{a.shape} vs " \
                                                          f"{b.dtype}{b.shape}"
        np.testing.assert_array_equal(a, b, err_msg=what)


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_jax(name: str) -> None:
    f = CASES[name]
    want = f(jnp, jnp.asarray(X))
    assert_same(f(pnp, pnp.asarray(X)), want, "eager")
    traceable = not any(s in name for s in ("nonzero", "argwhere", "extract", "flat",
                                            "compress", "where_one", "delete", "place"))
    if traceable or "size" in name or name in ("place", "delete_unique"):
        assert_same(plait.jit(lambda x: f(pnp, x))(X), want, "jit")


@pytest.mark.parametrize("name", ["take", "take_fill", "take_along", "put_along", "put",
                                  "insert_array", "delete_unique", "compress_size"])
def test_gradients_match_jax(name: str) -> None:
    f = CASES[name]
    g: Callable[[Any], Callable[[Any], Any]] = lambda L: (  # noqa: E731
        lambda x: L.sum(L.where(L.isnan(y := f(L, x)), 0.0, L.sin(y))))
    np.testing.assert_allclose(plait.grad(g(pnp))(X), jax.grad(g(jnp))(X), rtol=1e-6)


def test_vmap_of_take_and_take_along_axis() -> None:
    xs = RNG.normal(size=(3, 6)).astype(np.float32)
    ids = RNG.integers(-6, 6, size=(3, 4))
    np.testing.assert_array_equal(plait.vmap(pnp.take)(xs, ids), jax.vmap(jnp.take)(xs, ids))
    np.testing.assert_array_equal(
        plait.vmap(lambda a, i: pnp.take_along_axis(a, i % 6, 0))(xs, ids),
        jax.vmap(lambda a, i: jnp.take_along_axis(a, i % 6, 0))(xs, ids))


def test_nonzero_needs_size_under_jit() -> None:
    with pytest.raises(plait.errors.ConcretizationTypeError,
                       match="size argument of jnp.nonzero must be statically specified"):
        plait.jit(pnp.nonzero)(X)
    with pytest.raises(ValueError, match="Calling nonzero on 0d arrays is not allowed"):
        pnp.nonzero(np.float32(1))
    with pytest.raises(ValueError, match="size and fill_value arguments cannot be used"):
        pnp.where(X > 0, X, 0.0, size=3)  # type: ignore[call-overload]  # the point
    with pytest.raises(ValueError, match="inplace=False"):
        pnp.put(X, np.array([0]), 1.0)
    with pytest.raises(ValueError, match="Invalid mode 'bad' for np.take"):
        pnp.take(X, IDX, mode="bad")


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 4), st.integers(1, 8), st.integers(0, 7), st.data())
def test_top_k_matches_jax(rows: int, n: int, k: int, data: st.DataObject) -> None:
    k = min(k, n)
    dtype = data.draw(st.sampled_from([np.float32, np.int32, np.uint8]))
    vals = [0.0, 1.0, -1.0, 2.0, np.nan, -0.0] if dtype == np.float32 else [0, 1, 2, 3]
    x = np.array(data.draw(st.lists(st.sampled_from(vals), min_size=rows * n,
                                    max_size=rows * n)), dtype).reshape(rows, n)
    axis = data.draw(st.sampled_from([-1, 0]))
    if axis == 0:
        k = min(k, rows)
    ours, theirs = plax.top_k(x, k, axis=axis), jax.lax.top_k(x, k, axis=axis)
    assert_same(tuple(ours), tuple(theirs), f"top_k {x} {k} {axis}")

"""unique (and unique_values/counts/inverse/all), union1d, intersect1d, setdiff1d and
setxor1d against jax.numpy 0.10.2, with and without size=, eagerly and under jit."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import plait
import plait.numpy as pnp

COVERED = {"unique", "unique_values", "unique_counts", "unique_inverse", "unique_all",
           "union1d", "intersect1d", "setdiff1d", "setxor1d"}
"""The functions this file tests (the namespace coverage test of test_numpy.py reads it)."""

A = np.array([3.0, 1.0, np.nan, 1.0, -0.0, 0.0, np.nan, 2.0], np.float32)
B = np.array([1.0, 5.0, 2.0, 2.0], np.float32)
I2 = np.array([[1, 2], [1, 2], [0, 5]], np.int32)

CASES: dict[str, Callable[[Any], Any]] = {
    "unique": lambda L: L.unique(A), "unique_nan_apart": lambda L: L.unique(A, equal_nan=False),
    "unique_flags": lambda L: L.unique(A, True, True, True),
    "unique_axis": lambda L: L.unique(I2, axis=0, return_index=True, return_inverse=True,
                                      return_counts=True),
    "unique_size": lambda L: L.unique(A, size=8, fill_value=-1.0),
    "unique_size_flags": lambda L: L.unique(A, True, True, True, size=7, fill_value=9.0),
    "unique_size_default_fill": lambda L: L.unique(A, size=7),
    "unique_bool": lambda L: L.unique(np.array([True, False, True])),
    "unique_values": lambda L: L.unique_values(A),
    "unique_counts": lambda L: tuple(L.unique_counts(A)),
    "unique_inverse": lambda L: tuple(L.unique_inverse(I2)),
    "unique_all": lambda L: tuple(L.unique_all(A)),
    "union1d": lambda L: L.union1d(A, B),
    "union1d_size": lambda L: L.union1d(A, B, size=9, fill_value=0.5),
    "intersect1d": lambda L: L.intersect1d(A, B),
    "intersect1d_indices": lambda L: L.intersect1d(A, B, return_indices=True),
    "intersect1d_size": lambda L: L.intersect1d(A, B, size=4, fill_value=-2.0),
    "intersect1d_size_default_fill": lambda L: L.intersect1d(A, B, size=4),
    "setdiff1d": lambda L: L.setdiff1d(A, B),
    "setdiff1d_size": lambda L: L.setdiff1d(A, B, size=6, fill_value=7.0),
    "setdiff1d_size_default_fill": lambda L: L.setdiff1d(A, B, size=6),
    "setxor1d": lambda L: L.setxor1d(A, B),
    "setxor1d_size": lambda L: L.setxor1d(A, B, size=6, fill_value=7.0),
    "setxor1d_size_default_fill": lambda L: L.setxor1d(A, B, size=6),
    "setxor1d_assume_unique": lambda L: L.setxor1d(np.array([1, 4, 2]), np.array([2, 3]),
                                                   assume_unique=True),
}


def assert_same(ours: Any, theirs: Any, what: str) -> None:
    o = ours if isinstance(ours, tuple) else (ours,)
    t = theirs if isinstance(theirs, tuple) else (theirs,)
    assert len(o) == len(t), what
    for a, b in zip(o, t):
        a, b = np.asarray(a), np.asarray(b)
        assert (a.dtype, a.shape) == (b.dtype, b.shape), f"{what}: {a.dtype}{a.shape} vs " \
                                                          f"{b.dtype}{b.shape}"
        np.testing.assert_array_equal(a, b, err_msg=what)


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_jax(name: str) -> None:
    want = CASES[name](jnp)
    assert_same(CASES[name](pnp), want, name)
    if "size" in name:
        assert_same(plait.jit(lambda: CASES[name](pnp))(), want, name + " jit")


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(-3, 3), max_size=9), st.lists(st.integers(-3, 3), max_size=6),
       st.integers(0, 6))
def test_random_sets_with_size_match_jax(xs: list[int], ys: list[int], size: int) -> None:
    a, b = np.array(xs, np.int32), np.array(ys, np.int32)
    for name in ("union1d", "intersect1d", "setdiff1d", "setxor1d"):
        if name == "setdiff1d" and (not len(a) or not size):
            continue  # JAX indexes an empty array there and raises IndexError
        ours = plait.jit(lambda u, v, n=name: getattr(pnp, n)(u, v, size=size,
                                                             fill_value=-9))(a, b)
        assert_same(ours, getattr(jnp, name)(a, b, size=size, fill_value=-9), name)
        assert_same(getattr(pnp, name)(a, b), getattr(jnp, name)(a, b), name)
    if len(a):
        assert_same(pnp.unique(a, True, True, True, size=size, fill_value=0),
                    jnp.unique(a, True, True, True, size=size, fill_value=0), "unique")


def test_traced_input_without_size_is_a_clear_error() -> None:
    with pytest.raises(plait.errors.ConcretizationTypeError, match="pass a static size="):
        plait.jit(pnp.unique)(A)
    with pytest.raises(ValueError, match="fill_value must be specified"):
        pnp.unique(np.zeros((0,), np.float32), size=3)

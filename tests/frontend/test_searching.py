"""searchsorted, digitize and isin (``plait/frontend/numpy/searching.py``) against jax.numpy."""

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

COVERED = {"searchsorted", "digitize", "isin"}
"""The functions this file tests (the namespace coverage test of test_numpy.py reads it)."""

SPECIAL = [0.0, -0.0, np.nan, np.inf, -np.inf, 1.0, -1.0, 2.5]


def assert_same(ours: Any, theirs: Any, what: str) -> None:
    o, t = np.asarray(ours), np.asarray(theirs)
    assert (o.dtype, o.shape) == (t.dtype, t.shape), \
        f"{what}: {o.dtype}{o.shape} vs {t.dtype}{t.shape}"
    np.testing.assert_array_equal(o, t, err_msg=what)


def _values(dtype: str) -> st.SearchStrategy[Any]:
    if dtype == "float32":
        return st.one_of(st.sampled_from(SPECIAL), st.floats(-3, 3, width=32))
    if dtype == "uint8":
        return st.integers(0, 9)
    return st.integers(-5, 5)


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(["float32", "int32", "uint8"]), st.data())
def test_searchsorted_matches_jax(dtype: str, data: st.DataObject) -> None:
    a = np.sort(np.array(data.draw(st.lists(_values(dtype), max_size=8)), dtype))
    v = np.array(data.draw(st.lists(_values(dtype), min_size=1, max_size=6)), dtype)
    side = data.draw(st.sampled_from(["left", "right"]))
    method = data.draw(st.sampled_from(["scan", "scan_unrolled", "sort", "compare_all"]))
    assert_same(pnp.searchsorted(a, v, side=side, method=method),
                jnp.searchsorted(a, v, side=side, method=method), f"{a} {v} {side}")
    ours = plait.jit(lambda a, v: pnp.searchsorted(a, v, side=side))(a, v)
    assert_same(ours, jnp.searchsorted(a, v, side=side), "jit")


def test_searchsorted_shapes_scalars_complex_and_vmap() -> None:
    a = np.array([1, 2, 3])
    assert_same(pnp.searchsorted(a, 2.5), jnp.searchsorted(a, 2.5), "scalar query")
    q = np.array([[2, 3], [0, 9]])
    assert_same(pnp.searchsorted(a, q), jnp.searchsorted(a, q), "2-d queries")
    c = np.array([1 + 1j, 1 + 2j, 2 + 0j], np.complex64)
    qc = np.array([1 + 1.5j, 3j, 1 + 2j], np.complex64)
    for side in ("left", "right"):
        assert_same(pnp.searchsorted(c, qc, side=side), jnp.searchsorted(c, qc, side=side),
                    "complex")
    f32 = np.array([0.5, 1.5, 2.5], np.float32)
    assert_same(plait.vmap(lambda v: pnp.searchsorted(f32, v))(np.array([0.0, 2.0, 9.0])),
                jax.vmap(lambda v: jnp.searchsorted(f32, v))(np.array([0.0, 2.0, 9.0])),
                "vmap")


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(-3, 3, width=32), min_size=1, max_size=6, unique=True),
       st.lists(st.sampled_from([-4.0, -1.0, 0.0, 0.5, 1.0, 2.0, 3.0, 4.0]), min_size=1,
                max_size=6),
       st.booleans(), st.booleans())
def test_digitize_matches_jax(bins: list[float], x: list[float], right: bool,
                              decreasing: bool) -> None:
    b = np.sort(np.array(bins, np.float32))
    if decreasing:
        b = b[::-1].copy()
    xs = np.array(x, np.float32)
    assert_same(pnp.digitize(xs, b, right), jnp.digitize(xs, b, right), f"{b} {xs}")
    assert_same(plait.jit(lambda x, b: pnp.digitize(x, b, right))(xs, b),
                jnp.digitize(xs, b, right), "jit")


def test_digitize_empty_bins_and_gradient() -> None:
    x = np.array([0.5, 1.5, 3.0], np.float32)
    assert_same(pnp.digitize(x, np.array([], np.float32)),
                jnp.digitize(x, np.array([], np.float32)), "no bins")
    b = np.array([1.0, 2.0], np.float32)
    assert_same(plait.grad(lambda x: (pnp.digitize(x, b) * x).sum())(x),
                jax.grad(lambda x: (jnp.digitize(x, b) * x).sum())(x), "grad")


@pytest.mark.parametrize("element, tests", [
    (np.array([1, 2, 3, 4]), np.array([2, 4])),
    (np.array([[1.0, np.nan]]), np.array([np.nan, 1.0])),
    (np.array(3), np.array([[1, 3], [5, 7]])), (np.array([True, False]), np.array([True])),
    (np.array([1, 2], np.int8), np.array([2.0, 9.5]))], ids=range(5))
@pytest.mark.parametrize("invert", [False, True])
def test_isin_matches_jax(element: Any, tests: Any, invert: bool) -> None:
    for method in ("auto", "compare_all", "binary_search", "sort"):
        assert_same(pnp.isin(element, tests, invert=invert, method=method),
                    jnp.isin(element, tests, invert=invert, method=method), method)
    assert_same(plait.jit(lambda e, t: pnp.isin(e, t, invert=invert))(element, tests),
                jnp.isin(element, tests, invert=invert), "jit")


def test_searchsorted_with_a_sorter_matches_jax() -> None:
    a = np.array([3.0, np.nan, 1.0, 2.0, 1.0], np.float32)
    order = np.argsort(a)
    v = np.array([0.0, 1.0, 2.5, np.nan, 9.0], np.float32)
    for side in ("left", "right"):
        for method in ("scan", "sort", "compare_all"):
            assert_same(pnp.searchsorted(a, v, side, sorter=order, method=method),
                        jnp.searchsorted(a, v, side, sorter=order, method=method), method)


def test_bad_inputs() -> None:
    with pytest.raises(ValueError, match=r"expected a 1-d sorted array, but got shape \(2, 2\)"):
        pnp.searchsorted(np.ones((2, 2)), 1.0)
    with pytest.raises(ValueError, match="expected side 'left' or 'right', but got 'up'"):
        pnp.searchsorted(np.array([1, 2]), 1, side="up")
    with pytest.raises(ValueError, match="expected method in"):
        pnp.searchsorted(np.array([1, 2]), 1, method="magic")
    with pytest.raises(ValueError, match=r"expected 1-d bins, but got shape \(1, 2\)"):
        pnp.digitize(np.ones(3), np.ones((1, 2)))
    with pytest.raises(ValueError, match="isin: expected method"):
        pnp.isin(np.ones(3), np.ones(2), method="magic")

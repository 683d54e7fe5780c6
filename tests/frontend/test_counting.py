"""bincount, histogram_bin_edges and histogram (``plait/frontend/numpy/counting.py``)
against jax.numpy."""

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

COVERED = {"bincount", "histogram", "histogram_bin_edges"}
"""The functions this file tests (the namespace coverage test of test_numpy.py reads it)."""


def assert_same(ours: Any, theirs: Any, what: str, rtol: float = 0.0) -> None:
    if isinstance(theirs, tuple):
        assert isinstance(ours, tuple) and len(ours) == len(theirs), what
        for o, t in zip(ours, theirs):
            assert_same(o, t, what, rtol)
        return
    o, t = np.asarray(ours), np.asarray(theirs)
    assert (o.dtype, o.shape) == (t.dtype, t.shape), \
        f"{what}: {o.dtype}{o.shape} vs {t.dtype}{t.shape}"
    np.testing.assert_allclose(o, t, rtol=rtol, atol=0, err_msg=what)


@settings(max_examples=50, deadline=None)
@given(st.lists(st.integers(-3, 12), max_size=10), st.integers(0, 6),
       st.one_of(st.none(), st.integers(1, 15)), st.booleans())
def test_bincount_matches_jax(values: list[int], minlength: int, length: int | None,
                              weighted: bool) -> None:
    x = np.array(values, np.int32)
    w = np.arange(len(values), dtype=np.float32) * 0.5 if weighted else None
    if length is None and not values:
        length = 3  # JAX needs a length (or values) to size the result
    ours = pnp.bincount(x, w, minlength, length=length)
    assert_same(ours, jnp.bincount(x, w, minlength, length=length), f"{values}")
    if length is not None:
        jitted = plait.jit(lambda x: pnp.bincount(x, w, minlength, length=length))(x)
        assert_same(jitted, jnp.bincount(x, w, minlength, length=length), "jit")


def test_bincount_errors() -> None:
    x = np.array([1, 2])
    with pytest.raises(jax.errors.ConcretizationTypeError):
        jax.jit(jnp.bincount)(x)
    with pytest.raises(ConcretizationTypeError):
        plait.jit(pnp.bincount)(x)
    with pytest.raises(TypeError, match="expected integer values, but got float32"):
        pnp.bincount(np.array([1.0], np.float32))
    with pytest.raises(ValueError, match=r"expected a 1-d array, but got shape \(1, 2\)"):
        pnp.bincount(np.ones((1, 2), np.int32))
    with pytest.raises(ValueError, match="expected weights of shape"):
        pnp.bincount(x, np.ones(3))


DATA = np.array([0.1, 0.5, 0.5, 2.0, 3.3, -1.0, 2.5], np.float32)


@pytest.mark.parametrize("bins, kwargs", [
    (4, {}), (1, {}), (3, {"range": (0, 2)}), (np.array([0, 1, 2.5, 4]), {}),
    (np.array([0, 1, 2.5, 4]), {"density": True}), (5, {"weights": np.arange(7.0)}),
    (3, {"range": (0, 2), "weights": np.arange(7.0), "density": True}),
    (np.array([1.0, 2.0]), {})], ids=range(8))
def test_histogram_matches_jax(bins: Any, kwargs: dict[str, Any]) -> None:
    ours = pnp.histogram(DATA, bins, **kwargs)
    assert_same(ours, jnp.histogram(DATA, bins, **kwargs), "eager", rtol=1e-6)
    jitted = plait.jit(lambda d: pnp.histogram(d, bins, **kwargs))(DATA)
    assert_same(jitted, jax.jit(lambda d: jnp.histogram(d, bins, **kwargs))(DATA), "jit",
                rtol=1e-6)


def test_histogram_bin_edges_corner_cases() -> None:
    for data, bins in [(np.array([2.0, 2.0]), 2), (np.array([1, 2, 2, 5]), 3),
                       (np.array([np.nan, 1.0], np.float32), 2)]:
        assert_same(pnp.histogram_bin_edges(data, bins), jnp.histogram_bin_edges(data, bins),
                    f"{data}", rtol=1e-6)
    with pytest.raises(ValueError, match="expected a positive number of bins, but got 0"):
        pnp.histogram_bin_edges(DATA, 0)

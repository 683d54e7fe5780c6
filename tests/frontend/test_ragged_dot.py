"""``lax.ragged_dot`` against JAX 0.10.2: values, gradients in both arguments, dtypes,
group sizes that leave rows out or are zero, and errors."""

from __future__ import annotations

from typing import Any

import jax
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import plait
from plait.errors import ArgumentError
from tests.frontend.jax_oracle import assert_close


@settings(max_examples=10, deadline=None)
@given(st.lists(st.integers(0, 4), min_size=1, max_size=4), st.integers(0, 3),
       st.integers(1, 4), st.integers(1, 3))
def test_values_and_gradients_match_jax(sizes: list[int], spare: int, k: int, n: int) -> None:
    rng = np.random.default_rng(len(sizes) * 100 + spare * 10 + k)
    m = sum(sizes) + spare  # rows past the groups give zeros
    lhs: Any = rng.standard_normal((m, k)).astype(np.float32)
    rhs: Any = rng.standard_normal((len(sizes), k, n)).astype(np.float32)
    gs: Any = np.array(sizes, np.int32)
    assert_close(plait.jit(plait.lax.ragged_dot)(lhs, rhs, gs), jax.lax.ragged_dot(lhs, rhs, gs),
                 rtol=1e-5, atol=1e-6)

    def loss(L: Any) -> Any:
        return lambda a, b: (L.lax.ragged_dot(a, b, gs) ** 2).sum()
    assert_close(plait.grad(loss(plait), argnums=(0, 1))(lhs, rhs),
                 jax.grad(loss(jax), argnums=(0, 1))(lhs, rhs), rtol=1e-4, atol=1e-5)


def test_dtypes_as_jax() -> None:
    lhs: Any = np.ones((5, 3))
    rhs: Any = np.ones((2, 3, 4))
    gs: Any = np.array([2, 3], np.int64)
    for a, b, pet in [(np.int8, np.int8, np.int32), (np.float16, np.float16, None),
                      (np.float16, np.float32, None), (np.float32, np.float32, np.float32)]:
        got = plait.lax.ragged_dot(lhs.astype(a), rhs.astype(b), gs, preferred_element_type=pet)
        want = jax.lax.ragged_dot(lhs.astype(a), rhs.astype(b), gs, preferred_element_type=pet)
        assert got.dtype == want.dtype
        assert_close(got, want)


def test_errors() -> None:
    with pytest.raises(ArgumentError, match=r"expected lhs \[m, k\], rhs \[groups, k, n\] and "
                                            r"group_sizes \[groups\], but got lhs \[5, 3\], "
                                            r"rhs \[2, 4, 4\]"):
        plait.lax.ragged_dot(np.ones((5, 3)), np.ones((2, 4, 4)), np.array([2, 3]))
    with pytest.raises(ArgumentError, match="expected integer group_sizes, but got float32"):
        plait.lax.ragged_dot(np.ones((5, 3)), np.ones((2, 3, 4)), np.array([2.0, 3.0],
                                                                             np.float32))
    with pytest.raises(NotImplementedError, match="group_offset"):
        plait.lax.ragged_dot(np.ones((5, 3)), np.ones((2, 3, 4)), np.array([2, 3]),
                             group_offset=np.array([0]))

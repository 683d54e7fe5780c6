"""``lax.approx_max_k``/``approx_min_k`` against JAX 0.10.2 on CPU, where both are exact:
NaNs, ties, every dimension, vmap's staged equation, and the errors."""

from __future__ import annotations

from typing import Any

import jax
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import plait
from plait.errors import JaxprTypeError
from tests.frontend.jax_oracle import assert_close

TIES = np.array([[3.0, 1.0, 3.0, 2.0, np.nan, 5.0, 5.0],
                 [0.0, -1.0, -1.0, 2.0, 2.0, 7.0, np.inf],
                 [-0.0, 0.0, np.nan, -np.inf, 0.0, np.nan, 1.0]], np.float32)


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 7), st.sampled_from([0, 1, -1, -2]), st.booleans(),
       st.sampled_from([np.float32, np.float16]))
def test_values_and_indices_match_jax(k: int, dim: int, is_max: bool, dtype: type) -> None:
    x: Any = TIES.astype(dtype)
    k = min(k, x.shape[dim])
    name = "approx_max_k" if is_max else "approx_min_k"
    got = getattr(plait.lax, name)(x, k, reduction_dimension=dim)
    want = getattr(jax.lax, name)(x, k, reduction_dimension=dim)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(np.asarray(g), np.asarray(w))
        assert g.dtype == w.dtype


def test_transformations_stage_as_jax() -> None:
    x = TIES[:, :5]
    for name in ("approx_max_k", "approx_min_k"):
        def f(L: Any, x: Any, name: str = name) -> Any:
            return getattr(L.lax, name)(x, 2)
        assert str(plait.make_jaxpr(plait.vmap(lambda v: f(plait, v)))(x)) == \
            str(jax.make_jaxpr(jax.vmap(lambda v: f(jax, v)))(x))
        clean = np.nan_to_num(x, posinf=9.0, neginf=-9.0) + np.arange(15).reshape(3, 5) * 0.01
        assert_close(plait.jit(plait.grad(lambda v: f(plait, v)[0].sum()))(clean),
                     jax.grad(lambda v: f(jax, v)[0].sum())(clean))


def test_errors() -> None:
    with pytest.raises(JaxprTypeError, match="expected a floating-point operand, but got i32"):
        plait.lax.approx_max_k(np.arange(3, dtype=np.int32), 2)
    with pytest.raises(JaxprTypeError, match=r"expected k in \[1, 3\]"):
        plait.lax.approx_min_k(np.ones(3, np.float32), 4)
    with pytest.raises(ValueError, match=r"expected reduction_dimension in \[-1, 1\)"):
        plait.lax.approx_max_k(np.ones(3, np.float32), 1, reduction_dimension=1)
    with pytest.raises(NotImplementedError, match="aggregate_to_topk=False"):
        plait.lax.approx_max_k(np.ones(3, np.float32), 1, aggregate_to_topk=False)

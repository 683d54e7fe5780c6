"""``lax.scaled_dot`` (block-scaled products) against JAX 0.10.2."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jjnp
import ml_dtypes
import numpy as np
import pytest

import plait
import plait.lax as plax
from tests.frontend.jax_oracle import assert_close

RNG = np.random.default_rng(3)
JAX_SCALED_DOT: Any = jax.lax.scaled_dot  # (typed for jax.Arrays; the tests pass NumPy's)


def _same(ours: Any, theirs: Any) -> None:
    assert np.dtype(ours.dtype) == np.dtype(theirs.dtype)
    np.testing.assert_array_equal(np.asarray(ours, np.float32), np.asarray(theirs, np.float32))


@pytest.mark.parametrize("dtype, scale_dtype", [
    (np.float32, np.float32), (ml_dtypes.float8_e4m3fn, ml_dtypes.float8_e8m0fnu),
    (ml_dtypes.bfloat16, ml_dtypes.bfloat16)])
@pytest.mark.parametrize("out", [None, np.float32])
def test_values_are_jaxs(dtype: Any, scale_dtype: Any, out: Any) -> None:
    lhs = RNG.standard_normal((2, 3, 64)).astype(dtype)
    rhs = RNG.standard_normal((2, 64, 5)).astype(dtype)
    lhs_scale = (2.0 ** RNG.integers(-3, 3, (2, 3, 2))).astype(scale_dtype)
    rhs_scale = (2.0 ** RNG.integers(-3, 3, (2, 4, 5))).astype(scale_dtype)
    kw: dict[str, Any] = {"lhs_scale": lhs_scale, "rhs_scale": rhs_scale,
                          "preferred_element_type": out}
    _same(plax.scaled_dot(lhs, rhs, **kw), JAX_SCALED_DOT(lhs, rhs, **kw))
    _same(plait.jit(lambda a, b: plax.scaled_dot(a, b, **kw))(lhs, rhs),
          JAX_SCALED_DOT(lhs, rhs, **kw))
    _same(plax.scaled_dot(lhs, rhs), JAX_SCALED_DOT(lhs, rhs))


def test_other_dimension_numbers_and_vmap() -> None:
    lhs = RNG.standard_normal((16, 3)).astype(np.float32)
    rhs = RNG.standard_normal((4, 16)).astype(np.float32)
    scale = np.full((4, 3), 0.5, np.float32)
    dims = (((0,), (1,)), ((), ()))
    _same(plax.scaled_dot(lhs, rhs, lhs_scale=scale, dimension_numbers=dims),
          JAX_SCALED_DOT(lhs, rhs, lhs_scale=scale, dimension_numbers=dims))
    batched = RNG.standard_normal((2, 3, 8)).astype(np.float32), np.ones((2, 8, 2), np.float32)
    assert_close(plait.vmap(plax.scaled_dot)(*batched), jax.vmap(JAX_SCALED_DOT)(*batched))


@pytest.mark.parametrize("args, message", [
    (((3,), (3,)), "scaled_dot does not support 0-rank and 1-rank operands."),
    (((3, 8), (6, 4)), "LHS contracting dim 1 of size 8 does not match RHS contracting dim 0 "
                       "of size 6."),
])
def test_errors(args: tuple[tuple[int, ...], tuple[int, ...]], message: str) -> None:
    lhs, rhs = (np.ones(s, np.float32) for s in args)
    with pytest.raises(TypeError, match=message):
        plax.scaled_dot(lhs, rhs)
    with pytest.raises(TypeError):
        JAX_SCALED_DOT(lhs, rhs)


@pytest.mark.parametrize("scale_shape, message", [
    ((3, 3), "LHS contracting dim 1 of size 8 must be divisible by its scale's dim size 3."),
    ((3, 8), r"The ratio of LHS contracting dim 1 to its scale's dim size \(1\) must be at "
             "least 2."),
    ((2, 4), "LHS dim 0 of size 3 does not match scale dim size 2."),
])
def test_scale_shape_errors(scale_shape: tuple[int, ...], message: str) -> None:
    lhs, rhs = np.ones((3, 8), np.float32), np.ones((8, 2), np.float32)
    scale = jjnp.ones(scale_shape, np.float32)
    with pytest.raises(TypeError, match=message):
        plax.scaled_dot(lhs, rhs, lhs_scale=np.asarray(scale))
    with pytest.raises(TypeError, match=message.replace("(", r"\(")[:20]):
        JAX_SCALED_DOT(lhs, rhs, lhs_scale=scale)

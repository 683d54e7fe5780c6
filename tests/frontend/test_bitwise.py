"""left_shift, right_shift (and bitwise_ aliases), bitwise_count and lax.stop_gradient
against jax 0.10.2."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import plait
import plait.lax as plax
import plait.numpy as pnp

COVERED = {"left_shift", "right_shift", "bitwise_left_shift", "bitwise_right_shift",
           "bitwise_count"}
"""The functions this file tests (the namespace coverage test of test_numpy.py reads it)."""


def _operands(d: Any) -> tuple[np.ndarray, np.ndarray]:
    info = np.iinfo(d)
    x = np.array([0, 1, 3, info.max, info.min, info.max // 3, 5, 7], d)
    y = np.array([0, 1, 2, 3, info.bits - 1, info.bits, info.bits + 3, 1], d)
    return x, y


@pytest.mark.parametrize("dtype", [np.int32, np.int8, np.uint8, np.uint32, np.int16])
@pytest.mark.parametrize("name", sorted(COVERED))
def test_matches_jax(name: str, dtype: Any) -> None:
    x, y = _operands(dtype)
    args = (x,) if name == "bitwise_count" else (x, y)
    ours, theirs = getattr(pnp, name)(*args), getattr(jnp, name)(*args)
    assert np.asarray(ours).dtype == np.asarray(theirs).dtype
    np.testing.assert_array_equal(np.asarray(ours), np.asarray(theirs))
    jitted = plait.jit(getattr(pnp, name))(*args)
    np.testing.assert_array_equal(np.asarray(jitted), np.asarray(theirs))


def test_mixed_dtypes_promote_and_floats_are_refused() -> None:
    x = np.array([1, 2, 3], np.int8)
    np.testing.assert_array_equal(np.asarray(pnp.left_shift(x, 2)),
                                  np.asarray(jnp.left_shift(x, 2)))
    np.testing.assert_array_equal(np.asarray(pnp.right_shift(x, np.int32(1))),
                                  np.asarray(jnp.right_shift(x, np.int32(1))))
    with pytest.raises(TypeError, match="only accepts integer dtypes"):
        pnp.left_shift(np.ones(3, np.float32), 1)


def test_stop_gradient_on_pytrees_and_under_transformations() -> None:
    x = np.arange(1.0, 4.0, dtype=np.float32)

    def f(L: Any) -> Any:
        return lambda v: (L.lax.stop_gradient({"a": v * v, "n": 3})["a"] * v).sum()
    np.testing.assert_allclose(plait.grad(f(plait))(x), jax.grad(f(jax))(x))
    np.testing.assert_allclose(plait.jacfwd(f(plait))(x), jax.jacfwd(f(jax))(x))
    np.testing.assert_allclose(plait.vmap(plait.grad(lambda v: plax.stop_gradient(v) * v))(x),
                               jax.vmap(jax.grad(lambda v: jax.lax.stop_gradient(v) * v))(x))
    assert plax.stop_gradient({"n": 3})["n"] == 3

"""Derivatives of the elementwise functions round as JAX's: ``jit(vmap(grad(f)))`` gives
JAX's float32 values bit for bit (the rules compute in JAX's order of operations).  A long
optimization otherwise drifts away from JAX's, one rounding at a time."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import plait
import plait.numpy as pnp

_RNG = np.random.RandomState(0)
CENTERED = (_RNG.rand(2048).astype(np.float32) * 1.8 - 0.9)
POSITIVE = (_RNG.rand(2048).astype(np.float32) * 1.5 + 0.2)

UNARY = ["sin", "cos", "tan", "tanh", "exp", "log", "log1p", "expm1", "sqrt", "cbrt",
         "arcsin", "arccos", "arctan", "sinh", "cosh", "arcsinh", "arctanh", "abs", "square",
         "exp2", "log2", "log10", "reciprocal"]
_NEEDS_POSITIVE = {"log", "sqrt", "log2", "log10", "reciprocal", "cbrt", "rsqrt", "pow"}


def _check(fj: Callable[..., Any], fp: Callable[..., Any], *args: Any, argnums: int = 0
           ) -> None:
    theirs = np.asarray(jax.jit(jax.vmap(jax.grad(fj, argnums)))(*args))
    ours = np.asarray(plait.jit(plait.vmap(plait.grad(fp, argnums)))(*args))
    np.testing.assert_array_equal(ours, theirs)


@pytest.mark.parametrize("name", UNARY)
def test_unary_derivatives_round_as_jax(name: str) -> None:
    x = POSITIVE if name in _NEEDS_POSITIVE else CENTERED
    _check(getattr(jnp, name), getattr(pnp, name), x)


@pytest.mark.parametrize("name", ["sigmoid", "softplus", "gelu", "silu", "relu", "elu"])
def test_activation_derivatives_round_as_jax(name: str) -> None:
    _check(getattr(jax.nn, name), getattr(plait.nn, name), CENTERED)


@pytest.mark.parametrize("name", ["divide", "power", "arctan2", "multiply", "maximum",
                                  "hypot", "logaddexp"])
@pytest.mark.parametrize("argnums", [0, 1])
def test_binary_derivatives_round_as_jax(name: str, argnums: int) -> None:
    _check(getattr(jnp, name), getattr(pnp, name), POSITIVE, CENTERED, argnums=argnums)

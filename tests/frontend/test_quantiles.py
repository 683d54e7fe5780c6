"""median, percentile, quantile and their nan* versions against jax.numpy 0.10.2."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import plait
import plait.numpy as pnp

COVERED = {"median", "percentile", "quantile", "nanmedian", "nanpercentile", "nanquantile"}
"""The functions this file tests (the namespace coverage test of test_numpy.py reads it)."""

RNG = np.random.default_rng(2)
X = RNG.normal(size=(4, 5)).astype(np.float32)
XN = X.copy()
XN[1, 2] = XN[3, 0] = np.nan
METHODS = ["linear", "lower", "higher", "midpoint", "nearest", "inverted_cdf"]


def _same(ours: Any, theirs: Any, what: str) -> None:
    o, t = np.asarray(ours), np.asarray(theirs)
    assert (o.dtype, o.shape) == (t.dtype, t.shape), what
    np.testing.assert_allclose(o, t, rtol=1e-6, atol=1e-6, equal_nan=True, err_msg=what)


@pytest.mark.parametrize("name", ["median", "nanmedian"])
@pytest.mark.parametrize("axis", [None, 0, 1, (0, 1)], ids=str)
@pytest.mark.parametrize("keepdims", [False, True])
def test_median_matches_jax(name: str, axis: Any, keepdims: bool) -> None:
    for x in (X, XN, X.astype(np.int32)):
        _same(getattr(pnp, name)(x, axis=axis, keepdims=keepdims),
              getattr(jnp, name)(x, axis=axis, keepdims=keepdims), f"{name} {x.dtype}")


@pytest.mark.parametrize("name", ["quantile", "nanquantile", "percentile", "nanpercentile"])
@pytest.mark.parametrize("method", METHODS)
def test_quantile_matches_jax(name: str, method: str) -> None:
    scale = 100.0 if "percentile" in name else 1.0
    for q in (np.float32(0.3 * scale), np.array([0.0, 0.25, 0.5, 1.0], np.float32) * scale):
        for axis, keepdims in ((None, False), (1, False), (0, True)):
            for x in (X, XN):
                _same(getattr(pnp, name)(x, q, axis=axis, method=method, keepdims=keepdims),
                      getattr(jnp, name)(x, q, axis=axis, method=method, keepdims=keepdims),
                      f"{name} {method} {axis}")


def test_under_jit_grad_and_vmap() -> None:
    q = np.array([0.2, 0.7], np.float32)
    _same(plait.jit(lambda x: pnp.quantile(x, q, axis=1))(X), jnp.quantile(X, q, axis=1), "jit")
    _same(plait.grad(lambda x: pnp.quantile(x, q).sum())(X),
          jax.grad(lambda x: jnp.quantile(x, q).sum())(X), "grad")
    _same(plait.grad(lambda x: pnp.nanmedian(x))(XN), jax.grad(lambda x: jnp.nanmedian(x))(XN),
          "grad nanmedian")
    _same(plait.vmap(pnp.median)(X), jax.vmap(jnp.median)(X), "vmap")


def test_bad_arguments() -> None:
    with pytest.raises(ValueError) as theirs:
        jnp.quantile(X, 0.5, method="bogus")
    with pytest.raises(ValueError) as ours:
        pnp.quantile(X, 0.5, method="bogus")
    assert "inverted_cdf" in str(theirs.value)
    assert "but got 'bogus'" in str(ours.value) and "inverted_cdf" in str(ours.value)

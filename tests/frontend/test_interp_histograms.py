"""interp, histogram2d, histogramdd and mask_indices against jax.numpy 0.10.2."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import plait
import plait.numpy as pnp

COVERED = {"interp", "histogram2d", "histogramdd", "mask_indices"}
"""The functions this file tests (the namespace coverage test of test_numpy.py reads it)."""

RNG = np.random.default_rng(5)
X = RNG.normal(size=40).astype(np.float32)
Y = RNG.normal(size=40).astype(np.float32)
XP = np.sort(RNG.normal(size=6)).astype(np.float32)
FP = RNG.normal(size=6).astype(np.float32)
Q = np.concatenate([np.linspace(-3, 3, 11), XP, [np.nan]]).astype(np.float32)

CASES: dict[str, Callable[[Any], Any]] = {
    "interp": lambda L: L.interp(Q, XP, FP),
    "interp_left_right": lambda L: L.interp(Q, XP, FP, left=-9.0, right=9.0),
    "interp_extrapolate": lambda L: L.interp(Q, XP, FP, left="extrapolate",
                                             right="extrapolate"),
    "interp_period": lambda L: L.interp(Q, XP, FP, period=2.0),
    "interp_ints": lambda L: L.interp(np.arange(5), np.array([0, 2, 4]), np.array([1, 5, 3])),
    "interp_repeated_xp": lambda L: L.interp(Q, np.array([0.0, 1.0, 1.0, 2.0], np.float32),
                                             np.array([0.0, 1.0, 3.0, 4.0], np.float32)),
    "histogram2d": lambda L: L.histogram2d(X, Y),
    "histogram2d_bins_range_density": lambda L: L.histogram2d(X, Y, bins=[3, 4],
                                                              range=[(-1, 1), None],
                                                              density=True),
    "histogram2d_edges_weights": lambda L: L.histogram2d(X, Y, bins=np.linspace(-2, 2, 5),
                                                         weights=np.abs(X)),
    "histogramdd": lambda L: L.histogramdd(np.stack([X, Y, X * Y], 1), bins=(2, 3, 4)),
    "histogramdd_density": lambda L: L.histogramdd(np.stack([X, Y], 1), bins=3, density=True),
    "mask_indices": lambda L: L.mask_indices(4, L.triu, 1),
    "mask_indices_size": lambda L: L.mask_indices(3, L.tril, size=8),
}


def _flat(x: Any) -> list[np.ndarray]:
    if isinstance(x, tuple | list):
        return [v for item in x for v in _flat(item)]
    return [np.asarray(x)]


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_jax(name: str) -> None:
    ours, theirs = _flat(CASES[name](pnp)), _flat(CASES[name](jnp))
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        assert (a.dtype, a.shape) == (b.dtype, b.shape), name
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6, err_msg=name)


def test_interp_under_jit_grad_and_vmap() -> None:
    def f(L: Any) -> Callable[..., Any]:
        return lambda q, fp: L.sum(L.interp(q, XP, fp) ** 2)
    q = Q[:-1]
    np.testing.assert_allclose(np.asarray(plait.jit(f(pnp))(q, FP)),
                               np.asarray(jax.jit(f(jnp))(q, FP)), rtol=1e-6)
    for argnum in (0, 1):
        np.testing.assert_allclose(plait.grad(f(pnp), argnum)(q, FP),
                                   jax.grad(f(jnp), argnum)(q, FP), rtol=1e-5, atol=1e-6)
    qs = q[:16].reshape(2, -1)
    np.testing.assert_allclose(np.asarray(plait.vmap(lambda v: pnp.interp(v, XP, FP))(qs)),
                               np.asarray(jax.vmap(lambda v: jnp.interp(v, XP, FP))(qs)),
                               rtol=1e-6)


def test_bad_inputs() -> None:
    with pytest.raises(ValueError, match="xp and fp must be one-dimensional arrays of equal"):
        pnp.interp(Q, XP, FP[:3])
    with pytest.raises(ValueError, match="the only valid string value of `left`"):
        pnp.interp(Q, XP, FP, left="clamp")
    with pytest.raises(ValueError, match="should have one weight for each sample"):
        pnp.histogramdd(np.stack([X, Y], 1), weights=X[:3])
    with pytest.raises(ValueError, match="should be a bin for each dimension"):
        pnp.histogramdd(np.stack([X, Y], 1), bins=[2, 3, 4])

"""``lax.linalg.symmetric_product`` and ``lax.linalg.cholesky_update`` against JAX 0.10.2,
NumPy and finite differences."""

from __future__ import annotations

from typing import Any

import jax
import numpy as np
import pytest

import plait
from plait.lax import linalg as plinalg
from tests.frontend.jax_oracle import assert_close

RNG = np.random.default_rng(7)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("symmetrize", [False, True])
@pytest.mark.parametrize("batch", [(), (2,), (2, 3)])
def test_symmetric_product_is_jaxs(dtype: Any, symmetrize: bool, batch: tuple[int, ...]) -> None:
    with jax.enable_x64(dtype == np.float64), plait.enable_x64(dtype == np.float64):
        a = RNG.standard_normal((*batch, 3, 5)).astype(dtype)
        c = RNG.standard_normal((*batch, 3, 3)).astype(dtype)
        c = c + np.swapaxes(c, -1, -2)
        kw: dict[str, Any] = {"alpha": 0.5, "beta": -2.0, "symmetrize_output": symmetrize}
        ours = plinalg.symmetric_product(a, c, **kw)
        theirs = jax.lax.linalg.symmetric_product(a, c, **kw)
        assert ours.dtype == theirs.dtype
        np.testing.assert_array_equal(np.asarray(ours), np.asarray(theirs))
        expected = 0.5 * a @ np.swapaxes(a, -1, -2) - 2.0 * c
        lower = np.tril(np.ones((3, 3), bool))
        np.testing.assert_allclose(np.asarray(ours)[..., lower], expected[..., lower],
                                   rtol=1e-5, atol=1e-5)


def test_symmetric_product_transforms_and_errors() -> None:
    a = RNG.standard_normal((3, 4))
    c = np.eye(3)
    def f(x: Any) -> Any:
        return plinalg.symmetric_product(x, c, alpha=2.0, beta=1.0).sum()
    def g(x: Any) -> Any:
        return jax.lax.linalg.symmetric_product(x, c, alpha=2.0, beta=1.0).sum()
    with jax.enable_x64(True), plait.enable_x64(True):
        # f = 2 sum_k (sum_i a_ik)^2 + trace: (JAX's primitive has no derivative rule.)
        assert_close(plait.grad(f)(a), np.broadcast_to(4.0 * a.sum(axis=0), a.shape))
        assert_close(plait.jit(plait.vmap(f))(np.stack([a, -a])), jax.vmap(g)(np.stack([a, -a])))
    with pytest.raises(ValueError, match=r"symmetric_product: expected a matrix A of shape "
                                         r"\[..., m, n\] and a square matrix C of shape "
                                         r"\[..., m, m\], but got shapes \(3, 4\) and \(4, 4\)"):
        plinalg.symmetric_product(a, np.eye(4))
    with pytest.raises(TypeError, match="symmetric_product: expected floating-point operands, "
                                        "but got int32"):
        plinalg.symmetric_product(np.ones((2, 2), np.int32), np.ones((2, 2), np.int32))


def _factor(n: int, dtype: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    a = RNG.standard_normal((n, n))
    spd = a @ a.T + n * np.eye(n)
    w = RNG.standard_normal(n)
    w[n // 2] = 0.0  # (a zero entry: the rotation is the identity there)
    return np.linalg.cholesky(spd).T.astype(dtype), w.astype(dtype), spd


@pytest.mark.parametrize("dtype, tol", [(np.float32, 2e-6), (np.float64, 1e-14)])
def test_cholesky_update_matches_jax_and_numpy(dtype: Any, tol: float) -> None:
    with jax.enable_x64(dtype == np.float64), plait.enable_x64(dtype == np.float64):
        r, w, spd = _factor(6, dtype)
        ours = plinalg.cholesky_update(r, w)
        theirs = jax.lax.linalg.cholesky_update(r, w)
        assert ours.dtype == theirs.dtype
        np.testing.assert_array_equal(np.asarray(ours), np.asarray(theirs))
        np.testing.assert_array_equal(np.asarray(plait.jit(plinalg.cholesky_update)(r, w)),
                                      np.asarray(theirs))
        out = np.asarray(ours, np.float64)
        np.testing.assert_allclose(out.T @ out, spd + np.outer(w, w), rtol=1e3 * tol)
        np.testing.assert_allclose(np.tril(out, -1), 0.0, atol=1e3 * tol)


def test_cholesky_update_derivatives_and_errors() -> None:
    with plait.enable_x64(True):
        r, w, _ = _factor(4, np.float64)
        def loss(r_: Any, w_: Any) -> Any:
            return (plinalg.cholesky_update(r_, w_) ** 2).sum()
        grads = plait.grad(loss, argnums=(0, 1))(r, w)
        eps = 1e-6
        for k, x in enumerate((r, w)):
            direction = RNG.standard_normal(x.shape)
            plus = [r, w]
            minus = [r, w]
            plus[k] = x + eps * direction
            minus[k] = x - eps * direction
            fd = (float(loss(*plus)) - float(loss(*minus))) / (2 * eps)
            assert abs(float(np.sum(np.asarray(grads[k]) * direction)) - fd) < 1e-6
        batched = plait.vmap(plinalg.cholesky_update)(np.stack([r, r]), np.stack([w, -w]))
        assert_close(batched[1], plinalg.cholesky_update(r, -w))
    with pytest.raises(ValueError, match=r"Rank-1 update to Cholesky decomposition takes a "
                                         r"square matrix and a vector of the same size as "
                                         r"input. Got shapes \(3, 3\) and \(4,\) instead"):
        plinalg.cholesky_update(np.eye(3, dtype=np.float32), np.ones(4, np.float32))


@pytest.mark.parametrize("dtype", [np.float32, np.complex64])
@pytest.mark.parametrize("kw", [{}, {"max_iterations": 2}, {"eps": 1e-3}])
def test_qdwh_is_jaxs(dtype: Any, kw: dict[str, Any]) -> None:
    x = RNG.standard_normal((5, 3)).astype(dtype)
    if dtype == np.complex64:
        x = x + 1j * RNG.standard_normal((5, 3)).astype(np.float32)
    ours, theirs = plinalg.qdwh(x, **kw), jax.lax.linalg.qdwh(x, **kw)
    for mine, their in zip(ours, theirs):
        assert repr(mine.dtype) == repr(their.dtype) and mine.weak_type == their.weak_type
        np.testing.assert_array_equal(np.asarray(mine), np.asarray(their))
    u, h, _, converged = ours
    if bool(converged):  # (two iterations are not enough: JAX's flag says so too)
        np.testing.assert_allclose(np.asarray(u @ h), x, rtol=1e-4, atol=1e-5)


def test_qdwh_transforms_and_errors() -> None:
    xs = RNG.standard_normal((2, 4, 4)).astype(np.float32)
    assert_close(plait.vmap(plinalg.qdwh)(xs), jax.vmap(jax.lax.linalg.qdwh)(xs))
    assert_close(plait.jit(plinalg.qdwh)(xs[0]), jax.lax.linalg.qdwh(xs[0]))
    with pytest.raises(ValueError, match="The input matrix of shape M x N must have M >= N."):
        plinalg.qdwh(xs[0, :2])
    with pytest.raises(NotImplementedError, match="qdwh: dynamic_shape"):
        plinalg.qdwh(xs[0], dynamic_shape=(3, 3))

"""plait.numpy.linalg against jax.numpy.linalg 0.10.2: norms (every ord, axis and
keepdims), products, powers, Cholesky factors; eagerly, under jit, grad and vmap; the
errors for bad arguments."""

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

jax.config.update("jax_platforms", "cpu")

RNG = np.random.default_rng(8)

COVERED = {"roots", "polyfit"}
"""The plait.numpy functions this file tests (the namespace coverage test of test_numpy.py
reads it)."""


def _check(ours: Any, theirs: Any, tol: float = 1e-5) -> None:
    o_leaves, t_leaves = jax.tree_util.tree_leaves(ours), jax.tree_util.tree_leaves(theirs)
    assert len(o_leaves) == len(t_leaves)
    for o, t in zip(o_leaves, t_leaves):
        o, t = np.asarray(o), np.asarray(t)
        assert o.shape == t.shape and o.dtype == t.dtype, (o.shape, o.dtype, t.shape, t.dtype)
        np.testing.assert_allclose(o, t, rtol=tol, atol=tol)


def _x(*shape: int, dtype: Any = np.float32) -> np.ndarray:
    x = RNG.normal(size=shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * RNG.normal(size=shape)
    return x.astype(dtype)


_VECTOR_ORDS = [None, 2, 1, 0, np.inf, -np.inf, 3, 0.5, -1]
_MATRIX_ORDS = [None, "fro", "f", 1, -1, np.inf, -np.inf]


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(_VECTOR_ORDS), st.lists(st.integers(1, 4), min_size=1, max_size=3),
       st.booleans(), st.sampled_from([np.float32, np.complex64, np.int32]), st.data())
def test_vector_norms_match_jax(ord: Any, shape: list[int], keepdims: bool, dtype: Any,
                                data: Any) -> None:
    x = (_x(*shape) * 3).astype(dtype) if dtype == np.int32 else _x(*shape, dtype=dtype)
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    if ord == 0 and dtype == np.int32:
        # JAX raises (np.finfo of an integer dtype); plait counts, as NumPy does.
        _check(pnp.linalg.norm(x, ord, axis, keepdims),
               np.linalg.norm(x, ord, axis, keepdims).astype(np.float32))
        return
    _check(pnp.linalg.norm(x, ord, axis, keepdims), jnp.linalg.norm(x, ord, axis, keepdims))
    if dtype == np.int32:
        return  # JAX's vector_norm truncates a fractional ord to the integer dtype
    _check(pnp.linalg.vector_norm(x, ord=2 if ord is None else ord, axis=axis,
                                  keepdims=keepdims),
           jnp.linalg.vector_norm(x, ord=2 if ord is None else ord, axis=axis,
                                  keepdims=keepdims))


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(_MATRIX_ORDS), st.lists(st.integers(1, 4), min_size=2, max_size=4),
       st.booleans(), st.sampled_from([np.float32, np.complex64]), st.data())
def test_matrix_norms_match_jax(ord: Any, shape: list[int], keepdims: bool, dtype: Any,
                                data: Any) -> None:
    x = _x(*shape, dtype=dtype)
    axes = tuple(data.draw(st.permutations(range(len(shape))))[:2])
    _check(pnp.linalg.norm(x, ord, axes, keepdims), jnp.linalg.norm(x, ord, axes, keepdims))
    _check(pnp.linalg.matrix_norm(x, ord="fro" if ord is None else ord, keepdims=keepdims),
           jnp.linalg.matrix_norm(x, ord="fro" if ord is None else ord, keepdims=keepdims))


def test_norm_defaults_gradients_and_vmap() -> None:
    x = _x(3, 4)
    _check(pnp.linalg.norm(x), jnp.linalg.norm(x))
    _check(pnp.linalg.norm(x, keepdims=True), jnp.linalg.norm(x, keepdims=True))
    _check(plait.jit(pnp.linalg.norm)(x), jnp.linalg.norm(x))
    for ord in (None, 1, np.inf, 3):
        _check(plait.grad(lambda v, o=ord: pnp.linalg.norm(v, o, 1).sum())(x),
               jax.grad(lambda v, o=ord: jnp.linalg.norm(v, o, 1).sum())(x))
    _check(plait.vmap(pnp.linalg.norm)(x), jax.vmap(jnp.linalg.norm)(x))


def test_products_and_powers_match_jax() -> None:
    a, b = _x(2, 3, 3), _x(2, 3, 3)
    u, v = _x(5), _x(4)
    _check(pnp.linalg.outer(u, v), jnp.linalg.outer(u, v))
    ms = [_x(3), _x(3, 5), _x(5, 2), _x(2, 4), _x(4)]
    _check(pnp.linalg.multi_dot(ms), jnp.linalg.multi_dot(ms), tol=1e-4)
    _check(pnp.linalg.multi_dot(ms[1:4]), jnp.linalg.multi_dot(ms[1:4]), tol=1e-4)
    for n in (0, 1, 2, 3, 5, 8):
        _check(pnp.linalg.matrix_power(a, n), jnp.linalg.matrix_power(a, n), tol=1e-4)
    _check(pnp.linalg.matrix_transpose(a), jnp.linalg.matrix_transpose(a))
    for offset in (-1, 0, 2):
        _check(pnp.linalg.diagonal(a, offset=offset), jnp.linalg.diagonal(a, offset=offset))
        _check(pnp.linalg.trace(a, offset=offset), jnp.linalg.trace(a, offset=offset))
    c = _x(3, 3, 2)
    _check(pnp.linalg.tensordot(a, c, axes=2), jnp.linalg.tensordot(a, c, axes=2), tol=1e-4)
    _check(pnp.linalg.vecdot(a, b), jnp.linalg.vecdot(a, b))
    _check(pnp.linalg.matmul(a, b), jnp.linalg.matmul(a, b))


def test_cross_matches_jax() -> None:
    x, y = _x(4, 3), _x(4, 3)
    _check(pnp.linalg.cross(x, y), jnp.linalg.cross(x, y))
    _check(pnp.linalg.cross(x.T, y.T, axis=0), jnp.linalg.cross(x.T, y.T, axis=0))


@pytest.mark.parametrize("dtype", [np.float32, np.complex64])
def test_cholesky_matches_jax(dtype: Any) -> None:
    a = _x(2, 4, 4, dtype=dtype)
    spd = a @ np.conj(np.swapaxes(a, -1, -2)) + 4 * np.eye(4, dtype=dtype)
    for upper in (False, True):
        _check(pnp.linalg.cholesky(spd, upper=upper), jnp.linalg.cholesky(spd, upper=upper),
               tol=1e-4)
    ints = np.array([[4, 2], [2, 3]], np.int32)
    _check(pnp.linalg.cholesky(ints), jnp.linalg.cholesky(ints))


def test_bad_arguments() -> None:
    x = _x(3, 3)
    with pytest.raises(ValueError, match="Improper number of axes for norm"):
        pnp.linalg.norm(_x(2, 2, 2), axis=(0, 1, 2))
    with pytest.raises(ValueError, match="Invalid order 'inf' for vector norm.Use 'jax.numpy"):
        pnp.linalg.vector_norm(x, ord="inf")
    with pytest.raises(ValueError, match="Invalid order 'x' for matrix norm"):
        pnp.linalg.norm(x, "x", (0, 1))
    with pytest.raises(ValueError, match="must be .arrays of. 3-dimensional vectors"):
        pnp.linalg.cross(_x(4), _x(4))
    with pytest.raises(ValueError, match="Input arrays must be one-dimensional"):
        pnp.linalg.outer(x, x)
    with pytest.raises(ValueError, match="multi_dot requires at least two arrays"):
        pnp.linalg.multi_dot([x])
    with pytest.raises(ValueError, match="last dimension of each array must match"):
        pnp.linalg.multi_dot([x, _x(2, 2)])
    with pytest.raises(TypeError, match="Last 2 dimensions of the array must be square"):
        pnp.linalg.matrix_power(_x(2, 3), 2)
    with pytest.raises(TypeError, match="exponent must be an integer, got 1.5"):
        pnp.linalg.matrix_power(x, 1.5)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="matrix_transpose requires at least 2 dimensions"):
        pnp.linalg.matrix_transpose(_x(3))
    with pytest.raises(TypeError, match="requires ndarray or scalar arguments"):
        pnp.linalg.norm([1.0, 2.0])


# -- solves, determinants and decompositions -------------------------------------------------

def _pair(dtype: Any) -> tuple[np.ndarray, np.ndarray]:
    return _x(2, 4, 4, dtype=dtype), _x(2, 4, 3, dtype=dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.complex64])
def test_solve_inv_det_match_jax(dtype: Any) -> None:
    a, b = _pair(dtype)
    _check(pnp.linalg.solve(a, b), jnp.linalg.solve(a, b), tol=1e-4)
    _check(pnp.linalg.solve(a[0], b[0, :, 0]), jnp.linalg.solve(a[0], b[0, :, 0]), tol=1e-4)
    _check(plait.jit(pnp.linalg.solve)(a, b), jnp.linalg.solve(a, b), tol=1e-4)
    _check(pnp.linalg.inv(a), jnp.linalg.inv(a), tol=1e-4)
    _check(plait.vmap(pnp.linalg.inv)(a), jax.vmap(jnp.linalg.inv)(a), tol=1e-4)
    for n in (1, 2, 3, 4):
        m = a[..., :n, :n]
        _check(pnp.linalg.det(m), jnp.linalg.det(m), tol=1e-4)
        _check(pnp.linalg.slogdet(m), jnp.linalg.slogdet(m), tol=1e-4)
    singular = np.ones((2, 4, 4), dtype)
    _check(pnp.linalg.slogdet(singular), jnp.linalg.slogdet(singular))
    _check(pnp.linalg.matrix_power(a, -3), jnp.linalg.matrix_power(a, -3), tol=1e-2)


def test_solve_and_determinant_gradients_match_jax() -> None:
    a, b = _pair(np.float32)

    def loss(ns: Any) -> Any:
        return lambda a, b: ns.sum(ns.linalg.solve(a, b) ** 2)

    _check(plait.grad(loss(pnp), argnums=(0, 1))(a, b),
           jax.grad(loss(jnp), argnums=(0, 1))(a, b), tol=1e-3)
    for fn in ("det", "slogdet"):
        def f(ns: Any, name: str = fn) -> Any:
            out = getattr(ns.linalg, name)
            return lambda m: ns.sum(out(m)[1] if name == "slogdet" else out(m))
        _check(plait.grad(f(pnp))(a), jax.grad(f(jnp))(a), tol=1e-3)
        _check(plait.jvp(f(pnp), (a,), (b[..., :1] + a,))[1],
               jax.jvp(f(jnp), (a,), (b[..., :1] + a,))[1], tol=1e-3)


@pytest.mark.parametrize("dtype", [np.float32, np.complex64])
def test_decompositions_match_jax(dtype: Any) -> None:
    a, b = _pair(dtype)
    h = a @ np.conj(np.swapaxes(a, -1, -2))
    _check(pnp.linalg.eigvalsh(h), jnp.linalg.eigvalsh(h), tol=1e-3)
    w, v = (np.asarray(r) for r in pnp.linalg.eigh(h, UPLO="U"))
    np.testing.assert_allclose(v @ (w[..., None] * np.conj(np.swapaxes(v, -1, -2))), h,
                               atol=1e-3)
    _check(pnp.linalg.svdvals(b), jnp.linalg.svdvals(b), tol=1e-4)
    u, s, vh = pnp.linalg.svd(b, full_matrices=False)
    np.testing.assert_allclose(np.asarray((u * s[..., None, :]) @ vh), b, atol=1e-4)
    _check(pnp.linalg.svd(h, hermitian=True, compute_uv=False),
           jnp.linalg.svd(h, hermitian=True, compute_uv=False), tol=1e-3)
    for mode in ("reduced", "complete", "r"):
        _check(pnp.linalg.qr(b, mode=mode), jnp.linalg.qr(b, mode=mode), tol=1e-4)
    _check(pnp.linalg.qr(b[0], mode="raw"), jnp.linalg.qr(b[0], mode="raw"), tol=1e-4)
    _check(pnp.linalg.pinv(b), jnp.linalg.pinv(b), tol=1e-3)
    _check(pnp.linalg.matrix_rank(b), jnp.linalg.matrix_rank(b))
    _check(pnp.linalg.matrix_rank(np.ones((3, 3), dtype)), jnp.linalg.matrix_rank(
        np.ones((3, 3), dtype)))
    for p in (None, 1, np.inf, "fro", -2):
        _check(pnp.linalg.cond(a, p), jnp.linalg.cond(a, p), tol=1e-3)
    for ord in (2, -2, "nuc"):
        _check(pnp.linalg.norm(a, ord, (1, 2)), jnp.linalg.norm(a, ord, (1, 2)), tol=1e-4)
        _check(pnp.linalg.norm(a, ord, (0, 2), True), jnp.linalg.norm(a, ord, (0, 2), True),
               tol=1e-4)


def test_least_squares_and_tensor_solves_match_jax() -> None:
    a, b = _x(5, 3), _x(5)
    _check(pnp.linalg.lstsq(a, b), jnp.linalg.lstsq(a, b), tol=1e-4)
    rhs = _x(5, 2)
    _check(pnp.linalg.lstsq(a, rhs, rcond=0.1), jnp.linalg.lstsq(a, rhs, rcond=0.1), tol=1e-4)
    big, small = _x(2, 3, 2, 3), _x(2, 3)
    _check(pnp.linalg.tensorsolve(big, small), jnp.linalg.tensorsolve(big, small), tol=1e-2)
    t = _x(6, 2, 3)
    _check(pnp.linalg.tensorinv(t, 1), jnp.linalg.tensorinv(t, 1), tol=1e-2)


def test_bad_solver_arguments() -> None:
    with pytest.raises(ValueError, match=r"Argument to inv must have shape \[..., n, n\]"):
        pnp.linalg.inv(_x(2, 3))
    with pytest.raises(ValueError, match="left hand array must be at least two dimensional"):
        pnp.linalg.solve(_x(3), _x(3))
    with pytest.raises(ValueError, match="Invalid shapes for solve"):
        pnp.linalg.solve(_x(2, 3, 3), _x(2, 3))
    with pytest.raises(ValueError, match=r"Argument to slogdet\(\) must have shape"):
        pnp.linalg.slogdet(_x(2, 3))
    with pytest.raises(ValueError, match="UPLO must be one of None, 'L', or 'U', got X"):
        pnp.linalg.eigh(_x(3, 3), UPLO="X")
    with pytest.raises(ValueError, match="Unsupported QR decomposition mode 'economic'"):
        pnp.linalg.qr(_x(3, 3), mode="economic")
    with pytest.raises(ValueError, match="Leading dimensions of input arrays must match"):
        pnp.linalg.lstsq(_x(3, 2), _x(4))
    with pytest.raises(ValueError, match="pinv: only one of rtol and rcond may be specified"):
        pnp.linalg.pinv(_x(3, 3), rtol=0.1, rcond=0.1)
    with pytest.raises(ValueError, match="input array must be at least 2D"):
        pnp.linalg.cond(_x(3))


# -- roots and polyfit (eigenvalues and least squares) ---------------------------------------

def test_roots_match_jax() -> None:
    for p in ([0.0, 1.0, -6.0, 11.0, -6.0], [1.0, 0.0, 1.0], [2.0], [0.0, 0.0, 3.0, -3.0]):
        coeffs = np.asarray(p, np.float32)
        ours, theirs = np.sort_complex(np.asarray(pnp.roots(coeffs))), np.sort_complex(
            np.asarray(jnp.roots(coeffs)))
        _check(ours, theirs, tol=1e-4)
        _check(plait.jit(lambda c: pnp.roots(c, strip_zeros=False))(coeffs),
               jax.jit(lambda c: jnp.roots(c, strip_zeros=False))(coeffs), tol=1e-4)
    with pytest.raises(ValueError, match="Input must be a rank-1 array"):
        pnp.roots(np.ones((2, 2)))
    with pytest.raises(plait.errors.ConcretizationTypeError, match="pass strip_zeros=False"):
        plait.jit(pnp.roots)(np.ones(3, np.float32))


# JAX annotates cov as bool and the result as a union of array and tuple.
jnp_polyfit: Any = jnp.polyfit


def test_polyfit_matches_jax() -> None:
    x = np.linspace(0, 1, 12).astype(np.float32)
    y = (3 * x ** 2 - x + 0.5 + 0.01 * np.sin(7 * x)).astype(np.float32)
    w = np.linspace(1, 2, 12).astype(np.float32)
    _check(pnp.polyfit(x, y, 2), jnp_polyfit(x, y, 2), tol=1e-4)
    _check(pnp.polyfit(x, y, 3, full=True), jnp_polyfit(x, y, 3, full=True), tol=1e-4)
    _check(pnp.polyfit(x, y, 2, w=w, cov=True), jnp_polyfit(x, y, 2, w=w, cov=True), tol=1e-3)
    ys = np.stack([y, 2 * y], 1)
    _check(pnp.polyfit(x, ys, 2, cov="unscaled"), jnp_polyfit(x, ys, 2, cov="unscaled"),
           tol=1e-3)
    _check(plait.grad(lambda y: pnp.sum(pnp.polyfit(x, y, 2)))(y),
           jax.grad(lambda y: jnp.sum(jnp_polyfit(x, y, 2)))(y), tol=1e-3)
    with pytest.raises(ValueError, match="expected deg >= 0"):
        pnp.polyfit(x, y, -1)
    with pytest.raises(TypeError, match="expected x and y to have same length"):
        pnp.polyfit(x, y[:5], 1)

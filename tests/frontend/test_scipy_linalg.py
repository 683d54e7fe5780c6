"""plait.scipy.linalg against jax.scipy.linalg 0.10.2: Cholesky and LU factorizations and
their solves, triangular solves (every trans, batched), block_diag, solve with each
assume_a, inv, det, eigh, svd, qr; gradients through the solves; bad arguments."""

from __future__ import annotations

import warnings
from typing import Any

import jax
import jax.numpy as jnp
import jax.scipy.linalg as jsl
import numpy as np
import pytest

import plait
import plait.numpy as pnp
import plait.scipy.linalg as psl

jax.config.update("jax_platforms", "cpu")

RNG = np.random.default_rng(21)


def _check(ours: Any, theirs: Any, tol: float = 1e-4) -> None:
    o_leaves, t_leaves = jax.tree_util.tree_leaves(ours), jax.tree_util.tree_leaves(theirs)
    assert len(o_leaves) == len(t_leaves)
    for o, t in zip(o_leaves, t_leaves):
        o, t = np.asarray(o), np.asarray(t)
        assert o.shape == t.shape and o.dtype == t.dtype, (o.shape, o.dtype, t.shape, t.dtype)
        np.testing.assert_allclose(o, t, rtol=tol, atol=tol)


def _jax_pos_solve(a: Any, b: Any) -> Any:
    # JAX's assume_a='pos' path trips its own batched-1D-solve FutureWarning internally.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        return jsl.solve(a, b, assume_a="pos")


def _x(*shape: int, dtype: Any = np.float32) -> np.ndarray:
    x = RNG.normal(size=shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * RNG.normal(size=shape)
    return x.astype(dtype)


def _spd(*shape: int, dtype: Any = np.float32) -> np.ndarray:
    a = _x(*shape, dtype=dtype)
    return (a @ np.conj(np.swapaxes(a, -1, -2)) + shape[-1] * np.eye(shape[-1])).astype(dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.complex64])
def test_cholesky_factor_and_solve(dtype: Any) -> None:
    a, b = _spd(2, 4, 4, dtype=dtype), _x(2, 4, 3, dtype=dtype)
    for lower in (False, True):
        _check(psl.cholesky(a, lower=lower), jsl.cholesky(a, lower=lower))
        ours, theirs = psl.cho_factor(a, lower=lower), jsl.cho_factor(a, lower=lower)
        assert ours[1] == theirs[1]
        _check(ours[0], theirs[0])
        _check(psl.cho_solve(ours, b), jsl.cho_solve(theirs, b))
        _check(psl.cho_solve(ours, b[0, :, 0]), jsl.cho_solve(theirs, b[0, :, 0]))
    _check(psl.solve(a, b, assume_a="pos"), _jax_pos_solve(a, b))
    _check(plait.jit(lambda a, b: psl.solve(a, b, assume_a="pos"))(a, b), _jax_pos_solve(a, b))


@pytest.mark.parametrize("trans", [0, 1, 2, "N", "T", "C"])
def test_solve_triangular(trans: Any) -> None:
    a = np.triu(_x(2, 3, 3, dtype=np.complex64)) + 3 * np.eye(3, dtype=np.complex64)
    b = _x(2, 3, 2, dtype=np.complex64)
    for lower, unit in ((False, False), (False, True)):
        _check(psl.solve_triangular(a, b, trans, lower, unit),
               jsl.solve_triangular(a, b, trans, lower, unit))
    at = np.swapaxes(a, -1, -2)
    _check(psl.solve_triangular(at[0], b[0, :, 0], trans, lower=True),
           jsl.solve_triangular(at[0], b[0, :, 0], trans, lower=True))


def test_lu_family() -> None:
    a, b = _x(3, 3), _x(3, 2)
    for permute_l in (False, True):
        _check(psl.lu(a, permute_l=permute_l), jsl.lu(a, permute_l=permute_l))
    tall = _x(4, 2)
    _check(psl.lu(tall), jsl.lu(tall))
    factors = psl.lu_factor(a)
    _check(factors, jsl.lu_factor(a))
    for trans in (0, 1, 2):
        _check(psl.lu_solve(factors, b, trans), jsl.lu_solve(jsl.lu_factor(a), b, trans))
    _check(psl.solve(a, b), jsl.solve(a, b))
    _check(psl.inv(a), jsl.inv(a))
    _check(psl.det(a), jsl.det(a))


def test_block_diag_eigh_svd_qr() -> None:
    blocks = (_x(2, 2), np.float32(3.0), _x(1, 3), np.array([1, 2], np.int32))
    _check(psl.block_diag(*blocks), jsl.block_diag(*blocks))
    _check(psl.block_diag(), jsl.block_diag())
    h = _spd(4, 4)
    _check(psl.eigh(h, eigvals_only=True), jsl.eigh(h, eigvals_only=True), tol=1e-3)
    w, v = psl.eigh(h, lower=False)
    np.testing.assert_allclose(np.asarray(v) @ np.diag(np.asarray(w)) @ np.asarray(v).T, h,
                               atol=1e-3)
    m = _x(4, 3)
    _check(psl.svd(m, compute_uv=False), jsl.svd(m, compute_uv=False))
    for mode in ("full", "economic", "r"):
        _check(psl.qr(m, mode=mode), jsl.qr(m, mode=mode))


def test_gradients_through_solves_match_jax() -> None:
    a, b = _spd(3, 3), _x(3, 2)

    def loss(sl: Any, ns: Any, how: str) -> Any:
        if how == "cho":
            return lambda a, b: ns.sum(sl.cho_solve(sl.cho_factor(a), b) ** 2)
        if how == "lu":
            return lambda a, b: ns.sum(sl.lu_solve(sl.lu_factor(a), b) ** 2)
        return lambda a, b: ns.sum(sl.solve(a, b, assume_a=how) ** 2)

    for how in ("cho", "lu", "gen", "pos"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)  # as in _jax_pos_solve
            want = jax.grad(loss(jsl, jnp, how), argnums=(0, 1))(a, b)
        _check(plait.grad(loss(psl, pnp, how), argnums=(0, 1))(a, b), want, tol=1e-3)


def test_bad_arguments() -> None:
    with pytest.raises(ValueError, match="Invalid 'trans' value 3"):
        psl.solve_triangular(_x(2, 2), _x(2), trans=3)
    with pytest.raises(ValueError, match="Expected assume_a to be one of"):
        psl.solve(_x(2, 2), _x(2), assume_a="tri")
    with pytest.raises(ValueError, match="must have at most 2 dimensions"):
        psl.block_diag(_x(2, 2, 2))
    with pytest.raises(ValueError, match="Unsupported QR decomposition mode 'raw'"):
        psl.qr(_x(2, 2), mode="raw")
    with pytest.raises(NotImplementedError, match="Only the b=None case of eigh"):
        psl.eigh(_x(2, 2), _x(2, 2))

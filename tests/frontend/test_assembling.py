"""resize and block (``assembling.py``) against jax.numpy 0.10.2."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import plait
import plait.numpy as pnp

COVERED = {"resize", "block"}
"""The functions this file tests (the namespace coverage test of test_numpy.py reads it)."""

A = np.arange(6, dtype=np.float32).reshape(2, 3)


def _same(ours: Any, theirs: Any, what: str) -> None:
    o, t = np.asarray(ours), np.asarray(theirs)
    assert (o.dtype, o.shape) == (t.dtype, t.shape), \
        f"{what}: {o.dtype}{o.shape} vs {t.dtype}{t.shape}"
    assert getattr(ours, "weak_type", False) == getattr(theirs, "weak_type", False), what
    np.testing.assert_allclose(o, t, rtol=1e-6, err_msg=what)


RESIZE: list[tuple[Any, Any]] = [
    (A, (3, 4)), (A, 4), (A, (2, 3)), (A, (0, 3)), (A, ()), (np.arange(3), (2, 2)),
    (np.zeros(0, np.float32), (2,)), (np.array([True, False]), (3,)), (3, (2, 2)),
    (2.5, (0,)), (np.complex64(1 + 2j), (1, 2)), (A.astype(np.int8), (7,))]


@pytest.mark.parametrize("a, shape", RESIZE, ids=range(len(RESIZE)))
def test_resize_matches_jax(a: Any, shape: Any) -> None:
    theirs = jnp.resize(a, shape)
    _same(pnp.resize(a, shape), theirs, f"resize {shape}")
    if np.ndim(a):
        _same(plait.jit(lambda x: pnp.resize(x, shape))(a), theirs, "jit")


BLOCK: list[Any] = [
    [1, 2], [[1, 2], [3.0, 4]], 5, A, [A, A[:, :1]],
    [[np.ones((2, 2), np.float32), np.zeros((2, 1), np.float32)], [np.ones((1, 3), np.float32)]],
    [[[np.ones((2,), np.int32)]]], [np.float32(1), A[0]], [[A], [A[:1]]],
    [np.zeros((0, 2), np.float32), np.zeros((0, 1), np.float32)]]


@pytest.mark.parametrize("x", BLOCK, ids=range(len(BLOCK)))
def test_block_matches_jax(x: Any) -> None:
    _same(pnp.block(x), jnp.block(x), "block")


def test_grad_vmap_and_jit() -> None:
    def f(L: Any) -> Any:
        return lambda a, b: (L.block([[a, b[:, None]], [b[None, :2], a[:1, :1]]]) ** 2).sum() \
            + (L.resize(a, (4, 4)) * L.arange(16.0).reshape(4, 4)).sum()

    for argnums in (0, 1):
        _same(plait.grad(f(pnp), argnums=argnums)(A[:, :2], A[:, 2]),
              jax.grad(f(jnp), argnums=argnums)(A[:, :2], A[:, 2]), f"grad {argnums}")
    _same(plait.jit(f(pnp))(A[:, :2], A[:, 2]), jax.jit(f(jnp))(A[:, :2], A[:, 2]), "jit")
    _same(plait.vmap(lambda a: pnp.resize(a, (2, 2)))(A), jax.vmap(
        lambda a: jnp.resize(a, (2, 2)))(A), "vmap resize")
    _same(plait.vmap(lambda a: pnp.block([[a], [a]]))(A), jax.vmap(
        lambda a: jnp.block([[a], [a]]))(A), "vmap block")


def test_errors() -> None:
    bad: list[tuple[str, tuple[Any, ...], type[Exception], str]] = [
        ("resize", (A, (2, -1)), ValueError, "all elements of `new_shape` must be non-negative"),
        ("resize", (A, (2.0,)), TypeError, "integer"),
        ("resize", ([1, 2], (2,)), TypeError, "resize"),
        ("block", ((A, A),), ValueError, "jax.numpy.block does not allow tuples"),
        ("block", ([],), ValueError, "jax.numpy.block does not allow empty list arguments"),
        ("block", ([[1], 2],), ValueError, "Mismatched list depths in jax.numpy.block"),
        ("block", ([[np.ones(2)], [np.ones(3)]],), TypeError, "")]
    for name, args, exc, msg in bad:
        with pytest.raises(exc):
            getattr(jnp, name)(*args)
        with pytest.raises(exc, match=msg or None):
            getattr(pnp, name)(*args)

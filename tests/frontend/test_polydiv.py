"""polydiv (``polynomials.py``) against jax.numpy 0.10.2."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import plait
import plait.numpy as pnp
from plait.errors import ConcretizationTypeError

COVERED = {"polydiv"}
"""The functions this file tests (the namespace coverage test of test_numpy.py reads it)."""


def _same(ours: Any, theirs: Any, what: str, rtol: float = 1e-5) -> None:
    assert isinstance(ours, tuple) and len(ours) == len(theirs), what
    for o, t in zip(ours, theirs):
        o, t = np.asarray(o), np.asarray(t)
        assert (o.dtype, o.shape) == (t.dtype, t.shape), \
            f"{what}: {o.dtype}{o.shape} vs {t.dtype}{t.shape}"
        np.testing.assert_allclose(o, t, rtol=rtol, atol=rtol, err_msg=what)


F = np.float32
CASES: list[tuple[Any, Any]] = [
    (np.array([1, 2, 3, 4], np.int32), np.array([1, 2], np.int32)),
    (np.array([1, 3, 3, 1], F), np.array([1, 1], F)),
    (np.array([2, -1, 0.5, 3, 7], F), np.array([0.5, 2, -1], F)),
    (np.array([1, 2], F), np.array([1, 2, 3, 4], F)),
    (np.array([1, 2, 3], F), np.array([4], F)),
    (np.array([], F), np.array([1.0], F)),
    (np.array([1 + 1j, 2, 3j], np.complex64), np.array([1, 1j], np.complex64)),
    (np.array([1, 2, 3], np.float16), np.array([1, 2], np.int8)),
    (np.array([True, False, True]), np.array([True, True])),
    (np.array([1, 2], F), np.array([0.0, 1], F))]


@pytest.mark.parametrize("trim", [False, True])
@pytest.mark.parametrize("u, v", CASES, ids=range(len(CASES)))
def test_polydiv_matches_jax(u: Any, v: Any, trim: bool) -> None:
    rtol = 1e-2 if np.float16 in (u.dtype, v.dtype) else 1e-5
    with np.errstate(all="ignore"):
        theirs = jnp.polydiv(u, v, trim_leading_zeros=trim)
        _same(pnp.polydiv(u, v, trim_leading_zeros=trim), theirs, f"polydiv {trim}", rtol)
        if not trim and u.dtype in (np.float32, np.complex64):
            _same(plait.jit(pnp.polydiv)(u, v), theirs, "jit", rtol)


def test_polydiv_grad_vmap_and_errors() -> None:
    u, v = np.array([2, -1, 0.5, 3, 7], F), np.array([0.5, 2, -1], F)

    def loss(L: Any) -> Any:
        def f(a: Any, b: Any) -> Any:
            q, r = L.polydiv(a, b)
            return (q * q).sum() + (r * L.arange(5.0)).sum()
        return f

    for argnums in (0, 1):
        g = plait.grad(loss(pnp), argnums=argnums)(u, v)
        np.testing.assert_allclose(g, jax.grad(loss(jnp), argnums=argnums)(u, v), rtol=1e-5)
    batch = np.stack([u, u[::-1]])
    _same(tuple(plait.vmap(pnp.polydiv, (0, None))(batch, v)),
          tuple(jax.vmap(jnp.polydiv, (0, None))(batch, v)), "vmap")
    bad: list[tuple[Any, Any, type[Exception]]] = [
        (np.float32(3), np.array([1.0], F), TypeError),
        (np.ones((1, 2), F), np.array([1.0], F), ValueError),
        (np.array([1, 2], F), np.array([], F), IndexError),
        ([1.0, 2.0], np.array([1.0], F), TypeError)]
    for a, b, exc in bad:
        with pytest.raises(exc):
            jnp.polydiv(a, b)
        with pytest.raises(exc):
            pnp.polydiv(a, b)
    with pytest.raises(ConcretizationTypeError, match="polydiv"):
        plait.jit(lambda a, b: pnp.polydiv(a, b, trim_leading_zeros=True))(u, v)

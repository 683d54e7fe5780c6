"""Linear algebra of matrices without entries (``[..., 0, n]``, ``[..., m, 0]``, and
batches of none) against jax 0.10.2: ``lax.linalg`` (svd, qr with and without pivoting,
lu, eigh, cholesky, eig) and ``numpy.linalg`` (svd, qr, eigh, det, inv, slogdet, pinv,
norm, solve, ...): shapes, dtypes and values (JAX returns identities for the nonempty
factors of full SVDs and QRs) eagerly, under ``jit`` and ``vmap``; gradients; the
lowered modules; the reference interpreter."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax as jlax

import plait
import plait.numpy as pnp
from plait import lax as plax
from plait.ir import eval_jaxpr

jax.config.update("jax_platforms", "cpu")

RECT = [(0, 3), (3, 0), (0, 0), (2, 0, 3), (2, 3, 0), (0, 2, 3)]
SQUARE = [(0, 0), (2, 0, 0), (0, 3, 3)]


def _same(got: Any, want: Any) -> None:
    """The same pytree structure (tuples and lists alike), shapes, dtypes and values."""
    got_leaves = jax.tree.leaves(tuple(got) if isinstance(got, list) else got)
    want_leaves = jax.tree.leaves(tuple(want) if isinstance(want, list) else want)
    assert len(got_leaves) == len(want_leaves)
    for g, w in zip(got_leaves, want_leaves):
        g, w = np.asarray(g), np.asarray(w)
        assert (g.shape, g.dtype) == (w.shape, w.dtype), (g.shape, g.dtype, w.shape, w.dtype)
        np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-6)


def _svd_cases(lib: Any, lax: Any) -> list[Callable[[Any], Any]]:
    cases: list[Callable[[Any], Any]] = []
    for full in (True, False):
        for uv in (True, False):
            def lax_svd(x: Any, f: bool = full, u: bool = uv) -> Any:
                return lax.linalg.svd(x, full_matrices=f, compute_uv=u)

            def np_svd(x: Any, f: bool = full, u: bool = uv) -> Any:
                return tuple(lib.linalg.svd(x, full_matrices=f, compute_uv=u))

            cases += [lax_svd, np_svd]
    return cases


def _rect_cases(lib: Any, lax: Any) -> list[Callable[[Any], Any]]:
    return _svd_cases(lib, lax) + [
        lambda x: lax.linalg.qr(x),
        lambda x: lax.linalg.qr(x, full_matrices=False),
        lambda x: lax.linalg.qr(x, pivoting=True),
        lambda x: lax.linalg.qr(x, pivoting=True, full_matrices=False),
        lambda x: tuple(lax.linalg.lu(x)),
        lambda x: tuple(lib.linalg.qr(x)),
        lambda x: tuple(lib.linalg.qr(x, mode="complete")),
        lambda x: lib.linalg.pinv(x),
    ]


def _square_cases(lib: Any, lax: Any) -> list[Callable[[Any], Any]]:
    return [
        lambda x: lax.linalg.eigh(x),
        lambda x: lax.linalg.cholesky(x),
        lambda x: tuple(lax.linalg.eig(x)),
        lambda x: tuple(lib.linalg.eigh(x)),
        lambda x: lib.linalg.eigvalsh(x),
        lambda x: lib.linalg.cholesky(x),
        lambda x: lib.linalg.det(x),
        lambda x: lib.linalg.inv(x),
        lambda x: tuple(lib.linalg.slogdet(x)),
        lambda x: tuple(lib.linalg.eig(x)),
        lambda x: lib.linalg.eigvals(x),
        lambda x: lib.linalg.matrix_power(x, 3),
        lambda x: lib.linalg.solve(x, jnp.zeros(x.shape[:-1] + (2,), x.dtype)),
    ]


@pytest.mark.parametrize("shape", RECT)
@pytest.mark.parametrize("dtype", [np.float32, np.complex64])
def test_rectangular(dtype: Any, shape: tuple[int, ...]) -> None:
    x = np.zeros(shape, dtype)
    for ours, theirs in zip(_rect_cases(pnp, plax), _rect_cases(jnp, jlax)):
        want = theirs(x)
        _same(ours(x), want)
        _same(plait.jit(ours)(x), want)


@pytest.mark.parametrize("shape", SQUARE)
@pytest.mark.parametrize("dtype", [np.float32, np.complex64])
def test_square(dtype: Any, shape: tuple[int, ...]) -> None:
    x = np.zeros(shape, dtype)
    for ours, theirs in zip(_square_cases(pnp, plax), _square_cases(jnp, jlax)):
        want = theirs(x)
        _same(ours(x), want)
        _same(plait.jit(ours)(x), want)


def test_norms_and_rank() -> None:
    for shape in [(0, 3), (3, 0), (0, 0)]:
        x = np.zeros(shape, np.float32)
        for ord_ in (2, -2, "nuc", "fro", 1, -1, np.inf, -np.inf):
            try:
                want = jnp.linalg.norm(x, ord_)
            except ValueError:  # (a minimum over nothing)
                with pytest.raises(ValueError, match="zero-size array"):
                    pnp.linalg.norm(x, ord_)
                continue
            _same(pnp.linalg.norm(x, ord_), want)
        # JAX's matrix_rank fails on them (the maximum of no singular values).
        with pytest.raises(ValueError):
            jnp.linalg.matrix_rank(x)
        with pytest.raises(ValueError):
            pnp.linalg.matrix_rank(x)


def test_vmap() -> None:
    x = np.zeros((2, 3, 0), np.float32)
    for full in (True, False):
        def svd(lax: Any, full: bool = full) -> Callable[[Any], Any]:
            return lambda x: lax.linalg.svd(x, full_matrices=full)

        def qr(lax: Any, full: bool = full) -> Callable[[Any], Any]:
            return lambda x: lax.linalg.qr(x, pivoting=True, full_matrices=full)
        _same(plait.vmap(svd(plax), in_axes=2)(x.transpose(1, 2, 0)),
              jax.vmap(svd(jlax), in_axes=2)(x.transpose(1, 2, 0)))
        _same(plait.vmap(qr(plax))(x), jax.vmap(qr(jlax))(x))


def test_gradients() -> None:
    def losses(lax: Any, lib: Any) -> list[Callable[[Any], Any]]:
        return [lambda x: lax.linalg.svd(x, compute_uv=False).sum(),
                lambda x: sum(a.sum() for a in lax.linalg.svd(x, full_matrices=False)),
                lambda x: sum(a.sum() for a in lax.linalg.qr(x)),
                lambda x: sum(a.sum() for a in lax.linalg.qr(x, pivoting=True)[:2]),
                lambda x: lib.linalg.pinv(x).sum()]
    for shape in [(0, 3), (3, 0), (0, 0)]:
        x = np.zeros(shape, np.float32)
        for ours, theirs in zip(losses(plax, pnp), losses(jlax, jnp)):
            _same(plait.grad(ours)(x), jax.grad(theirs)(x))
    for square in [(0, 0), (2, 0, 0)]:
        x = np.zeros(square, np.float32)
        for name in ("inv", "cholesky", "eigvalsh"):
            def ours(x: Any, n: str = name) -> Any:
                return getattr(pnp.linalg, n)(x).sum()

            def theirs(x: Any, n: str = name) -> Any:
                return getattr(jnp.linalg, n)(x).sum()
            _same(plait.grad(ours)(x), jax.grad(theirs)(x))


_SDY = re.compile(r", sdy\.sharding_rule = #sdy\.op_sharding_rule<.*?, custom>")


@pytest.mark.parametrize("shape", [(0, 3), (3, 0), (0, 0), (2, 0, 3), (2, 3, 0)])
@pytest.mark.parametrize("dtype", [np.float32, np.complex64])
def test_lowered_modules_match_jax(dtype: Any, shape: tuple[int, ...]) -> None:
    x = np.zeros(shape, dtype)
    for ours, theirs in zip(_svd_cases(pnp, plax)[::2], _svd_cases(jnp, jlax)[::2]):
        assert plait.jit(ours).lower(x).as_text() == \
            _SDY.sub("", jax.jit(theirs).lower(x).as_text())


def test_reference_interpreter_agrees() -> None:
    for shape in [(0, 3), (3, 0), (2, 0, 3), (2, 3, 0)]:
        x = np.zeros(shape, np.complex64)
        for f in _svd_cases(pnp, plax)[::2] + [lambda x: plax.linalg.qr(x, pivoting=True)]:
            closed = plait.make_jaxpr(f)(x)
            _same(tuple(eval_jaxpr(closed.jaxpr, closed.consts, x)),
                  jax.tree.leaves(plait.jit(f)(x)))

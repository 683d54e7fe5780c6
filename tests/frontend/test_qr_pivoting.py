"""QR with column pivoting (``lax.linalg.qr(x, pivoting=True)``, ``lax.linalg.geqp3``,
``plait.scipy.linalg.qr(..., pivoting=True)``) against jax 0.10.2.

The pivots are deterministic (the same LAPACK ``geqp3`` runs on both sides) and compared
exactly; ``Q`` and ``R`` are compared with JAX's and through the reconstruction
``x[..., :, p] == Q R``.  Derivatives: ``jvp`` and ``grad`` against JAX for tall and
square matrices; for wide ones JAX's derivative of ``R`` is wrong (it uses the
unpermuted ``x``), so plait's is checked against central finite differences there.
Also: eagerly and under ``jit`` and ``vmap``, the printed jaxprs and lowered modules,
the reference interpreter, ``geqp3`` with fixed columns, and bad arguments.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable, Iterator
from typing import Any

import jax
import jax.numpy as jnp
import jax.scipy.linalg as jsl
import numpy as np
import pytest
from jax import lax as jlax
from jax._src.lax import linalg as jax_linalg

import plait
import plait.scipy.linalg as psl
from plait.frontend.lax import linalg_factorizations as L
from plait.ir import eval_jaxpr

jax.config.update("jax_platforms", "cpu")

DTYPES = [np.float32, np.float64, np.complex64, np.complex128]
WIDE = {np.dtype(np.float64), np.dtype(np.complex128)}
SHAPES = [(4, 4), (5, 3), (3, 5), (2, 3, 4, 3), (2, 3, 5)]
RNG = np.random.default_rng(5)


@contextlib.contextmanager
def _x64() -> Iterator[None]:
    before = plait.config.read("enable_x64"), jax.config.read("jax_enable_x64")
    plait.config.update("enable_x64", True)
    jax.config.update("jax_enable_x64", True)
    try:
        yield
    finally:
        plait.config.update("enable_x64", before[0])
        jax.config.update("jax_enable_x64", before[1])


@pytest.fixture(autouse=True)
def _x64_for_wide_dtypes(request: pytest.FixtureRequest) -> Iterator[None]:
    """Tests parametrized by a 64-bit ``dtype`` run with x64 on."""
    callspec = getattr(request.node, "callspec", None)
    dtype = callspec.params.get("dtype") if callspec is not None else None
    if dtype is None or np.dtype(dtype) not in WIDE:
        yield
        return
    with _x64():
        yield


def _tol(dtype: Any) -> float:
    return 1e-10 if np.dtype(dtype) in WIDE else 3e-4


def _close(got: Any, want: Any, dtype: Any = np.float32, scale: float = 1) -> None:
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, want.shape,
                                                                 got.dtype, want.dtype)
    np.testing.assert_allclose(got, want, rtol=_tol(dtype) * scale, atol=_tol(dtype) * scale)


def _normal(shape: tuple[int, ...], dtype: Any) -> np.ndarray:
    x = RNG.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * RNG.standard_normal(shape)
    return x.astype(dtype)


def _permuted(x: Any, p: Any) -> np.ndarray:
    """``x[..., :, p]``, one permutation per matrix."""
    x, p = np.asarray(x), np.asarray(p)
    return np.take_along_axis(x, np.broadcast_to(p[..., None, :], x.shape), axis=-1)


# -- values -----------------------------------------------------------------------------------


@pytest.mark.parametrize("full_matrices", [True, False])
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_values(dtype: Any, shape: tuple[int, ...], full_matrices: bool) -> None:
    x = _normal(shape, dtype)
    want = jlax.linalg.qr(jnp.asarray(x), pivoting=True, full_matrices=full_matrices)

    def f(x: Any) -> Any:
        return L.qr(x, pivoting=True, full_matrices=full_matrices)
    for got in (f(x), plait.jit(f)(x)):
        assert len(got) == 3
        np.testing.assert_array_equal(np.asarray(got[2]), np.asarray(want[2]))
        assert np.asarray(got[2]).dtype == np.int32
        _close(got[0], want[0], dtype)
        _close(got[1], want[1], dtype)
    q, r, p = (np.asarray(v) for v in f(x))
    _close(q @ r, _permuted(x, p), dtype, 10)
    # Rank-revealing: |diag(R)| non-increasing.
    d = np.abs(np.diagonal(r, axis1=-2, axis2=-1))
    assert np.all(d[..., :-1] >= d[..., 1:] * (1 - 1e-5))


def test_rank_deficient_matrix() -> None:
    u, v = _normal((6, 2), np.float64), _normal((2, 5), np.float64)
    with _x64():
        x = u @ v  # rank 2
        q, r, p = L.qr(x, pivoting=True)
        jq, jr, jp = jlax.linalg.qr(x, pivoting=True)
        np.testing.assert_array_equal(np.asarray(p), np.asarray(jp))
        _close(r, jr, np.float64, 10)
        assert np.all(np.abs(np.asarray(r)[2:]) < 1e-12)
        _close(np.asarray(q) @ np.asarray(r), _permuted(x, p), np.float64, 10)


@pytest.mark.parametrize("dtype", [np.float32, np.complex64])
def test_geqp3(dtype: Any) -> None:
    x = _normal((2, 5, 4), dtype)
    free = np.zeros((2, 4), np.int32)
    fixed = np.array([[0, 0, 1, 0], [1, 0, 0, 1]], np.int32)
    for jpvt in (free, fixed):
        want = jax_linalg.geqp3(x, jpvt)
        for got in (L.geqp3(x, jpvt), plait.jit(L.geqp3)(x, jpvt)):
            _close(got[0], want[0], dtype)
            np.testing.assert_array_equal(np.asarray(got[1]), np.asarray(want[1]))
            _close(got[2], want[2], dtype)
    # The fixed columns come first, in order, unpivoted.
    perm = np.asarray(L.geqp3(x, fixed)[1])
    assert perm[0, 0] == 3 and list(perm[1, :2]) == [1, 4]
    # The reflectors rebuild the permuted matrix.
    a, perm, taus = (np.asarray(v) for v in L.geqp3(x, free))
    q = np.asarray(L.householder_product(a, taus))
    _close(q @ np.triu(a[..., :4, :]), _permuted(x, perm - 1), dtype, 10)


def test_geqp3_empty_matrices_return_at_once() -> None:
    # (jaxlib's kernel crashes the process here; LAPACK itself returns at once.)
    for shape in [(0, 3), (3, 0), (2, 0, 2), (0, 3, 3)]:
        a = np.zeros(shape, np.float32)
        jshape = shape[:-2] + shape[-1:]
        jpvt = np.arange(int(np.prod(jshape)), dtype=np.int32).reshape(jshape)
        for f in (L.geqp3, plait.jit(L.geqp3)):
            out, perm, taus = f(a, jpvt)
            assert out.shape == shape and taus.shape == shape[:-2] + (min(shape[-2:]),)
            np.testing.assert_array_equal(np.asarray(perm), jpvt)


def test_scipy_qr_pivoting() -> None:
    x = _normal((5, 3), np.float32)
    for mode in ("full", "economic", "r"):
        got = psl.qr(x, mode=mode, pivoting=True)
        want = jsl.qr(x, mode=mode, pivoting=True)
        assert len(got) == len(want)
        for g, w in zip(got[:-1], want[:-1]):
            _close(g, w)
        np.testing.assert_array_equal(np.asarray(got[-1]), np.asarray(want[-1]))
    # Integer input is promoted, as JAX does.
    xi = np.array([[1, 2], [3, 4], [5, 7]], np.int32)
    got_int: Any = psl.qr(xi, pivoting=True)
    want_int: Any = jsl.qr(xi, pivoting=True)
    _close(got_int[1], want_int[1])
    np.testing.assert_array_equal(np.asarray(got_int[2]), np.asarray(want_int[2]))


# -- transformations --------------------------------------------------------------------------


def test_vmap() -> None:
    x = _normal((4, 3, 5), np.float32)

    def f(lib: Any) -> Callable[[Any], Any]:
        return lambda x: lib.qr(x, pivoting=True, full_matrices=False)
    got = plait.vmap(f(L), in_axes=1)(x)
    want = jax.vmap(f(jlax.linalg), in_axes=1)(x)
    np.testing.assert_array_equal(np.asarray(got[2]), np.asarray(want[2]))
    for g, w in zip(got[:2], want[:2]):
        _close(g, w)
    # geqp3 with a shared matrix and mapped jpvt (and the other way round).
    a, jpvt = _normal((4, 3), np.float32), np.array([[0, 0, 0], [0, 1, 0]], np.int32)
    got = plait.vmap(L.geqp3, in_axes=(None, 0))(a, jpvt)
    want = jax.vmap(jax_linalg.geqp3, in_axes=(None, 0))(a, jpvt)
    for g, w in zip(got, want):
        _close(g, w) if np.asarray(w).dtype.kind == "f" else \
            np.testing.assert_array_equal(np.asarray(g), np.asarray(w))


@pytest.mark.parametrize("full_matrices", [True, False])
@pytest.mark.parametrize("shape", [(4, 4), (5, 3)])
@pytest.mark.parametrize("dtype", [np.float32, np.complex64])
def test_jvp_matches_jax(dtype: Any, shape: tuple[int, ...], full_matrices: bool) -> None:
    x, t = _normal(shape, dtype), _normal(shape, dtype)

    def f(lib: Any) -> Callable[[Any], Any]:
        return lambda x: lib.qr(x, pivoting=True, full_matrices=full_matrices)
    ours = plait.jvp(f(L), (x,), (t,))
    theirs = jax.jvp(f(jlax.linalg), (x,), (t,))
    for o, w in zip(ours[1][:2], theirs[1][:2]):
        _close(o, w, dtype, 30)
    assert np.asarray(ours[1][2]).dtype == jax.dtypes.float0


@pytest.mark.parametrize("full_matrices", [True, False])
@pytest.mark.parametrize("shape", [(3, 5), (2, 3, 5), (2, 5, 3)])
def test_jvp_matches_finite_differences(shape: tuple[int, ...], full_matrices: bool) -> None:
    # (Wide: JAX's dR is wrong; batched: JAX's rule fails.  Plait's against differences.)
    with _x64():
        x, t = _normal(shape, np.float64), _normal(shape, np.float64)

        def f(x: Any) -> Any:
            return L.qr(x, pivoting=True, full_matrices=full_matrices)[:2]
        _, tangents = plait.jvp(f, (x,), (t,))
        h = 1e-6
        for got, hi, lo in zip(tangents, f(x + h * t), f(x - h * t)):
            fd = (np.asarray(hi) - np.asarray(lo)) / (2 * h)
            np.testing.assert_allclose(np.asarray(got), fd, atol=1e-6)


@pytest.mark.parametrize("dtype", [np.float32, np.complex64])
def test_grad(dtype: Any) -> None:
    x = _normal((5, 3), dtype)

    def loss(qr: Callable[[Any], Any]) -> Callable[[Any], Any]:
        def f(x: Any) -> Any:
            q, r, _ = qr(x)
            return (abs(q[..., :, :1] * r[..., :1, :1]) ** 2).sum() + abs(r).sum()
        return f
    _close(plait.grad(loss(lambda x: L.qr(x, pivoting=True, full_matrices=False)))(x),
           jax.grad(loss(lambda x: jlax.linalg.qr(x, pivoting=True, full_matrices=False)))(x),
           dtype, 30)
    # Through jit and vmap too.
    xs = _normal((2, 5, 3), dtype)
    g = plait.jit(plait.vmap(plait.grad(loss(lambda x: L.qr(x, pivoting=True)))))
    w = jax.vmap(jax.grad(loss(lambda x: jlax.linalg.qr(x, pivoting=True))))
    _close(g(xs), w(xs), dtype, 30)


def test_geqp3_has_no_derivative() -> None:
    x, jpvt = _normal((3, 3), np.float32), np.zeros(3, np.int32)
    with pytest.raises(NotImplementedError, match="'geqp3' not implemented"):
        plait.jvp(lambda x: L.geqp3(x, jpvt)[0], (x,), (x,))
    # A zero tangent passes (nothing depends on x).
    out = plait.jvp(lambda y: L.geqp3(x, jpvt)[0] + y, (np.float32(1),), (np.float32(1),))
    _close(out[0], jax_linalg.geqp3(x, jpvt)[0] + 1)


# -- IR, lowering, reference ------------------------------------------------------------------


_SDY = re.compile(r", sdy\.sharding_rule = #sdy\.op_sharding_rule<.*?, custom>")


def _jax_text(f: Callable[..., Any], *args: Any) -> str:
    return _SDY.sub("", jax.jit(f).lower(*args).as_text())


@pytest.mark.parametrize("shape", [(3, 3), (2, 4, 3), (3, 5), (0, 3), (2, 3, 0)])
@pytest.mark.parametrize("dtype", [np.float32, np.complex128])
def test_jaxprs_and_modules_match_jax(dtype: Any, shape: tuple[int, ...]) -> None:
    x = _normal(shape, dtype)
    jpvt = np.zeros(shape[:-2] + shape[-1:], np.int32)
    cases: list[tuple[Callable[..., Any], Callable[..., Any], tuple[Any, ...]]] = [
        (lambda x: L.qr(x, pivoting=True), lambda x: jlax.linalg.qr(x, pivoting=True), (x,)),
        (lambda x: L.qr(x, pivoting=True, full_matrices=False),
         lambda x: jlax.linalg.qr(x, pivoting=True, full_matrices=False), (x,)),
        (lambda x, j: L.geqp3(x, j, use_magma=False),
         lambda x, j: jax_linalg.geqp3(x, j, use_magma=False), (x, jpvt)),
    ]
    for f, g, args in cases:
        assert str(plait.make_jaxpr(f)(*args)) == str(jax.make_jaxpr(g)(*args))
        if f is cases[-1][0] and 0 in shape:
            continue  # (JAX's geqp3 kernel crashes there; plait's lowering skips it)
        assert plait.jit(f).lower(*args).as_text() == _jax_text(g, *args)


def test_reference_interpreter_agrees() -> None:
    x = _normal((2, 5, 4), np.complex64)
    fixed = np.array([[0, 1, 0, 0], [1, 1, 0, 0]], np.int32)
    cases: list[tuple[Any, tuple[Any, ...]]] = [
                    (lambda x: L.qr(x, pivoting=True), (x,)),
                    (lambda x: L.qr(x[..., :3, :], pivoting=True, full_matrices=False), (x,)),
                    (L.geqp3, (x, fixed)),
                    (lambda x: L.qr(x[:, :0], pivoting=True), (x,))]
    for f, args in cases:
        closed = plait.make_jaxpr(f)(*args)
        ref = eval_jaxpr(closed.jaxpr, closed.consts, *args)
        for r, c in zip(ref, plait.jit(f)(*args)):
            _close(r, c, np.complex64, 10) if np.asarray(c).dtype.kind == "c" else \
                np.testing.assert_array_equal(r, np.asarray(c))


def test_bad_arguments() -> None:
    a = np.ones((3, 2), np.float32)
    with pytest.raises(TypeError, match=r"geqp3: expected int32 jpvt, but got f32\[2\]"):
        L.geqp3(a, np.zeros(2, np.float32))
    with pytest.raises(TypeError, match=r"geqp3: expected jpvt of shape \(2,\) .* but got "
                                        r"a: f32\[3,2\], jpvt: i32\[3\]"):
        L.geqp3(a, np.zeros(3, np.int32))
    with pytest.raises(TypeError, match=r"geqp3: expected float32, float64, complex64 or "
                                        r"complex128 for a, but got f16\[3,2\]"):
        L.geqp3(a.astype(np.float16), np.zeros(2, np.int32))
    with pytest.raises(TypeError, match=r"qr: expected float32.* but got i32\[3,2\]"):
        L.qr(a.astype(np.int32), pivoting=True)

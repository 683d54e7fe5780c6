"""lax.linalg's lu, lu_pivots_to_permutation, geqrf, householder_product, ormqr, qr, eigh and svd
against jax 0.10.2: values for the four LAPACK dtypes (batched too) eagerly and under jit
and vmap; jvp and grad of gauge-invariant functions; printed jaxprs; the lowered modules
(JAX's LAPACK custom calls); the reference interpreter; bad arguments.  (QR with column
pivoting: tests/frontend/test_qr_pivoting.py; empty matrices: test_linalg_empty.py.)"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable, Iterator
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax as jlax
from jax._src.lax import linalg as jax_linalg

import plait
from plait.frontend.lax import linalg_factorizations as L
from plait.ir import eval_jaxpr

DTYPES = [np.float32, np.float64, np.complex64, np.complex128]
RNG = np.random.default_rng(11)
WIDE = {np.dtype(np.float64), np.dtype(np.complex128)}


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


def _hermitian(shape: tuple[int, ...], dtype: Any) -> np.ndarray:
    a = _normal(shape, dtype)
    return ((a + np.swapaxes(a.conj(), -1, -2)) / 2).astype(dtype)


def _h(x: Any) -> Any:
    return np.swapaxes(np.asarray(x).conj(), -1, -2)


SHAPES = [(4, 4), (5, 3), (3, 5), (2, 3, 4, 3)]


# -- lu ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_lu_values(dtype: Any, shape: tuple[int, ...]) -> None:
    x = _normal(shape, dtype)
    want = jlax.linalg.lu(jnp.asarray(x))
    for got in (L.lu(x), plait.jit(L.lu)(x)):
        _close(got[0], want[0], dtype)
        np.testing.assert_array_equal(got[1], want[1])
        np.testing.assert_array_equal(got[2], want[2])
    lu, _, perm = (np.asarray(v) for v in L.lu(x))
    m, n = shape[-2:]
    k = min(m, n)
    lower = np.tril(lu[..., :, :k], -1) + np.eye(m, k, dtype=dtype)
    upper = np.triu(lu[..., :k, :])
    _close(lower @ upper, np.take_along_axis(x, perm[..., None], -2), dtype, 10)


def test_lu_pivots_to_permutation() -> None:
    pivots = np.array([[2, 2, 3], [0, 4, 2]], np.int32)
    for size in (4, 6):
        want = jlax.linalg.lu_pivots_to_permutation(pivots, size)
        np.testing.assert_array_equal(L.lu_pivots_to_permutation(pivots, size), want)
        np.testing.assert_array_equal(
            plait.jit(lambda p, s=size: L.lu_pivots_to_permutation(p, s))(pivots), want)
    np.testing.assert_array_equal(L.lu_pivots_to_permutation(np.zeros(0, np.int32), 3),
                                  [0, 1, 2])


def test_lu_singular_is_not_a_failure() -> None:
    x = np.array([[1, 2], [2, 4]], np.float32)
    got, want = L.lu(x), jlax.linalg.lu(x)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (3, 5), (2, 3, 3)])
@pytest.mark.parametrize("dtype", [np.float32, np.complex64, np.float64])
def test_lu_jvp(dtype: Any, shape: tuple[int, ...]) -> None:
    x, t = _normal(shape, dtype), _normal(shape, dtype)
    ours = plait.jvp(L.lu, (x,), (t,))
    theirs = jax.jvp(jlax.linalg.lu, (x,), (t,))
    _close(ours[1][0], theirs[1][0], dtype, 10)
    _close(ours[0][0], theirs[0][0], dtype)


def test_lu_grad_and_vmap() -> None:
    x = _normal((3, 4, 4), np.float32)

    def loss(lib: Any) -> Callable[[Any], Any]:
        return lambda x: (lib.linalg.lu(x)[0] ** 2).sum() if lib is jlax else \
            (L.lu(x)[0] ** 2).sum()
    _close(plait.grad(loss(None))(x), jax.grad(loss(jlax))(x), scale=10)
    xs = np.moveaxis(x, 0, 2)
    got = plait.vmap(L.lu, in_axes=2)(xs)
    want = jax.vmap(jlax.linalg.lu, in_axes=2)(xs)
    _close(got[0], want[0])
    np.testing.assert_array_equal(got[2], want[2])


# -- qr ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("full_matrices", [True, False])
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_qr_values(dtype: Any, shape: tuple[int, ...], full_matrices: bool) -> None:
    x = _normal(shape, dtype)
    want = jlax.linalg.qr(jnp.asarray(x), full_matrices=full_matrices)

    def f(x: Any) -> Any:
        return L.qr(x, full_matrices=full_matrices)
    for got in (f(x), plait.jit(f)(x)):
        _close(got[0], want[0], dtype)
        _close(got[1], want[1], dtype)
    q, r = (np.asarray(v) for v in f(x))
    _close(q @ r, x, dtype, 10)


def test_geqrf_and_householder_product() -> None:
    x = _normal((2, 5, 3), np.complex64)
    a, taus = L.geqrf(x)
    ja, jt = jax_linalg.geqrf(x)
    _close(a, ja, np.complex64)
    _close(taus, jt, np.complex64)
    _close(L.householder_product(a, taus), jlax.linalg.householder_product(ja, jt),
           np.complex64)
    _close(plait.jit(L.householder_product)(a, taus[..., :2]),
           jlax.linalg.householder_product(ja, jt[..., :2]), np.complex64)


@pytest.mark.parametrize("dtype", [np.float32, np.complex64])
def test_ormqr_multiplies_by_q_as_jax(dtype: Any) -> None:
    # (lineax's QR solver applies Q this way)
    x = _normal((2, 5, 3), dtype)
    a, taus = L.geqrf(x)
    ja, jt = jax_linalg.geqrf(x)
    rows, cols = _normal((2, 5, 4), dtype), _normal((2, 4, 5), dtype)
    for left, c in ((True, rows), (False, cols)):
        for transpose in (False, True):
            ours = plait.jit(L.ormqr, static_argnames=("left", "transpose"))
            theirs = jlax.linalg.ormqr(ja, jt, c, left=left, transpose=transpose)
            _close(ours(a, taus, c, left=left, transpose=transpose), theirs, dtype)
    q = L.householder_product(np.concatenate([np.asarray(a), np.zeros((2, 5, 2), dtype)], -1),
                              np.concatenate([np.asarray(taus), np.zeros((2, 2), dtype)], -1))
    _close(L.ormqr(a, taus, rows), np.asarray(q) @ rows, dtype, 10)
    batched = plait.vmap(lambda a, t, c: L.ormqr(a, t, c, transpose=True))(a, taus, rows)
    _close(batched, jlax.linalg.ormqr(ja, jt, rows, transpose=True), dtype)
    with pytest.raises(TypeError, match=r"ormqr: expected c with 5 rows \(a's rows\) when "
                       r"left=True, but got a: (f32|c64)\[2,5,3\], c: (f32|c64)\[2,4,5\]"):
        L.ormqr(a, taus, cols)
    with pytest.raises(NotImplementedError, match="Differentiation rule for 'ormqr' not "
                       "implemented"):
        plait.grad(lambda c: L.ormqr(a, taus, c).real.sum())(rows)


@pytest.mark.parametrize("full_matrices", [True, False])
@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (3, 5), (2, 4, 3)])
@pytest.mark.parametrize("dtype", [np.float32, np.complex64])
def test_qr_jvp(dtype: Any, shape: tuple[int, ...], full_matrices: bool) -> None:
    x, t = _normal(shape, dtype), _normal(shape, dtype)

    def f(lib: Any) -> Callable[[Any], Any]:
        if lib is jlax:
            return lambda x: jlax.linalg.qr(x, full_matrices=full_matrices)
        return lambda x: L.qr(x, full_matrices=full_matrices)
    ours = plait.jvp(f(None), (x,), (t,))
    theirs = jax.jvp(f(jlax), (x,), (t,))
    for o, w in zip(ours[1], theirs[1]):
        _close(o, w, dtype, 30)


@pytest.mark.parametrize("dtype", [np.float32, np.complex64])
def test_qr_grad(dtype: Any) -> None:
    x = _normal((2, 4, 3), dtype)

    def loss(qr: Callable[[Any], Any]) -> Callable[[Any], Any]:
        def f(x: Any) -> Any:
            q, r = qr(x)
            return (abs(q[..., :, :1] * r[..., :1, :1]) ** 2).sum() + abs(r).sum()
        return f
    _close(plait.grad(loss(lambda x: L.qr(x, full_matrices=False)))(x),
           jax.grad(loss(lambda x: jlax.linalg.qr(x, full_matrices=False)))(x), dtype, 30)


def test_qr_vmap() -> None:
    x = _normal((4, 3, 5), np.float32)
    got = plait.vmap(L.qr, in_axes=1)(x)
    want = jax.vmap(jlax.linalg.qr, in_axes=1)(x)
    for g, w in zip(got, want):
        _close(g, w)


# -- eigh -------------------------------------------------------------------------------------


@pytest.mark.parametrize("shape", [(4, 4), (2, 3, 5, 5)])
@pytest.mark.parametrize("dtype", DTYPES)
def test_eigh_values(dtype: Any, shape: tuple[int, ...]) -> None:
    x = _hermitian(shape, dtype)
    wv, ww = jlax.linalg.eigh(jnp.asarray(x))
    for v, w in (L.eigh(x), plait.jit(L.eigh)(x)):
        _close(w, ww, dtype)
        _close(np.abs(np.asarray(v)), np.abs(np.asarray(wv)), dtype, 10)  # up to phases
        vs = np.asarray(v)
        _close(vs @ (np.asarray(w)[..., :, None] * _h(vs)), x, dtype, 10)
    # Without symmetrization, only one triangle is read.
    skew = x + np.triu(_normal(shape, dtype), 1)
    for lower in (True, False):
        _, w = L.eigh(skew, lower=lower, symmetrize_input=False)
        _close(w, jlax.linalg.eigh(skew, lower=lower, symmetrize_input=False)[1], dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.complex64, np.float64])
def test_eigh_jvp_and_grad(dtype: Any) -> None:
    x, t = _hermitian((2, 4, 4), dtype), _hermitian((2, 4, 4), dtype)
    ours, theirs = plait.jvp(L.eigh, (x,), (t,)), jax.jvp(jlax.linalg.eigh, (x,), (t,))
    _close(ours[1][1], theirs[1][1], dtype, 10)  # eigenvalues' tangents
    # Eigenvectors' tangents are gauge-dependent: compare v^H dv's off-diagonal moduli.
    v = np.asarray(ours[0][0])
    _close(np.abs(_h(v) @ np.asarray(ours[1][0])),
           np.abs(_h(np.asarray(theirs[0][0])) @ np.asarray(theirs[1][0])), dtype, 30)

    def loss(eigh: Callable[[Any], Any]) -> Callable[[Any], Any]:
        def f(x: Any) -> Any:
            v, w = eigh(x)
            return (w * jnp.arange(1.0, 5.0)).sum() + (abs(v[..., 0, :]) ** 2 * w).sum()
        return f
    if np.dtype(dtype).kind != "c":
        _close(plait.grad(loss(L.eigh))(x[0]), jax.grad(loss(jlax.linalg.eigh))(x[0]),
               dtype, 30)


def test_eigh_vmap() -> None:
    x = np.moveaxis(_hermitian((3, 4, 4), np.float32), 0, 2)
    got = plait.vmap(L.eigh, in_axes=2)(x)
    want = jax.vmap(jlax.linalg.eigh, in_axes=2)(jnp.asarray(x))
    _close(got[1], want[1])
    _close(np.abs(np.asarray(got[0])), np.abs(np.asarray(want[0])), scale=10)


# -- svd --------------------------------------------------------------------------------------


@pytest.mark.parametrize("full_matrices", [True, False])
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_svd_values(dtype: Any, shape: tuple[int, ...], full_matrices: bool) -> None:
    x = _normal(shape, dtype)
    wu, ws, wvh = jlax.linalg.svd(jnp.asarray(x), full_matrices=full_matrices)

    def f(x: Any) -> Any:
        return L.svd(x, full_matrices=full_matrices)
    for u, s, vh in (f(x), plait.jit(f)(x)):
        _close(s, ws, dtype)
        _close(np.abs(np.asarray(u)), np.abs(np.asarray(wu)), dtype, 10)
        _close(np.abs(np.asarray(vh)), np.abs(np.asarray(wvh)), dtype, 10)
        k = min(shape[-2:])
        u, vh = np.asarray(u)[..., :k], np.asarray(vh)[..., :k, :]
        _close((u * np.asarray(s)[..., None, :].astype(dtype)) @ vh, x, dtype, 10)
    _close(L.svd(x, compute_uv=False), jlax.linalg.svd(x, compute_uv=False), dtype)
    qr_u, qr_s, _ = L.svd(x, full_matrices=full_matrices, algorithm=L.SvdAlgorithm.QR)
    _close(qr_s, ws, dtype)


@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (3, 5), (2, 4, 3)])
@pytest.mark.parametrize("dtype", [np.float32, np.complex64, np.float64])
def test_svd_jvp_and_grad(dtype: Any, shape: tuple[int, ...]) -> None:
    x, t = _normal(shape, dtype), _normal(shape, dtype)

    def sv(lib: Any) -> Callable[[Any], Any]:
        return lambda x: lib.svd(x, compute_uv=False)
    _close(plait.jvp(sv(L), (x,), (t,))[1], jax.jvp(sv(jlax.linalg), (x,), (t,))[1], dtype, 10)

    def full(lib: Any) -> Callable[[Any], Any]:
        return lambda x: lib.svd(x, full_matrices=False)
    ours, theirs = plait.jvp(full(L), (x,), (t,)), jax.jvp(full(jlax.linalg), (x,), (t,))
    _close(ours[1][1], theirs[1][1], dtype, 10)
    # U's tangent up to the columns' phases: |u^H du| is gauge-invariant off the diagonal.
    _close(np.abs(_h(ours[0][0]) @ np.asarray(ours[1][0])),
           np.abs(_h(theirs[0][0]) @ np.asarray(theirs[1][0])), dtype, 100)

    def loss(lib: Any) -> Callable[[Any], Any]:
        def f(x: Any) -> Any:
            u, s, vh = lib.svd(x, full_matrices=False)
            return s.sum() + (abs(u[..., 0, :]) ** 2 * s).sum()
        return f
    _close(plait.grad(loss(L))(x), jax.grad(loss(jlax.linalg))(x), dtype, 100)


def test_svd_vmap() -> None:
    x = _normal((4, 3, 5), np.float32)
    got = plait.vmap(lambda x: L.svd(x, compute_uv=False), in_axes=1)(x)
    _close(got, jax.vmap(lambda x: jlax.linalg.svd(x, compute_uv=False), in_axes=1)(x))


# -- reference interpreter --------------------------------------------------------------------


def test_reference_interpreter_agrees() -> None:
    x = _normal((2, 5, 3), np.float32)
    h = _hermitian((2, 3, 3), np.complex64)
    cases: list[tuple[Callable[..., Any], tuple[Any, ...]]] = [
        (L.lu, (x,)), (L.qr, (x,)), (lambda x: L.qr(x, full_matrices=False), (x,)),
        (L.geqrf, (x,)), (L.eigh, (h,)), (lambda x: L.svd(x, compute_uv=False), (x,)),
        (lambda p: L.lu_pivots_to_permutation(p, 5), (np.array([[2, 2, 3]], np.int32),))]
    for f, args in cases:
        closed = plait.make_jaxpr(f)(*args)
        refs = eval_jaxpr(closed.jaxpr, closed.consts, *args)
        outs = f(*args)
        outs = outs if isinstance(outs, tuple) else (outs,)
        for ref, out in zip(refs, outs):
            _close(np.asarray(ref), np.asarray(out), args[0].dtype, 10)
    a, taus = L.geqrf(x)
    closed = plait.make_jaxpr(L.householder_product)(a, taus)
    (ref,) = eval_jaxpr(closed.jaxpr, closed.consts, np.asarray(a), np.asarray(taus))
    _close(ref, L.householder_product(a, taus), scale=10)
    v, w = eval_jaxpr(plait.make_jaxpr(L.eigh)(h).jaxpr, [], h)
    _close(np.abs(v), np.abs(np.asarray(L.eigh(h)[0])), np.complex64, 10)


# -- printed jaxprs and lowered modules -------------------------------------------------------


def _same_jaxpr(f: Callable[..., Any], g: Callable[..., Any], *args: Any) -> None:
    ours, theirs = str(plait.make_jaxpr(f)(*args)), str(jax.make_jaxpr(g)(*args))
    assert ours == theirs


JAXPR_CASES: list[tuple[Callable[..., Any], Callable[..., Any]]] = [
    (L.lu, jlax.linalg.lu),
    (L.qr, jlax.linalg.qr),
    (lambda x: L.qr(x, full_matrices=False), lambda x: jlax.linalg.qr(x, full_matrices=False)),
    (L.geqrf, jax_linalg.geqrf),
    (L.svd, jlax.linalg.svd),
    (lambda x: L.svd(x, compute_uv=False), lambda x: jlax.linalg.svd(x, compute_uv=False)),
    (lambda x: L.svd(x, full_matrices=False, algorithm=L.SvdAlgorithm.QR),
     lambda x: jlax.linalg.svd(x, full_matrices=False, algorithm=jlax.linalg.SvdAlgorithm.QR)),
]


@pytest.mark.parametrize("dtype", [np.float32, np.complex64])
@pytest.mark.parametrize("shape", [(3, 3), (2, 4, 3), (3, 5)])
def test_jaxprs_match_jax(dtype: Any, shape: tuple[int, ...]) -> None:
    x = _normal(shape, dtype)
    for f, g in JAXPR_CASES:
        _same_jaxpr(f, g, x)
    h = _hermitian(shape[:-1] + (shape[-2],), dtype)
    _same_jaxpr(L.eigh, jlax.linalg.eigh, h)
    _same_jaxpr(lambda x: L.eigh(x, lower=False, symmetrize_input=False,
                                 sort_eigenvalues=False, subset_by_index=(0, 2)),
                lambda x: jlax.linalg.eigh(x, lower=False, symmetrize_input=False,
                                           sort_eigenvalues=False, subset_by_index=(0, 2)), h)
    a, taus = L.geqrf(x if shape[-2] >= shape[-1] else _h(x))
    _same_jaxpr(L.householder_product, jlax.linalg.householder_product, a, taus)
    p = np.zeros(shape[:-1], np.int32)
    _same_jaxpr(lambda p: L.lu_pivots_to_permutation(p, 6),
                lambda p: jlax.linalg.lu_pivots_to_permutation(p, 6), p)


_SDY = re.compile(r", sdy\.sharding_rule = #sdy\.op_sharding_rule<.*?, custom>")


def _jax_text(f: Callable[..., Any], *args: Any) -> str:
    return _SDY.sub("", jax.jit(f).lower(*args).as_text())


_PREFIX = {np.float32: "s", np.float64: "d", np.complex64: "c", np.complex128: "z"}


@pytest.mark.parametrize("shape", [(3, 3), (2, 4, 3), (3, 5)])
@pytest.mark.parametrize("dtype", DTYPES)
def test_lowered_modules_match_jax(dtype: Any, shape: tuple[int, ...]) -> None:
    x = _normal(shape, dtype)
    p = _PREFIX[dtype]
    complex_ = np.dtype(dtype).kind == "c"
    cases: list[tuple[Callable[..., Any], Callable[..., Any], tuple[Any, ...], str]] = [
        (L.qr, jlax.linalg.qr, (x,), "geqrf"),
        (lambda x: L.qr(x, full_matrices=False), lambda x: jlax.linalg.qr(x, full_matrices=False),
         (x,), "ungqr" if complex_ else "orgqr"),
        (L.geqrf, jax_linalg.geqrf, (x,), "geqrf"),
        (L.svd, jlax.linalg.svd, (x,), "gesdd"),
        (lambda x: L.svd(x, compute_uv=False), lambda x: jlax.linalg.svd(x, compute_uv=False),
         (x,), "gesdd"),
        (lambda x: L.svd(x, full_matrices=False, algorithm=L.SvdAlgorithm.QR),
         lambda x: jlax.linalg.svd(x, full_matrices=False,
                                   algorithm=jlax.linalg.SvdAlgorithm.QR), (x,), "gesvd"),
    ]
    if shape[-1] == shape[-2]:
        cases.append((L.eigh, jlax.linalg.eigh, (_hermitian(shape, dtype),),
                      "heevd" if complex_ else "syevd"))
    for f, g, args, routine in cases:
        ours = plait.jit(f).lower(*args).as_text()
        assert f"stablehlo.custom_call @lapack_{p}{routine}_ffi(" in ours
        assert ours == _jax_text(g, *args)
    # lu: the same custom call and NaN handling (the permutation loop is plait's own).
    ours, theirs = plait.jit(L.lu).lower(x).as_text(), _jax_text(jlax.linalg.lu, x)
    call = re.compile(r"stablehlo\.custom_call @lapack_\w+getrf_ffi\(.*")
    ours_call, theirs_call = call.search(ours), call.search(theirs)
    assert ours_call is not None and theirs_call is not None
    assert ours_call.group(0) == theirs_call.group(0)


# -- failures and bad arguments ---------------------------------------------------------------


def test_nans_where_the_factorization_fails() -> None:
    bad = np.full((3, 3), np.nan, np.float32)
    x = np.stack([_hermitian((3, 3), np.float32), bad])
    w = np.asarray(L.eigh(x, symmetrize_input=False)[1])
    want = np.asarray(jlax.linalg.eigh(jnp.asarray(x), symmetrize_input=False)[1])
    np.testing.assert_array_equal(np.isnan(w), np.isnan(want))


def test_bad_arguments() -> None:
    with pytest.raises(TypeError, match=r"lu: expected float32, float64, complex64 or "
                                        r"complex128 for the operand, but got i32\[3,3\]"):
        L.lu(np.eye(3, dtype=np.int32))
    with pytest.raises(TypeError, match=r"lu: expected the operand to be a matrix .* but got "
                                        r"f32\[3\]"):
        L.lu(np.ones(3, np.float32))
    with pytest.raises(TypeError, match=r"eigh: expected a square matrix .* but got "
                                        r"f32\[3,4\]"):
        L.eigh(np.ones((3, 4), np.float32), symmetrize_input=False)
    with pytest.raises(TypeError, match=r"svd: expected float32.* but got f16\[3,3\]"):
        L.svd(np.eye(3, dtype=np.float16))
    with pytest.raises(TypeError, match=r"qr: expected the operand to be a matrix"):
        L.qr(np.float32(1))
    with pytest.raises(TypeError, match=r"expected full_matrices=False with subset_by_index"):
        L.svd(np.ones((3, 3), np.float32), subset_by_index=(0, 2))
    with pytest.raises(TypeError, match=r"lu_pivots_to_permutation: expected int32 pivots"):
        L.lu_pivots_to_permutation(np.zeros(3, np.float32), 3)
    with pytest.raises(TypeError, match=r"expected a permutation_size of at least the number "
                                        r"of pivots 3, but got 2"):
        L.lu_pivots_to_permutation(np.zeros(3, np.int32), 2)
    with pytest.raises(TypeError, match=r"householder_product: expected a with at least as "
                                        r"many rows as columns"):
        L.householder_product(np.ones((2, 3), np.float32), np.ones(2, np.float32))
    with pytest.raises(TypeError, match=r"householder_product: expected at most 2 taus"):
        L.householder_product(np.ones((3, 2), np.float32), np.ones(3, np.float32))
    with pytest.raises(TypeError, match=r"expected taus of a's dtype float32, but got "
                                        r"c64\[2\]"):
        L.householder_product(np.ones((3, 2), np.float32), np.ones(2, np.complex64))

"""lax.linalg.eig, lax.linalg.tridiagonal_solve and numpy.linalg.eig/eigvals against jax
0.10.2: values for the four LAPACK dtypes (batched too) eagerly and under jit and vmap;
jvp and grad where JAX defines them; printed and parsed jaxprs; the lowered modules
(JAX's LAPACK custom calls); the reference interpreter; bad arguments."""

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

import plait
from plait.frontend.lax import linalg_eig as E
from plait.frontend.numpy import linalg_eig as NE
from plait.ir import check_jaxpr, eval_jaxpr, parse_jaxpr

DTYPES = [np.float32, np.float64, np.complex64, np.complex128]
WIDE = {np.dtype(np.float64), np.dtype(np.complex128)}
RNG = np.random.default_rng(5)

# JAX annotates its linalg functions as taking jax Arrays; the tests pass NumPy arrays.
_jax_tridiagonal_solve: Any = jlax.linalg.tridiagonal_solve


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


def _h(x: Any) -> Any:
    return np.swapaxes(np.asarray(x).conj(), -1, -2)


def _sorted(w: Any) -> np.ndarray:
    w = np.asarray(w)
    return np.take_along_axis(w, np.lexsort((w.imag.round(3), w.real.round(3)), axis=-1), -1)


_COMPLEX = {np.dtype(np.float32): np.complex64, np.dtype(np.float64): np.complex128,
            np.dtype(np.complex64): np.complex64, np.dtype(np.complex128): np.complex128}

# -- eig values ---------------------------------------------------------------------------------


@pytest.mark.parametrize("shape", [(4, 4), (2, 3, 3), (1, 1)])
@pytest.mark.parametrize("dtype", DTYPES)
def test_eig_values(dtype: Any, shape: tuple[int, ...]) -> None:
    x = _normal(shape, dtype)
    ctype = _COMPLEX[np.dtype(dtype)]
    jw, jvl, jvr = jlax.linalg.eig(jnp.asarray(x))
    for w, vl, vr in (E.eig(x), plait.jit(E.eig)(x)):
        assert np.asarray(w).dtype == ctype and np.asarray(vr).dtype == ctype
        _close(_sorted(w), _sorted(jw), dtype, 10)
        w_, vl_, vr_ = np.asarray(w), np.asarray(vl), np.asarray(vr)
        # A v = v diag(w); vl^H A = diag(w) vl^H; unit columns.
        _close(x @ vr_, vr_ * w_[..., None, :], dtype, 30)
        _close(_h(vl_) @ x, w_[..., :, None] * _h(vl_), dtype, 30)
        _close(np.linalg.norm(vr_, axis=-2), np.ones(w_.shape, np.finfo(ctype).dtype), dtype, 10)
        # The same LAPACK kernel as JAX: the same vectors (order and phases included).
        _close(vr, jvr, dtype, 30)
        _close(vl, jvl, dtype, 30)


@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("right", [True, False])
def test_eig_flags(left: bool, right: bool) -> None:
    x = _normal((2, 4, 4), np.float32)
    ours = E.eig(x, compute_left_eigenvectors=left, compute_right_eigenvectors=right)
    theirs = jlax.linalg.eig(x, compute_left_eigenvectors=left, compute_right_eigenvectors=right)
    assert len(ours) == len(theirs) == 1 + left + right
    for a, b in zip(ours, theirs):
        _close(a, b, scale=30)


def test_eig_of_a_rotation_pairs_conjugate_vectors() -> None:
    x = np.array([[0, -1, 0], [1, 0, 0], [0, 0, 2]], np.float32)
    w, vr = E.eig(x, compute_left_eigenvectors=False)
    jw, jvr = jlax.linalg.eig(x, compute_left_eigenvectors=False)
    np.testing.assert_allclose(np.asarray(w), np.asarray(jw), atol=1e-6)
    np.testing.assert_allclose(np.asarray(vr), np.asarray(jvr), atol=1e-6)
    np.testing.assert_allclose(np.asarray(vr)[:, 1], np.asarray(vr)[:, 0].conj(), atol=1e-6)


def test_eig_nans_where_it_fails() -> None:
    x = np.stack([_normal((3, 3), np.float32), np.full((3, 3), np.nan, np.float32)])
    for got, want in zip(E.eig(x), jlax.linalg.eig(x)):
        np.testing.assert_array_equal(np.isnan(np.asarray(got)), np.isnan(np.asarray(want)))
    assert np.isnan(np.asarray(E.eig(x)[0])[1]).all()


def test_eig_vmap() -> None:
    x = _normal((3, 2, 4, 4), np.float32)
    xs = np.moveaxis(x, 0, 3)
    got = plait.vmap(E.eig, in_axes=3)(xs)
    want = jax.vmap(jlax.linalg.eig, in_axes=3)(xs)
    for a, b in zip(got, want):
        _close(a, b, scale=30)
    got_values = plait.jit(plait.vmap(plait.vmap(lambda m: E.eig(m)[0])))(x)
    _close(got_values, jlax.linalg.eig(x)[0], scale=30)


def test_eig_reference_interpreter() -> None:
    x = _normal((2, 4, 4), np.float32)
    for left, right in [(True, True), (False, False), (False, True)]:
        def f(x: Any, left: bool = left, right: bool = right) -> Any:
            return E.eig(x, compute_left_eigenvectors=left, compute_right_eigenvectors=right)
        closed = plait.make_jaxpr(f)(x)
        for ref, got in zip(eval_jaxpr(closed.jaxpr, closed.consts, x), f(x)):
            _close(ref, got, scale=10)


# -- eig derivatives ----------------------------------------------------------------------------


def _eigvals(lib: Any) -> Callable[[Any], Any]:
    def f(x: Any) -> Any:
        return lib.eig(x, compute_left_eigenvectors=False, compute_right_eigenvectors=False)[0]
    return f


@pytest.mark.parametrize("shape", [(4, 4), (2, 3, 3)])
@pytest.mark.parametrize("dtype", DTYPES)
def test_eig_jvp_of_eigenvalues(dtype: Any, shape: tuple[int, ...]) -> None:
    x, t = _normal(shape, dtype), _normal(shape, dtype)
    (w, dw), (jw, jdw) = (plait.jvp(_eigvals(E), (x,), (t,)),
                          jax.jvp(_eigvals(jlax.linalg), (x,), (t,)))
    _close(w, jw, dtype, 30)
    _close(dw, jdw, dtype, 100)
    (w, dw) = plait.jit(lambda x, t: plait.jvp(_eigvals(E), (x,), (t,)))(x, t)
    _close(dw, jdw, dtype, 100)


def test_eig_grad_and_vjp_of_eigenvalues() -> None:
    x = _normal((2, 4, 4), np.float32)

    def loss(lib: Any) -> Callable[[Any], Any]:
        return lambda x: jnp.sum(jnp.real(_eigvals(lib)(x) ** 2)) if lib is jlax.linalg \
            else (_eigvals(lib)(x) ** 2).real.sum()
    _close(plait.grad(loss(E))(x), jax.grad(loss(jlax.linalg))(x), scale=100)
    ct = _normal((2, 4), np.complex64)
    (g,) = plait.vjp(_eigvals(E), x)[1](ct)
    (jg,) = jax.vjp(_eigvals(jlax.linalg), x)[1](ct)
    _close(g, jg, scale=100)


@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("dtype", [np.float32, np.complex128])
def test_eig_jvp_of_eigenvectors_when_enabled(dtype: Any, left: bool) -> None:
    x, t = _normal((2, 4, 4), dtype), _normal((2, 4, 4), dtype)

    def f(lib: Any) -> Callable[[Any], Any]:
        return lambda x: lib.eig(x, compute_left_eigenvectors=left, enable_eigvec_derivs=True)
    ours, theirs = plait.jvp(f(E), (x,), (t,)), jax.jvp(f(jlax.linalg), (x,), (t,))
    assert len(ours[1]) == len(theirs[1]) == 2 + left
    for a, b in zip(ours[1], theirs[1]):
        _close(a, b, dtype, 300)


def test_eig_jvp_of_eigenvectors_raises_unless_enabled() -> None:
    x = _normal((3, 3), np.float32)
    with pytest.raises(NotImplementedError, match="enable_eigvec_derivs"):
        plait.jvp(E.eig, (x,), (x,))
    with pytest.raises(NotImplementedError, match="enable_eigvec_derivs"):
        plait.grad(lambda x: NE.eig(x).eigenvectors.real.sum())(x)
    # A zero tangent is fine (as a function of another variable).
    out = plait.jvp(lambda y: [v * y for v in E.eig(x)], (np.float32(1),), (np.float32(1),))
    assert len(out[1]) == 3


# -- numpy ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [np.float32, np.complex64, np.int32])
def test_numpy_eig_and_eigvals(dtype: Any) -> None:
    x = (_normal((2, 4, 4), np.float32) * 3).astype(dtype)
    res = NE.eig(x)
    want = jnp.linalg.eig(x)
    assert isinstance(res, NE.EigResult) and res._fields == ("eigenvalues", "eigenvectors")
    _close(res.eigenvalues, want.eigenvalues, scale=100)
    _close(res.eigenvectors, want.eigenvectors, scale=100)
    _close(NE.eigvals(x), jnp.linalg.eigvals(x), scale=100)
    _close(plait.jit(NE.eigvals)(x), jnp.linalg.eigvals(x), scale=100)
    assert str(plait.make_jaxpr(NE.eig)(x)) == str(jax.make_jaxpr(jnp.linalg.eig)(x))


def test_numpy_eig_bad_arguments() -> None:
    with pytest.raises(TypeError):
        NE.eig([[1.0, 2.0], [3.0, 4.0]])
    with pytest.raises(TypeError, match="square"):
        NE.eigvals(np.ones((2, 3), np.float32))


# -- printed jaxprs and lowered modules -----------------------------------------------------------

_EIG_FLAGS = [dict(), dict(compute_left_eigenvectors=False),
              dict(compute_left_eigenvectors=False, compute_right_eigenvectors=False),
              dict(compute_right_eigenvectors=False, enable_eigvec_derivs=True)]


@pytest.mark.parametrize("dtype", [np.float32, np.complex64])
@pytest.mark.parametrize("shape", [(3, 3), (2, 4, 4)])
def test_eig_jaxprs_match_jax_and_parse_back(dtype: Any, shape: tuple[int, ...]) -> None:
    x = _normal(shape, dtype)
    cases: list[tuple[Callable[..., Any], Callable[..., Any]]] = [
        (lambda x, kw=kw: E.eig(x, **kw), lambda x, kw=kw: jlax.linalg.eig(x, **kw))
        for kw in _EIG_FLAGS]
    lapack = jlax.linalg.EigImplementation.LAPACK
    cases.append((lambda x: E.eig(x, implementation=E.EigImplementation.LAPACK),
                  lambda x: jlax.linalg.eig(x, implementation=lapack)))
    for f, g in cases:
        ours, theirs = str(plait.make_jaxpr(f)(x)), str(jax.make_jaxpr(g)(x))
        assert ours == theirs
        parsed = parse_jaxpr(theirs)
        check_jaxpr(parsed)
        assert str(parsed) == theirs


def test_tridiagonal_solve_jaxprs_match_jax_and_parse_back() -> None:
    dl, d, du, b = _tridiagonal((2, 5), 3, np.float32)
    for kw in (dict(), dict(perturb_singular=True)):
        ours = str(plait.make_jaxpr(lambda *a, kw=kw: E.tridiagonal_solve(*a, **kw))(dl, d, du, b))
        theirs = str(jax.make_jaxpr(
            lambda *a, kw=kw: _jax_tridiagonal_solve(*a, **kw))(dl, d, du, b))
        assert ours == theirs
        parsed = parse_jaxpr(theirs)
        check_jaxpr(parsed)
        assert str(parsed) == theirs


_SDY = re.compile(r", sdy\.sharding_rule = #sdy\.op_sharding_rule<.*?, custom>")
_PREFIX = {np.float32: "s", np.float64: "d", np.complex64: "c", np.complex128: "z"}


def _jax_text(f: Callable[..., Any], *args: Any) -> str:
    return _SDY.sub("", jax.jit(f).lower(*args).as_text())


@pytest.mark.parametrize("shape", [(3, 3), (2, 4, 4)])
@pytest.mark.parametrize("dtype", DTYPES)
def test_eig_lowered_modules_match_jax(dtype: Any, shape: tuple[int, ...]) -> None:
    x = _normal(shape, dtype)
    for kw in _EIG_FLAGS:
        ours = plait.jit(lambda x, kw=kw: E.eig(x, **kw)).lower(x).as_text()
        assert f"stablehlo.custom_call @lapack_{_PREFIX[dtype]}geev_ffi(" in ours
        left, right = (kw.get(k, True) for k in ("compute_left_eigenvectors",
                                                 "compute_right_eigenvectors"))
        assert (f"mhlo.backend_config = {{compute_left = {ord('V' if left else 'N')} : ui8, "
                f"compute_right = {ord('V' if right else 'N')} : ui8}}") in ours
        assert ours == _jax_text(lambda x, kw=kw: jlax.linalg.eig(x, **kw), x)


@pytest.mark.parametrize("perturb", [False, True])
@pytest.mark.parametrize("dtype", DTYPES)
def test_tridiagonal_solve_lowered_modules_match_jax(dtype: Any, perturb: bool) -> None:
    for batch in ((), (2,)):
        args = _tridiagonal(batch + (5,), 3, dtype)
        ours = plait.jit(lambda *a: E.tridiagonal_solve(*a, perturb_singular=perturb)
                         ).lower(*args).as_text()
        target = "tridiagonal_solve_perturbed_ffi" if perturb \
            else f"lapack_{_PREFIX[dtype]}gtsv_ffi"
        assert f"stablehlo.custom_call @{target}(" in ours
        theirs = _jax_text(lambda *a: _jax_tridiagonal_solve(*a, perturb_singular=perturb),
                           *args)
        assert ours == theirs


def test_eig_other_implementations_do_not_lower_on_cpu() -> None:
    x = _normal((3, 3), np.float32)
    with pytest.raises(ValueError, match="Only the lapack implementation"):
        E.eig(x, implementation=E.EigImplementation.MAGMA)
    with pytest.warns(DeprecationWarning, match="use_magma is deprecated"):
        w = E.eig(x, use_magma=False)[0]
    _close(w, jlax.linalg.eig(x)[0], scale=10)
    # JAX's enum is accepted (matched by name).
    E.eig(x, implementation=jlax.linalg.EigImplementation.LAPACK)


def test_eig_bad_arguments() -> None:
    with pytest.raises(TypeError, match=r"eig: expected float32, float64, complex64 or "
                                        r"complex128 for the operand, but got i32\[3,3\]"):
        E.eig(np.eye(3, dtype=np.int32))
    with pytest.raises(TypeError, match=r"eig: expected float32.* but got f16\[3,3\]"):
        E.eig(np.eye(3, dtype=np.float16))
    with pytest.raises(TypeError, match=r"eig: expected a square matrix .* but got f32\[3,4\]"):
        E.eig(np.ones((3, 4), np.float32))
    with pytest.raises(TypeError, match=r"eig: expected a square matrix .* but got f32\[3\]"):
        E.eig(np.ones(3, np.float32))
    with pytest.raises(ValueError, match="expected None or an EigImplementation"):
        E.eig(np.eye(3, dtype=np.float32), implementation="fast")


# -- tridiagonal_solve ----------------------------------------------------------------------------


def _tridiagonal(diag_shape: tuple[int, ...], k: int, dtype: Any) -> list[np.ndarray]:
    dl, du = _normal(diag_shape, dtype), _normal(diag_shape, dtype)
    d = (_normal(diag_shape, dtype) + 4).astype(dtype)  # diagonally dominant
    dl[..., 0] = 0
    du[..., -1] = 0
    return [dl, d, du, _normal(diag_shape + (k,), dtype)]


def _dense(dl: np.ndarray, d: np.ndarray, du: np.ndarray) -> np.ndarray:
    m = d.shape[-1]
    a = np.zeros(d.shape + (m,), d.dtype)
    i = np.arange(m)
    a[..., i, i] = d
    a[..., i[1:], i[:-1]] = dl[..., 1:]
    a[..., i[:-1], i[1:]] = du[..., :-1]
    return a


@pytest.mark.parametrize("shape", [(5,), (2, 3, 4), (1,)])
@pytest.mark.parametrize("dtype", DTYPES)
def test_tridiagonal_solve_values(dtype: Any, shape: tuple[int, ...]) -> None:
    dl, d, du, b = _tridiagonal(shape, 3, dtype)
    want = _jax_tridiagonal_solve(dl, d, du, b)
    for got in (E.tridiagonal_solve(dl, d, du, b), plait.jit(E.tridiagonal_solve)(dl, d, du, b),
                E.tridiagonal_solve(dl, d, du, b, perturb_singular=True)):
        _close(got, want, dtype, 10)
    _close(np.asarray(_dense(dl, d, du) @ np.asarray(want)), b, dtype, 30)


def test_tridiagonal_solve_singular() -> None:
    dl, d, du = (np.zeros(4, np.float32) for _ in range(3))
    d[:] = [1, 0, 1, 1]
    b = np.ones((4, 2), np.float32)
    got, want = E.tridiagonal_solve(dl, d, du, b), _jax_tridiagonal_solve(dl, d, du, b)
    np.testing.assert_array_equal(np.isnan(np.asarray(got)), np.isnan(np.asarray(want)))
    assert np.isnan(np.asarray(got)).all()
    got = E.tridiagonal_solve(dl, d, du, b, perturb_singular=True)
    want = _jax_tridiagonal_solve(dl, d, du, b, perturb_singular=True)
    assert np.isfinite(np.asarray(got)).all()
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-6)


@pytest.mark.parametrize("dtype", [np.float32, np.complex128])
def test_tridiagonal_solve_jvp_and_grad(dtype: Any) -> None:
    args = _tridiagonal((2, 5), 3, dtype)
    tans = [_normal(a.shape, dtype) for a in args]
    ours = plait.jvp(E.tridiagonal_solve, tuple(args), tuple(tans))
    theirs = jax.jvp(_jax_tridiagonal_solve, tuple(args), tuple(tans))
    _close(ours[1], theirs[1], dtype, 30)
    # Only some tangents nonzero.
    for which in (3, 1):
        def part(x: Any, lib: Any, which: int = which) -> Any:
            a = list(args)
            a[which] = x
            return lib(*a)
        ours = plait.jvp(lambda x: part(x, E.tridiagonal_solve), (args[which],), (tans[which],))
        theirs = jax.jvp(lambda x: part(x, _jax_tridiagonal_solve), (args[which],),
                         (tans[which],))
        _close(ours[1], theirs[1], dtype, 30)

    def loss(f: Any) -> Callable[..., Any]:
        return lambda *a: (f(*a) * f(*a).conj()).real.sum()
    got = plait.grad(loss(E.tridiagonal_solve), argnums=(0, 1, 2, 3))(*args)
    want = jax.grad(loss(_jax_tridiagonal_solve), argnums=(0, 1, 2, 3))(*args)
    for g, w in zip(got, want):
        _close(g, w, dtype, 100)


def test_tridiagonal_solve_transpose_in_b() -> None:
    dl, d, du, b = _tridiagonal((4,), 2, np.float32)
    ct = _normal(b.shape, np.float32)
    (g,) = plait.vjp(lambda b: E.tridiagonal_solve(dl, d, du, b), b)[1](plait.numpy.asarray(ct))
    (jg,) = jax.vjp(lambda b: _jax_tridiagonal_solve(dl, d, du, b), b)[1](ct)
    _close(g, jg, scale=10)
    _close(g, np.linalg.solve(_dense(dl, d, du).T, ct), scale=30)
    lin = plait.linear_transpose(lambda b: E.tridiagonal_solve(dl, d, du, b), b)
    _close(lin(ct)[0], jg, scale=10)


@pytest.mark.parametrize("axes", [(None, None, None, 0), (None, None, None, 2), (0, None, None, 0),
                                  (None, 1, None, None), (1, 1, 1, 2)])
def test_tridiagonal_solve_vmap(axes: tuple[int | None, ...]) -> None:
    args = _tridiagonal((2, 5), 3, np.float32)
    batched = [a if ax is None else np.stack([a * (i + 1) for i in range(3)], ax)
               for a, ax in zip(args, axes)]
    got = plait.vmap(E.tridiagonal_solve, in_axes=axes)(*batched)
    want = jax.vmap(_jax_tridiagonal_solve, in_axes=axes)(*batched)
    _close(got, want, scale=10)
    got = plait.jit(plait.vmap(E.tridiagonal_solve, in_axes=axes))(*batched)
    _close(got, want, scale=10)


def test_tridiagonal_solve_reference_interpreter() -> None:
    args = _tridiagonal((2, 5), 3, np.float32)
    closed = plait.make_jaxpr(E.tridiagonal_solve)(*args)
    (ref,) = eval_jaxpr(closed.jaxpr, closed.consts, *args)
    _close(ref, E.tridiagonal_solve(*args), scale=10)


def test_tridiagonal_solve_bad_arguments() -> None:
    dl, d, du, b = _tridiagonal((4,), 2, np.float32)
    with pytest.raises(TypeError, match=r"expected operands of one dtype"):
        E.tridiagonal_solve(dl, d, du, b.astype(np.complex64))
    with pytest.raises(TypeError, match=r"expected float32.* for dl, but got i32\[4\]"):
        E.tridiagonal_solve(dl.astype(np.int32), d, du, b)
    with pytest.raises(TypeError, match=r"expected b of rank at least 2"):
        E.tridiagonal_solve(dl, d, du, b[:, 0])
    with pytest.raises(TypeError, match=r"expected diagonals of one shape"):
        E.tridiagonal_solve(dl[:3], d, du, b)
    with pytest.raises(TypeError, match=r"expected diagonals of shape b.shape\[:-1\]"):
        E.tridiagonal_solve(dl, d, du, np.ones((5, 2), np.float32))
    with pytest.raises(TypeError, match=r"expected diagonals of shape b.shape\[:-1\]"):
        E.tridiagonal_solve(dl[None], d[None], du[None], b)

"""lax.linalg.cholesky and lax.linalg.triangular_solve against jax 0.10.2: values for the
four LAPACK dtypes (batched too) eagerly and under jit, vmap, jvp and grad; printed
jaxprs; the lowered modules (the same LAPACK custom calls as JAX's); NaNs where the
factorization fails; bad arguments."""

from __future__ import annotations

import contextlib
import itertools
import re
from collections.abc import Callable, Iterator
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax as jlax

import plait
import plait.lax as plax
from plait.ir import eval_jaxpr
from plait.lowering import lapack

DTYPES = [np.float32, np.float64, np.complex64, np.complex128]
SHAPES = [(4, 4), (2, 3, 4, 4)]
RNG = np.random.default_rng(7)


@contextlib.contextmanager
def _x64() -> Iterator[None]:
    """64-bit dtypes in both libraries."""
    before = plait.config.read("enable_x64"), jax.config.read("jax_enable_x64")
    plait.config.update("enable_x64", True)
    jax.config.update("jax_enable_x64", True)
    try:
        yield
    finally:
        plait.config.update("enable_x64", before[0])
        jax.config.update("jax_enable_x64", before[1])


@pytest.fixture
def x64() -> Iterator[None]:
    with _x64():
        yield


WIDE = {np.dtype(np.float64), np.dtype(np.complex128)}


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
    single = np.dtype(dtype) in (np.dtype(np.float32), np.dtype(np.complex64))
    return 2e-4 if single else 1e-10


def _close(got: Any, want: Any, dtype: Any = np.float32) -> None:
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape and got.dtype == want.dtype, (got.dtype, want.dtype)
    np.testing.assert_allclose(got, want, rtol=_tol(dtype), atol=_tol(dtype))


def _normal(shape: tuple[int, ...], dtype: Any) -> np.ndarray:
    x = RNG.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * RNG.standard_normal(shape)
    return x.astype(dtype)


def _spd(shape: tuple[int, ...], dtype: Any) -> np.ndarray:
    """Well-conditioned Hermitian positive definite matrices."""
    a = _normal(shape, dtype)
    n = shape[-1]
    return (a @ np.swapaxes(a.conj(), -1, -2) / n + np.eye(n)).astype(dtype)


def _triangular(shape: tuple[int, ...], dtype: Any) -> np.ndarray:
    """Matrices whose triangles are both well-conditioned (a dominant diagonal)."""
    n = shape[-1]
    return (0.3 * _normal(shape, dtype) + 2 * np.eye(n)).astype(dtype)


def _rhs(a_shape: tuple[int, ...], dtype: Any, left_side: bool, k: int = 3) -> np.ndarray:
    m = a_shape[-1]
    return _normal(a_shape[:-2] + ((m, k) if left_side else (k, m)), dtype)


def _solve(lib: Any, **kw: Any) -> Callable[[Any, Any], Any]:
    return lambda a, b: lib.linalg.triangular_solve(a, b, **kw)


FLAGS = ("left_side", "lower", "transpose_a", "conjugate_a", "unit_diagonal")
ALL_FLAGS = [dict(zip(FLAGS, v)) for v in itertools.product([False, True], repeat=5)]


# -- values -----------------------------------------------------------------------------


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_cholesky_values(dtype: Any, shape: tuple[int, ...]) -> None:
    x = _spd(shape, dtype)
    want = jlax.linalg.cholesky(jnp.asarray(x))
    assert np.asarray(want).dtype == dtype  # (64-bit cases run with x64 on)
    _close(plax.linalg.cholesky(x), want, dtype)
    _close(plait.jit(plax.linalg.cholesky)(x), want, dtype)
    # Without symmetrization only the lower triangle is read.
    skew = x + np.triu(_normal(shape, dtype), 1)
    _close(plax.linalg.cholesky(skew, symmetrize_input=False),
           jlax.linalg.cholesky(skew, symmetrize_input=False), dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_triangular_solve_every_flag(dtype: Any) -> None:
    a = _triangular((4, 4), dtype)
    for kw in ALL_FLAGS:
        b = _rhs(a.shape, dtype, kw["left_side"])
        _close(_solve(plax, **kw)(a, b), _solve(jlax, **kw)(a, b), dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_triangular_solve_batched_and_jit(dtype: Any) -> None:
    a = _triangular((2, 3, 4, 4), dtype)
    for kw in [dict(left_side=True, lower=True), dict(transpose_a=True, conjugate_a=True),
               dict(left_side=True, conjugate_a=True, unit_diagonal=True)]:
        b = _rhs(a.shape, dtype, kw["left_side"] if "left_side" in kw else False)
        want = _solve(jlax, **kw)(a, b)
        _close(_solve(plax, **kw)(a, b), want, dtype)
        _close(plait.jit(_solve(plax, **kw))(a, b), want, dtype)


def test_triangular_solve_vector_b() -> None:
    a = _triangular((4, 4), np.float32)
    v = _normal((4,), np.float32)
    for left in (False, True):
        kw = dict(left_side=left, lower=True)
        _close(_solve(plax, **kw)(a, v), _solve(jlax, **kw)(a, v))


def test_reference_interpreter_agrees() -> None:
    x = _spd((2, 4, 4), np.float32)
    a, b = _triangular((4, 4), np.complex64), _rhs((4, 4), np.complex64, False)
    cases: list[tuple[Callable[..., Any], tuple[Any, ...]]] = [
        (plax.linalg.cholesky, (x,)),
        (_solve(plax, transpose_a=True, conjugate_a=True, unit_diagonal=True), (a, b))]
    for f, args in cases:
        closed = plait.make_jaxpr(f)(*args)
        (ref,) = eval_jaxpr(closed.jaxpr, closed.consts, *args)
        _close(ref, f(*args), args[0].dtype)


# -- failure: NaNs as JAX -----------------------------------------------------------------


@pytest.mark.parametrize("dtype", [np.float32, np.complex64])
def test_cholesky_not_positive_definite_gives_nans(dtype: Any) -> None:
    good = _spd((3, 3), dtype)
    bad = -good
    x = np.stack([good, bad])
    ours = np.asarray(plax.linalg.cholesky(x))
    theirs = np.asarray(jlax.linalg.cholesky(jnp.asarray(x)))
    # The failed factor is NaN, then its upper triangle zeroed (by the tril).
    lower = np.tril(np.ones((3, 3), bool))
    assert np.isnan(ours[1][lower]).all() and (ours[1][~lower] == 0).all()
    np.testing.assert_array_equal(ours[1], theirs[1])
    _close(ours[0], theirs[0], dtype)
    np.testing.assert_array_equal(plait.jit(plax.linalg.cholesky)(bad), theirs[1])
    (ref,) = eval_jaxpr(plait.make_jaxpr(plax.linalg.cholesky)(x).jaxpr, [], x)
    np.testing.assert_array_equal(ref[1], theirs[1])


# -- transformations ------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [np.float32, np.complex64, np.float64])
def test_cholesky_jvp(dtype: Any) -> None:
    x, t = _spd((2, 4, 4), dtype), _normal((2, 4, 4), dtype)
    ours = plait.jvp(plax.linalg.cholesky, (x,), (t,))
    theirs = jax.jvp(jlax.linalg.cholesky, (x,), (t,))
    for o, w in zip(ours, theirs):
        _close(o, w, dtype)
    f = plait.jit(lambda x, t: plait.jvp(plax.linalg.cholesky, (x,), (t,)))
    for o, w in zip(f(x, t), theirs):
        _close(o, w, dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.complex64])
def test_cholesky_grad(dtype: Any) -> None:
    x = _spd((3, 3), dtype)

    def loss(lib: Any, **kw: Any) -> Callable[[Any], Any]:
        return lambda x: (abs(lib.linalg.cholesky(x, **kw) * (1 + 0.5 * np.arange(3))) ** 2
                          ).sum()
    for kw in [{}, dict(symmetrize_input=False)]:
        _close(plait.grad(loss(plax, **kw))(x), jax.grad(loss(jlax, **kw))(x), dtype)
    _close(plait.jit(plait.grad(loss(plax)))(x), jax.grad(loss(jlax))(x), dtype)


def _solve_loss(lib: Any, kw: dict[str, bool]) -> Callable[[Any, Any], Any]:
    return lambda a, b: (abs(_solve(lib, **kw)(a, b)) ** 2).sum()


@pytest.mark.parametrize("kw", [dict(left_side=True, lower=True),
                                dict(left_side=False, lower=False, transpose_a=True),
                                dict(left_side=True, transpose_a=True, conjugate_a=True,
                                     unit_diagonal=True),
                                dict(left_side=False, lower=True, conjugate_a=True)])
@pytest.mark.parametrize("dtype", [np.float32, np.complex64])
def test_triangular_solve_jvp_and_grad(dtype: Any, kw: dict[str, bool]) -> None:
    for k in (2, 6):  # fewer and more right-hand sides than rows: both orders of products
        a, ta = _triangular((4, 4), dtype), _normal((4, 4), dtype)
        b, tb = _rhs(a.shape, dtype, kw["left_side"], k), _rhs(a.shape, dtype,
                                                               kw["left_side"], k)
        ours = plait.jvp(_solve(plax, **kw), (a, b), (ta, tb))
        theirs = jax.jvp(_solve(jlax, **kw), (a, b), (ta, tb))
        for o, w in zip(ours, theirs):
            _close(o, w, dtype)
        for o, w in zip(plait.grad(_solve_loss(plax, kw), (0, 1))(a, b),
                        jax.grad(_solve_loss(jlax, kw), (0, 1))(a, b)):
            _close(o, w, dtype)


def test_triangular_solve_grad_batched() -> None:
    a, b = _triangular((2, 4, 4), np.float32), _rhs((2, 4, 4), np.float32, True)

    def loss(lib: Any) -> Callable[[Any, Any], Any]:
        return lambda a, b: (_solve(lib, left_side=True, lower=True)(a, b) ** 3).sum()
    for o, w in zip(plait.jit(plait.grad(loss(plax), (0, 1)))(a, b),
                    jax.grad(loss(jlax), (0, 1))(a, b)):
        _close(o, w)


def test_cholesky_vmap() -> None:
    x = np.moveaxis(_spd((3, 4, 4), np.float32), 0, 1)  # mapped along axis 1
    _close(plait.vmap(plax.linalg.cholesky, in_axes=1)(x),
           jax.vmap(jlax.linalg.cholesky, in_axes=1)(jnp.asarray(x)))
    grads = plait.vmap(plait.grad(lambda x: plax.linalg.cholesky(x).sum()))(
        np.moveaxis(x, 1, 0))
    _close(grads, jax.vmap(jax.grad(lambda x: jlax.linalg.cholesky(jnp.asarray(x)).sum()))(
        np.moveaxis(x, 1, 0)))


@pytest.mark.parametrize("left_side", [False, True])
@pytest.mark.parametrize("axes", [(None, 1), (None, 2), (0, None), (0, 0), (2, 1)])
def test_triangular_solve_vmap(left_side: bool, axes: tuple[int | None, int | None]) -> None:
    kw = dict(left_side=left_side, lower=True, transpose_a=True)
    a = _triangular((4, 4), np.float32)
    b = _rhs(a.shape, np.float32, left_side)
    size = 3
    if axes[0] is not None:
        a = np.stack([_triangular((4, 4), np.float32) for _ in range(size)], axes[0])
    if axes[1] is not None:
        b = np.stack([_rhs((4, 4), np.float32, left_side) for _ in range(size)], axes[1])
    _close(plait.vmap(_solve(plax, **kw), in_axes=axes)(a, b),
           jax.vmap(_solve(jlax, **kw), in_axes=axes)(a, b))


# -- printed jaxprs and lowered modules ----------------------------------------------------


def _same_jaxpr(f: Callable[..., Any], g: Callable[..., Any], *args: Any) -> None:
    ours, theirs = str(plait.make_jaxpr(f)(*args)), str(jax.make_jaxpr(g)(*args))
    assert ours == theirs


@pytest.mark.parametrize("dtype", [np.float32, np.complex64, np.int32])
@pytest.mark.parametrize("shape", [(3, 3), (2, 3, 3)])
def test_cholesky_jaxpr(dtype: Any, shape: tuple[int, ...]) -> None:
    x = _spd(shape, np.float32).astype(dtype)
    _same_jaxpr(plax.linalg.cholesky, jlax.linalg.cholesky, x)
    if dtype != np.int32:
        _same_jaxpr(lambda x: plax.linalg.cholesky(x, symmetrize_input=False),
                    lambda x: jlax.linalg.cholesky(x, symmetrize_input=False), x)


def test_cholesky_jaxpr_x64(x64: None) -> None:
    x = _spd((3, 3), np.float64)
    _same_jaxpr(plax.linalg.cholesky, jlax.linalg.cholesky, x)


@pytest.mark.parametrize("dtype", [np.float32, np.complex64])
def test_triangular_solve_jaxpr(dtype: Any) -> None:
    a = _triangular((2, 4, 4), dtype)
    for kw in ALL_FLAGS[::3]:
        b = _rhs(a.shape, dtype, kw["left_side"])
        _same_jaxpr(_solve(plax, **kw), _solve(jlax, **kw), a, b)
        v = b[0, :, 0] if kw["left_side"] else b[0, 0]  # one vector of length m
        _same_jaxpr(_solve(plax, **kw), _solve(jlax, **kw), a[0], v)


_SDY = re.compile(r", sdy\.sharding_rule = #sdy\.op_sharding_rule<.*?, custom>")


def _jax_text(f: Callable[..., Any], *args: Any) -> str:
    # Shardy's partitioning rule is the one attribute plait leaves out (no sharding).
    return _SDY.sub("", jax.jit(f).lower(*args).as_text())


@pytest.mark.parametrize("shape", [(3, 3), (2, 4, 3, 3)])
@pytest.mark.parametrize("dtype", DTYPES)
def test_lowered_modules_match_jax(dtype: Any, shape: tuple[int, ...]) -> None:
    x = _spd(shape, dtype)
    ours = plait.jit(plax.linalg.cholesky).lower(x).as_text()
    prefix = {np.float32: "s", np.float64: "d", np.complex64: "c", np.complex128: "z"}[dtype]
    assert f"stablehlo.custom_call @lapack_{prefix}potrf_ffi(" in ours
    assert ours == _jax_text(jlax.linalg.cholesky, x)
    for kw in ALL_FLAGS[::5]:
        b = _rhs(shape, dtype, kw["left_side"])
        ours = plait.jit(_solve(plax, **kw)).lower(x, b).as_text()
        assert f"stablehlo.custom_call @lapack_{prefix}trsm_ffi(" in ours
        assert ours == _jax_text(_solve(jlax, **kw), x, b)


def test_inside_control_flow_regions() -> None:
    # The custom call is emitted into the branch's region, not the function body.
    x = _spd((3, 3), np.float32)

    def f(lib: Any) -> Callable[[Any, Any], Any]:
        return lambda p, x: lib.cond(p, lib.linalg.cholesky, lambda x: x * 2, x)
    for p in (True, False):
        _close(plait.jit(f(plax))(p, x), jax.jit(f(jlax))(p, x))


def test_lapack_targets_registered_once() -> None:
    lapack.ensure_registered()
    lapack.ensure_registered()
    assert lapack.target_name("trsm", np.dtype(np.complex128)) == "lapack_ztrsm_ffi"


# -- bad arguments -------------------------------------------------------------------------


def test_bad_cholesky_arguments() -> None:
    with pytest.raises(TypeError, match=r"cholesky: expected a square matrix .* f32\[3,4\]"):
        plax.linalg.cholesky(np.ones((3, 4), np.float32))
    with pytest.raises(TypeError, match=r"expected a square matrix .* but got f32\[3\]"):
        plax.linalg.cholesky(np.ones(3, np.float32))
    with pytest.raises(TypeError, match=r"expected float32, float64, complex64 or complex128 "
                                        r"for the operand, but got i32\[3,3\]"):
        plax.linalg.cholesky(np.eye(3, dtype=np.int32), symmetrize_input=False)
    with pytest.raises(TypeError, match=r"but got f16\[3,3\]"):
        plax.linalg.cholesky(np.eye(3, dtype=np.float16))
    # An integer matrix is symmetrized by true division (float32), as in JAX.
    x = np.array([[4, 2], [2, 3]], np.int32)
    _close(plax.linalg.cholesky(x), jlax.linalg.cholesky(jnp.asarray(x)))


def test_bad_triangular_solve_arguments() -> None:
    a, b = np.eye(3, dtype=np.float32), np.ones((3, 2), np.float32)
    with pytest.raises(TypeError, match=r"expected a to be a square matrix .* but got "
                                        r"f32\[3,2\]"):
        plax.linalg.triangular_solve(b, b)
    with pytest.raises(TypeError, match=r"expected b with 3 columns \(left_side=False\)"):
        plax.linalg.triangular_solve(a, b)
    with pytest.raises(TypeError, match=r"expected b of a's dtype float32, but got c64\[3,2\]"):
        plax.linalg.triangular_solve(a, b.astype(np.complex64), left_side=True)
    with pytest.raises(TypeError, match=r"expected float32, float64, complex64 or complex128 "
                                        r"for a, but got i32\[3,3\]"):
        plax.linalg.triangular_solve(a.astype(np.int32), b.astype(np.int32), left_side=True)
    with pytest.raises(TypeError, match=r"expected equal batch dimensions"):
        plax.linalg.triangular_solve(np.stack([a, a]), np.stack([b, b, b]), left_side=True)
    with pytest.raises(TypeError, match=r"expected b of rank 3"):
        plax.linalg.triangular_solve(np.stack([a, a]), np.ones((2, 2, 3, 2), np.float32))

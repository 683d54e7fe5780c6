"""scipy.linalg.expm and scipy.linalg.expm_frechet against jax 0.10.2 (and SciPy): values
for the four dtypes over norms that select every Padé degree and number of squarings,
batched, upper triangular, eagerly and under jit and vmap; jvp and grad; the NaNs past
max_squarings; bad arguments."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import jax
import jax.scipy.linalg as jsl
import numpy as np
import pytest
import scipy.linalg  # type: ignore[import-untyped]  # SciPy has no annotations (no scipy-stubs)

import plait

if TYPE_CHECKING:
    # plait.scipy.linalg re-exports expm and expm_frechet through `__all__ += _expm_all`,
    # which mypy does not follow: type-check against the module defining them (the same
    # functions).
    import plait.frontend.scipy.linalg_expm as psl
else:
    import plait.scipy.linalg as psl

DTYPES = [np.float32, np.float64, np.complex64, np.complex128]
WIDE = {np.dtype(np.float64), np.dtype(np.complex128)}
RNG = np.random.default_rng(29)

_jsl: Any = jsl  # (JAX annotates its functions as taking jax Arrays)


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
    return 1e-10 if np.dtype(dtype) in WIDE else 3e-5


def _close(got: Any, want: Any, dtype: Any = np.float32, scale: float = 1) -> None:
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, want.shape,
                                                                 got.dtype, want.dtype)
    # Relative to the largest entry: the exponential's entries span many magnitudes.
    size = max(1.0, float(np.max(np.abs(want)))) if want.size else 1.0
    np.testing.assert_allclose(got, want, rtol=_tol(dtype) * scale,
                               atol=_tol(dtype) * scale * size)


def _normal(shape: tuple[int, ...], dtype: Any, norm: float = 1.0) -> np.ndarray:
    """A random matrix (batch) with 1-norm ``norm`` (each matrix)."""
    x = RNG.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * RNG.standard_normal(shape)
    x = x / np.abs(x).sum(-2).max(-1)[..., None, None] * norm
    return x.astype(dtype)


# Norms below, between and above the thresholds of the Padé degrees (3, 5, 7, 9, 13) of both
# precisions, and large enough to need squarings.
NORMS = [0.01, 0.2, 0.8, 1.5, 3.0, 20.0, 300.0]


@pytest.mark.parametrize("dtype", DTYPES)
def test_values_match_jax_and_scipy(dtype: Any) -> None:
    for norm in NORMS:
        x = _normal((4, 4), dtype, norm)
        want = _jsl.expm(x)
        got = psl.expm(x)
        _close(got, want, dtype, 10)
        _close(plait.jit(psl.expm)(x), want, dtype, 10)
        scale = 1e4 if norm > 10 else 1e2  # (SciPy's own algorithm differs in rounding)
        _close(got, scipy.linalg.expm(x).astype(dtype), dtype, scale)


@pytest.mark.parametrize("dtype", [np.float32, np.complex128])
def test_batched_and_vmapped(dtype: Any) -> None:
    x = np.stack([_normal((3, 3), dtype, n) for n in (0.1, 2.0, 50.0, 1.0)]).reshape(2, 2, 3, 3)
    want = _jsl.expm(x)
    _close(psl.expm(x), want, dtype, 10)
    _close(plait.jit(psl.expm)(x), want, dtype, 10)
    xs = np.moveaxis(x, 1, 3)
    got = plait.vmap(psl.expm, in_axes=3)(xs)
    _close(got, jax.vmap(_jsl.expm, in_axes=3)(xs), dtype, 10)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_upper_triangular(dtype: Any) -> None:
    x = np.triu(_normal((4, 4), dtype, 3.0))
    got = psl.expm(x, upper_triangular=True)
    _close(got, _jsl.expm(x, upper_triangular=True), dtype, 10)
    _close(got, psl.expm(x), dtype, 10)


def test_too_many_squarings_give_nans() -> None:
    x = np.array([[1e4, 0], [0, 1]], np.float32)
    got = np.asarray(psl.expm(x, max_squarings=2))
    assert np.isnan(got).all()
    assert np.isnan(np.asarray(_jsl.expm(x, max_squarings=2))).all()
    assert np.isfinite(np.asarray(psl.expm(np.diag([3.0, 1.0]).astype(np.float32),
                                           max_squarings=2))).all()


def test_integer_input_and_identities() -> None:
    a = np.array([[1, 2], [3, 4]], np.int32)
    got = psl.expm(a)
    assert np.asarray(got).dtype == np.float32
    _close(got, _jsl.expm(a), scale=10)
    _close(psl.expm(np.zeros((3, 3), np.float32)), np.eye(3, dtype=np.float32))
    d = np.diag([0.5, -1.0, 2.0]).astype(np.float32)
    _close(psl.expm(d), np.diag(np.exp(np.diag(d))).astype(np.float32), scale=10)


# -- derivatives ----------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
def test_jvp_and_grad_match_jax(dtype: Any) -> None:
    for norm in (0.1, 1.5, 20.0):
        x, t = _normal((3, 3), dtype, norm), _normal((3, 3), dtype)
        (y, dy), (jy, jdy) = plait.jvp(psl.expm, (x,), (t,)), jax.jvp(_jsl.expm, (x,), (t,))
        _close(y, jy, dtype, 10)
        _close(dy, jdy, dtype, 100)
    w = _normal((3, 3), dtype)

    def loss(lib: Any) -> Any:
        return lambda a: (lib.expm(a) * w).real.sum()

    x = _normal((3, 3), dtype, 2.0)
    _close(plait.grad(loss(psl))(x), jax.grad(loss(_jsl))(x), dtype, 100)
    _close(plait.jit(plait.grad(loss(psl)))(x), jax.grad(loss(_jsl))(x), dtype, 100)


def test_grad_matches_finite_differences() -> None:
    with _x64():
        x = _normal((3, 3), np.float64, 2.0)
        w = _normal((3, 3), np.float64)
        g = np.asarray(plait.grad(lambda a: (psl.expm(a) * w).sum())(x))
        eps = 1e-6
        fd = np.zeros_like(x)
        for i in np.ndindex(*x.shape):
            d = np.zeros_like(x)
            d[i] = eps
            fd[i] = ((scipy.linalg.expm(x + d) * w).sum()
                     - (scipy.linalg.expm(x - d) * w).sum()) / (2 * eps)
        np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("dtype", [np.float32, np.complex128])
def test_expm_frechet(dtype: Any) -> None:
    a, e = _normal((2, 3, 3), dtype, 2.0), _normal((2, 3, 3), dtype)
    expm_a, frechet = psl.expm_frechet(a, e)
    jexpm_a, jfrechet = _jsl.expm_frechet(a, e)
    _close(expm_a, jexpm_a, dtype, 10)
    _close(frechet, jfrechet, dtype, 100)
    _close(psl.expm_frechet(a, e, compute_expm=False), jfrechet, dtype, 100)
    _close(plait.jit(lambda x, y: psl.expm_frechet(x, y, compute_expm=False))(a, e),
           jfrechet, dtype, 100)
    if np.dtype(dtype) == np.float32:
        want = scipy.linalg.expm_frechet(a[0].astype(np.float64), e[0].astype(np.float64),
                                         compute_expm=False)
        _close(np.asarray(frechet[0]).astype(np.float64), want, np.float32, 100)


# -- bad arguments --------------------------------------------------------------------------------


def test_bad_arguments() -> None:
    with pytest.raises(ValueError, match=r"Expected A to be a \(batched\) square matrix, got "
                                         r"A.shape=\(3, 4\)"):
        psl.expm(np.ones((3, 4), np.float32))
    with pytest.raises(ValueError, match="square matrix"):
        psl.expm(np.ones(3, np.float32))
    with pytest.raises(TypeError, match="A.dtype=float16 is not supported"):
        psl.expm(np.ones((2, 2), np.float16))
    with pytest.raises(ValueError, match="expected E to be a"):
        psl.expm_frechet(np.eye(2, dtype=np.float32), np.ones((2, 3), np.float32))
    with pytest.raises(ValueError, match="expected A and E to be the same shape"):
        psl.expm_frechet(np.eye(2, dtype=np.float32), np.ones((3, 3), np.float32))

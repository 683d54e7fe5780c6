"""plait.experimental.sparse.linalg against jax.experimental.sparse.linalg 0.10.2, NumPy
and SciPy: ``lobpcg_standard`` (eigenvalues, eigenvectors up to sign and iteration
counts of dense, callable and sparse operators, in float32, float64 and complex) and
``spsolve`` (values, derivatives with respect to ``b`` and ``data``, ``jit``, ``vmap``),
and the errors of both.  LOBPCG programs take seconds to compile (in both libraries),
so each case here compiles few."""

from __future__ import annotations

from typing import Any, NamedTuple

import hypothesis.extra.numpy as hnp
import jax
import jax.experimental.sparse as jsparse
import jax.experimental.sparse.linalg as jlinalg
import jax.numpy as jjnp
import numpy as np
import pytest
import scipy.sparse  # type: ignore[import-untyped]  # scipy ships no stubs
from hypothesis import given, settings
from hypothesis import strategies as st

import plait
import plait.experimental.sparse as psparse
import plait.experimental.sparse.linalg as plinalg
import plait.numpy as pjnp
from tests.frontend.jax_oracle import both_x64, raised


class Lib(NamedTuple):
    linalg: Any
    sparse: Any
    np: Any
    jit: Any
    grad: Any
    jvp: Any
    vmap: Any


JAX = Lib(jlinalg, jsparse, jjnp, jax.jit, jax.grad, jax.jvp, jax.vmap)
PLAIT = Lib(plinalg, psparse, pjnp, plait.jit, plait.grad, plait.jvp, plait.vmap)


def _spd(n: int, dtype: Any, seed: int) -> np.ndarray:
    """A symmetric (Hermitian, for complex ``dtype``) positive definite matrix with
    spread-out eigenvalues."""
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((n, n))
    if np.issubdtype(dtype, np.complexfloating):
        q = q + 1j * rng.standard_normal((n, n))
    a = q @ q.conj().T / n + np.diag(np.linspace(0, n, n))
    return np.asarray(a.astype(dtype))


def _block(n: int, k: int, dtype: Any, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, k))
    if np.issubdtype(dtype, np.complexfloating):
        x = x + 1j * rng.standard_normal((n, k))
    return np.asarray(x.astype(dtype))


def _top_eigenvalues(a: np.ndarray, k: int) -> np.ndarray:
    return np.linalg.eigvalsh(a.astype(np.complex128 if np.iscomplexobj(a) else np.float64)
                              )[::-1][:k]


def _check_eigenpairs(a: np.ndarray, result: Any, k: int, tol: float) -> None:
    """``result`` holds the top ``k`` eigenvalues (NumPy's) and orthonormal eigenvectors."""
    theta, u, _ = (np.asarray(r) for r in result)
    scale = np.abs(theta).max()
    np.testing.assert_allclose(theta, _top_eigenvalues(a, k), atol=tol * scale)
    wide = u.astype(np.complex128)
    np.testing.assert_allclose(wide.conj().T @ wide, np.eye(k), atol=tol * 10)
    np.testing.assert_allclose(a @ wide, wide * theta, atol=tol * 10 * scale)


def _check_against_jax(got: Any, want: Any, tol: float) -> None:
    """Equal eigenvalues, eigenvectors up to sign, and about as many iterations."""
    (gt, gu, gi), (wt, wu, wi) = ((np.asarray(r) for r in x) for x in (got, want))
    assert (gt.dtype, gu.dtype, gi.dtype) == (wt.dtype, wu.dtype, wi.dtype)
    assert gu.shape == wu.shape
    np.testing.assert_allclose(gt, wt, rtol=tol, atol=tol * np.abs(wt).max())
    signs = np.sign(np.sum(gu * wu, axis=0))
    np.testing.assert_allclose(gu * signs, wu, atol=tol * 30)
    # (The iteration is the same, step for step; rounding may move the last steps.)
    assert abs(int(gi) - int(wi)) <= 2, (gi, wi)


# -- lobpcg_standard ----------------------------------------------------------------------


@pytest.mark.parametrize("n, k, dtype, form", [(20, 3, np.float32, "matrix"),
                                               (50, 4, np.float64, "callable")])
def test_lobpcg_matches_jax_and_numpy(n: int, k: int, dtype: Any, form: str) -> None:
    """An SPD matrix, as an array or as a function: JAX's eigenpairs and iteration count,
    NumPy's eigenvalues."""
    a, x = _spd(n, dtype, seed=n), _block(n, k, dtype, seed=k)
    tol = 1e-4 if dtype == np.float32 else 1e-10

    def program(S: Lib) -> Any:
        mat = S.np.asarray(a)
        return S.linalg.lobpcg_standard(mat if form == "matrix" else lambda v: mat @ v, x)

    with both_x64(dtype == np.float64):
        got, want = program(PLAIT), program(JAX)
    _check_against_jax(got, want, tol)
    _check_eigenpairs(a, got, k, tol)
    assert 0 < int(got[2]) < 100
    assert got[2].aval.weak_type  # (a Python int counter, as JAX's)


def test_lobpcg_bcoo_matvec_under_jit() -> None:
    """A BCOO matrix's product as the operator, under jit: JAX's results, NumPy's
    eigenvalues."""
    a, x = _spd(30, np.float32, seed=3), _block(30, 2, np.float32, seed=4)

    def program(S: Lib) -> Any:
        return S.jit(lambda m, x: S.linalg.lobpcg_standard(lambda v: m @ v, x))(
            S.sparse.BCOO.fromdense(a), x)

    got = program(PLAIT)
    _check_against_jax(got, program(JAX), 1e-4)
    _check_eigenpairs(a, got, 2, 1e-4)


def test_lobpcg_iteration_limit_and_tolerance() -> None:
    """``m`` bounds the iterations, as in JAX, and a looser ``tol`` (an array, so the
    same program) stops sooner."""
    a, x = _spd(25, np.float32, seed=5), _block(25, 2, np.float32, seed=6)

    def run(S: Lib, tol: Any) -> Any:
        return S.linalg.lobpcg_standard(S.np.asarray(a), x, m=4, tol=S.np.asarray(tol))

    got, want = run(PLAIT, np.float32(1e-7)), run(JAX, np.float32(1e-7))
    assert int(got[2]) == int(want[2]) == 4
    _check_against_jax(got, want, 1e-4)
    assert 0 < int(run(PLAIT, np.float32(1e-2))[2]) < 4


def test_lobpcg_complex_hermitian_and_sparse_operator() -> None:
    """(Beyond JAX, whose iteration fails on complex input and which takes no sparse
    array for ``A``.)  A complex Hermitian sparse matrix: NumPy's eigenpairs, real
    eigenvalues."""
    a, x = _spd(24, np.complex64, seed=7), _block(24, 2, np.complex64, seed=8)
    jax_error = raised(lambda: jlinalg.lobpcg_standard(jjnp.asarray(a), jjnp.asarray(x)))
    assert isinstance(jax_error, TypeError)
    got = plinalg.lobpcg_standard(psparse.BCOO.fromdense(a), x)
    assert got[0].dtype == np.float32 and got[1].dtype == np.complex64
    _check_eigenpairs(a, got, 2, 1e-4)


def test_lobpcg_vmap_over_matrices() -> None:
    """A batch of matrices under vmap, as JAX batches its loop: NumPy's eigenvalues."""
    mats = np.stack([_spd(16, np.float32, seed=s) for s in (9, 10)])
    x = _block(16, 2, np.float32, seed=11)
    theta, u, i = plait.vmap(lambda m: plinalg.lobpcg_standard(m, x))(pjnp.asarray(mats))
    assert theta.shape == (2, 2) and u.shape == (2, 16, 2) and i.shape == (2,)
    for b in range(2):
        np.testing.assert_allclose(np.asarray(theta[b]), _top_eigenvalues(mats[b], 2),
                                   rtol=1e-4)


def _lobpcg_errors() -> list[tuple[str, Any]]:
    a = _spd(30, np.float32, seed=12)
    x = _block(30, 2, np.float32, seed=13)
    return [
        ("k == 0", lambda S: S.linalg.lobpcg_standard(S.np.asarray(a), x[:, :0])),
        ("5 k >= n", lambda S: S.linalg.lobpcg_standard(S.np.asarray(a), np.ones((30, 6),
                                                                            np.float32))),
        ("X 1-D", lambda S: S.linalg.lobpcg_standard(S.np.asarray(a), x[:, 0])),
        ("A rows", lambda S: S.linalg.lobpcg_standard(S.np.asarray(a[:20]), x)),
        ("A columns", lambda S: S.linalg.lobpcg_standard(S.np.asarray(a[:, :20]), x)),
        ("callable shape", lambda S: S.linalg.lobpcg_standard(lambda v: v[:5], x)),
        ("callable dtype", lambda S: S.linalg.lobpcg_standard(
            lambda v: v.astype(S.np.int32), x)),
        ("X integer", lambda S: S.linalg.lobpcg_standard(S.np.asarray(a), x.astype(np.int32))),
        ("both integer", lambda S: S.linalg.lobpcg_standard(
            S.np.asarray(a).astype(S.np.int32), x.astype(np.int32))),
    ]


@pytest.mark.parametrize("case", range(len(_lobpcg_errors())),
                         ids=[name for name, _ in _lobpcg_errors()])
def test_lobpcg_errors_as_jax(case: int) -> None:
    """Bad shapes and dtypes: JAX's exception type, with an "expected ..., but got ..."
    message."""
    _, program = _lobpcg_errors()[case]
    want = raised(lambda: program(JAX))
    got = raised(lambda: program(PLAIT))
    assert type(got) is type(want), (got, want)
    assert "expected" in str(got) and "but got" in str(got), got


def test_lobpcg_rejects_non_operators() -> None:
    """``A`` neither an array nor a callable, a non-square sparse ``A``, and half
    precision: clear errors."""
    x = _block(30, 2, np.float32, seed=14)
    with pytest.raises(TypeError, match="expected A to be an array"):
        plinalg.lobpcg_standard([[1.0]], x)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        plinalg.lobpcg_standard(np.eye(30), x.tolist())
    with pytest.raises(ValueError, match=r"but got A of shape \(30, 20\)"):
        plinalg.lobpcg_standard(psparse.BCOO.fromdense(np.eye(30, 20, dtype=np.float32)), x)
    with pytest.raises(NotImplementedError, match="but got float16"):
        plinalg.lobpcg_standard(np.eye(30, dtype=np.float16), x.astype(np.float16))


# -- spsolve ------------------------------------------------------------------------------


def _system(n: int, dtype: Any, seed: int) -> tuple[np.ndarray, ...]:
    """A nonsymmetric, well-conditioned CSR system ``(data, indices, indptr, b)``."""
    rng = np.random.default_rng(seed)
    dense = scipy.sparse.random(n, n, density=0.4, random_state=seed).toarray()
    dense = dense - dense.T * 0.5 + np.eye(n) * 3
    if np.issubdtype(dtype, np.complexfloating):
        dense = dense * (1 + 0.5j)
    if np.issubdtype(dtype, np.integer):
        dense = np.round(dense * 2)
    csr = scipy.sparse.csr_matrix(dense.astype(dtype))
    b = rng.standard_normal(n) * (3 if np.issubdtype(dtype, np.integer) else 1)
    return (csr.data, csr.indices.astype(np.int32), csr.indptr.astype(np.int32),
            b.astype(dtype))


def _scipy_solution(data: np.ndarray, indices: np.ndarray, indptr: np.ndarray,
                    b: np.ndarray) -> np.ndarray:
    mat = scipy.sparse.csr_matrix((data, indices, indptr), shape=(b.size, b.size))
    return np.asarray(scipy.sparse.linalg.spsolve(mat, b))


@pytest.mark.parametrize("dtype, x64", [(np.float32, False), (np.float64, True),
                                        (np.complex128, True), (np.int32, False)])
def test_spsolve_matches_scipy_and_jax(dtype: Any, x64: bool) -> None:
    """Every dtype: JAX's result (bit for bit: both solve with SciPy) and SciPy's."""
    data, indices, indptr, b = _system(7, dtype, seed=1)
    with both_x64(x64):
        got = np.asarray(plinalg.spsolve(data, indices, indptr, b))
        want = np.asarray(jlinalg.spsolve(data, indices, indptr, b))
    assert got.dtype == want.dtype == dtype
    np.testing.assert_array_equal(got, want)
    if not np.issubdtype(dtype, np.integer):
        np.testing.assert_allclose(got, _scipy_solution(data, indices, indptr, b).astype(dtype),
                                   rtol=1e-6)


def test_spsolve_under_jit() -> None:
    """Under jit: JAX's result."""
    system = _system(6, np.float32, seed=8)

    def program(S: Lib) -> Any:
        return S.jit(S.linalg.spsolve)(*system)

    np.testing.assert_array_equal(np.asarray(program(PLAIT)), np.asarray(program(JAX)))


def test_spsolve_unsorted_duplicate_entries_beyond_jax() -> None:
    """(JAX's callback hands SciPy read-only buffers, which SciPy sorts in place: it fails
    on such matrices.)  Unsorted column indices and repeated entries (summed), under
    jit: NumPy's solution."""
    data = np.array([1.0, 4.0, 2.0, 0.5, 3.0, 1.0], np.float32)
    indices = np.array([2, 0, 0, 1, 1, 2], np.int32)
    indptr = np.array([0, 3, 5, 6], np.int32)
    b = np.array([1.0, -2.0, 0.5], np.float32)
    dense = np.array([[6.0, 0.0, 1.0], [0.0, 3.5, 0.0], [0.0, 0.0, 1.0]], np.float32)
    assert raised(lambda: jax.jit(jlinalg.spsolve)(data, indices, indptr, b))
    got = plait.jit(plinalg.spsolve)(data, indices, indptr, b)
    np.testing.assert_allclose(np.asarray(got), np.linalg.solve(dense, b), rtol=1e-6)


def test_spsolve_derivatives_match_jax() -> None:
    """grad with respect to data and b (under jit, and eagerly), and jvp: JAX's."""
    data, indices, indptr, b = _system(6, np.float64, seed=2)
    t_data = np.random.default_rng(3).standard_normal(data.shape)
    t_b = np.random.default_rng(4).standard_normal(b.shape)

    def loss(S: Lib) -> Any:
        return lambda d, v: S.np.sum(S.np.sin(S.linalg.spsolve(d, indices, indptr, v)))

    def program(S: Lib) -> list[Any]:
        g = S.grad(loss(S), argnums=(0, 1))
        primal, tangent = S.jvp(lambda d, v: S.linalg.spsolve(d, indices, indptr, v),
                                (data, b), (t_data, t_b))
        return [*S.jit(g)(data, b), primal, tangent]

    with both_x64():
        got, want = program(PLAIT), program(JAX)
        got += PLAIT.grad(loss(PLAIT), argnums=(0, 1))(data, b)  # (and eagerly)
    for g, w in zip(got, want + want[:2]):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-10, atol=1e-14)


def test_spsolve_vmap_beyond_jax() -> None:
    """(JAX's spsolve does not batch: NotImplementedError.)  plait's solves each element:
    a batch of right-hand sides and of matrices, against NumPy."""
    data, indices, indptr, b = _system(5, np.float32, seed=5)
    rhs = np.random.default_rng(6).standard_normal((3, 5)).astype(np.float32)
    assert isinstance(raised(lambda: jax.vmap(
        lambda v: jlinalg.spsolve(data, indices, indptr, v))(rhs)), NotImplementedError)
    dense = scipy.sparse.csr_matrix((data, indices, indptr), shape=(5, 5)).toarray()
    got = plait.vmap(lambda v: plinalg.spsolve(data, indices, indptr, v))(rhs)
    np.testing.assert_allclose(np.asarray(got), np.linalg.solve(dense, rhs.T).T, rtol=1e-5)
    scales = np.array([1.0, 2.0], np.float32)
    got = plait.vmap(lambda s: plinalg.spsolve(data * s, indices, indptr, b))(scales)
    for i, s in enumerate(scales):
        np.testing.assert_allclose(np.asarray(got[i]), np.linalg.solve(dense * s, b),
                                   rtol=1e-5)


def _spsolve_errors() -> list[tuple[str, Any]]:
    data, indices, indptr, b = _system(6, np.float32, seed=7)
    return [
        ("dtypes", lambda S: S.linalg.spsolve(data.astype(np.int32), indices, indptr, b)),
        ("float indices", lambda S: S.linalg.spsolve(data, indices.astype(np.float32),
                                                     indptr, b)),
        ("2-D data", lambda S: S.linalg.spsolve(data[:, None], indices, indptr, b)),
        ("short indptr", lambda S: S.linalg.spsolve(data, indices, indptr[:-1], b)),
        ("short data", lambda S: S.linalg.spsolve(data[:-1], indices, indptr, b)),
        ("reorder", lambda S: S.linalg.spsolve(data, indices, indptr, b, reorder=5)),
        ("tol", lambda S: S.linalg.spsolve(data, indices, indptr, b, tol="a")),
    ]


@pytest.mark.parametrize("case", range(len(_spsolve_errors())),
                         ids=[name for name, _ in _spsolve_errors()])
def test_spsolve_errors_as_jax(case: int) -> None:
    """Bad buffers and options: JAX's exception type, with an "expected ..., but got ..."
    message."""
    _, program = _spsolve_errors()[case]
    want = raised(lambda: program(JAX))
    got = raised(lambda: program(PLAIT))
    assert type(got) is type(want), (got, want)
    assert "expected" in str(got) and "but got" in str(got), got


@settings(max_examples=15, deadline=None)
@given(hnp.arrays(np.float64, (5, 5), elements=st.floats(-1, 1, width=32)),
       hnp.arrays(np.float64, (5,), elements=st.floats(-10, 10, width=32)))
def test_spsolve_solves_diagonally_dominant_systems(entries: np.ndarray,
                                                    b: np.ndarray) -> None:
    """Any diagonally dominant system (all 25 entries stored, zeros included): NumPy's
    solution."""
    dense = (entries + np.eye(5) * 6).astype(np.float32)
    indices = np.tile(np.arange(5, dtype=np.int32), 5)
    indptr = np.arange(0, 30, 5, dtype=np.int32)
    got = plinalg.spsolve(dense.ravel(), indices, indptr, b.astype(np.float32))
    np.testing.assert_allclose(np.asarray(got), np.linalg.solve(dense, b.astype(np.float32)),
                               rtol=1e-4, atol=1e-5)

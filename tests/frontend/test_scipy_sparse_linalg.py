"""plait.scipy.sparse.linalg (cg, gmres in both solve methods, bicgstab) against
jax.scipy.sparse.linalg 0.10.2 on the same systems: solutions and ``info``, matrices and
functions as operators, preconditioners, pytree right-hand sides, complex systems,
truncated iterations, jit and vmap, derivatives (grad and jvp through the implicit
solves), x64, and the exceptions for bad input.

Every call compiles a few nested loops in both libraries, so the default run keeps to a
representative set; the remaining combinations are marked slow.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import jax.scipy.sparse as jsparse
import jax.scipy.sparse.linalg as jsl
import numpy as np
import pytest

import plait.scipy as pscipy
import plait.scipy.sparse.linalg as psl
from tests.frontend.jax_oracle import JAX, PLAIT, assert_close, both_x64, raised

N = 6
SOLVERS = ["cg", "bicgstab", "gmres", "gmres_incremental"]


def solver(lib: Any, name: str, **kw: Any) -> Any:
    """The solver ``name`` of ``lib`` (``psl`` or ``jsl``), with keyword defaults."""
    if name == "gmres_incremental":
        return lambda *a, **k: lib.gmres(*a, solve_method="incremental", **kw, **k)
    fn = getattr(lib, name)
    return lambda *a, **k: fn(*a, **kw, **k)


def system(seed: int, name: str, dtype: Any = np.float32, n: int = N) -> tuple[np.ndarray,
                                                                             np.ndarray]:
    """A well-conditioned ``(A, b)``: symmetric positive definite for cg."""
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((n, n))
    b = rng.standard_normal(n)
    if np.dtype(dtype).kind == "c":
        a = a + 1j * rng.standard_normal((n, n))
        b = b + 1j * rng.standard_normal(n)
    if name == "cg":
        a = a @ a.conj().T + n * np.eye(n)
    else:
        a = a + 2 * n * np.eye(n)
    return a.astype(dtype), b.astype(dtype)


def both(name: str, call: Any) -> tuple[Any, Any]:
    """``call(solve, lib)`` for plait's and JAX's solver ``name``."""
    return call(solver(psl, name), PLAIT), call(solver(jsl, name), JAX)


def same_solution(got: Any, want: Any, rtol: float = 2e-5, atol: float = 2e-5) -> None:
    """Equal ``(x, info)``: ``info`` exactly (None for cg and bicgstab)."""
    (gx, gi), (wx, wi) = got, want
    assert_close(gx, wx, rtol=rtol, atol=atol)
    if wi is None:
        assert gi is None
    else:
        assert np.asarray(gi).dtype == np.asarray(wi).dtype
        assert int(gi) == int(wi)


@pytest.fixture
def x64() -> Iterator[None]:
    with both_x64():
        yield


def cases(params: list[tuple[str, ...]], keep: set[tuple[str, ...]]) -> list[Any]:
    """``params`` as pytest cases, all but those in ``keep`` marked slow."""
    return [pytest.param(*p, marks=() if p in keep else pytest.mark.slow) for p in params]


@pytest.mark.parametrize("operator,name", cases(
    [(o, n) for o in ["matrix", "function"] for n in SOLVERS],
    {("matrix", "cg"), ("function", "bicgstab"), ("function", "gmres"),
     ("matrix", "gmres_incremental")}))
def test_solution_matches_jax(name: str, operator: str) -> None:
    a, b = system(0, name)

    def call(solve: Any, lib: Any) -> Any:
        op = a if operator == "matrix" else (lambda v: lib.np.dot(a, v))
        return solve(op, b)

    got, want = both(name, call)
    same_solution(got, want)
    # and it solves the system (a check of its own, not through JAX)
    np.testing.assert_allclose(a @ np.asarray(got[0]), b, rtol=1e-3, atol=1e-3)


PRECONDITIONED = cases(
    [(n, p) for n in SOLVERS for p in ["jacobi_matrix", "jacobi_function"]],
    {("cg", "jacobi_matrix"), ("bicgstab", "jacobi_function")})


@pytest.mark.parametrize("name,precond", PRECONDITIONED)
def test_preconditioner_matches_jax(name: str, precond: str) -> None:
    _preconditioner(name, precond)


def _preconditioner(name: str, precond: str) -> None:
    a, b = system(1, name)
    inv_diag = (1 / np.diag(a)).astype(np.float32)

    def call(solve: Any, lib: Any) -> Any:
        m = np.diag(inv_diag) if precond == "jacobi_matrix" else (lambda v: inv_diag * v)
        return solve(lambda v: lib.np.dot(a, v), b, M=m, tol=1e-6)

    same_solution(*both(name, call))


@pytest.mark.parametrize("name,kw", [
    ("cg", {"maxiter": 2}),
    ("bicgstab", {"maxiter": 1}),
    ("gmres", {"restart": 2, "maxiter": 1}),
    pytest.param("gmres_incremental", {"restart": 3, "maxiter": 2}, marks=pytest.mark.slow),
    pytest.param("gmres", {"restart": 50}, marks=pytest.mark.slow),  # clipped to the size
    ("cg", {"atol": 1.0, "tol": 0.0}),
])
def test_truncated_iterations_match_jax(name: str, kw: dict[str, Any]) -> None:
    """A few steps only: the iterates themselves, not just the converged solution."""
    a, b = system(2, name)
    x0 = np.linspace(-1, 1, N).astype(np.float32)
    same_solution(*both(name, lambda solve, lib: solve(a, b, x0, **kw)))


def _block_operator(lib: Any, a: np.ndarray) -> Any:
    """``a`` acting on the pytree ``{"u": first 4 unknowns, "v": [last 2 as (1, 2)]}``."""
    def matvec(t: Any) -> Any:
        u, v = t["u"], t["v"][0].reshape(-1)
        return {"u": lib.np.dot(a[:4, :4], u) + lib.np.dot(a[:4, 4:], v),
                "v": [(lib.np.dot(a[4:, :4], u) + lib.np.dot(a[4:, 4:], v)).reshape(1, 2)]}
    return matvec


@pytest.mark.parametrize("name", cases([(n,) for n in SOLVERS], {("cg",), ("gmres",)}))
def test_pytree_right_hand_side_matches_jax(name: str) -> None:
    a, b = system(3, name)
    tree = {"u": b[:4], "v": [b[4:].reshape(1, 2)]}
    x0 = {"u": np.ones(4, np.float32), "v": [np.zeros((1, 2), np.float32)]}
    got, want = both(name, lambda solve, lib: solve(_block_operator(lib, a), tree, x0=x0))
    same_solution(got, want)
    flat = np.concatenate([np.asarray(got[0]["u"]), np.asarray(got[0]["v"][0]).ravel()])
    np.testing.assert_allclose(a @ flat, b, rtol=1e-3, atol=1e-3)


@pytest.mark.parametrize("name", cases([(n,) for n in SOLVERS], {("bicgstab",)}))
def test_complex_systems_match_jax(name: str) -> None:
    a, b = system(4, name, np.complex64)
    same_solution(*both(name, lambda solve, lib: solve(a, b)), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("name", cases([(n,) for n in SOLVERS], {("gmres",)}))
def test_jit_and_vmap_match_jax(name: str) -> None:
    """Batched operators and right-hand sides: the loops run until every member
    converged."""
    a, _ = system(5, name)
    rng = np.random.default_rng(5)
    bs = rng.standard_normal((3, N)).astype(np.float32)
    mats = np.stack([a, a + np.eye(N, dtype=np.float32), 2 * a])

    def call(solve: Any, lib: Any) -> Any:
        return lib.jit(lib.vmap(lambda m, b: solve(m, b)[0]))(mats, bs)

    got, want = both(name, call)
    assert_close(got, want, rtol=1e-4, atol=1e-5)


def _loss(name: str) -> Any:
    def make(solve: Any, lib: Any) -> Any:
        def loss(m: Any, b: Any) -> Any:
            x = solve(lambda v: lib.np.dot(m, v), b)[0]
            return lib.np.sum(x ** 3) + lib.np.dot(x, b)
        return loss
    return make


@pytest.mark.parametrize("name", cases([(n,) for n in SOLVERS],
                                       {("cg",), ("bicgstab",), ("gmres",)}))
def test_grad_matches_jax(name: str) -> None:
    """Reverse mode through custom_linear_solve: one transposed solve (cg: symmetric)."""
    a, b = system(6, name)
    got, want = both(name, lambda solve, lib: lib.grad(_loss(name)(solve, lib),
                                                         argnums=(0, 1))(a, b))
    assert_close(got, want, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("name", cases([(n,) for n in SOLVERS], {("cg",)}))
def test_jvp_matches_jax(name: str) -> None:
    a, b = system(7, name)
    da = np.random.default_rng(7).standard_normal((N, N)).astype(np.float32)
    db = np.ones(N, np.float32)

    def call(solve: Any, lib: Any) -> Any:
        return lib.jvp(lambda m, v: solve(lambda w: lib.np.dot(m, w), v)[0], (a, b), (da, db))

    got, want = both(name, call)
    assert_close(got, want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("name", cases([(n,) for n in SOLVERS], {("cg",)}))
def test_grad_through_a_pytree_solve_matches_jax(name: str) -> None:
    a, b = system(8, name)
    tree = {"u": b[:4], "v": [b[4:].reshape(1, 2)]}

    def call(solve: Any, lib: Any) -> Any:
        def loss(t: Any) -> Any:
            x = solve(_block_operator(lib, a), t)[0]
            return lib.np.sum(x["u"] ** 2) + lib.np.sum(lib.np.sin(x["v"][0]))
        return lib.grad(loss)(tree)

    got, want = both(name, call)
    assert_close(got, want, rtol=1e-4, atol=1e-5)


@pytest.mark.slow
@pytest.mark.parametrize("name", SOLVERS)
def test_x64_matches_jax(name: str, x64: None) -> None:
    a, b = system(9, name, np.float64, n=12)
    same_solution(*both(name, lambda solve, lib: solve(a, b, tol=1e-12)), rtol=1e-10,
                  atol=1e-12)


def test_gmres_reports_nan() -> None:
    a, b = system(10, "gmres")
    x0 = np.zeros(N, np.float32)
    x0[2] = np.nan  # (a NaN in b or A zeroes the residual instead, in both libraries)
    got, want = psl.gmres(a, b, x0), jsl.gmres(a, b, x0)
    same_solution(got, want, rtol=0, atol=0)
    assert int(want[1]) == -1


def test_public_names_match_jax() -> None:
    assert psl.__all__ == ["cg", "gmres", "bicgstab"]
    assert pscipy.sparse.linalg is psl
    assert pscipy.sparse.__all__ == [n for n in dir(jsparse) if not n.startswith("_")]
    assert sorted(n for n in dir(jsl) if not n.startswith("_")) == sorted(psl.__all__)


f32 = np.float32
BAD: list[tuple[str, Any]] = [
    ("non-square matrix", lambda m: m.cg(np.ones((2, 3), f32), np.ones(2, f32))),
    ("vector operator", lambda m: m.bicgstab(np.ones(3, f32), np.ones(3, f32))),
    ("non-square preconditioner",
     lambda m: m.bicgstab(np.eye(2, dtype=f32), np.ones(2, f32), M=np.ones((2, 3), f32))),
    ("string operator", lambda m: m.cg("A", np.ones(2, f32))),
    ("number operator", lambda m: m.gmres(3, np.ones(2, f32))),
    ("x0 structure", lambda m: m.cg(lambda x: x, {"a": np.ones(2, f32)},
                                    x0=[np.ones(2, f32)])),
    ("x0 shape", lambda m: m.bicgstab(lambda x: x, np.ones(2, f32), x0=np.ones(3, f32))),
    ("gmres x0 structure", lambda m: m.gmres(lambda x: x, (np.ones(2, f32),),
                                             x0=[np.ones(2, f32)])),
    ("solve_method", lambda m: m.gmres(np.eye(2, dtype=f32), np.ones(2, f32),
                                       solve_method="qr")),
    ("operator output structure", lambda m: m.cg(lambda x: [x], np.ones(2, f32))),
]


@pytest.mark.parametrize("call", [c for _, c in BAD], ids=[n for n, _ in BAD])
def test_bad_input_raises_like_jax(call: Any) -> None:
    got, want = raised(lambda: call(psl)), raised(lambda: call(jsl))
    assert type(got) is type(want), (got, want)
    assert str(got)

"""lax.custom_linear_solve and lax.custom_root against jax.lax 0.10.2: values, jit,
gradients (both modes, every operand), vmap, pytrees, auxiliary outputs, printed
jaxprs, and the errors for bad solvers."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax as jlax

import plait
import plait.lax as plax
import plait.numpy as pnp
from plait.errors import MissingTransposeError
from plait.ir import check_jaxpr, parse_jaxpr

jax.config.update("jax_platforms", "cpu")

RNG = np.random.default_rng(5)


def _check(ours: Any, theirs: Any, tol: float = 1e-5) -> None:
    o_leaves, t_leaves = jax.tree_util.tree_leaves(ours), jax.tree_util.tree_leaves(theirs)
    assert len(o_leaves) == len(t_leaves)
    for o, t in zip(o_leaves, t_leaves):
        o, t = np.asarray(o), np.asarray(t)
        assert o.shape == t.shape and o.dtype == t.dtype
        np.testing.assert_allclose(o, t, rtol=tol, atol=tol)


def _dominant(n: int, *batch: int) -> np.ndarray:
    """A random non-symmetric, diagonally dominant matrix (Jacobi converges)."""
    a = RNG.uniform(-1, 1, (*batch, n, n)).astype(np.float32)
    return a + np.eye(n, dtype=np.float32) * (n + 1)


def _jacobi(L: Any, N: Any, diag: Any, iters: int = 60) -> Callable[[Any, Any], Any]:
    """A solver written as users write them: fixed-point iterations that call matvec."""
    def solve(matvec: Callable[[Any], Any], b: Any) -> Any:
        return L.fori_loop(0, iters, lambda i, x: x + (b - matvec(x)) / diag, N.zeros_like(b))
    return solve


def _program(L: Any, N: Any, *, symmetric: bool = False, transpose: bool = True
             ) -> Callable[[Any, Any], Any]:
    def f(A: Any, b: Any) -> Any:
        d = N.diagonal(A)
        solve = _jacobi(L, N, d)
        ts = _jacobi(L, N, d) if transpose and not symmetric else None
        return L.custom_linear_solve(lambda x: A @ x, b, solve, ts, symmetric=symmetric)
    return f


def _both(**kw: Any) -> tuple[Callable[..., Any], Callable[..., Any]]:
    return _program(plax, pnp, **kw), _program(jlax, jnp, **kw)


def test_values_jit_and_gradients_match_jax() -> None:
    A, b = _dominant(4), RNG.normal(size=4).astype(np.float32)
    w = RNG.normal(size=4).astype(np.float32)
    ours, theirs = _both()
    _check(ours(A, b), theirs(A, b))
    _check(plait.jit(ours)(A, b), theirs(A, b))
    np.testing.assert_allclose(np.asarray(ours(A, b)), np.linalg.solve(A, b), rtol=1e-5)

    def loss(f: Any, N: Any) -> Callable[[Any, Any], Any]:
        return lambda A, b: N.sum(f(A, b) * w)

    _check(plait.grad(loss(ours, pnp), argnums=(0, 1))(A, b),
           jax.grad(loss(theirs, jnp), argnums=(0, 1))(A, b))
    _check(plait.jit(plait.grad(loss(ours, pnp), argnums=(0, 1)))(A, b),
           jax.grad(loss(theirs, jnp), argnums=(0, 1))(A, b))
    tA, tb = RNG.normal(size=(4, 4)).astype(np.float32), RNG.normal(size=4).astype(np.float32)
    _check(plait.jvp(ours, (A, b), (tA, tb)), jax.jvp(theirs, (A, b), (tA, tb)))
    # The implicit derivative is the true one: d(A⁻¹b) = -A⁻¹ dA A⁻¹ b + A⁻¹ db.
    x = np.linalg.solve(A.astype(np.float64), b)
    exact = np.linalg.solve(A.astype(np.float64), tb - tA @ x)
    np.testing.assert_allclose(np.asarray(plait.jvp(ours, (A, b), (tA, tb))[1]), exact,
                               rtol=1e-4, atol=1e-5)


def test_symmetric_operator() -> None:
    M = _dominant(3)
    A = (M + M.T) / 2
    b = RNG.normal(size=3).astype(np.float32)
    ours, theirs = _both(symmetric=True)
    _check(ours(A, b), theirs(A, b))
    _check(plait.grad(lambda A, b: pnp.sum(ours(A, b) ** 2), argnums=(0, 1))(A, b),
           jax.grad(lambda A, b: jnp.sum(theirs(A, b) ** 2), argnums=(0, 1))(A, b))


@pytest.mark.parametrize("axes", [(None, 0), (0, None), (0, 0)])
def test_vmap_matches_jax(axes: tuple[int | None, int | None]) -> None:
    A = _dominant(3, 2) if axes[0] == 0 else _dominant(3)
    b = RNG.normal(size=(2, 3) if axes[1] == 0 else 3).astype(np.float32)
    ours, theirs = _both()
    _check(plait.vmap(ours, axes)(A, b), jax.vmap(theirs, axes)(A, b))
    g_ours = plait.vmap(plait.grad(lambda A, b: pnp.sum(ours(A, b)), argnums=(0, 1)), axes)
    g_theirs = jax.vmap(jax.grad(lambda A, b: jnp.sum(theirs(A, b)), argnums=(0, 1)), axes)
    _check(g_ours(A, b), g_theirs(A, b))


def _tree_program(L: Any, N: Any, tree_map: Any) -> Callable[[Any, Any], Any]:
    def f(As: Any, b: Any) -> Any:
        def matvec(x: Any) -> Any:
            return {"u": As["u"] @ x["u"], "v": As["v"] @ x["v"]}
        diag = {k: N.diagonal(a) for k, a in As.items()}

        def solve(mv: Any, rhs: Any) -> Any:
            def step(i: Any, x: Any) -> Any:
                r = mv(x)
                return tree_map(lambda x, b, r, d: x + (b - r) / d, x, rhs, r, diag)
            sol = L.fori_loop(0, 60, step, tree_map(N.zeros_like, rhs))
            return sol, {"rhs_max": N.max(N.abs(rhs["u"]))}
        return L.custom_linear_solve(matvec, b, solve, solve, has_aux=True)
    return f


def test_pytree_b_and_aux_output() -> None:
    As = {"u": _dominant(2), "v": _dominant(3)}
    b = {"u": RNG.normal(size=2).astype(np.float32), "v": RNG.normal(size=3).astype(np.float32)}
    ours = _tree_program(plax, pnp, plait.tree_util.tree_map)
    theirs = _tree_program(jlax, jnp, jax.tree_util.tree_map)
    _check(ours(As, b), theirs(As, b))

    def loss(f: Any, N: Any) -> Callable[[Any, Any], Any]:
        return lambda As, b: N.sum(f(As, b)[0]["v"]) + N.sum(f(As, b)[0]["u"] ** 2)

    _check(plait.grad(loss(ours, pnp), argnums=(0, 1))(As, b),
           jax.grad(loss(theirs, jnp), argnums=(0, 1))(As, b))


def test_reverse_mode_without_transpose_solve_is_refused() -> None:
    A, b = _dominant(3), np.ones(3, np.float32)
    ours, theirs = _both(transpose=False)
    with pytest.raises(TypeError, match="transpose_solve required"):
        jax.grad(lambda b: jnp.sum(theirs(A, b)))(b)
    with pytest.raises(MissingTransposeError, match="transpose_solve required for backwards"):
        plait.grad(lambda b: pnp.sum(ours(A, b)))(b)
    # Forward mode needs no transpose.
    _check(plait.jvp(ours, (A, b), (A, b)), jax.jvp(theirs, (A, b), (A, b)))


def test_printed_jaxpr_matches_jax_and_parses_back() -> None:
    def prog(L: Any) -> Callable[[Any, Any], Any]:
        def f(a: Any, b: Any) -> Any:
            return L.custom_linear_solve(lambda x: a * x, b, lambda mv, b: b / a,
                                         lambda vm, b: b / a)
        return f
    a, b = np.array([2.0, 4.0], np.float32), np.ones(2, np.float32)
    ours = plait.make_jaxpr(prog(plax))(a, b)
    assert str(ours) == str(jax.make_jaxpr(prog(jlax))(a, b))
    g = plait.make_jaxpr(plait.grad(lambda a, b: pnp.sum(prog(plax)(a, b)), argnums=(0, 1)))
    for j in (ours.jaxpr, g(a, b).jaxpr):
        check_jaxpr(j)
        assert parse_jaxpr(str(j)) == j


def test_bad_solvers_get_clear_errors() -> None:
    A, b = _dominant(2), np.ones(2, np.float32)
    with pytest.raises(ValueError, match=r"solve\(\) output types must match b: expected "
                                         r"\[float32\[2\]\], but got \[float32\[3\]\]"):
        plax.custom_linear_solve(lambda x: A @ x, b, lambda mv, b: pnp.ones(3))
    with pytest.raises(TypeError, match=r"matvec\(\) output pytree structure must match b"):
        plax.custom_linear_solve(lambda x: (A @ x, A @ x), b, lambda mv, b: b)
    with pytest.raises(ValueError, match="but a pair .solution, auxiliary output. was expected"):
        plax.custom_linear_solve(lambda x: A @ x, b, lambda mv, b: b, has_aux=True)
    with pytest.raises(TypeError, match=r"b\['w'\]"):
        plax.custom_linear_solve(lambda x: x, {"w": "text"}, lambda mv, b: b)


# -- custom_root ---------------------------------------------------------------------------

def _newton_sqrt(L: Any, N: Any) -> Callable[[Any], Any]:
    def root(a: Any) -> Any:
        def f(x: Any) -> Any:
            return x * x - a

        def solve(f: Callable[[Any], Any], x0: Any) -> Any:
            # Newton's method with a derivative by finite differences: not differentiable
            # usefully, which is the point of custom_root.
            def step(i: Any, x: Any) -> Any:
                return x - f(x) / (2 * x)
            return L.fori_loop(0, 30, step, x0)

        return L.custom_root(f, N.ones_like(a), solve, lambda g, y: y / g(N.ones_like(a)))
    return root


def test_custom_root_values_and_derivatives_match_jax() -> None:
    ours, theirs = _newton_sqrt(plax, pnp), _newton_sqrt(jlax, jnp)
    a = np.float32(2.0)
    _check(ours(a), theirs(a))
    _check(plait.grad(ours)(a), jax.grad(theirs)(a))
    np.testing.assert_allclose(float(plait.grad(ours)(a)), 0.5 / np.sqrt(2.0), rtol=1e-6)
    _check(plait.jit(plait.grad(ours))(a), jax.grad(theirs)(a))
    _check(plait.jvp(ours, (a,), (np.float32(1.0),)), jax.jvp(theirs, (a,), (np.float32(1.0),)))
    xs = np.array([1.0, 4.0, 9.0], np.float32)
    _check(plait.vmap(plait.grad(ours))(xs), jax.vmap(jax.grad(theirs))(xs))


def _vector_root(L: Any, N: Any) -> Callable[[Any, Any], Any]:
    def root(M: Any, c: Any) -> Any:
        # f(x) = M x + x³ - c, a pytree of two blocks; solve by fixed point, the tangent
        # by a dense solve of the Jacobian built from the linearization.
        def f(x: Any) -> Any:
            return {"p": M @ x["p"] + x["p"] ** 3 - c, "q": x["q"] - 2.0 * c}

        def solve(f: Callable[[Any], Any], x0: Any) -> Any:
            def step(i: Any, x: Any) -> Any:
                r = f(x)
                return {"p": x["p"] - 0.1 * r["p"], "q": x["q"] - r["q"]}
            x = L.fori_loop(0, 300, step, x0)
            return x, {"residual": N.sum(f(x)["p"] ** 2)}

        def tangent_solve(g: Callable[[Any], Any], y: Any) -> Any:
            def step(i: Any, x: Any) -> Any:
                r = g(x)
                return {"p": x["p"] - 0.1 * (r["p"] - y["p"]), "q": x["q"] - (r["q"] - y["q"])}
            return L.fori_loop(0, 300, step, {"p": N.zeros_like(y["p"]), "q": y["q"]})

        guess = {"p": N.zeros_like(c), "q": N.zeros_like(c)}
        return L.custom_root(f, guess, solve, tangent_solve, has_aux=True)
    return root


def test_custom_root_with_pytrees_and_aux() -> None:
    M = np.eye(3, dtype=np.float32) * 3 + 0.1 * RNG.normal(size=(3, 3)).astype(np.float32)
    c = RNG.normal(size=3).astype(np.float32)
    ours, theirs = _vector_root(plax, pnp), _vector_root(jlax, jnp)
    _check(ours(M, c), theirs(M, c), tol=1e-4)

    def loss(f: Any, N: Any) -> Callable[[Any, Any], Any]:
        return lambda M, c: N.sum(f(M, c)[0]["p"] ** 2) + N.sum(f(M, c)[0]["q"])

    _check(plait.grad(loss(ours, pnp), argnums=(0, 1))(M, c),
           jax.grad(loss(theirs, jnp), argnums=(0, 1))(M, c), tol=1e-4)


def test_custom_root_bad_functions() -> None:
    with pytest.raises(TypeError, match=r"f\(\) output pytree structure must match initial_guess"):
        plax.custom_root(lambda x: (x, x), 1.0, lambda f, x: x, lambda g, y: y)
    with pytest.raises(ValueError, match=r"tangent_solve\(\) output types must match x"):
        plax.custom_root(lambda x: x, pnp.ones(2), lambda f, x: x, lambda g, y: pnp.ones(3))

"""``sparsify`` through control flow against jax.experimental.sparse 0.10.2:
``fori_loop``/``while_loop``, ``cond``, ``scan`` and custom-derivative functions with
sparse operands, under ``jit`` and ``grad``; and the errors when a loop would change a
carry's sparsity."""

from __future__ import annotations

from typing import Any

import jax
import numpy as np
import pytest

import plait
import plait.experimental.sparse as sparse
import plait.lax as lax
from tests.frontend.sparse_oracle import JAX, PLAIT, Sparse, both, both_raise, check, fromdense

X = np.array([[0, 1, 0, 2, 0], [3, 0, 0, 0, 4], [0, 0, 5, 0, 0], [6, 0, 0, 7, 8]],
             np.float32) / 8
V = np.linspace(-1, 1, 5).astype(np.float32)


def power_iteration(S: Sparse, v: Any) -> Any:
    """Three steps of ``v -> tanh(M^T M v)`` with ``M`` sparse, closed over by the body."""
    M = fromdense(S, X)
    return S.sparse.sparsify(lambda M, v: S.lax.fori_loop(
        0, 3, lambda i, v: S.np.tanh(M.T @ (M @ v)), v))(M, v)


def test_fori_loop_with_a_sparse_constant_matches_jax() -> None:
    """A sparse matrix used inside a loop body, eagerly and under ``jit``."""
    both(power_iteration, V, exact=False)
    both(power_iteration, V, jit=True, exact=False)


def test_while_loop_matches_jax() -> None:
    """A ``while_loop`` with a counter and a dense carry."""
    def program(S: Sparse, v: Any) -> Any:
        return S.sparse.sparsify(lambda M, v: S.lax.while_loop(
            lambda c: c[0] < 3, lambda c: (c[0] + 1, M.T @ (M @ c[1])), (0, v)))(
            fromdense(S, X), v)
    both(program, V, jit=True, exact=False)


def test_a_sparse_carry_stays_sparse() -> None:
    """A carry that is sparse, scaled each step, comes out sparse with JAX's buffers."""
    both(lambda S: S.sparse.sparsify(lambda M: S.lax.fori_loop(0, 3, lambda i, m: m * 2., M))(
        fromdense(S, X)), jit=True)


@pytest.mark.parametrize("pred", [True, False])
def test_cond_matches_jax(pred: bool) -> None:
    """Both branches of a ``cond`` see the sparse operand; a sparse result stays sparse."""
    def program(S: Sparse, p: Any) -> Any:
        M = fromdense(S, X)
        dense = S.sparse.sparsify(lambda p, M: S.lax.cond(
            p, lambda M: M @ V, lambda M: (M * 2.) @ V, M))(p, M)
        sparse_out = S.sparse.sparsify(lambda p, M: S.lax.cond(
            p, lambda M: M * 3., lambda M: -M, M))(p, M)
        return dense, sparse_out
    both(program, pred, jit=True)


def test_scan_over_dense_values_matches_the_loop_unrolled() -> None:
    """A ``scan`` over dense ``xs`` with a sparse constant (JAX refuses any ``xs`` under
    ``sparsify``), against the same steps taken one by one."""
    M = sparse.BCOO.fromdense(X)

    def step(c: Any, x: Any) -> Any:
        return plait.numpy.sin(M.T @ (M @ c)) * x, c.sum()
    xs = np.array([0.5, 2.0, -1.0], np.float32)
    got = plait.jit(sparse.sparsify(lambda c, xs: lax.scan(step, c, xs)))(V, xs)
    want_c, want_ys = V, []
    for x in xs:
        want_c, y = step(want_c, x)
        want_ys.append(y)
    np.testing.assert_allclose(np.asarray(got[0]), np.asarray(want_c), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(got[1]), np.stack(want_ys), rtol=1e-6)


def test_scan_with_sparse_outputs_stacks_them_along_a_batch_dimension() -> None:
    """Sparse per-step outputs become one BCOO array with a new leading batch dimension,
    equal to JAX's arrays stacked."""
    M = sparse.BCOO.fromdense(X)
    c, ys = plait.jit(sparse.sparsify(lambda M: lax.scan(
        lambda c, _: (c + 1., M * c), np.float32(1), None, length=3)))(M)
    assert isinstance(ys, sparse.BCOO) and ys.n_batch == 1 and ys.shape == (3, 4, 5)
    jM = fromdense(JAX, X)
    for i in range(3):
        check(sparse.BCOO((ys.data[i], ys.indices[i]), shape=(4, 5),
                          indices_sorted=ys.indices_sorted, unique_indices=ys.unique_indices),
              jM * float(i + 1))
    assert float(c) == 4.0


def test_scan_over_a_sparse_array_with_a_batch_dimension() -> None:
    """Scanning over a sparse array whose leading dimension is a batch dimension gives
    each step one row (as a BCOO array); without a batch dimension, a clear error."""
    M = sparse.BCOO.fromdense(X, n_batch=1)
    sums = plait.jit(sparse.sparsify(lambda M: lax.scan(
        lambda c, row: (c + (row @ V), row.sum()), np.float32(0), M)))(M)
    np.testing.assert_allclose(np.asarray(sums[0]), (X @ V).sum(), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(sums[1]), X.sum(1), rtol=1e-6)
    with pytest.raises(NotImplementedError, match="leading dimension is an .unbroadcast. "
                                                  "batch dimension"):
        sparse.sparsify(lambda M: lax.scan(lambda c, r: (c, r.sum()), 0., M))(
            sparse.BCOO.fromdense(X))


def test_grad_through_a_sparsified_loop_matches_jax() -> None:
    """The gradient with respect to the stored values, through a loop."""
    def program(S: Sparse, data: Any) -> Any:
        M0 = fromdense(S, X)

        def loss(d: Any) -> Any:
            M = S.sparse.BCOO((d, M0.indices), shape=M0.shape)
            return S.sparse.sparsify(lambda M, v: S.lax.fori_loop(
                0, 3, lambda i, v: S.np.sin(M.T @ (M @ v)), v).sum())(M, V)
        return S.grad(loss)(data)
    both(program, np.asarray(fromdense(PLAIT, X).data), jit=True, exact=False, rtol=1e-5)


def test_custom_jvp_functions_run_their_body() -> None:
    """A ``custom_jvp`` function applied to a sparse array runs its body sparsely."""
    def program(S: Sparse) -> Any:
        @S.jit
        def double(x: Any) -> Any:
            return x * 2.
        f = (plait if S is PLAIT else jax).custom_jvp(lambda x: double(x))
        f.defjvp(lambda p, t: (f(p[0]), t[0] * 2.))
        return S.sparse.sparsify(f)(fromdense(S, X))
    both(program)


def test_a_loop_changing_a_carrys_sparsity_is_refused() -> None:
    """A dense carry that the body makes sparse: a TypeError (JAX's type), naming the
    carry and both kinds."""
    def program(S: Sparse) -> Any:
        return S.sparse.sparsify(lambda M, v: S.lax.fori_loop(0, 3, lambda i, v: M * v, v))(
            fromdense(S, X), np.ones((4, 5), np.float32))
    err = both_raise(program)
    assert "carry 1 goes in dense and comes out sparse" in str(err)


def test_cond_branches_of_different_sparsity_are_refused() -> None:
    """One branch sparse, the other dense: JAX's TypeError, with both kinds named."""
    def program(S: Sparse) -> Any:
        return S.sparse.sparsify(lambda p, M: S.lax.cond(
            p, lambda M: M * 3., lambda M: S.sparse.todense(M), M))(False, fromdense(S, X))
    err = both_raise(program)
    assert "branch 0 gives ['dense'] and branch 1 gives ['sparse" in str(err)

"""plait.experimental.sparse's products, transformations and ``sparsify`` against
jax.experimental.sparse 0.10.2: matrix products of every kind (sparse with dense either
way round, sparse with sparse, batched), ``bcoo_dot_general`` over dimension numbers
and layouts (also against the dense product), sampled products, elementwise products;
``jit``, ``vmap`` (over BCOO batch dimensions, data, indices, dense operands) and
``grad``/``jvp`` (by the data and by the dense operand); sparsified functions and their
errors.  Results are JAX's bit for bit."""

from __future__ import annotations

from typing import Any

import jax
import numpy as np
import pytest

import plait
import plait.experimental.sparse as sparse
import plait.numpy as pnp
from tests.frontend.sparse_oracle import (
    PLAIT,
    Sparse,
    both,
    both_raise,
    fromdense,
    sparse_array,
)

X = np.abs(sparse_array((3, 4), seed=1))
A = sparse_array((2, 3, 4), seed=2)
V = sparse_array((4,), density=1.0, seed=3)
W = sparse_array((3,), density=1.0, seed=4)
N = sparse_array((4, 2), density=1.0, seed=5)


def _fast(names: set[str], table: dict[str, Any]) -> list[Any]:
    """The names of ``table`` as parameters, those not in ``names`` marked slow."""
    return [pytest.param(n, marks=() if n in names else pytest.mark.slow) for n in sorted(table)]


# -- matrix products ----------------------------------------------------------------------

MATMUL: dict[str, Any] = {
    "sparse_vector": lambda S: fromdense(S, X) @ V,
    "sparse_matrix_batched": lambda S: fromdense(S, X, n_batch=1) @ N,
    "sparse_dense_dims": lambda S: S.np.asarray(W) @ fromdense(S, X, n_dense=1),
    "vector_sparse": lambda S: S.np.asarray(W) @ fromdense(S, X),
    "matrix_sparse": lambda S: S.np.ones((2, 3)) @ fromdense(S, X, n_batch=1),
    "transpose_vector": lambda S: fromdense(S, X).T @ W,
    "sparse_sparse": lambda S: fromdense(S, X) @ fromdense(S, X).T,
    "sparse_sparse_batched": lambda S: fromdense(S, X, n_batch=1) @ fromdense(S, X.T),
    "batched_3d": lambda S: fromdense(S, A, n_batch=1) @ S.np.ones((2, 4, 2)),
    "broadcast_batch": lambda S: fromdense(S, A[:1]) @ S.np.asarray(A.transpose(0, 2, 1)),
    "sparse_batched_3d": lambda S: fromdense(S, A, n_batch=1) @ fromdense(S, A, n_batch=1
                                                                           ).transpose((0, 2, 1)),
}


@pytest.mark.parametrize("name", _fast({"sparse_vector", "vector_sparse", "sparse_sparse",
                                        "batched_3d"}, MATMUL))
def test_matmul_matches_jax(name: str) -> None:
    both(MATMUL[name], jit=True)


@pytest.mark.slow
def test_matmul_eagerly_matches_jax() -> None:
    both(lambda S: S.sparse.BCOO.fromdense(X) @ V)


# -- dot_general --------------------------------------------------------------------------

def _dot_cases() -> list[tuple[int, int, Any]]:
    """Layouts of ``A`` with dimension numbers contracting sparse or batch dimensions,
    with and without a batch dimension; the dense operand has shape
    ``batch + contracted + (5,)``."""
    cases = []
    for nb in range(3):
        for nd in range(3 - nb):
            for lc in [(1,), (2,), (0,), (1, 2), (0, 2)]:
                for lb in [(), (0,)]:
                    if set(lc) & set(lb) or any(d >= 3 - nd for d in lc) or (lb and nb == 0):
                        continue  # (dense contractions, and batch dimensions that are not
                        # BCOO batch dimensions, are errors: see below)
                    rb = tuple(range(len(lb)))
                    rc = tuple(range(len(lb), len(lb) + len(lc)))
                    cases.append((nb, nd, ((lc, rc), (lb, rb))))
    return cases


DOT = _dot_cases()
_DOT_FAST = {DOT.index(c) for c in [(0, 0, (((1,), (0,)), ((), ()))),
                                    (1, 1, (((1,), (1,)), ((0,), (0,)))),
                                    (2, 0, (((0, 2), (0, 1)), ((), ())))]}


@pytest.mark.parametrize("n_batch, n_dense, dims", [
    pytest.param(*c, marks=() if i in _DOT_FAST else pytest.mark.slow)
    for i, c in enumerate(DOT)])
def test_dot_general_matches_jax_and_the_dense_product(n_batch: int, n_dense: int,
                                                       dims: Any) -> None:
    (lc, rc), (lb, rb) = dims
    rhs = sparse_array((*(A.shape[d] for d in lb), *(A.shape[d] for d in lc), 5),
                       density=1.0, seed=6)
    swapped = ((rc, lc), (rb, lb))

    def program(S: Sparse) -> Any:
        m = fromdense(S, A, n_batch, n_dense)
        return (S.sparse.bcoo_dot_general(m, rhs, dimension_numbers=dims),
                S.sparse.bcoo_dot_general(rhs, m, dimension_numbers=swapped))
    out, rout = both(program, jit=True)
    np.testing.assert_allclose(out, jax.lax.dot_general(A, rhs, dims), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(rout, jax.lax.dot_general(rhs, A, swapped), rtol=1e-5,
                               atol=1e-5)


SPDOT: dict[str, tuple[np.ndarray, int, np.ndarray, int, Any]] = {
    "matrix": (X, 0, X.T, 0, (((1,), (0,)), ((), ()))),
    "matrix_batched_lhs": (X, 1, X.T, 0, (((1,), (0,)), ((), ()))),
    "contract_two": (A, 0, A, 0, (((1, 2), (1, 2)), ((), ()))),
    "batched": (A, 1, A, 1, (((2,), (2,)), ((0,), (0,)))),
    "batched_other_axis": (A, 1, A, 1, (((1,), (1,)), ((0,), (0,)))),
}


@pytest.mark.parametrize("name", _fast({"batched"}, SPDOT))
def test_sparse_dot_general_matches_jax(name: str) -> None:
    lhs, lhs_batch, rhs, rhs_batch, dims = SPDOT[name]

    def program(S: Sparse) -> Any:
        m = S.sparse.bcoo_dot_general(fromdense(S, lhs, lhs_batch), fromdense(S, rhs, rhs_batch),
                                      dimension_numbers=dims)
        return m, m.todense()
    _, dense = both(program, jit=True)
    np.testing.assert_allclose(dense, jax.lax.dot_general(lhs, rhs, dims), rtol=1e-5,
                               atol=1e-5)


SAMPLED: dict[str, tuple[Any, Any, Any, int]] = {
    "outer": (W, V, (((), ()), ((), ())), 0),
    "outer_batched": (W, V, (((), ()), ((), ())), 1),
    "matmul": (X, N, (((1,), (0,)), ((), ())), 0),
    "matmul_transposed": (X.T, N.T, (((0,), (1,)), ((), ())), 1),
    "matmul_batch_2": (X, N, (((1,), (0,)), ((), ())), 2),
    "batched": (A, A, (((2,), (2,)), ((0,), (0,))), 1),
}


@pytest.mark.parametrize("name", _fast({"outer", "matmul"}, SAMPLED))
def test_dot_general_sampled_matches_jax(name: str) -> None:
    a, b, dims, n_batch = SAMPLED[name]
    product = np.asarray(jax.lax.dot_general(a, b, dims))
    mask = sparse_array(product.shape, seed=7)
    both(lambda S: S.sparse.bcoo_dot_general_sampled(
        a, b, fromdense(S, mask, n_batch).indices, dimension_numbers=dims), jit=True)


def test_elementwise_products_match_jax() -> None:
    def program(S: Sparse) -> Any:
        m, b = fromdense(S, X), fromdense(S, A, n_batch=1)
        return (m * 2.0, 3 * m, m * X, m * V, m * m, m * fromdense(S, X).T.T, -m, abs(m),
                m / 4.0, S.sparse.bcoo_multiply_dense(b, A),
                S.sparse.bcoo_multiply_sparse(b, fromdense(S, A)))
    both(program, jit=True)


# -- transformations ----------------------------------------------------------------------


def _data_bcoo(S: Sparse, data: Any, indices_of: Any) -> Any:
    """A BCOO array of new ``data`` with the indices of a fixed one."""
    m = fromdense(S, indices_of)
    return S.sparse.BCOO((data, m.indices), shape=m.shape)


VMAP: dict[str, Any] = {
    "batch_axis": lambda S: S.vmap(lambda m, v: m @ v)(fromdense(S, A, 1), S.np.ones((2, 4))),
    "batch_axis_1": lambda S: S.vmap(lambda m: m.todense(), in_axes=1)(fromdense(S, A, 2)),
    "bcoo_out": lambda S: S.vmap(lambda x: S.sparse.BCOO.fromdense(x, nse=5))(A),
    "bcoo_in_and_out": lambda S: S.vmap(lambda m: m.T)(fromdense(S, A, 1)),
    "sum_duplicates": lambda S: S.vmap(lambda m: m.sum_duplicates(nse=4))(fromdense(S, A, 1)),
    "data": lambda S: S.vmap(lambda d: _data_bcoo(S, d, X) @ V)(
        S.np.stack([fromdense(S, X).data, 2 * fromdense(S, X).data])),
    "indices": lambda S: S.vmap(lambda i: S.sparse.BCOO((fromdense(S, X).data, i),
                                                        shape=X.shape).todense())(
        S.np.stack([fromdense(S, X).indices, fromdense(S, X).indices[::-1]])),
    "dense_operand": lambda S: S.vmap(lambda v: fromdense(S, X) @ v)(S.np.asarray(N.T)),
}


@pytest.mark.parametrize("name", _fast({"batch_axis", "bcoo_out", "data"}, VMAP))
def test_vmap_matches_jax(name: str) -> None:
    both(VMAP[name], jit=True)


GRAD: dict[str, Any] = {
    "data": lambda S: S.grad(lambda d: (_data_bcoo(S, d, X) @ V).sum())(fromdense(S, X).data),
    "dense_operand": lambda S: S.grad(lambda v: (fromdense(S, X) @ v).sum())(V),
    "both": lambda S: S.grad(lambda d, v: (_data_bcoo(S, d, X).T @ v ** 2).sum(),
                             argnums=(0, 1))(fromdense(S, X).data, W),
    "todense": lambda S: S.grad(lambda d: (_data_bcoo(S, d, X).todense() ** 2).sum())(
        fromdense(S, X).data),
    "fromdense": lambda S: S.grad(lambda x: (S.sparse.BCOO.fromdense(x, nse=7) @ V).sum())(X),
    "sparsified": lambda S: S.grad(lambda v: S.sparse.sparsify(
        lambda m, v: (S.np.sin(m) @ v).sum())(fromdense(S, X), v))(V),
    "jvp": lambda S: S.jvp(lambda v: fromdense(S, X) @ v, (V,), (S.np.ones(4),)),
}


@pytest.mark.parametrize("name", _fast({"data", "dense_operand", "jvp"}, GRAD))
def test_derivatives_match_jax(name: str) -> None:
    both(GRAD[name], jit=True)


def test_grad_eagerly_matches_jax() -> None:
    both(lambda S: S.grad(lambda d: (_data_bcoo(S, d, X) @ V).sum())(fromdense(S, X).data))


# -- sparsify -----------------------------------------------------------------------------

SPARSIFY: dict[str, Any] = {
    "docs_example": lambda S, m: 2 * S.np.dot(S.np.log1p(m.T), W) + 1,
    "nonlinear_after_sum": lambda S, m: S.np.sin(m) * m,
    "todense": lambda S, m: S.sparse.todense(m * 2),
    "todense_dense": lambda S, m: S.sparse.todense(m).sum() + S.sparse.todense(W),
    "stack": lambda S, m: S.np.stack([m, m]),
    "concatenate": lambda S, m: S.np.concatenate([m, m], 1),
    "expand_dims": lambda S, m: m[None],
    "slice": lambda S, m: m[1:3],
    "integer_pow": lambda S, m: m ** 3,
    "inner_jit": lambda S, m: S.jit(lambda a: a * 3)(m),
    "sum": lambda S, m: (m.sum(0), m.sum(), S.np.sum(m, 1)),
    "add_sparse": lambda S, m: m + m.T.T,
    "add_same_indices": lambda S, m: m + S.np.sin(m),
    "add_dense": lambda S, m: m + X,
    "subtract": lambda S, m: m - 2 * m,
    "divide": lambda S, m: m / V,
    "astype": lambda S, m: m.astype(S.np.int32),
    "reshape": lambda S, m: m.reshape(2, 6),
    "transpose": lambda S, m: S.np.transpose(m),
    "neg_abs_sign": lambda S, m: (-m, S.np.abs(m), S.np.sign(m), S.np.expm1(m)),
    "tuple_in_out": lambda S, m: {"a": m @ V, "b": [m * 2]},
}
_SPARSIFY_FAST = {"docs_example", "nonlinear_after_sum", "todense", "stack", "inner_jit",
                  "sum", "add_dense", "astype", "reshape"}


@pytest.mark.parametrize("name", _fast(_SPARSIFY_FAST, SPARSIFY))
def test_sparsify_matches_jax(name: str) -> None:
    f = SPARSIFY[name]
    both(lambda S: S.sparse.sparsify(lambda m: f(S, m))(
        # Not unique indices, for the nonlinear functions to merge them first.
        S.sparse.BCOO((S.np.asarray([1.0, 2.0, -3.0, 0.5]),
                       S.np.asarray([[0, 1], [2, 3], [0, 1], [1, 0]])), shape=(3, 4))
        if name == "nonlinear_after_sum" else fromdense(S, X)), jit=True)


def test_sparsify_eagerly_matches_jax() -> None:
    both(lambda S: S.sparse.sparsify(lambda m, v: 2 * S.np.dot(S.np.log1p(m.T), v) + 1)(
        S.sparse.BCOO.fromdense(X), W))


def test_sparsify_keyword_arguments_are_static() -> None:
    f = sparse.sparsify(lambda m, *, axis: m.sum(axis))
    out = f(sparse.BCOO.fromdense(X), axis=1)
    np.testing.assert_allclose(out.todense(), X.sum(1), rtol=1e-6)


def test_sparsify_jaxpr_has_no_sparse_primitives() -> None:
    # Every operation is a composition: only plait's own primitives are in the program.
    closed = plait.make_jaxpr(lambda m, v: m @ v)(sparse.BCOO.fromdense(X), pnp.asarray(V))
    names = {e.primitive.name for e in closed.jaxpr.eqns}
    assert "scatter-add" in names and not any(n.startswith("bcoo") for n in names)


ERRORS: dict[str, tuple[Any, str]] = {
    "densifying": (lambda S: S.sparse.sparsify(S.np.exp)(fromdense(S, X)),
                   "sparse rule for exp is not implemented because it would result in dense"),
    "unsupported": (lambda S: S.sparse.sparsify(lambda m: S.np.cumsum(m, 0))(fromdense(S, X)),
                    r"sparse rule for cumsum is not implemented\."),
    "negative_power": (lambda S: S.sparse.sparsify(lambda m: m ** -1)(fromdense(S, X)),
                       "integer_pow with non-positive exponent -1"),
    "subtract_dense": (lambda S: fromdense(S, X) - X, "Subtraction between sparse and dense"),
    "divide_by_sparse": (lambda S: S.sparse.sparsify(lambda a, b: a / b)(
        fromdense(S, X), fromdense(S, X)), "Division by a sparse array"),
    "shape_mismatch": (lambda S: fromdense(S, X) @ W, "matmul: expected the last dimension"),
    "dense_contraction": (lambda S: S.sparse.bcoo_dot_general(
        S.sparse.empty((3, 4), n_dense=1, nse=2), V, dimension_numbers=(((1,), (0,)), ((), ()))),
        "contracting over dense dimensions"),
    "batch_not_bcoo_batch": (lambda S: S.sparse.bcoo_dot_general(
        S.sparse.empty((2, 3, 4), nse=2), A, dimension_numbers=(((2,), (2,)), ((0,), (0,)))),
        "batch dimensions must be among the batch dimensions"),
    # (Under jit: JAX's eager implementation fails an assertion first.)
    "spdot_dense": (lambda S: S.jit(lambda a, b: S.sparse.bcoo_dot_general(
        a, b, dimension_numbers=(((0,), (1,)), ((), ()))))(
        S.sparse.empty((3, 4), n_dense=1, nse=2), S.sparse.empty((4, 3), n_dense=1, nse=2)),
        "with dense dimensions"),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_match_jax(name: str) -> None:
    program, message = ERRORS[name]
    err = both_raise(program)
    assert pytest.raises(type(err), program, PLAIT).match(message)


def test_dense_operand_on_the_left_defers_to_rmatmul() -> None:
    # A plait array hands ``@`` over to an operand it does not know, as JAX's does.
    m = sparse.BCOO.fromdense(X)
    np.testing.assert_allclose(np.asarray(pnp.asarray(W) @ m), W @ X, rtol=1e-6)
    np.testing.assert_allclose(sparse.sparsify(pnp.matmul)(pnp.asarray(W), m), W @ X,
                               rtol=1e-6)

"""plait's COO, CSR and CSC matrices against jax.experimental.sparse 0.10.2: conversions
from and to dense matrices in every dtype and nse, index dtypes, transposes, the
products with dense vectors and matrices (with and without ``transpose``, through the
functions and ``@``), duplicate and out-of-bound entries, ``_empty``/``_eye``, the
pytrees under ``jit`` and ``vmap``, derivatives (``grad``/``jvp``/``vjp`` by the data,
the dense operand and the converted matrix, JAX's quirks at padding entries included)
and the errors.  Buffers are JAX's bit for bit.  Where JAX 0.10.2's reverse-mode rule for
products with the transposed matrix is wrong, plait's derivative is compared with JAX's
through the dense matrix."""

from __future__ import annotations

import types
from collections.abc import Callable
from typing import Any

import hypothesis.extra.numpy as hnp
import jax
import jax.experimental.sparse as jsparse
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import plait
import plait.numpy as pnp
from plait.errors import ConcretizationTypeError
from plait.frontend.sparse import coo, csr
from tests.frontend.jax_oracle import both_x64, raised
from tests.frontend.sparse_oracle import JAX, PLAIT, Sparse, sparse_array

_PLAIT_FORMATS = types.SimpleNamespace(
    COO=coo.COO, CSR=csr.CSR, CSC=csr.CSC, coo_fromdense=coo.coo_fromdense,
    coo_todense=coo.coo_todense, coo_matvec=coo.coo_matvec, coo_matmat=coo.coo_matmat,
    csr_fromdense=csr.csr_fromdense, csr_todense=csr.csr_todense,
    csr_matvec=csr.csr_matvec, csr_matmat=csr.csr_matmat)
P = PLAIT._replace(sparse=_PLAIT_FORMATS)
J = JAX

X = sparse_array((3, 4), seed=1)
V = sparse_array((4,), density=1.0, seed=3)
W = sparse_array((3,), density=1.0, seed=4)
B = sparse_array((4, 2), density=1.0, seed=5)
C = sparse_array((3, 2), density=1.0, seed=6)
FORMATS = ["COO", "CSR", "CSC"]

# -- comparing with JAX ---------------------------------------------------------------------

_BUFFERS = {"COO": ("data", "row", "col"), "CSR": ("data", "indices", "indptr"),
            "CSC": ("data", "indices", "indptr")}


def _arrays_equal(got: Any, want: Any, what: str, exact: bool, rtol: float) -> None:
    g, w = np.asarray(got), np.asarray(want)
    assert (g.shape, g.dtype) == (w.shape, w.dtype), (what, g.shape, w.shape, g.dtype, w.dtype)
    if exact:
        np.testing.assert_array_equal(g, w, err_msg=what)
    else:
        np.testing.assert_allclose(g, w, rtol=rtol, atol=rtol, err_msg=what)


def check(got: Any, want: Any, exact: bool = True, rtol: float = 1e-6) -> None:
    """Equal results: a sparse matrix has JAX's class, shape, flags and buffers (data bit
    for bit unless ``exact`` is false); containers are compared element by element."""
    if isinstance(want, tuple | list):
        assert isinstance(got, tuple | list) and len(got) == len(want), (got, want)
        for g, w in zip(got, want):
            check(g, w, exact, rtol)
        return
    if isinstance(want, jsparse.JAXSparse):
        name = type(want).__name__
        assert type(got).__name__ == name and got.shape == want.shape, (got, want)
        if isinstance(want, jsparse.COO):
            assert got._info == tuple(want._info), (got._info, want._info)
        for buf in _BUFFERS[name]:
            _arrays_equal(getattr(got, buf), getattr(want, buf), buf, exact or buf != "data",
                          rtol)
        return
    assert not isinstance(got, coo.COO | csr.CSR | csr.CSC), f"expected an array: {got!r}"
    _arrays_equal(got, want, "array", exact, rtol)


def both(program: Callable[[Sparse], Any], jit: bool = True, exact: bool = True,
         rtol: float = 1e-6) -> Any:
    """``program(S)`` with JAX's and plait's namespaces, the results compared; plait's
    result.  JAX runs it under ``jit`` (one compilation per program rather than one per
    operation), plait too unless ``jit`` is false."""
    want = J.jit(lambda: program(J))()
    got = P.jit(lambda: program(P))() if jit else program(P)
    check(got, want, exact, rtol)
    return got


def both_raise(program: Callable[[Sparse], Any]) -> BaseException:
    """plait's exception for ``program``, checked to be of the type of JAX's."""
    want, got = raised(lambda: program(J)), raised(lambda: program(P))
    assert isinstance(got, type(want)) or type(got).__name__ == type(want).__name__, (
        f"JAX raised {type(want).__name__}: {want}; plait {type(got).__name__}: {got}")
    return got


def _fromdense(S: Sparse, fmt: str, x: Any, **kwargs: Any) -> Any:
    return getattr(S.sparse, fmt).fromdense(x, **kwargs)


def _fast(fast: set[Any], cases: list[Any]) -> list[Any]:
    """``cases`` as parameters, those not in ``fast`` marked slow (each compiles anew in
    both libraries)."""
    return [pytest.param(*(c if isinstance(c, tuple) else (c,)),
                         marks=() if c in fast else pytest.mark.slow) for c in cases]


# -- fromdense and todense ------------------------------------------------------------------

ROUND_TRIP = [(fmt, dtype, nse) for fmt in FORMATS
              for dtype in (np.float32, np.complex64, np.int32) for nse in (None, 3, 9)]


@pytest.mark.parametrize("fmt, dtype, nse", _fast(
    {("COO", np.float32, None), ("CSR", np.complex64, 3), ("CSC", np.int32, 9)}, ROUND_TRIP))
def test_fromdense_and_todense_match_jax(fmt: str, dtype: Any, nse: int | None) -> None:
    """Buffers (padding and truncation included) and the dense matrix, as JAX's."""
    x = sparse_array((3, 4), dtype, seed=7)
    m, dense = both(lambda S: (lambda m: (m, m.todense()))(_fromdense(S, fmt, x, nse=nse)),
                    jit=fmt != "COO")
    assert m.nse == (np.count_nonzero(x) if nse is None else nse)
    if nse is None:
        np.testing.assert_array_equal(dense, x)


def test_fromdense_with_nse() -> None:
    """With a given nse, through the classes and the functions."""
    both(lambda S: [(lambda m: (m, m.todense()))(_fromdense(S, fmt, X, nse=5))
                    for fmt in FORMATS]
         + [(lambda m: (m, S.sparse.coo_todense(m)))(S.sparse.coo_fromdense(X, nse=8)),
            (lambda m: (m, S.sparse.csr_todense(m)))(S.sparse.csr_fromdense(X, nse=2))],
         jit=True)


@pytest.mark.parametrize("index_dtype", _fast({np.int8}, [np.int8, np.uint8, np.int16,
                                                          "int16"]))
def test_index_dtype(index_dtype: Any) -> None:
    """The indices (and indptr) take ``index_dtype``."""
    got = both(lambda S: [_fromdense(S, fmt, X, index_dtype=index_dtype) for fmt in FORMATS])
    assert got[0].row.dtype == got[1].indptr.dtype == np.dtype(index_dtype)


@pytest.mark.parametrize("dtype", _fast({np.float64}, [np.float64, np.complex128,
                                                       np.int64]))
def test_64_bit_dtypes(dtype: Any) -> None:
    """Under x64, with 64-bit indices and products."""
    x = sparse_array((3, 4), dtype, seed=3)
    v, b = V.astype(dtype), B.astype(dtype)
    with both_x64():
        both(lambda S: [(m, m.todense(), m @ v, m.T @ W.astype(dtype), m @ b) for m in (
            _fromdense(S, fmt, x, index_dtype=np.int64) for fmt in FORMATS)])


@pytest.mark.slow
def test_empty_and_zero_sized_matrices() -> None:
    """All-zero and zero-sized matrices, and nse=0."""
    both(lambda S: [(m, m.todense()) for fmt in FORMATS for m in (
        _fromdense(S, fmt, np.zeros((2, 3), np.float32)),
        _fromdense(S, fmt, np.zeros((0, 3), np.float32)),
        _fromdense(S, fmt, X, nse=0))])


def test_repr_and_attributes() -> None:
    """repr, nse, dtype, shape, size, ndim and len as JAX's."""
    def make(S: Sparse, fmt: str) -> Any:
        return S.jit(lambda: _fromdense(S, fmt, X))()
    for fmt in FORMATS:
        got, want = make(P, fmt), make(J, fmt)
        assert repr(got) == repr(want)
        assert (got.nse, got.dtype, got.shape, got.size, got.ndim, len(got)) == (
            want.nse, want.dtype, want.shape, want.size, want.ndim, len(want))
        assert isinstance(got, plait.experimental.sparse.JAXSparse)


# -- duplicates, padding and out-of-bound entries -------------------------------------------

DATA = np.array([1.5, 2., -3., 4., 5., 6., 7.], np.float32)
ROW = np.array([0, 5, -1, 1, 1, -7, 1])
COL = np.array([0, 1, 2, -2, 1, 1, 9])
INDICES = np.array([0, 1, 2, 3, 0, 1, 1])
INDPTRS = {"sorted": np.array([0, 2, 2, 7]), "unsorted": np.array([0, 4, 2, 7]),
           "past_end": np.array([0, 2, 3, 9]), "negative": np.array([0, -2, 3, 5])}


def _odd_coo(S: Sparse, data: Any = DATA) -> Any:
    return S.sparse.COO((data, ROW, COL), shape=(3, 4))


def _odd_csr(S: Sparse, indptr: str, data: Any = DATA) -> Any:
    return S.sparse.CSR((data, INDICES, INDPTRS[indptr]), shape=(3, 4))


def test_duplicates_and_out_of_bound_coo_entries() -> None:
    """Duplicates summed, negative indices counted from the end, the others dropped (and
    read clamped from the dense operand) as in JAX."""
    both(lambda S: (lambda m: (m.todense(), m @ V, m @ B, S.sparse.coo_matvec(m, W, True),
                               S.sparse.coo_matmat(m, C, transpose=True), m.T.todense())
                    )(_odd_coo(S)))


@pytest.mark.parametrize("indptr", _fast({"unsorted", "past_end"}, sorted(INDPTRS)))
def test_malformed_indptr_gives_jax_rows(indptr: str) -> None:
    """An indptr out of order or out of bounds places entries as JAX's does."""
    both(lambda S: (lambda m: (m.todense(), m @ V, m @ B, m.T.todense(), m.T @ W)
                    )(_odd_csr(S, indptr)))


def test_sort_indices() -> None:
    """``_sort_indices`` sorts by row then column, and sets rows_sorted."""
    got = both(lambda S: (lambda m: (m, m._sort_indices(), m._sort_indices().T,
                                     m._sort_indices()._sort_indices())
                          )(S.sparse.COO((DATA, np.abs(ROW) % 3, np.abs(COL) % 4), shape=(3, 4))),
               jit=False)
    sorted_ = got[1]
    assert sorted_._sort_indices() is sorted_


# -- transposes -----------------------------------------------------------------------------


def test_transpose() -> None:
    """``T`` and ``transpose()``: COO swaps rows, columns and flags; CSR becomes CSC."""
    got = both(lambda S: [(lambda m: (m.T, m.transpose(), m.T.T, m.T.todense(), m.T @ W,
                                      m.T @ C))(_fromdense(S, fmt, X)) for fmt in FORMATS])
    assert [type(g[0]).__name__ for g in got] == ["COO", "CSC", "CSR"]


# -- products -------------------------------------------------------------------------------

PRODUCTS: dict[str, Callable[[Sparse], Any]] = {
    "coo_matvec": lambda S: S.sparse.coo_matvec(S.sparse.COO.fromdense(X), V),
    "coo_matvec_T": lambda S: S.sparse.coo_matvec(S.sparse.COO.fromdense(X), W, True),
    "coo_matmat": lambda S: S.sparse.coo_matmat(S.sparse.COO.fromdense(X), B),
    "coo_matmat_T": lambda S: S.sparse.coo_matmat(S.sparse.COO.fromdense(X), C,
                                                  transpose=True),
    "csr_matvec": lambda S: S.sparse.csr_matvec(S.sparse.CSR.fromdense(X), V),
    "csr_matvec_T": lambda S: S.sparse.csr_matvec(S.sparse.CSR.fromdense(X), W,
                                                  transpose=True),
    "csr_matmat": lambda S: S.sparse.csr_matmat(S.sparse.CSR.fromdense(X), B),
    "csr_matmat_T": lambda S: S.sparse.csr_matmat(S.sparse.CSR.fromdense(X), C,
                                                  transpose=True),
    "matmul": lambda S: [_fromdense(S, fmt, X) @ operand for fmt in FORMATS
                         for operand in (V, B)],
    "matmul_promotes": lambda S: [_fromdense(S, fmt, X.astype(np.int32)) @ operand
                                  for fmt in FORMATS
                                  for operand in (V, B.astype(np.int8), [1, 2, 3, 4])],
    "matmul_complex": lambda S: [_fromdense(S, fmt, X.astype(np.complex64) * 1j) @ V
                                 for fmt in FORMATS],
    "matmul_padded": lambda S: [_fromdense(S, fmt, X, nse=10) @ B for fmt in FORMATS],
}


@pytest.mark.parametrize("name", _fast({"coo_matvec_T", "csr_matmat", "matmul",
                                        "matmul_promotes"}, sorted(PRODUCTS)))
def test_products_match_jax(name: str) -> None:
    """The products (under jit)."""
    both(PRODUCTS[name])


def test_products_eagerly() -> None:
    """The products, eagerly."""
    both(lambda S: [S.sparse.coo_matvec(S.sparse.COO.fromdense(X), V),
                    S.sparse.CSC.fromdense(X) @ B], jit=False)


# -- constructors ---------------------------------------------------------------------------

EYES = [(3, 4, 1), (4, 3, -2), (3, 3, 5), (3, 4, 0), (3, 3, -3), (0, 0, 0)]


def test_empty_matches_jax() -> None:
    """``_empty``, as JAX's ``sparse.empty(..., sparse_format=...)`` calls it."""
    both(lambda S: [(m, m.todense()) for fmt in FORMATS for m in (
        getattr(S.sparse, fmt)._empty((3, 4)),
        getattr(S.sparse, fmt)._empty([2, 5], dtype=np.complex64, index_dtype=np.int8))])
    check(csr.CSR._empty((3, 4), dtype=np.int32),
          jsparse.empty((3, 4), dtype=np.int32, sparse_format="csr"))


@pytest.mark.parametrize("eyes", _fast({1}, [1, 6]))
def test_eye_matches_jax(eyes: int) -> None:
    """``_eye`` over shapes and diagonals, as JAX's ``sparse.eye`` calls it."""
    both(lambda S: [(m, m.todense()) for fmt in FORMATS for n, m_, k in EYES[:eyes] for m in (
        getattr(S.sparse, fmt)._eye(N=n, M=m_, k=k),
        getattr(S.sparse, fmt)._eye(n, m_, k, dtype=np.int32, index_dtype=np.int16))])
    check(csr.CSC._eye(3, 4, -1), jsparse.eye(3, 4, -1, sparse_format="csc"))


@pytest.mark.parametrize("fmt", FORMATS)
def test_empty_of_wrong_rank_raises_as_jax(fmt: str) -> None:
    """A shape that is not 2-D is refused (ValueError, JAX's message)."""
    err = both_raise(lambda S: getattr(S.sparse, fmt)._empty((2, 3, 4)))
    assert str(err) == f"{fmt} must have ndim=2; got shape=(2, 3, 4)"


# -- pytrees and transformations ------------------------------------------------------------


def test_pytree_flatten_and_unflatten() -> None:
    """The children are the buffers (data first); unflattening rebuilds the matrix."""
    mats = P.jit(lambda: [_fromdense(P, fmt, X) for fmt in FORMATS])()
    wants = J.jit(lambda: [_fromdense(J, fmt, X) for fmt in FORMATS])()
    for m, want in zip(mats, wants):
        leaves, tree = plait.tree_util.tree_flatten(m)
        check(leaves, jax.tree_util.tree_leaves(want))
        back = plait.tree_util.tree_unflatten(tree, leaves)
        assert type(back) is type(m) and back.shape == m.shape
        check(back, want)


def test_jit_of_function_taking_the_matrix() -> None:
    """Matrices passed to and returned from jitted functions."""
    def program(S: Sparse) -> Any:
        ms = S.jit(lambda: [_fromdense(S, fmt, X) for fmt in FORMATS])()
        return (S.jit(lambda ms: [m.T for m in ms])(ms),
                S.jit(lambda ms, v: [m @ v for m in ms])(ms, V),
                S.jit(lambda ms: [m.todense() for m in ms])(ms), S.jit(lambda ms: ms)(ms))
    both(program, jit=False)


@pytest.mark.parametrize("fmt", _fast({"CSC"}, FORMATS))
def test_vmap(fmt: str) -> None:
    """``vmap`` over the dense operand, the data, the dense matrix or stacked matrices
    (where JAX 0.10.2 has no batching rules, so each case is compared with JAX's results
    one at a time)."""
    vs = np.stack([V, 2 * V, -V])
    ms = np.stack([X, X.T.reshape(3, 4), 2 * X])
    m_p, m_j = _fromdense(P, fmt, X), _fromdense(J, fmt, X)
    check(plait.vmap(lambda v: m_p @ v)(vs), np.stack([m_j @ v for v in vs]))
    check(plait.vmap(lambda m, v: m @ v, in_axes=(None, 0))(m_p, vs),
          np.stack([m_j @ v for v in vs]))
    data = np.stack([m_j.data, 2 * m_j.data])
    rest = plait.tree_util.tree_flatten(m_p)[0][1:]
    rebuilt = plait.vmap(lambda d: type(m_p)((d, *rest), shape=m_p.shape).todense())
    check(rebuilt(data), np.stack([type(m_j)((d, *jax.tree_util.tree_leaves(m_j)[1:]),
                                             shape=m_j.shape).todense() for d in data]))
    got = plait.vmap(lambda x: (lambda m: (m.data, m.todense()))(_fromdense(P, fmt, x, nse=6)))
    check(list(got(ms)), [np.stack(z) for z in zip(*[
        (lambda m: (m.data, m.todense()))(_fromdense(J, fmt, x, nse=6)) for x in ms])])
    stacked = plait.tree_util.tree_map(lambda *bufs: pnp.stack(bufs),
                                       *[_fromdense(P, fmt, x, nse=6) for x in ms])
    check(list(plait.vmap(lambda m: (m.todense(), m @ V))(stacked)), [np.stack(z) for z in zip(*[
        (lambda m: (m.todense(), m @ V))(_fromdense(J, fmt, x, nse=6)) for x in ms])])
    assert "Batching rule" in str(raised(lambda: jax.vmap(lambda v: m_j @ v)(vs)))


# -- derivatives ----------------------------------------------------------------------------


def _weights(shape: tuple[int, ...]) -> np.ndarray:
    return np.arange(1, 1 + np.prod(shape), dtype=np.float32).reshape(shape)


def _each_format(test: Callable[[Sparse, str], Any], formats: tuple[str, ...] = (
        "COO", "CSR", "CSC")) -> Callable[[Sparse], Any]:
    return lambda S: [test(S, fmt) for fmt in formats]


def _vjp_matmat(S: Sparse) -> Any:
    out, pullback = (jax.vjp if S is J else plait.vjp)(lambda d, b: _odd_coo(S, d) @ b, DATA, B)
    return out, pullback(S.np.asarray(_weights((3, 2))))


GRADS: dict[str, Callable[[Sparse], Any]] = {
    "todense_by_data": lambda S: S.grad(lambda d: (S.sparse.COO(
        (d, *S.sparse.COO.fromdense(X)._bufs[1:]), shape=(3, 4)).todense()
        * _weights((3, 4))).sum())(S.sparse.COO.fromdense(X).data),
    "matvec_by_data_and_v": lambda S: [
        S.grad(lambda d, v: (S.sparse.coo_matvec(_odd_coo(S, d), v) * _weights((3,))).sum(),
               (0, 1))(DATA, V),
        S.grad(lambda v: (S.sparse.coo_matvec(_odd_coo(S), v, True) * _weights((4,))).sum())(W)],
    "matmat_by_data_and_b": lambda S: [
        S.grad(lambda d, b: (S.sparse.coo_matmat(_odd_coo(S, d), b) * _weights((3, 2))).sum(),
               (0, 1))(DATA, B),
        S.grad(lambda b: (S.sparse.coo_matmat(_odd_coo(S), b, transpose=True)
                          * _weights((4, 2))).sum())(C)],
    "csr_products_by_data_and_operand": lambda S: [
        S.grad(lambda d, v: (_odd_csr(S, "unsorted", d) @ v).sum(), (0, 1))(DATA, V),
        S.grad(lambda d, b: (_odd_csr(S, "past_end", d) @ b * _weights((3, 2))).sum(),
               (0, 1))(DATA, B),
        S.grad(lambda b: (_odd_csr(S, "past_end").T @ b * _weights((4, 2))).sum())(C)],
    "csr_todense_by_data": lambda S: S.grad(lambda d: (_odd_csr(S, "negative", d).todense()
                                                       * _weights((3, 4))).sum())(DATA),
    "out_of_bound_todense": lambda S: S.grad(lambda d: (_odd_coo(S, d).todense()
                                                        * _weights((3, 4))).sum())(DATA),
    "fromdense": _each_format(lambda S, fmt: S.grad(lambda x: (
        _fromdense(S, fmt, x, nse=7).data * _weights((7,))).sum())(X)),
    "fromdense_padded": _each_format(lambda S, fmt: S.grad(lambda x: (
        _fromdense(S, fmt, x, nse=10).data * _weights((10,))).sum())(X)),
    "fromdense_matmul": _each_format(lambda S, fmt: S.grad(lambda x: (
        (_fromdense(S, fmt, x, nse=9) @ B) ** 2).sum())(X), ("COO", "CSR")),
    "fromdense_todense": _each_format(lambda S, fmt: S.grad(lambda x: S.np.sin(
        _fromdense(S, fmt, x, nse=7).todense()).sum())(X)),
    "jvp_fromdense_padded": _each_format(lambda S, fmt: S.jvp(
        lambda x: _fromdense(S, fmt, x, nse=10).data, (X,), (_weights((3, 4)),))),
    "jvp_products": lambda S: [
        S.jvp(lambda d, v: S.sparse.coo_matvec(_odd_coo(S, d), v), (DATA, V), (DATA * 2, V + 1)),
        S.jvp(lambda d, b: _odd_csr(S, "sorted", d) @ b, (DATA, B), (DATA * 2, B + 1)),
        S.jvp(lambda d, w: S.sparse.coo_matvec(_odd_coo(S, d), w, transpose=True),
              (DATA, W), (DATA * 2, W + 1)),
        S.jvp(lambda x, b: S.sparse.CSC.fromdense(x, nse=9) @ b, (X, B), (X + 1, B * 2))],
    "vjp_matmat": lambda S: _vjp_matmat(S),
}
_GRADS_SLOW = {"fromdense", "fromdense_matmul", "fromdense_todense", "matmat_by_data_and_b",
               "csr_todense_by_data"}


@pytest.mark.parametrize("name", _fast(set(GRADS) - _GRADS_SLOW, sorted(GRADS)))
def test_derivatives_match_jax(name: str) -> None:
    """Derivatives by the data, the dense operand and the converted matrix are JAX's
    (out-of-bound entries and fromdense's padding included)."""
    both(GRADS[name], rtol=1e-5, exact=False)


# Products with the transposed matrix: JAX 0.10.2's reverse-mode rules read the
# cotangent and the operand with the rows and columns the wrong way round (its
# ``ct[row] * v[col]`` ignores ``transpose``), so its gradients by the data are wrong
# there; plait's are the derivative, compared with JAX's through the dense matrix.
TRANSPOSED: dict[str, tuple[Callable[[Sparse, Any], Any], np.ndarray]] = {
    "coo_matvec": (lambda S, d: S.sparse.COO((d, *S.sparse.COO.fromdense(X)._bufs[1:]),
                                             shape=(3, 4)), W),
    "coo_matmat": (lambda S, d: S.sparse.COO((d, *S.sparse.COO.fromdense(X)._bufs[1:]),
                                             shape=(3, 4)), C),
    "csr_matvec": (lambda S, d: S.sparse.CSR((d, *S.sparse.CSR.fromdense(X)._bufs[1:]),
                                             shape=(3, 4)), W),
    "csr_matmat": (lambda S, d: S.sparse.CSR((d, *S.sparse.CSR.fromdense(X)._bufs[1:]),
                                             shape=(3, 4)), C),
}


def _transposed_product(S: Sparse, name: str, d: Any, operand: Any, dense: bool) -> Any:
    m = TRANSPOSED[name][0](S, d)
    if dense:
        return m.todense().T @ operand
    return getattr(S.sparse, name)(m, operand, transpose=True)


@pytest.mark.parametrize("name", _fast({"coo_matvec", "csr_matmat"}, sorted(TRANSPOSED)))
def test_derivatives_of_transposed_products(name: str) -> None:
    """grad of products with the transposed matrix, by the data and the operand: the
    derivative (JAX's through the dense matrix; its sparse rule's is wrong)."""
    operand = TRANSPOSED[name][1]
    d0 = _fromdense(J, name[:3].upper(), X).data

    def loss(S: Sparse, dense: bool) -> Callable[[Any, Any], Any]:
        return lambda d, o: (_transposed_product(S, name, d, o, dense)
                             * _weights((4,) + operand.shape[1:])).sum()
    want = jax.jit(jax.grad(loss(J, True), (0, 1)))(d0, operand)
    check(plait.jit(plait.grad(loss(P, False), (0, 1)))(d0, operand), want, exact=False,
          rtol=1e-5)
    # (JAX's own sparse rule disagrees with its dense path.)
    assert not np.allclose(jax.grad(loss(J, False))(d0, operand), want[0])


def test_derivatives_of_csc_and_transposed_matmul() -> None:
    """grad through ``CSC @`` and ``CSR.T @`` (products with the transposed CSR buffers)
    by the dense matrix and the operand: the derivative, as JAX's through dense."""
    def loss(S: Sparse, fmt: str, dense: bool) -> Callable[[Any, Any], Any]:
        def f(x: Any, b: Any) -> Any:
            m = _fromdense(S, fmt, x, nse=9)
            m = m.T if fmt == "CSR" else m
            return ((m.todense() if dense else m) @ b * _weights((4 if fmt == "CSR" else 3, 2))
                    ).sum()
        return f
    for fmt, x, b in (("CSC", X, B), ("CSR", X, C)):
        check(plait.jit(plait.grad(loss(P, fmt, False), (0, 1)))(x, b),
              jax.jit(jax.grad(loss(J, fmt, True), (0, 1)))(x, b), exact=False, rtol=1e-5)


def test_default_nse_under_grad() -> None:
    """Without jit, grad takes the default nse from the (known) value of the matrix."""
    def loss(S: Sparse, fmt: str) -> Callable[[Any], Any]:
        return lambda x: (_fromdense(S, fmt, x).data * _weights((7,))).sum()
    for fmt in ("COO", "CSC"):
        check(plait.grad(loss(P, fmt))(X), jax.grad(loss(J, fmt))(X), exact=False)


def test_derivatives_under_jit_in_float64() -> None:
    """grad of jitted products in float64."""
    with both_x64():
        both(lambda S: S.grad(lambda d, b: (S.sparse.COO.fromdense(
            X.astype(np.float64), nse=8) @ (b * d)).sum(), (0, 1))(2.0, B.astype(np.float64)),
            exact=False, rtol=1e-12)


# -- errors ---------------------------------------------------------------------------------

ERRORS: dict[str, Callable[[Sparse], Any]] = {
    "matmul_sparse": lambda S: S.sparse.COO.fromdense(X) @ S.sparse.CSR.fromdense(X.T),
    "matmul_3d": lambda S: S.sparse.CSR.fromdense(X) @ np.ones((4, 2, 2), np.float32),
    "matmul_scalar": lambda S: S.sparse.CSC.fromdense(X) @ 2.0,
    "matmul_length": lambda S: S.sparse.COO.fromdense(X) @ np.ones(3, np.float32),
    "csc_matmul_length": lambda S: S.sparse.CSC.fromdense(X) @ np.ones((3, 2), np.float32),
    "rmatmul": lambda S: np.ones(3, np.float32) @ S.sparse.COO.fromdense(X),
    "coo_transpose_axes": lambda S: S.sparse.COO.fromdense(X).transpose((1, 0)),
    "csr_transpose_axes": lambda S: S.sparse.CSR.fromdense(X).transpose((1, 0)),
    "matvec_dtype": lambda S: S.sparse.coo_matvec(S.sparse.COO.fromdense(X),
                                                  np.ones(4, np.int32)),
    "matmat_dtype": lambda S: S.sparse.csr_matmat(S.sparse.CSR.fromdense(X),
                                                  np.ones((4, 2), np.float16)),
    "matvec_rank": lambda S: S.sparse.csr_matvec(S.sparse.CSR.fromdense(X), B),
    "matmat_rank": lambda S: S.sparse.coo_matmat(S.sparse.COO.fromdense(X), V),
    "matmat_transposed_length": lambda S: S.sparse.coo_matmat(S.sparse.COO.fromdense(X), B,
                                                              transpose=True),
    "matvec_index_dtypes": lambda S: S.sparse.COO((DATA[:3], ROW[:3].astype(np.int8),
                                                   COL[:3]), shape=(3, 4)) @ V,
    "fromdense_1d": lambda S: S.sparse.COO.fromdense(V),
    "csr_fromdense_3d": lambda S: S.sparse.CSR.fromdense(np.ones((2, 2, 2), np.float32)),
    "fromdense_float_nse": lambda S: S.sparse.csr_fromdense(X, nse=2.0),
    "fromdense_traced_nse": lambda S: S.jit(lambda x: S.sparse.COO.fromdense(x))(X),
    "csr_fromdense_traced_nse": lambda S: S.jit(lambda x: S.sparse.CSR.fromdense(x))(X),
    "csc_fromdense_traced_nse": lambda S: S.jit(lambda x: S.sparse.CSC.fromdense(x).data)(X),
    "fromdense_float_indices": lambda S: S.sparse.COO.fromdense(
        X, index_dtype=np.float32).todense(),
    "todense_lengths": lambda S: S.sparse.COO((DATA, ROW[:3], COL), shape=(3, 4)).todense(),
    "csr_indptr_length": lambda S: S.sparse.CSR((DATA, INDICES, np.array([0, 7])),
                                                shape=(3, 4)).todense(),
    "csr_indptr_dtype": lambda S: S.sparse.CSR((DATA, INDICES, INDPTRS["sorted"].astype(
        np.int8)), shape=(3, 4)).todense(),
    "hash": lambda S: hash(S.sparse.COO.fromdense(X)),
    "negate": lambda S: -S.sparse.CSC.fromdense(X),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_match_jax(name: str) -> None:
    """plait raises where JAX raises, an exception of JAX's type."""
    both_raise(ERRORS[name])


def test_error_messages() -> None:
    """plait's messages say what was expected (where JAX fails a bare assert)."""
    m = coo.COO.fromdense(X)
    with pytest.raises(AssertionError, match=r"expected v of length 4 .* but got shape \(3,\)"):
        m @ pnp.ones(3)
    with pytest.raises(AssertionError, match="expected v of dtype float32 .* but got int32"):
        coo.coo_matvec(m, pnp.ones(4, np.int32))
    with pytest.raises(AssertionError, match=r"expected a 2-D array, but got shape \(4,\)"):
        csr.CSR.fromdense(V)
    with pytest.raises(AssertionError, match="expected indptr of length 4"):
        csr.CSR((DATA, INDICES, np.array([0, 7])), shape=(3, 4)).todense()
    with pytest.raises(ConcretizationTypeError, match="nse argument of coo_fromdense"):
        plait.jit(lambda x: coo.coo_fromdense(x))(X)
    with pytest.raises(NotImplementedError, match="matmul with object of shape"):
        m @ pnp.ones((4, 1, 1))


def test_errors_where_jax_does_not_check() -> None:
    """Refused up front where JAX fails later (a float index_dtype) or at lowering
    (negative nse, bool arrays)."""
    with pytest.raises(TypeError, match="expected an integer index_dtype, but got float32"):
        coo.COO.fromdense(X, index_dtype=np.float32)
    with pytest.raises(ValueError, match="expected nse >= 0, but got nse=-1"):
        csr.CSR.fromdense(X, nse=-1)
    with pytest.raises(ValueError, match="bool arrays are not supported"):
        coo.COO.fromdense(X != 0)
    assert isinstance(raised(lambda: jsparse.COO.fromdense(X != 0)), ValueError)


# -- properties -----------------------------------------------------------------------------


# Compiled once per format and shape, run on every example.
_ROUND_TRIP = {fmt: plait.jit(lambda x, v, fmt=fmt: (lambda m: (
    m.todense(), m.T.todense(), m @ v))(getattr(P.sparse, fmt).fromdense(x, nse=x.size)))
    for fmt in FORMATS}


@settings(max_examples=15, deadline=None)
@given(st.sampled_from(FORMATS),
       hnp.arrays(np.float32, st.sampled_from([(3, 4), (1, 5)]),
                  elements=st.sampled_from([0.0, 0.0, 1.5, -2.0])))
def test_round_trip_against_numpy(fmt: str, x: np.ndarray) -> None:
    """fromdense (padded to every element) then todense gives the matrix back, and the
    product is NumPy's."""
    v = np.arange(x.shape[1], dtype=np.float32)
    dense, dense_t, product = _ROUND_TRIP[fmt](x, v)
    np.testing.assert_array_equal(dense, x)
    np.testing.assert_array_equal(dense_t, x.T)
    np.testing.assert_allclose(product, x @ v, rtol=1e-6)

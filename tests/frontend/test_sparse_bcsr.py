"""plait's BCSR arrays (plait/frontend/sparse/bcsr.py) against JAX 0.10.2's
``jax.experimental.sparse.BCSR``: the conversions from and to dense arrays, BCOO arrays
and scipy matrices in every layout and dtype, ``bcsr_extract``, ``bcsr_dot_general``,
``bcsr_broadcast_in_dim``, ``bcsr_concatenate``, summing duplicates, the operators,
``sparsify`` with BCSR arguments, ``jit``/``vmap``/``grad``, and the errors.  Data,
indices and indptr are JAX's bit for bit."""

from __future__ import annotations

import functools
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import hypothesis.extra.numpy as hnp
import jax
import jax.experimental.sparse as jsparse
import jax.experimental.sparse.bcsr as jbcsr
import numpy as np
import pytest
import scipy.sparse  # type: ignore[import-untyped]  # scipy ships no stubs
from hypothesis import given, settings
from hypothesis import strategies as st

import plait
from plait.errors import ConcretizationTypeError
from plait.frontend.sparse import ad as pad
from plait.frontend.sparse import bcoo as pbcoo
from plait.frontend.sparse import bcsr as pbcsr
from tests.frontend import sparse_oracle
from tests.frontend.jax_oracle import both_x64, raised
from tests.frontend.sparse_oracle import Sparse, default_nse, sparse_array

_NAMES = ["BCSR", "bcsr_fromdense", "bcsr_todense", "bcsr_extract", "bcsr_dot_general",
          "bcsr_broadcast_in_dim", "bcsr_concatenate", "bcsr_sum_duplicates",
          "bcsr_eliminate_zeros"]
# S.sparse: the BCSR names of each library, with BCOO, sparsify, todense and grad.
JAX = Sparse(SimpleNamespace(**{n: getattr(jbcsr, n) for n in _NAMES}, BCOO=jsparse.BCOO,
                             sparsify=jsparse.sparsify, todense=jsparse.todense,
                             grad=jsparse.grad, custom_jvp=jax.custom_jvp),
             *sparse_oracle.JAX[1:])
PLAIT = Sparse(SimpleNamespace(**{n: getattr(pbcsr, n) for n in _NAMES}, BCOO=pbcoo.BCOO,
                               sparsify=pbcoo.sparsify, todense=pbcoo.todense, grad=pad.grad,
                               custom_jvp=plait.custom_jvp),
               *sparse_oracle.PLAIT[1:])
BCSR = pbcsr.BCSR

X = sparse_array((3, 4), seed=1)
A = sparse_array((2, 3, 4), seed=2)
D = sparse_array((3, 4, 2), seed=3)  # (a layout with a dense dimension)
V = sparse_array((4,), density=1.0, seed=4)
N = sparse_array((4, 2), density=1.0, seed=5)
W = sparse_array((3,), density=1.0, seed=6)
# Long sums, where the order of the additions shows in float32.
L = sparse_array((12, 40), density=0.6, seed=7) * 100
LV = sparse_array((40, 3), density=1.0, seed=8)


def check(got: Any, want: Any) -> None:
    """sparse_oracle.check, with BCSR arrays compared by shape and flags and buffer by
    buffer (data, indices, indptr: shapes, dtypes and values, bit for bit)."""
    if isinstance(want, jsparse.BCSR):
        assert isinstance(got, BCSR), f"expected a BCSR array, but got {got!r}"
        assert (got.shape, got.indices_sorted, got.unique_indices) == (
            want.shape, want.indices_sorted, want.unique_indices), (got, want)
        for g, w in zip(plait.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
            sparse_oracle.check(g, w)
    elif isinstance(want, tuple | list | dict):
        assert type(got) is type(want) and len(got) == len(want), (got, want)
        for k in (want if isinstance(want, dict) else range(len(want))):
            check(got[k], want[k])
    else:
        assert not isinstance(got, BCSR), f"expected no BCSR array, but got {got!r}"
        sparse_oracle.check(got, want)


def both(program: Callable[..., Any], *args: Any, jit: bool = False) -> Any:
    """``program(S, *args)`` in both libraries (under each one's ``jit`` with ``jit``),
    the results compared; plait's result."""
    def run(S: Sparse) -> Any:
        if jit:
            return S.jit(lambda *a: program(S, *a))(*args)
        return program(S, *args)
    want = run(JAX)
    got = run(PLAIT)
    check(got, want)
    return got


def both_raise(program: Callable[[Sparse], Any], jit: bool = True) -> BaseException:
    """The exception plait raises for ``program`` (traced under each one's ``jit`` unless
    ``jit`` is false: faster), checked to be of the type of JAX's."""
    def run(S: Sparse) -> Any:
        return S.jit(lambda: program(S))() if jit else program(S)
    want, got = raised(lambda: run(JAX)), raised(lambda: run(PLAIT))
    assert isinstance(got, type(want)), (
        f"JAX raised {type(want).__name__}: {want}; plait {type(got).__name__}: {got}")
    return got


def bcsr(S: Sparse, x: np.ndarray, n_batch: int = 0, n_dense: int = 0) -> Any:
    """``S.sparse.BCSR.fromdense`` with the default nse given: usable under ``jit``."""
    return S.sparse.BCSR.fromdense(x, n_batch=n_batch, n_dense=n_dense,
                                   nse=default_nse(x, n_batch, n_dense))


def _duplicated(S: Sparse) -> Any:
    """A BCSR array with a duplicate entry, an explicit zero and a padding entry."""
    return S.sparse.BCSR((S.np.array([1.0, 0.0, -2.0, 3.0, 5.0], np.float32),
                          S.np.array([1, 3, 1, 2, 4], np.int32),
                          S.np.array([0, 3, 3, 4], np.int32)), shape=(3, 4))


def _fast(names: set[str], table: dict[str, Any]) -> list[Any]:
    """The names of ``table`` as parameters, those not in ``names`` marked slow."""
    return [pytest.param(n, marks=() if n in names else pytest.mark.slow) for n in sorted(table)]


# -- fromdense and todense ------------------------------------------------------------------

FROMDENSE = [(shape, nb, nd, dtype, nse)
             for shape, nb, nd in [((3, 4), 0, 0), ((2, 3, 4), 1, 0), ((3, 4, 2), 0, 1),
                                   ((2, 3, 4, 2), 1, 1), ((2, 2, 3, 4), 2, 0)]
             for dtype in [np.float32, np.int32, np.complex64] for nse in [None, 2, 9]]
_FAST_FROMDENSE = {FROMDENSE.index(case) for case in [
    ((3, 4), 0, 0, np.float32, None), ((3, 4, 2), 0, 1, np.complex64, 2),
    ((2, 3, 4, 2), 1, 1, np.int32, 9)]}


@pytest.mark.parametrize("shape, n_batch, n_dense, dtype, nse", [
    pytest.param(*case, marks=() if i in _FAST_FROMDENSE else pytest.mark.slow)
    for i, case in enumerate(FROMDENSE)])
def test_fromdense_and_todense_match_jax(shape: tuple[int, ...], n_batch: int, n_dense: int,
                                         dtype: Any, nse: int | None) -> None:
    x = sparse_array(shape, dtype, seed=len(shape))
    nse = default_nse(x, n_batch, n_dense) if nse is None else nse

    def program(S: Sparse, x: Any) -> Any:
        m = S.sparse.bcsr_fromdense(x, n_batch=n_batch, n_dense=n_dense, nse=nse)
        return m, m.todense(), S.sparse.bcsr_todense(m), m.to_bcoo()
    m, dense, _, _ = both(program, x, jit=True)
    assert (m.nse, m.n_batch, m.n_dense, m.n_sparse) == (nse, n_batch, n_dense, 2)
    if nse >= default_nse(x, n_batch, n_dense):
        np.testing.assert_array_equal(dense, x)


def test_default_nse_eagerly() -> None:
    got = BCSR.fromdense(X)  # (JAX's under jit, with the nse given: faster)
    check(got, jax.jit(lambda x: jsparse.BCSR.fromdense(x, nse=7))(X))
    assert got.nse == default_nse(X) == 7 and repr(got) == "BCSR(float32[3, 4], nse=7)"


@pytest.mark.parametrize("index_dtype", [
    np.int8, *(pytest.param(d, marks=pytest.mark.slow) for d in (np.uint8, np.int16))])
def test_index_dtype(index_dtype: Any) -> None:
    got = both(lambda S: (S.sparse.BCSR.fromdense(X, index_dtype=index_dtype, nse=9),
                          S.sparse.BCSR.fromdense(X, index_dtype=index_dtype,
                                                  nse=9).to_bcoo()), jit=True)
    assert got[0].indices.dtype == got[0].indptr.dtype == index_dtype


@pytest.mark.parametrize("dtype", [
    np.float64, *(pytest.param(d, marks=pytest.mark.slow) for d in (np.complex128, np.int64))])
def test_64_bit_dtypes(dtype: Any) -> None:
    x = sparse_array((2, 3, 4), dtype, seed=3)
    with both_x64():
        got, _, _ = both(lambda S: (
            S.sparse.BCSR.fromdense(x, index_dtype=np.int64, n_batch=1, nse=9),
            bcsr(S, x[0]).todense(), bcsr(S, x[0]) @ S.np.ones(4, dtype)), jit=True)
        assert got.dtype == dtype and got.indptr.dtype == np.int64


def test_edge_shapes() -> None:
    both(lambda S: [S.sparse.BCSR.fromdense(np.zeros(s, np.float32), nse=0)
                    for s in [(0, 4), (3, 0)]] + [S.sparse.BCSR.fromdense(X, nse=0)], jit=True)


@pytest.mark.slow
def test_bool_data_becomes_int32_as_in_jax() -> None:
    # (Eagerly: JAX 0.10.2 fails to lower this under jit.)
    assert both(lambda S: S.sparse.BCSR.fromdense(X != 0)).dtype == np.int32


def test_attributes_and_repr() -> None:
    buffers = (np.ones((2, 8, 2), np.float32), np.zeros((2, 8), np.int32),
               np.zeros((2, 4), np.int32))
    m = BCSR(buffers, shape=(2, 3, 4, 2))
    want = jsparse.BCSR((jax.numpy.asarray(buffers[0]), jax.numpy.asarray(buffers[1]),
                         jax.numpy.asarray(buffers[2])), shape=(2, 3, 4, 2))
    assert repr(m) == repr(want)
    assert (m.shape, m.dtype, m.ndim, m.size, len(m)) == ((2, 3, 4, 2),
                                                          np.dtype(np.float32), 4, 48, 2)
    assert (m.n_batch, m.n_sparse, m.n_dense, m.nse) == (1, 2, 1, 8)
    assert (m.indices_sorted, m.unique_indices) == (False, False)
    assert repr(m) == "BCSR(float32[2, 3, 4, 2], nse=8, n_batch=1, n_dense=1)"
    seen: list[str] = []
    plait.jit(lambda m: seen.append(repr(m)))(m)
    assert seen == ["Tracer[BCSR(float32[2, 3, 4, 2], nse=8, n_batch=1, n_dense=1)]"]
    assert repr(plait.tree_util.tree_unflatten(plait.tree_util.tree_structure(m),
                                               [None] * 3)) == "BCSR(<invalid>)"
    with pytest.raises(TypeError, match="unhashable"):
        hash(m)


def test_pytree_and_jit() -> None:
    buffers = (np.ones((2, 5), np.float32), np.zeros((2, 5), np.int32),
               np.array([[0, 2, 5, 5], [0, 0, 0, 5]], np.int32))
    m = BCSR(buffers, shape=(2, 3, 4))
    leaves, tree = plait.tree_util.tree_flatten(m)
    assert [id(x) for x in leaves] == [id(m.data), id(m.indices), id(m.indptr)]
    again = plait.tree_util.tree_unflatten(tree, leaves)
    assert isinstance(again, BCSR) and again._info == m._info
    flagged = BCSR((m.data, m.indices, m.indptr), shape=m.shape, indices_sorted=True)
    assert plait.tree_util.tree_structure(flagged) != tree
    both(lambda S: S.jit(lambda m: (m, m.todense()))(
        S.sparse.BCSR(buffers, shape=(2, 3, 4), unique_indices=True)))


def test_construction_errors_match_jax() -> None:
    def buffers(S: Sparse) -> tuple[Any, Any, Any]:  # (those of X)
        return (S.np.ones(7, np.float32), S.np.array([0, 2, 3, 0, 3, 1, 2], np.int32),
                S.np.array([0, 3, 5, 7], np.int32))
    cases: list[Callable[[Sparse], Any]] = [
        lambda S: S.sparse.BCSR(buffers(S), shape=(4, 4)),  # indptr too short
        lambda S: S.sparse.BCSR(buffers(S), shape=(3, 4, 2)),  # data without dense dims
        lambda S: S.sparse.BCSR((buffers(S)[0][:3], *buffers(S)[1:]), shape=(3, 4)),
        lambda S: S.sparse.BCSR((buffers(S)[0], buffers(S)[1][None], buffers(S)[2][None]),
                                shape=(2, 3, 4)),  # data batch dimensions
        lambda S: S.sparse.BCSR((buffers(S)[0][None], buffers(S)[1][None],
                                 S.np.stack([buffers(S)[2]] * 3)), shape=(2, 3, 4)),
        lambda S: S.sparse.BCSR.fromdense(X, n_batch=1, nse=3),  # one sparse dimension
    ]
    for case in cases:
        both_raise(case)
    # (Eagerly: the default nse is counted first; JAX lowers a negative nse under jit.)
    both_raise(lambda S: S.sparse.BCSR.fromdense(A, n_batch=-1), jit=False)
    both_raise(lambda S: S.sparse.BCSR.fromdense(X, nse=-1), jit=False)
    both_raise(lambda S: S.sparse.BCSR.fromdense(5.0), jit=False)
    for S in (JAX, PLAIT):
        with pytest.raises((ConcretizationTypeError, jax.errors.ConcretizationTypeError),
                           match="nse argument of bcsr_fromdense"):
            S.jit(S.sparse.BCSR.fromdense)(X)


def test_non_integer_buffers_raise_type_error() -> None:
    # (JAX asserts: an AssertionError without a message.)
    data, indices, indptr = np.ones(2), np.array([0, 1]), np.array([0, 1, 2, 2])
    with pytest.raises(TypeError, match="expected indices of an integer dtype, but got float32"):
        BCSR((data, indices.astype(np.float32), indptr), shape=(3, 4))
    with pytest.raises(TypeError, match="expected indptr of an integer dtype"):
        BCSR((data, indices, indptr.astype(np.float32)), shape=(3, 4))
    with pytest.raises(ValueError, match="more than the 1 of shape"):
        BCSR((data, indices, indptr), shape=(3,))
    with pytest.raises(TypeError, match="integer index_dtype"):
        BCSR.fromdense(X, index_dtype=np.float32)


# -- conversions ----------------------------------------------------------------------------

CONVERSIONS: dict[str, Callable[[Sparse], Any]] = {
    # Unsorted, with a duplicate and padding: sorted first.
    "unsorted_bcoo": lambda S: S.sparse.BCSR.from_bcoo(S.sparse.BCOO(
        (S.np.array([1.0, 2.0, 3.0, 4.0]), S.np.array([[2, 1], [0, 3], [2, 1], [3, 4]])),
        shape=(3, 4))),
    "batched": lambda S: S.sparse.BCSR.from_bcoo(S.sparse.BCOO.fromdense(A, n_batch=1, nse=6)),
    "dense_dims": lambda S: S.sparse.BCSR.from_bcoo(S.sparse.BCOO.fromdense(D, n_dense=1,
                                                                            nse=9)),
    "broadcast_batch": lambda S: S.sparse.BCSR.from_bcoo(S.sparse.BCOO(
        (S.np.ones((2, 3), np.float32), S.np.array([[[0, 1], [2, 2], [1, 3]]])), shape=(2, 3, 4))),
    "to_bcoo_padded": lambda S: S.sparse.BCSR.fromdense(A, n_batch=1, nse=8).to_bcoo(),
    "round_trip": lambda S: S.sparse.BCSR.from_bcoo(S.sparse.BCSR.fromdense(D, nse=9,
                                                                            n_dense=1).to_bcoo()),
    "duplicates_to_bcoo": lambda S: (_duplicated(S).to_bcoo(), _duplicated(S).todense()),
}


@pytest.mark.parametrize("name", _fast({"unsorted_bcoo", "round_trip"}, CONVERSIONS))
def test_bcoo_conversions_match_jax(name: str) -> None:
    both(CONVERSIONS[name], jit=True)


def test_from_bcoo_errors_match_jax() -> None:
    def from_bcoo(S: Sparse, x: np.ndarray, n_batch: int, n_dense: int) -> Any:
        return S.sparse.BCSR.from_bcoo(S.sparse.BCOO.fromdense(x, n_batch=n_batch,
                                                               n_dense=n_dense, nse=4))
    for x, n_batch, n_dense in [(X, 1, 0), (X, 0, 1), (A, 0, 0)]:
        both_raise(functools.partial(from_bcoo, x=x, n_batch=n_batch, n_dense=n_dense))
    with pytest.raises(TypeError, match="expected a BCOO array"):
        BCSR.from_bcoo(X)  # type: ignore[arg-type]


def test_from_scipy_sparse_matches_jax() -> None:
    csr = scipy.sparse.csr_matrix(X)
    # Unsorted columns and a duplicate, kept as they are.
    raw = scipy.sparse.csr_matrix((np.array([1.0, 2.0, 3.0], np.float32), np.array([3, 0, 3]),
                                   np.array([0, 3, 3, 3])), shape=(3, 4))
    got = both(lambda S: [S.sparse.BCSR.from_scipy_sparse(csr),
                          S.sparse.BCSR.from_scipy_sparse(scipy.sparse.coo_matrix(X)),
                          S.sparse.BCSR.from_scipy_sparse(csr, index_dtype=np.int16),
                          S.sparse.BCSR.from_scipy_sparse(raw)], jit=True)
    assert [m.nse for m in got] == [7, 7, 7, 3]
    both_raise(lambda S: S.sparse.BCSR.from_scipy_sparse(csr, n_batch=1))
    both_raise(lambda S: S.sparse.BCSR.from_scipy_sparse(scipy.sparse.csr_array(X[0])))


def test_extract_matches_jax() -> None:
    def program(S: Sparse) -> Any:
        m, mb = S.sparse.BCSR.fromdense(X, nse=8), bcsr(S, A, 1)
        return (S.sparse.bcsr_extract(m.indices, m.indptr, D),  # a dense dimension
                S.sparse.bcsr_extract(mb.indices, mb.indptr, A[::-1]),
                S.sparse.bcsr_extract(mb.indices[:1], mb.indptr[:1], A))
    both(program, jit=True)
    indices, indptr = np.array([0, 2, 3, 0, 3, 1, 2], np.int32), np.array([0, 3, 5, 7], np.int32)
    both_raise(lambda S: S.sparse.bcsr_extract(S.np.asarray(indices), S.np.asarray(indptr),
                                               X[:2]))
    both_raise(lambda S: S.sparse.bcsr_extract(list(indices), S.np.asarray(indptr), X))


# -- index bookkeeping ----------------------------------------------------------------------

@pytest.mark.slow
def test_sum_duplicates_with_default_nse_match_jax() -> None:
    # The default nse depends on the values: eagerly only.
    both(lambda S: (_duplicated(S).sum_duplicates(),
                    S.sparse.bcsr_sum_duplicates(_duplicated(S))))


def test_sum_duplicates_under_jit() -> None:
    both(lambda S: [_duplicated(S).sum_duplicates(nse=1, remove_zeros=False),
                    S.sparse.bcsr_eliminate_zeros(_duplicated(S), nse=6),
                    S.sparse.BCSR.from_bcoo(S.sparse.BCOO.fromdense(A, n_batch=1, nse=5)
                                            ).sum_duplicates(nse=7)], jit=True)
    both_raise(lambda S: S.jit(lambda m: m.sum_duplicates())(_duplicated(S)))


def test_empty_matches_jax() -> None:
    both(lambda S: [S.sparse.BCSR._empty((3, 4)),
                    S.sparse.BCSR._empty((2, 3, 4), n_batch=1, nse=2),
                    S.sparse.BCSR._empty((3, 4, 2), n_dense=1, nse=1, dtype=np.int32,
                                         index_dtype=np.int8)], jit=True)
    both_raise(lambda S: S.sparse.BCSR._empty((3, 4, 2)))
    both_raise(lambda S: S.sparse.BCSR._empty((3, 4), nse=-1))


# -- dot_general ----------------------------------------------------------------------------

_MATVEC: Any = (([1], [0]), ([], []))
_INT = sparse_array((3, 4), np.int32, seed=1)
DOT: dict[str, tuple[np.ndarray, tuple[int, int] | None, Any, Any, Any]] = {
    # name: (lhs, its layout (None: dense), rhs, dimension_numbers, preferred_element_type)
    "matvec": (X, (0, 0), V, _MATVEC, None),
    "matmat": (X, (0, 0), N, _MATVEC, None),
    "rows_contracted": (X, (0, 0), W, (([0], [0]), ([], [])), None),
    "rhs_transposed": (X, (0, 0), N.T, (([1], [1]), ([], [])), None),
    "long_sums": (L, (0, 0), LV, _MATVEC, None),
    "long_sums_vector": (L, (0, 0), LV[:, 0], _MATVEC, np.float32),
    "batched": (A, (1, 0), np.ones((2, 4, 5), np.float32), (([2], [1]), ([0], [0])), None),
    "batched_rows": (A, (1, 0), np.ones((2, 3, 5), np.float32), (([1], [1]), ([0], [0])),
                     None),
    "batch_free": (A, (1, 0), V, (([2], [0]), ([], [])), None),
    "batch_contracted": (A, (1, 0), W[:2], (([0], [0]), ([], [])), None),
    "dense_dims": (D, (0, 1), V, _MATVEC, None),
    "bare_ints": (X, (0, 0), V, ((1, 0), ([], [])), None),
    "mixed_dtypes": (X, (0, 0), np.arange(4, dtype=np.int32), _MATVEC, None),
    "int": (_INT, (0, 0), np.arange(8, dtype=np.int32).reshape(4, 2), _MATVEC, None),
    "int_to_float": (_INT, (0, 0), np.arange(4, dtype=np.int32), _MATVEC, np.float32),
    "complex": (sparse_array((3, 4), np.complex64, seed=1), (0, 0), N.astype(np.complex64),
                _MATVEC, None),
    "dense_dense": (X, None, N, _MATVEC, None),
}


@pytest.mark.parametrize("name", _fast({"rows_contracted", "long_sums", "batched",
                                        "dense_dims", "dense_dense"}, DOT))
def test_dot_general_matches_jax(name: str) -> None:
    x, layout, rhs, dims, pet = DOT[name]
    got = both(lambda S, r: S.sparse.bcsr_dot_general(
        x if layout is None else bcsr(S, x, *layout), r, dimension_numbers=dims,
        preferred_element_type=pet), rhs, jit=True)
    dense = jax.lax.dot_general(x, rhs, dims, preferred_element_type=pet)
    np.testing.assert_allclose(got, dense, rtol=1e-5, atol=1e-3)


@pytest.mark.slow
def test_dot_general_eagerly_and_precision_ignored() -> None:
    both(lambda S: S.sparse.bcsr_dot_general(
        bcsr(S, L), LV, dimension_numbers=_MATVEC, precision="highest", out_sharding=None))


def test_dot_general_errors_match_jax() -> None:
    def dot(lhs: Callable[[Sparse], Any], rhs: Callable[[Sparse], Any], dims: Any
            ) -> Callable[[Sparse], Any]:
        return lambda S: S.sparse.bcsr_dot_general(lhs(S), rhs(S), dimension_numbers=dims)
    cases = {
        "sparse_rhs": dot(lambda S: bcsr(S, X), lambda S: bcsr(S, X.T), _MATVEC),
        "dense_lhs_sparse_rhs": dot(lambda S: S.np.asarray(N.T), lambda S: bcsr(S, X.T),
                                    _MATVEC),
        "list_rhs": dot(lambda S: bcsr(S, X), lambda S: [1.0, 2.0, 3.0, 4.0], _MATVEC),
        "shapes": dot(lambda S: bcsr(S, X), lambda S: S.np.ones(5), _MATVEC),
        "dense_contraction": dot(lambda S: bcsr(S, D, 0, 1), lambda S: S.np.ones(2),
                                 (([2], [0]), ([], []))),
        "sparse_batch": dot(lambda S: bcsr(S, A, 1), lambda S: S.np.ones((3, 4)),
                            (([2], [1]), ([1], [0]))),
    }
    for case in cases.values():
        both_raise(case)


# -- broadcast_in_dim and concatenate -------------------------------------------------------

BROADCAST: dict[str, tuple[Callable[[Sparse], Any], tuple[int, ...], tuple[int, ...]]] = {
    "new_batch": (lambda S: bcsr(S, X), (2, 3, 4), (1, 2)),
    "unit_batch": (lambda S: bcsr(S, X), (1, 3, 4), (1, 2)),
    "identity": (lambda S: bcsr(S, X), (3, 4), (0, 1)),
    "batched": (lambda S: bcsr(S, A, 1), (3, 2, 3, 4), (1, 2, 3)),
    "dense_dims": (lambda S: bcsr(S, D, 0, 1), (2, 3, 4, 2), (1, 2, 3)),
}


@pytest.mark.parametrize("name", _fast({"batched"}, BROADCAST))
def test_broadcast_in_dim_matches_jax(name: str) -> None:
    operand, shape, dims = BROADCAST[name]
    both(lambda S: S.sparse.bcsr_broadcast_in_dim(operand(S), shape=shape,
                                                  broadcast_dimensions=dims), jit=True)


def test_broadcast_in_dim_errors_match_jax() -> None:
    def broadcast(S: Sparse, shape: tuple[int, ...], dims: tuple[int, ...]) -> Any:
        return S.sparse.bcsr_broadcast_in_dim(bcsr(S, X), shape=shape,
                                              broadcast_dimensions=dims)
    for shape, dims in [((3, 4, 2), (0, 1)), ((3, 1, 4), (0, 2)), ((3, 4), (1,))]:
        both_raise(functools.partial(broadcast, shape=shape, dims=dims))


CONCATENATE: dict[str, tuple[Callable[[Sparse], Any], Callable[[Sparse], Any], int]] = {
    "rows": (lambda S: bcsr(S, X), lambda S: _duplicated(S), 0),
    "columns": (lambda S: bcsr(S, X), lambda S: _duplicated(S), 1),
    "batch": (lambda S: bcsr(S, A, 1), lambda S: S.sparse.BCSR.fromdense(A, n_batch=1, nse=9),
              0),
    "batched_rows": (lambda S: bcsr(S, A, 1), lambda S: bcsr(S, A[::-1], 1), 1),
    "batched_columns": (lambda S: bcsr(S, A, 1), lambda S: bcsr(S, A, 1), 2),
    "dense_dims": (lambda S: bcsr(S, D, 0, 1), lambda S: bcsr(S, D[::-1], 0, 1), 0),
}


@pytest.mark.parametrize("name", _fast({"columns"}, CONCATENATE))
def test_concatenate_matches_jax(name: str) -> None:
    first, second, dim = CONCATENATE[name]
    both(lambda S: S.sparse.bcsr_concatenate([first(S), second(S)], dimension=dim), jit=True)


def test_concatenate_errors() -> None:
    cases: list[tuple[Callable[[Sparse], Any], Callable[[Sparse], Any], int]] = [
        (lambda S: bcsr(S, X), lambda S: bcsr(S, X[:, :2]), 0),  # shapes
        (lambda S: bcsr(S, X), lambda S: bcsr(S, A, 1), 0),  # ranks
        (lambda S: bcsr(S, D, 0, 1), lambda S: bcsr(S, D, 0, 1), 2)]  # a dense dimension
    def concatenate(S: Sparse, first: Callable[[Sparse], Any], second: Callable[[Sparse], Any],
                    dim: int) -> Any:
        return S.sparse.bcsr_concatenate([first(S), second(S)], dimension=dim)
    for first, second, dim in cases:
        both_raise(functools.partial(concatenate, first=first, second=second, dim=dim))
    # (JAX raises AttributeError: a dense array has no to_bcoo.)
    with pytest.raises(ValueError, match="expected BCSR arrays, but got operands of types"):
        pbcsr.bcsr_concatenate([BCSR.fromdense(X), X], dimension=0)  # type: ignore[list-item]


# -- operators and sparsify -----------------------------------------------------------------

OPERATORS: dict[str, Callable[[Sparse], Any]] = {
    "matvec": lambda S: bcsr(S, X) @ V,
    "matmat": lambda S: bcsr(S, X) @ S.np.asarray(N),
    "batched": lambda S: bcsr(S, A, 1) @ V,
    "batched_matmat": lambda S: bcsr(S, A, 1) @ S.np.ones((2, 4, 3)),
    "index_all": lambda S: bcsr(S, X)[:],
    "index_none": lambda S: bcsr(S, X)[None],
}


@pytest.mark.parametrize("name", _fast({"matvec", "index_none"}, OPERATORS))
def test_operators_match_jax(name: str) -> None:
    both(OPERATORS[name], jit=True)


OPERATOR_ERRORS: dict[str, Callable[[Sparse], Any]] = {
    "rmatmul": lambda S: S.np.asarray(W) @ bcsr(S, X),
    "sparse_sparse": lambda S: bcsr(S, X) @ bcsr(S, X.T),
    "shapes": lambda S: bcsr(S, X) @ S.np.ones(5),
    "transpose": lambda S: bcsr(S, X).T,
    "transpose_axes": lambda S: bcsr(S, X).transpose((1, 0)),
    "neg": lambda S: -bcsr(S, X),
    "mul": lambda S: bcsr(S, X) * 2,
    "add": lambda S: bcsr(S, X) + bcsr(S, X),
    "sum": lambda S: bcsr(S, X).sum(),
    "index": lambda S: bcsr(S, X)[0],
    "index_columns": lambda S: bcsr(S, X)[:, 1],
}


@pytest.mark.parametrize("name", sorted(OPERATOR_ERRORS))
def test_operator_errors_match_jax(name: str) -> None:
    both_raise(OPERATOR_ERRORS[name])


def _sparsified(S: Sparse, f: Callable[[Sparse, Any], Any], m: Any) -> Any:
    return S.sparse.sparsify(lambda m: f(S, m))(m)


def _zero_preserving(S: Sparse) -> Any:
    @S.sparse.custom_jvp
    def f(x: Any) -> Any:
        return S.np.sin(x) ** 3

    f.defjvp(lambda primals, tangents: (
        f(primals[0]), 3 * S.np.sin(primals[0]) ** 2 * S.np.cos(primals[0]) * tangents[0]))
    return f


SPARSIFY: dict[str, Callable[[Sparse, Any], Any]] = {
    "sin": lambda S, m: S.np.sin(m),
    "matvec_after_sin": lambda S, m: S.np.sin(m) @ V,
    "neg_abs_sign": lambda S, m: (-m, S.np.abs(m), S.np.sign(m), S.np.expm1(m)),
    "square_sqrt": lambda S, m: (S.np.square(m), S.np.sqrt(S.np.abs(m)), m ** 3),
    "astype": lambda S, m: m.astype(S.np.int32),
    "real_imag_conj": lambda S, m: (S.np.real(m), S.np.imag(m), S.np.conj(m)),
    "stack": lambda S, m: S.np.stack([m, m]),
    "concatenate": lambda S, m: S.np.concatenate([m, S.np.sin(m)], 1),
    "broadcast_to": lambda S, m: S.np.broadcast_to(m, (2, 3, 4)),
    "expand_dims": lambda S, m: S.np.expand_dims(m, 0),
    "todense": lambda S, m: S.sparse.todense(S.np.sin(m)),
    "tree_out": lambda S, m: {"a": m @ V, "b": [S.np.tanh(m)]},
    "custom_jvp": lambda S, m: _zero_preserving(S)(m),
}


@pytest.mark.parametrize("name", _fast({"neg_abs_sign", "stack", "custom_jvp"}, SPARSIFY))
def test_sparsify_matches_jax(name: str) -> None:
    # With a duplicate entry: a nonlinear function merges duplicates first.
    both(lambda S: _sparsified(S, SPARSIFY[name], _duplicated(S)), jit=True)


@pytest.mark.slow
def test_sparsify_with_dense_and_batched_arguments() -> None:
    both(lambda S: S.sparse.sparsify(lambda m, v: (S.np.abs(m) @ v, S.np.sin(v)))(
        bcsr(S, A, 1), V), jit=True)


SPARSIFY_ERRORS: dict[str, Callable[[Sparse, Any], Any]] = {
    "densifying": lambda S, m: S.np.exp(m),
    "negative_power": lambda S, m: m ** 0,
    "mul": lambda S, m: m * 2,
    "add": lambda S, m: m + m,
    "transpose": lambda S, m: m.T,
    "sum": lambda S, m: m.sum(0),
    "inner_jit": lambda S, m: S.jit(S.np.sin)(m),
    "cumsum": lambda S, m: S.np.cumsum(m, 0),
    "bcoo_operand": lambda S, m: m @ S.sparse.BCOO.fromdense(X.T, nse=7),
    "dense_lhs": lambda S, m: S.np.asarray(W) @ m,
    "new_sparse_dimension": lambda S, m: m[:, None],
}


@pytest.mark.parametrize("name", _fast({"densifying", "negative_power", "mul", "inner_jit",
                                        "dense_lhs"}, SPARSIFY_ERRORS))
def test_sparsify_errors_match_jax(name: str) -> None:
    f = SPARSIFY_ERRORS[name]
    if name == "bcoo_operand":
        got = both_raise(lambda S: S.sparse.sparsify(lambda m, b: m @ b)(
            bcsr(S, X), S.sparse.BCOO.fromdense(X.T, nse=7)))
    else:
        got = both_raise(lambda S: _sparsified(S, f, bcsr(S, X)))
    if name in ("densifying", "negative_power", "mul", "inner_jit"):
        assert str(got) == str(raised(lambda: JAX.jit(lambda: _sparsified(JAX, f,
                                                                          bcsr(JAX, X)))()))


# -- transformations ------------------------------------------------------------------------


def _with_data(S: Sparse, data: Any, like: np.ndarray, n_batch: int = 0) -> Any:
    m = bcsr(S, like, n_batch)
    return S.sparse.BCSR((data, m.indices, m.indptr), shape=like.shape)


def _data(S: Sparse, x: np.ndarray, n_batch: int = 0) -> Any:
    return bcsr(S, x, n_batch).data


TRANSFORMS: dict[str, Callable[[Sparse], Any]] = {
    "vmap_matvec": lambda S: S.vmap(lambda m: m @ V)(bcsr(S, A, 1)),
    "vmap_bcsr_out": lambda S: S.vmap(S.sparse.sparsify(S.np.sin))(bcsr(S, A, 1)),
    "vmap_fromdense": lambda S: S.vmap(lambda x: S.sparse.BCSR.fromdense(x, nse=5))(A),
    "vmap_todense": lambda S: S.vmap(lambda m: m.todense())(bcsr(S, A, 1)),
    "vmap_extract": lambda S: S.vmap(lambda x: S.sparse.bcsr_extract(
        bcsr(S, X).indices, bcsr(S, X).indptr, x))(A),
    "vmap_dense_operand": lambda S: S.vmap(lambda v: bcsr(S, X) @ v)(S.np.asarray(N.T)),
    "vmap_data": lambda S: S.vmap(lambda d: _with_data(S, d, X) @ V)(
        S.np.stack([_data(S, X), 2 * _data(S, X)])),
    "vmap_sum_duplicates": lambda S: S.vmap(lambda m: m.sum_duplicates(nse=6))(
        bcsr(S, A, 1)),
    "grad_data": lambda S: S.grad(lambda d: (_with_data(S, d, X) @ V).sum())(_data(S, X)),
    "grad_both": lambda S: S.grad(lambda d, v: (_with_data(S, d, X) @ v ** 2).sum(),
                                  argnums=(0, 1))(_data(S, X), V),
    "grad_batched": lambda S: S.grad(lambda d: S.sparse.bcsr_dot_general(
        _with_data(S, d, A, 1), S.np.ones((2, 4, 5)),
        dimension_numbers=(([2], [1]), ([0], [0]))).sum())(_data(S, A, 1)),
    "grad_todense": lambda S: S.grad(lambda d: (_with_data(S, d, X).todense() ** 2).sum())(
        _data(S, X)),
    "grad_fromdense": lambda S: S.grad(lambda x: (S.sparse.BCSR.fromdense(x, nse=7) @ V
                                                  ).sum())(X),
    "grad_extract": lambda S: S.grad(lambda x: (S.sparse.bcsr_extract(
        bcsr(S, X).indices, bcsr(S, X).indptr, x) ** 2).sum())(X),
    "grad_sparsified": lambda S: S.grad(lambda v: S.sparse.sparsify(
        lambda m, v: (S.np.sin(m) @ v).sum())(bcsr(S, X), v))(V),
    "sparse_grad": lambda S: S.sparse.grad(lambda m: (m @ V).sum())(bcsr(S, X)),
    "jvp": lambda S: S.jvp(lambda d, v: _with_data(S, d, X) @ v, (_data(S, X), V),
                           (S.np.ones_like(_data(S, X)), S.np.ones(4))),
}


@pytest.mark.parametrize("name", _fast({"vmap_matvec", "vmap_bcsr_out", "grad_both",
                                        "grad_fromdense", "sparse_grad", "jvp"}, TRANSFORMS))
def test_transformations_match_jax(name: str) -> None:
    both(TRANSFORMS[name], jit=True)


@pytest.mark.slow
def test_grad_eagerly_matches_jax() -> None:
    both(TRANSFORMS["grad_both"])


def test_vmap_over_an_unbatched_array_raises() -> None:
    # (JAX says the mapped axis is not a batch dimension; plait's vmap maps the buffers,
    # whose sizes differ: its error names them.)
    both_raise(lambda S: S.vmap(lambda m: m @ V)(bcsr(S, X)))


# -- properties -----------------------------------------------------------------------------


_LAYOUTS = {(0, 0): (3, 4), (1, 0): (2, 3, 4), (0, 1): (3, 4, 2)}


@functools.partial(plait.jit, static_argnums=(1, 2))
def _round_trip(x: Any, n_batch: int, n_dense: int) -> list[Any]:
    # (nse the most elements a matrix can have: one compilation per layout)
    m = BCSR.fromdense(x, n_batch=n_batch, n_dense=n_dense, nse=12)
    again = BCSR.from_bcoo(m.to_bcoo())
    return [m.todense(), m.to_bcoo().todense(), m.data, m.indices, m.indptr,
            again.data, again.indices, again.indptr]


@settings(max_examples=10, deadline=None)
@given(st.sampled_from(sorted(_LAYOUTS)), st.data())
def test_fromdense_todense_round_trip(layout: tuple[int, int], data: st.DataObject) -> None:
    x = data.draw(hnp.arrays(np.float32, _LAYOUTS[layout],
                             elements=st.sampled_from([0.0, 0.0, 1.5, -2.0])))
    dense, via_bcoo, *buffers = _round_trip(x, *layout)
    np.testing.assert_array_equal(dense, x)
    np.testing.assert_array_equal(via_bcoo, x)
    for a, b in zip(buffers[:3], buffers[3:]):
        np.testing.assert_array_equal(a, b)
    if layout == (0, 0):  # the stored entries are scipy's CSR ones, then padding
        csr = scipy.sparse.csr_matrix(x)
        data_, indices, indptr = buffers[:3]
        np.testing.assert_array_equal(data_[:csr.nnz], csr.data)
        np.testing.assert_array_equal(data_[csr.nnz:], 0)
        np.testing.assert_array_equal(indices[:csr.nnz], csr.indices)
        np.testing.assert_array_equal(indices[csr.nnz:], 4)
        np.testing.assert_array_equal(indptr, csr.indptr)

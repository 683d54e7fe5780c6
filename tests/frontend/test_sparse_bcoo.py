"""plait.experimental.sparse's BCOO arrays against jax.experimental.sparse 0.10.2: the
conversions from and to dense arrays in every layout and dtype, the index bookkeeping
(sorting, summing duplicates), transposes, reductions and reshapes, the constructors,
the pytree, and the errors.  Data and indices are JAX's bit for bit.  (Products,
transformations and ``sparsify`` are in test_sparse_products.py.)"""

from __future__ import annotations

from typing import Any

import hypothesis.extra.numpy as hnp
import numpy as np
import pytest
import scipy.sparse  # type: ignore[import-untyped]  # scipy ships no stubs
from hypothesis import given, settings
from hypothesis import strategies as st

import plait
import plait.experimental.sparse as sparse
import plait.numpy as pnp
from plait.errors import ConcretizationTypeError
from tests.frontend.jax_oracle import both_x64
from tests.frontend.sparse_oracle import (
    JAX,
    PLAIT,
    Sparse,
    both,
    both_raise,
    default_nse,
    fromdense,
    sparse_array,
)

X = sparse_array((3, 4), seed=1)
A = sparse_array((2, 3, 4), seed=2)

# -- fromdense and todense ------------------------------------------------------------------


def _layouts(shape: tuple[int, ...]) -> list[tuple[int, int]]:
    return [(nb, nd) for nb in range(len(shape) + 1) for nd in range(len(shape) - nb + 1)]


FROMDENSE = [(shape, nb, nd, dtype, nse)
             for shape in [(5,), (3, 4), (2, 3, 4)] for nb, nd in _layouts(shape)
             for dtype in [np.float32, np.int32, np.complex64] for nse in [None, 6]]
# The default run: a matrix, a 3-D array with batch and dense dimensions, each dtype.
_FAST = {FROMDENSE.index(case) for case in [
    ((3, 4), 0, 0, np.float32, None), ((2, 3, 4), 1, 1, np.float32, None),
    ((3, 4), 0, 1, np.complex64, None)]}


def _fromdense_program(x: np.ndarray, n_batch: int, n_dense: int, nse: int | None) -> Any:
    def program(S: Sparse) -> Any:
        m = S.sparse.BCOO.fromdense(x, n_batch=n_batch, n_dense=n_dense, nse=nse)
        return m, m.todense(), S.sparse.bcoo_todense(m)
    return program


@pytest.mark.parametrize("shape, n_batch, n_dense, dtype, nse", [
    pytest.param(*case, marks=() if i in _FAST else pytest.mark.slow)
    for i, case in enumerate(FROMDENSE)])
def test_fromdense_and_todense_match_jax(shape: tuple[int, ...], n_batch: int, n_dense: int,
                                         dtype: Any, nse: int | None) -> None:
    x = sparse_array(shape, dtype, seed=len(shape))
    nse = default_nse(x, n_batch, n_dense) if nse is None else nse
    m, dense, _ = both(_fromdense_program(x, n_batch, n_dense, nse), jit=True)
    assert m.nse == nse and (m.n_batch, m.n_dense) == (n_batch, n_dense)
    if nse >= default_nse(x, n_batch, n_dense):
        np.testing.assert_array_equal(dense, x)


@pytest.mark.slow
@pytest.mark.parametrize("shape, n_batch, n_dense, dtype, nse", FROMDENSE)
def test_fromdense_and_todense_eagerly_match_jax(shape: tuple[int, ...], n_batch: int,
                                                 n_dense: int, dtype: Any,
                                                 nse: int | None) -> None:
    x = sparse_array(shape, dtype, seed=len(shape))
    m, _, _ = both(_fromdense_program(x, n_batch, n_dense, nse))
    assert repr(m) == repr(_fromdense_program(x, n_batch, n_dense, nse)(JAX)[0])


def test_default_nse_eagerly() -> None:
    m, dense, _ = both(_fromdense_program(X, 0, 0, None))
    assert m.nse == default_nse(X) == 7 and repr(m) == "BCOO(float32[3, 4], nse=7)"
    np.testing.assert_array_equal(dense, X)


def test_nse_pads_or_truncates_as_jax() -> None:
    both(lambda S: [(m, m.todense()) for m in (S.sparse.BCOO.fromdense(X, nse=n)
                                               for n in (0, 2, 9))], jit=True)


@pytest.mark.parametrize("index_dtype", [
    np.int8, *(pytest.param(d, marks=pytest.mark.slow) for d in (np.int16, np.uint8,
                                                                 np.uint32))])
def test_index_dtype(index_dtype: Any) -> None:
    got = both(lambda S: S.sparse.BCOO.fromdense(X, index_dtype=index_dtype, nse=7), jit=True)
    assert got.indices.dtype == index_dtype


@pytest.mark.slow
def test_bool_data_becomes_int32_as_in_jax() -> None:
    # (JAX 0.10.2 zeroes the padding of a bool array with a weak int: the data are int32.)
    got = both(lambda S: S.sparse.BCOO.fromdense(X != 0))
    assert got.dtype == np.int32 and got.data.aval.weak_type


@pytest.mark.slow
@pytest.mark.parametrize("dtype", [np.float64, np.complex128, np.int64])
def test_64_bit_dtypes(dtype: Any) -> None:
    x = sparse_array((3, 4), dtype, seed=3)
    with both_x64():
        got = both(lambda S: S.sparse.BCOO.fromdense(x, index_dtype=np.int64, n_batch=1))
        assert got.dtype == dtype and got.indices.dtype == np.int64
        both(lambda S: S.sparse.BCOO.fromdense(x).todense())


def test_attributes_and_repr() -> None:
    m = sparse.BCOO((np.ones((2, 3, 4), np.float32), np.zeros((2, 3, 1), np.int32)),
                    shape=(2, 3, 4), indices_sorted=True)
    assert (m.shape, m.dtype, m.ndim, m.size, m.nse) == ((2, 3, 4), np.dtype(np.float32), 3,
                                                         24, 3)
    assert (m.n_batch, m.n_sparse, m.n_dense, len(m)) == (1, 1, 1, 2)
    assert (m.indices_sorted, m.unique_indices) == (True, False)
    assert repr(m) == "BCOO(float32[2, 3, 4], nse=3, n_batch=1, n_dense=1)"
    flat = sparse.BCOO((np.ones(7, np.float32), np.zeros((7, 2), np.int32)), shape=(3, 4))
    assert repr(flat) == "BCOO(float32[3, 4], nse=7)" and flat.T.shape == (4, 3)
    seen: list[str] = []
    plait.jit(lambda m: seen.append(repr(m)))(m)
    assert seen == ["Tracer[BCOO(float32[2, 3, 4], nse=3, n_batch=1, n_dense=1)]"]
    with pytest.raises(TypeError, match="unhashable"):
        hash(m)


def test_constructor_sums_duplicates_and_ignores_padding() -> None:
    data = [1.0, 2.0, 3.0, 4.0]
    indices = [[0, 0], [2, 1], [0, 0], [3, 4]]  # a duplicate, and a padding entry

    def program(S: Sparse) -> Any:
        m = S.sparse.BCOO((S.np.array(data), S.np.array(indices)), shape=(3, 4))
        return m.todense(), m
    dense, m = both(program)
    assert dense[0, 0] == 4.0 and dense[2, 1] == 2.0 and dense.sum() == 6.0
    assert (m.indices_sorted, m.unique_indices) == (False, False)
    from_lists = sparse.BCOO((data, indices), shape=[3, 4])
    assert from_lists.shape == (3, 4) and from_lists.nse == 4


def test_from_scipy_sparse() -> None:
    coo = scipy.sparse.random(4, 5, density=0.4, format="csr", random_state=0,
                              dtype=np.float32)
    both(lambda S: S.sparse.BCOO.from_scipy_sparse(coo))
    np.testing.assert_array_equal(sparse.BCOO.from_scipy_sparse(coo).todense(), coo.toarray())


# -- pytrees --------------------------------------------------------------------------------


def test_pytree_flatten_and_unflatten() -> None:
    m = sparse.BCOO.fromdense(A, n_batch=1)
    leaves, tree = plait.tree_util.tree_flatten(m)
    assert len(leaves) == 2 and leaves[0] is m.data and leaves[1] is m.indices
    again = plait.tree_util.tree_unflatten(tree, leaves)
    assert isinstance(again, sparse.BCOO) and again._info == m._info
    assert plait.tree_util.tree_structure(sparse.BCOO.fromdense(A, n_batch=1)) == tree
    unflagged = sparse.BCOO((m.data, m.indices), shape=m.shape)  # (the flags are static)
    assert plait.tree_util.tree_structure(unflagged) != tree
    doubled = plait.tree_util.tree_map(lambda x: x * 2 if x.dtype == np.float32 else x, m)
    np.testing.assert_array_equal(doubled.todense(), 2 * A)
    # Through jit and back, flags and all.
    out = plait.jit(lambda m: m)(m)
    assert out._info == m._info
    np.testing.assert_array_equal(out.todense(), A)


# -- index bookkeeping ----------------------------------------------------------------------

DUPLICATED = {
    "data": np.array([[1.0, 2.0, 3.0, 0.0, 5.0], [4.0, 0.0, -4.0, 2.0, 1.0]], np.float32),
    "indices": np.array([[[1, 0], [0, 2], [1, 0], [3, 4], [0, 0]],
                         [[2, 3], [0, 0], [2, 3], [1, 1], [9, 0]]], np.int32),
}


def _duplicated(S: Sparse, n_batch: int) -> Any:
    data, indices = DUPLICATED["data"], DUPLICATED["indices"]
    if n_batch == 0:
        return S.sparse.BCOO((data[1], indices[1]), shape=(3, 4))
    return S.sparse.BCOO((data, indices), shape=(2, 3, 4))


@pytest.mark.slow
@pytest.mark.parametrize("n_batch", [0, 1])
def test_sum_duplicates_with_default_nse_match_jax(n_batch: int) -> None:
    # The default nse depends on the values: eagerly only.
    both(lambda S: (_duplicated(S, n_batch).sum_duplicates(),
                    S.sparse.bcoo_sum_duplicates(_duplicated(S, n_batch))))


@pytest.mark.parametrize("n_batch", [pytest.param(0, marks=pytest.mark.slow), 1])
def test_sum_duplicates_and_sort_indices_match_jax(n_batch: int) -> None:
    both(lambda S: (_duplicated(S, n_batch).sum_duplicates(nse=7),
                    _duplicated(S, n_batch).sum_duplicates(nse=1, remove_zeros=False),
                    _duplicated(S, n_batch).sort_indices(),
                    S.sparse.bcoo_sort_indices(_duplicated(S, n_batch)).todense()), jit=True)


@pytest.mark.slow
def test_sum_duplicates_with_dense_and_broadcast_batch_dimensions() -> None:
    m = lambda S: S.sparse.BCOO(  # noqa: E731
        (S.np.ones((1, 3, 2)), S.np.array([[[1], [0], [1]], [[2], [2], [0]]])), shape=(2, 4, 2))
    both(lambda S: (m(S).sum_duplicates(), m(S).sort_indices(), m(S).todense()))


# -- structure ------------------------------------------------------------------------------


STRUCTURE: dict[str, Any] = {
    "transpose": lambda S: fromdense(S, A).transpose((2, 0, 1)),
    "transpose_batched": lambda S: fromdense(S, A, n_batch=1).transpose((0, 2, 1)),
    "transpose_dense": lambda S: fromdense(S, A, n_dense=1).transpose((1, 0, 2)),
    "T": lambda S: fromdense(S, X).T,
    "transpose_keeps_sorted": lambda S: S.sparse.bcoo_transpose(
        fromdense(S, A, n_batch=1), permutation=(0, 1, 2)),
    "sum_axis": lambda S: fromdense(S, A, n_batch=1, n_dense=1).sum(2),
    "sum_batch": lambda S: fromdense(S, A, n_batch=1).sum(0),
    "sum_all": lambda S: fromdense(S, A, n_batch=1).sum(),
    "reduce_sum": lambda S: S.sparse.bcoo_reduce_sum(fromdense(S, A), axes=(0, 2)),
    "broadcast_in_dim": lambda S: S.sparse.bcoo_broadcast_in_dim(
        fromdense(S, X), shape=(5, 3, 4), broadcast_dimensions=(1, 2)),
    "broadcast_dense": lambda S: S.sparse.bcoo_broadcast_in_dim(
        fromdense(S, X, n_dense=1), shape=(3, 4, 2), broadcast_dimensions=(0, 1)),
    "concatenate_sparse": lambda S: S.sparse.bcoo_concatenate(
        [fromdense(S, A), fromdense(S, A[:1])], dimension=0),
    "concatenate_batch": lambda S: S.sparse.bcoo_concatenate(
        [fromdense(S, A, n_batch=1), fromdense(S, A[:, :1], n_batch=1)],
        dimension=1),
    "squeeze": lambda S: S.sparse.bcoo_squeeze(fromdense(S, A[:1], n_batch=1),
                                               dimensions=(0,)),
    "squeeze_sparse": lambda S: S.sparse.bcoo_squeeze(fromdense(S, A[:, :1]),
                                                      dimensions=(1,)),
    "slice": lambda S: S.sparse.bcoo_slice(fromdense(S, A), start_indices=(0, 1, 0),
                                           limit_indices=(2, 3, 4), strides=(1, 1, 2)),
    "slice_batched": lambda S: S.sparse.bcoo_slice(fromdense(S, A, n_batch=1,
                                                                           n_dense=1),
                                                   start_indices=(1, 1, 1),
                                                   limit_indices=(2, 3, 3)),
    "reshape": lambda S: fromdense(S, A, n_batch=1).reshape(2, 12),
    "reshape_sparse": lambda S: S.sparse.bcoo_reshape(fromdense(S, X),
                                                      new_sizes=(2, 6)),
    "update_layout_batch": lambda S: fromdense(S, A, n_batch=1).update_layout(
        n_batch=0),
    "update_layout_dense": lambda S: S.sparse.bcoo_update_layout(
        fromdense(S, A, n_dense=1), n_dense=0),
    "update_layout_up": lambda S: S.sparse.bcoo_update_layout(
        fromdense(S, A), n_batch=1, n_dense=1, on_inefficient=None),
    "extract": lambda S: S.sparse.bcoo_extract(fromdense(S, A), A * 2),
    "extract_duplicates": lambda S: S.sparse.bcoo_extract(_duplicated(S, 1), A),
    "extract_assume_unique": lambda S: S.sparse.bcoo_extract(_duplicated(S, 1), A,
                                                             assume_unique=True),
}
_STRUCTURE_FAST = {"transpose_batched", "sum_axis", "broadcast_in_dim", "concatenate_sparse",
                   "slice", "reshape", "update_layout_batch", "extract_duplicates"}


@pytest.mark.parametrize("name", [
    pytest.param(n, marks=() if n in _STRUCTURE_FAST else pytest.mark.slow)
    for n in sorted(STRUCTURE)])
def test_structure_matches_jax(name: str) -> None:
    both(STRUCTURE[name], jit=True)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(STRUCTURE))
def test_structure_eagerly_matches_jax(name: str) -> None:
    both(STRUCTURE[name])


def test_update_layout_warns_or_refuses() -> None:
    m = sparse.empty((2, 3, 4), nse=2)
    with pytest.raises(sparse.SparseEfficiencyError, match="increasing n_dense from 0 to 1"):
        m.update_layout(n_dense=1)
    with pytest.warns(sparse.SparseEfficiencyWarning, match="increasing n_batch from 0 to 1"):
        m.update_layout(n_batch=1, on_inefficient="warn")
    assert issubclass(sparse.SparseEfficiencyError, ValueError)


# -- constructors ---------------------------------------------------------------------------

CONSTRUCTORS: dict[str, Any] = {
    "eye": lambda S: S.sparse.eye(4, 3, k=-1),
    "eye_batched": lambda S: S.sparse.eye(3, 5, k=2, n_batch=1),
    "eye_batched_below": lambda S: S.sparse.eye(3, 5, k=-1, n_batch=1),
    "eye_dense": lambda S: S.sparse.eye(3, n_dense=1, dtype=S.np.int32),
    "eye_out_of_range": lambda S: S.sparse.eye(3, k=5),
    "empty": lambda S: S.sparse.empty((2, 3, 4), n_batch=1, nse=2, dtype=S.np.int32),
    # (JAX asks for float64 by default, and warns that it gets float32.)
    "random": lambda S: S.sparse.random_bcoo(S.random.key(0), (3, 4), dtype=np.float32),
    "random_batched_sorted": lambda S: S.sparse.random_bcoo(
        S.random.key(1), (2, 5, 4), n_batch=1, nse=3, sorted_indices=True, dtype=np.float32),
    "random_dense_normal": lambda S: S.sparse.random_bcoo(
        S.random.key(2), (5, 4, 2), n_dense=1, unique_indices=False,
        generator=S.random.normal, dtype=np.float32),
}


_CONSTRUCTORS_FAST = {"eye", "eye_batched", "empty", "random_batched_sorted"}


@pytest.mark.parametrize("name", [
    pytest.param(n, marks=() if n in _CONSTRUCTORS_FAST else pytest.mark.slow)
    for n in sorted(CONSTRUCTORS)])
def test_constructors_match_jax(name: str) -> None:
    # (A dense layout of eye converts the dense identity: no nse under jit.)
    both(lambda S: (CONSTRUCTORS[name](S), CONSTRUCTORS[name](S).todense()),
         jit=name != "eye_dense")


# -- errors ---------------------------------------------------------------------------------

ERRORS: dict[str, tuple[Any, str]] = {
    "data_shape": (lambda S: S.sparse.BCOO((S.np.ones(3), S.np.zeros((2, 2), int)),
                                           shape=(3, 3)),
                   r"Invalid data.shape=\(3,\) for nse=2"),
    "batch_shape": (lambda S: S.sparse.BCOO((S.np.ones((2, 2)), S.np.zeros((3, 2, 1), int)),
                                            shape=(3, 3)),
                    "data batch dimensions not compatible"),
    "indices_rank": (lambda S: S.sparse.BCOO((S.np.ones(2), S.np.zeros(2, int)), shape=(3, 3)),
                     r"expected indices of shape batch \+ \(nse, n_sparse\)"),
    "n_batch_too_large": (lambda S: S.sparse.BCOO.fromdense(X, n_batch=3),
                          "expected n_batch >= 0, n_dense >= 0 and n_batch"),
    "nse_negative": (lambda S: S.sparse.BCOO.fromdense(X, nse=-1),
                     "expected nse >= 0, but got nse=-1"),
    "nse_traced": (lambda S: S.jit(S.sparse.BCOO.fromdense)(X),
                   "The error arose for the nse argument of bcoo_fromdense"),
    "sum_duplicates_traced": (lambda S: S.jit(lambda m: m.sum_duplicates())(
        S.sparse.BCOO.fromdense(X)), "nse must be specified"),
    "not_a_permutation": (lambda S: S.sparse.BCOO.fromdense(X).transpose((0, 0)),
                          "isn't a permutation of operand dimensions"),
    "batch_permutation": (lambda S: S.sparse.empty((3, 4), n_batch=1).transpose((1, 0)),
                          "cannot permute batch axes with non-batch axes"),
    "inefficient_layout": (lambda S: S.sparse.empty((2, 3, 4)).update_layout(n_dense=1),
                           "results in inefficient storage"),
    "extract_shape": (lambda S: S.sparse.bcoo_extract(S.sparse.empty((3, 4)), A),
                      "shape mismatch"),
    "squeeze_size": (lambda S: S.sparse.bcoo_squeeze(S.sparse.empty((2, 3, 4)), dimensions=(1,)),
                     "cannot select an axis to squeeze out"),
    "slice_bounds": (lambda S: S.sparse.bcoo_slice(S.sparse.empty((2, 3, 4)),
                                                   start_indices=(0, 1, 0),
                                                   limit_indices=(2, 5, 4)),
                     "bcoo_slice: invalid indices"),
    "concatenate_dense": (lambda S: S.sparse.bcoo_concatenate(
        [S.sparse.empty((2, 3, 4), n_dense=1)] * 2, dimension=2),
        "Concatenation along dense dimensions"),
    "broadcast_sparse": (lambda S: S.sparse.bcoo_broadcast_in_dim(
        S.sparse.empty((3, 4)), shape=(3, 2, 4), broadcast_dimensions=(0, 2)),
        "Adding sparse dimensions with lengths != 1"),
    "format": (lambda S: S.sparse.empty((2, 3), sparse_format="foo"),
               "sparse_format='foo' not recognized"),
    "vmap_unbatched": (lambda S: S.vmap(lambda m: m.todense())(S.sparse.BCOO.fromdense(X)),
                       "expected indices of shape batch"),
    "grad_of_bcoo": (lambda S: S.grad(lambda m: m.todense().sum())(S.sparse.empty((3, 4))),
                     "grad requires real- or complex-valued inputs"),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_match_jax(name: str) -> None:
    program, message = ERRORS[name]
    err = both_raise(program)
    assert pytest.raises(type(err), program, PLAIT).match(message)


def test_errors_where_jax_fails_an_assertion() -> None:
    # JAX 0.10.2 fails a bare ``assert`` on these; plait says what is wrong.
    with pytest.raises(TypeError, match="expected indices of an integer dtype, but got float32"):
        sparse.BCOO((pnp.ones(2), pnp.zeros((2, 2))), shape=(3, 3))
    with pytest.raises(TypeError, match="expected an integer index_dtype, but got float32"):
        sparse.BCOO.fromdense(X, index_dtype=np.float32)
    with pytest.raises(ValueError, match="have 0 batch and 3 sparse dimensions, more than"):
        sparse.BCOO((pnp.ones(2), pnp.zeros((2, 3), int)), shape=(3, 3))
    with pytest.raises(ConcretizationTypeError):
        plait.jit(lambda x: sparse.bcoo_fromdense(x))(X)


# -- properties -----------------------------------------------------------------------------


@st.composite
def _dense_and_layout(draw: st.DrawFn) -> tuple[np.ndarray, int, int]:
    # (Few shapes: each new one compiles.)
    shape = draw(st.sampled_from([(4,), (2, 3, 2)]))
    n_batch = draw(st.integers(0, len(shape)))
    n_dense = draw(st.integers(0, len(shape) - n_batch))
    x = draw(hnp.arrays(np.float32, shape, elements=st.sampled_from([0.0, 0.0, 1.5, -2.0])))
    return x, n_batch, n_dense


@settings(max_examples=15, deadline=None)
@given(_dense_and_layout())
def test_fromdense_todense_round_trip(case: tuple[np.ndarray, int, int]) -> None:
    x, n_batch, n_dense = case
    m = sparse.BCOO.fromdense(x, n_batch=n_batch, n_dense=n_dense)
    np.testing.assert_array_equal(m.todense(), x)
    assert (m.n_batch, m.n_dense) == (n_batch, n_dense)
    if n_batch == n_dense == 0:
        np.testing.assert_array_equal(m.T.todense(), x.T)


# Compiled once per layout, run on every example.
@plait.jit
def _bookkeeping(m: sparse.BCOO) -> list[Any]:
    return [other.todense() for other in (
        m, m.sum_duplicates(nse=m.nse), m.sum_duplicates(nse=m.nse, remove_zeros=False),
        m.sort_indices(), sparse.BCOO.fromdense(m.todense(), n_batch=m.n_batch, nse=m.nse))]


@settings(max_examples=15, deadline=None)
@given(st.integers(0, 1), st.data())
def test_bookkeeping_keeps_the_dense_array(n_batch: int, data: st.DataObject) -> None:
    shape = (2, 3, 2) if n_batch else (3, 2)
    values = data.draw(hnp.arrays(np.float32, (*shape[:n_batch], 5),
                                  elements=st.sampled_from([0.0, 1.0, -2.5])))
    rows = data.draw(hnp.arrays(np.int32, (*shape[:n_batch], 5, 2), elements=st.integers(0, 3)))
    dense, *others = _bookkeeping(sparse.BCOO((values, rows), shape=shape))
    for other in others:
        np.testing.assert_array_equal(other, dense)

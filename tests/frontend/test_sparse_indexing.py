"""plait.experimental.sparse's indexing of BCOO arrays against jax.experimental.sparse
0.10.2: ``M[...]`` in every layout, ``bcoo_dynamic_slice``, ``bcoo_rev``, ``bcoo_gather``,
``bcoo_conv_general_dilated``, the remaining operators (``**``, comparisons, iteration),
sparse-aware differentiation (``sparse.grad`` and the Jacobians), the ``JAXSparse`` base
class, and the submodules.  Data and indices are JAX's bit for bit."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

import hypothesis.extra.numpy as hnp
import jax
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import plait
import plait.experimental.sparse as sparse
from plait.errors import ArgumentError
from tests.frontend.sparse_oracle import (
    JAX,
    PLAIT,
    Sparse,
    both,
    both_raise,
    check,
    fromdense,
    sparse_array,
)

X = np.array([[0, 1, 0, 2, 0], [3, 0, 0, 0, 4], [0, 0, 5, 0, 0], [6, 0, 0, 7, 8]], np.float32)
A = sparse_array((3, 4, 2), seed=3)
LAYOUTS = [(X, 0, 0), (X, 1, 0), (A, 0, 0), (A, 1, 0), (A, 0, 1), (A, 1, 1), (A, 2, 0)]

# -- M[...] --------------------------------------------------------------------------------

INDICES: dict[str, Any] = {
    "int": 0, "negative int": -1, "slice": slice(1, 3), "reversed": slice(None, None, -1),
    "strided": slice(None, None, 2), "pair": (1, 1), "column": (slice(None), 1),
    "mixed": (-1, slice(1, None)), "ellipsis": (Ellipsis, 1), "new axis": (None, 1),
    "array": np.array([0, 2]), "array of negatives": np.array([-1, 0, -1]),
    "two arrays": (np.array([0, 2]), np.array([1, 0])), "strided both": (
        slice(None, None, 2), slice(None, None, -2)),
}


# Where JAX 0.10.2 itself fails (its gather of an array with dense dimensions emits an
# invalid reshape), plait is checked against NumPy only.
JAX_FAILS = {(name, layout) for name in ("array", "array of negatives", "two arrays")
             for layout in (4, 5)}


@pytest.mark.parametrize("layout", range(len(LAYOUTS)))
@pytest.mark.parametrize("name", list(INDICES))
def test_indexing_matches_jax(name: str, layout: int) -> None:
    """``M[index]`` gives JAX's BCOO array (buffers bit for bit), in every layout, and
    NumPy's values."""
    x, n_batch, n_dense = LAYOUTS[layout]
    index = INDICES[name]

    def program(S: Sparse) -> Any:
        return fromdense(S, x, n_batch, n_dense)[index]
    if (name, layout) in JAX_FAILS:
        raised_by_jax(lambda: JAX.jit(lambda: program(JAX))())
        got = plait.jit(lambda: program(PLAIT))()
    else:
        got = both(program, jit=True)
    np.testing.assert_array_equal(np.asarray(got.todense()), x[index])


def test_indexing_eagerly_and_at_a_traced_index_matches_jax() -> None:
    """Eager indexing, and an index that is a traced argument of ``jit``."""
    both(lambda S: fromdense(S, X, 1)[1:3])
    for i in (2, -1):
        both(lambda S, i: fromdense(S, X)[i], i, jit=True)
        both(lambda S, i: fromdense(S, X, 1)[:, i], i, jit=True)


def test_iteration_gives_the_rows() -> None:
    """``for row in M`` gives JAX's rows."""
    both(lambda S: list(fromdense(S, X)), jit=True)


# -- bcoo_dynamic_slice, bcoo_rev, bcoo_gather ------------------------------------------

SLICES = [((1, 1), (2, 3)), ((3, 3), (2, 2)), ((-1, 0), (1, 5)), ((0, 0), (4, 5)),
          ((2, 4), (0, 1))]


@pytest.mark.parametrize("n_batch", [0, 1])
@pytest.mark.parametrize("k", range(len(SLICES)))
def test_dynamic_slice_matches_jax(k: int, n_batch: int) -> None:
    """Starts traced (clamped into the array, as JAX clamps them) and static sizes."""
    starts, sizes = SLICES[k]
    both(lambda S, *s: S.sparse.bcoo_dynamic_slice(fromdense(S, X, n_batch), s, sizes),
         *(np.int32(s) for s in starts), jit=True)


def test_dynamic_slice_of_dense_dimensions_matches_jax() -> None:
    """A window over batch, sparse and dense dimensions at once."""
    both(lambda S, i: S.sparse.bcoo_dynamic_slice(fromdense(S, A, 1, 1), (i, 1, i),
                                                  (2, 2, 1)), np.int32(1), jit=True)


@pytest.mark.parametrize("dims", [(0,), (1,), (0, 1), (2,), (0, 2)])
@pytest.mark.parametrize("layout", [2, 3, 4, 5])
def test_rev_matches_jax(layout: int, dims: tuple[int, ...]) -> None:
    """Reversal of batch, sparse and dense dimensions."""
    x, n_batch, n_dense = LAYOUTS[layout]
    both(lambda S: S.sparse.bcoo_rev(fromdense(S, x, n_batch, n_dense), dims), jit=True)


@pytest.mark.parametrize("n_batch", [0, 1])
def test_gather_with_explicit_dimension_numbers_matches_jax(n_batch: int) -> None:
    """``bcoo_gather`` called directly, with windows narrower than the array, against
    JAX's ``bcoo_gather`` and its dense ``lax.gather``."""
    idx = np.array([[0, 1], [3, 3], [2, 0]], np.int32)

    def program(S: Sparse, gather: Callable[..., Any], m: Any) -> Any:
        dn = S.lax.GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(0,),
                                          start_index_map=(0, 1))
        return gather(m, idx, dn, (1, 2))
    got = both(lambda S: program(S, S.sparse.bcoo_gather, fromdense(S, X, n_batch)), jit=True)
    want = program(JAX, JAX.lax.gather, X)
    np.testing.assert_array_equal(np.asarray(got.todense()), np.asarray(want))


def test_gather_modes_other_than_promise_in_bounds_are_refused() -> None:
    """JAX's NotImplementedError for ``mode='clip'``."""
    def program(S: Sparse, x: Any) -> Any:
        dn = S.lax.GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(0,),
                                          start_index_map=(0,))
        return S.sparse.bcoo_gather(fromdense(S, x), np.array([[0]]), dn, (1, 5), mode="clip")
    assert "mode=clip" in str(both_raise(program, X))


def test_indexing_errors_match_jax() -> None:
    """Too many indices, bad dynamic-slice sizes and bad dimensions to reverse raise JAX's
    exception types."""
    both_raise(lambda S, x: fromdense(S, x)[0, 0, 0], X)
    err = both_raise(lambda S, x: S.sparse.bcoo_dynamic_slice(fromdense(S, x), (0, 0), (5, 1)),
                     X)
    assert "slice_sizes must be less than or equal to operand shape" in str(err)
    both_raise(lambda S, x: S.sparse.bcoo_rev(fromdense(S, x), (2,)), X)


@settings(max_examples=15, deadline=None)
@given(x=hnp.arrays(np.float32, hnp.array_shapes(min_dims=2, max_dims=3, max_side=4),
                    elements=st.sampled_from([0.0, 0.0, 1.5, -2.0])),
       data=st.data())
def test_indexing_agrees_with_numpy(x: np.ndarray, data: st.DataObject) -> None:
    """For any array, layout and basic index, ``M[index].todense()`` is NumPy's
    ``x[index]``."""
    n_batch = data.draw(st.integers(0, x.ndim - 1))
    i = data.draw(st.integers(-x.shape[0], x.shape[0] - 1))
    step = data.draw(st.sampled_from([1, 2, -1]))
    index = (i, slice(None, None, step)) if data.draw(st.booleans()) else (
        slice(None, None, step), i % x.shape[1])
    m = sparse.BCOO.fromdense(x, n_batch=n_batch)
    got = plait.jit(lambda m: m[index].todense())(m)
    np.testing.assert_array_equal(np.asarray(got), x[index])


# -- convolution ---------------------------------------------------------------------------

@pytest.mark.parametrize("padding", ["SAME", "VALID", [(2, 1)], [(0, 4)]])
@pytest.mark.parametrize("which", ["lhs", "rhs", "both"])
def test_conv_matches_jax(which: str, padding: Any) -> None:
    """A 1-D convolution with either or both operands sparse, and under ``sparsify``."""
    x = np.array([[[0, 1, 0, 2, 0, 0, 3, 0]]], np.float32)
    k = np.array([[[1, 0, -2]]], np.float32)

    def program(S: Sparse) -> Any:
        lhs = fromdense(S, x) if which != "rhs" else x
        rhs = fromdense(S, k) if which != "lhs" else k
        return S.sparse.bcoo_conv_general_dilated(lhs, rhs, window_strides=(1,),
                                                  padding=padding)
    both(program, jit=True)
    both(lambda S: S.sparse.sparsify(
        lambda a, b: S.lax.conv_general_dilated(a, b, (1,), padding))(fromdense(S, x), k),
        jit=True)


def test_conv_cases_jax_lacks_are_refused() -> None:
    """Strides (JAX's NotImplementedError) and 2-D images (where JAX fails to unpack,
    plait says what it supports)."""
    x, k = np.ones((1, 1, 4), np.float32), np.ones((1, 1, 2), np.float32)
    both_raise(lambda S, x: S.sparse.bcoo_conv_general_dilated(
        fromdense(S, x), k, window_strides=(2,), padding="SAME"), x)
    with pytest.raises(NotImplementedError, match=r"expected operands of shape \(1, 1, n\)"):
        sparse.bcoo_conv_general_dilated(sparse.BCOO.fromdense(np.ones((1, 1, 3, 3))),
                                         np.ones((1, 1, 2, 2)), window_strides=(1, 1),
                                         padding="SAME")


# -- operators -----------------------------------------------------------------------------

def test_power_and_positive_match_jax() -> None:
    """``M ** 2`` and ``+M`` stay sparse, as in JAX."""
    both(lambda S: (fromdense(S, X, 1) ** 2, +fromdense(S, X)), jit=True)


@pytest.mark.parametrize("op", ["gt", "ge", "lt", "le", "eq", "ne", "rtruediv", "rpow"])
def test_operators_with_dense_results_raise_as_jax(op: str) -> None:
    """Comparisons and ``2 / M`` would be dense: JAX's NotImplementedError, same text."""
    ops: dict[str, Callable[[Any], Any]] = {
        "gt": lambda m: m > 0, "ge": lambda m: m >= 0, "lt": lambda m: m < 0,
        "le": lambda m: m <= 0, "eq": lambda m: m == 0, "ne": lambda m: m != 1,
        "rtruediv": lambda m: 2 / m, "rpow": lambda m: 2 ** m}
    err = both_raise(lambda S, x: ops[op](fromdense(S, x)), X)
    want = str(raised_by_jax(lambda: ops[op](fromdense(JAX, X))))
    assert str(err) == want


def raised_by_jax(f: Callable[[], Any]) -> BaseException:
    try:
        f()
    except Exception as e:  # noqa: BLE001  (any exception is the answer)
        return e
    raise AssertionError("JAX raised nothing")


def test_eliminate_zeros_matches_jax() -> None:
    """``bcoo_eliminate_zeros`` (JAX's ``sparse.bcoo`` module has it) drops explicit
    zeros and sums duplicates."""
    def program(S: Sparse, data: Any, indices: Any) -> Any:
        module = importlib.import_module(S.sparse.__name__ + ".bcoo")
        return module.bcoo_eliminate_zeros(S.sparse.BCOO((data, indices), shape=(3, 3)),
                                           nse=3)
    data = np.array([1., 0., 2., 3.], np.float32)
    indices = np.array([[0, 0], [1, 1], [0, 0], [2, 1]], np.int32)
    both(program, data, indices, jit=True)


# -- sparse-aware differentiation -----------------------------------------------------------

def test_sparse_grad_matches_jax() -> None:
    """The gradient with respect to a sparse argument is sparse, with its indices."""
    y = np.linspace(-1, 1, 5).astype(np.float32)

    def program(S: Sparse, y: Any) -> Any:
        M = fromdense(S, X)

        def loss(M: Any, y: Any) -> Any:
            return (S.np.sin(M @ y) ** 2).sum()
        return (S.sparse.grad(loss)(M, y), S.sparse.grad(loss, argnums=(0, 1))(M, y),
                S.sparse.value_and_grad(loss, argnums=1)(M, y))
    both(program, y, jit=True, exact=False)


def test_sparse_grad_with_aux_and_pytrees_matches_jax() -> None:
    """``has_aux``, a dict argument holding a sparse and a dense leaf, and a lone
    ``argnums`` tuple (unwrapped, as in JAX)."""
    y = np.ones(5, np.float32)

    def program(S: Sparse, b: Any) -> Any:
        params = {"M": fromdense(S, X, 1), "b": b}

        def loss(p: Any) -> Any:
            out = p["M"] @ y + p["b"]
            return (out ** 2).sum(), out
        g, aux = S.sparse.grad(loss, has_aux=True)(params)
        (v, aux2), g2 = S.sparse.value_and_grad(loss, argnums=(0,), has_aux=True)(params)
        return g, aux, v, aux2, g2
    both(program, np.float32(0.5), jit=True, exact=False)


@pytest.mark.parametrize("jac", ["jacfwd", "jacrev", "jacobian"])
def test_sparse_jacobians_match_jax(jac: str) -> None:
    """A Jacobian with respect to a sparse argument has the output's dimensions as batch
    dimensions."""
    v = np.arange(5, dtype=np.float32)

    def program(S: Sparse) -> Any:
        def f(M: Any, v: Any) -> Any:
            return S.np.tanh(M @ v)
        return getattr(S.sparse, jac)(f)(fromdense(S, X), v)
    both(program, jit=True, exact=False)


def test_sparse_grad_through_indexing_matches_jax() -> None:
    """The gradient flows through ``M[idx]`` to the stored values it selects."""
    def program(S: Sparse) -> Any:
        return S.sparse.grad(lambda M: (M[np.array([0, 3])] @ S.np.arange(5.)).sum())(
            fromdense(S, X))
    both(program, jit=True, exact=False)


def test_sparse_grad_argnums_out_of_range_is_refused() -> None:
    """plait's ``ArgumentError``, naming the count (JAX fails an assertion)."""
    with pytest.raises(ArgumentError, match="requires at least 3 positional arguments"):
        sparse.grad(lambda M, y: (M @ y).sum(), argnums=2)(sparse.BCOO.fromdense(X),
                                                            np.ones(5, np.float32))


# -- the base class and the submodules -------------------------------------------------------

def test_bcoo_is_a_jaxsparse() -> None:
    """``isinstance(M, sparse.JAXSparse)`` as in JAX; the base class is abstract."""
    m = sparse.BCOO.fromdense(X)
    assert isinstance(m, sparse.JAXSparse) and isinstance(fromdense(JAX, X), JAX.sparse.JAXSparse)
    with pytest.raises(TypeError, match="abstract"):
        sparse.JAXSparse((), shape=(2,))  # type: ignore[abstract]  # (the point of the test)
    assert (m.size, m.ndim, len(m)) == (20, 2, 4)


SUBMODULES = ["bcoo", "bcsr", "coo", "csr", "api", "linalg", "util", "random", "transform",
              "ad"]


@pytest.mark.parametrize("name", SUBMODULES)
def test_submodules_serve_jaxs_names(name: str) -> None:
    """Each submodule of ``plait.experimental.sparse`` has the public names JAX's has
    (those defined by JAX's sparse package itself; JAX internals excepted)."""
    theirs = importlib.import_module(f"jax.experimental.sparse.{name}")
    ours = importlib.import_module(f"plait.experimental.sparse.{name}")
    internals = {"Buffer", "SparseTrace", "SparseTracer", "SparsifyEnv", "SparsifyValue",
                 "arrays_to_spvalues", "bcoo_impl", "bcsr_impl", "eval_sparse", "impl",
                 "sparsify_fun", "sparsify_raw", "spvalues_to_arrays", "spvalues_to_avals",
                 "flatten_fun_for_sparse_ad", "is_sparse", "BCSR", "bcoo_multiply_dense",
                 "bcoo_multiply_sparse"}
    wanted = {n for n in dir(theirs) if not n.startswith("_") and getattr(
        getattr(theirs, n), "__module__", "").startswith("jax.experimental.sparse")}
    missing = wanted - internals - set(dir(ours))
    assert not missing, missing


def test_the_package_names_match_jaxs() -> None:
    """Every public name of ``jax.experimental.sparse`` is served (primitives aside:
    plait's sparse operations are compositions, not primitives; and ``SparseTracer``, a
    JAX internal)."""
    wanted = {n for n in dir(jax.experimental.sparse) if not n.startswith("_")
              and not n.endswith("_p") and n != "SparseTracer"}
    assert wanted <= set(dir(sparse)), wanted - set(dir(sparse))
    check(PLAIT.sparse.bcoo_fromdense(X), JAX.sparse.bcoo_fromdense(X))


@pytest.mark.parametrize("fmt", ["bcoo", "bcsr", "coo", "csr", "csc"])
def test_empty_and_eye_in_every_format_match_jax(fmt: str) -> None:
    """``sparse.empty`` and ``sparse.eye`` with ``sparse_format`` give JAX's array class
    and dense values; unknown formats raise JAX's exception types (``eye`` has no BCSR,
    as in JAX)."""
    for k in (0, 1, -2):
        if fmt == "bcsr":
            both_raise(lambda S, k: S.sparse.eye(3, 4, k, sparse_format=fmt), k)
            continue
        got, want = sparse.eye(3, 4, k, sparse_format=fmt), JAX.sparse.eye(3, 4, k,
                                                                          sparse_format=fmt)
        assert type(got).__name__ == type(want).__name__
        np.testing.assert_array_equal(np.asarray(got.todense()), np.asarray(want.todense()))
    got, want = sparse.empty((2, 3), sparse_format=fmt), JAX.sparse.empty((2, 3),
                                                                          sparse_format=fmt)
    assert type(got).__name__ == type(want).__name__ and got.shape == want.shape
    np.testing.assert_array_equal(np.asarray(sparse.todense(got)), np.zeros((2, 3)))
    both_raise(lambda S: S.sparse.empty((2, 3), sparse_format="dia"))
    both_raise(lambda S: S.sparse.eye(3, sparse_format="dia"))

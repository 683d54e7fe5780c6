"""unique, unique_values, unique_counts, unique_inverse, unique_all, union1d,
intersect1d, setdiff1d and setxor1d (``plait/frontend/numpy/setops.py``) against
jax.numpy 0.10.2: every flag, with and without size=/fill_value=, eagerly and under
jit, and the errors of traced inputs without size=."""

from __future__ import annotations

import inspect
import itertools
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import plait
from plait.errors import ConcretizationTypeError, NonConcreteBooleanIndexError
from plait.frontend.numpy import setops as sets

COVERED = {"unique", "unique_values", "unique_counts", "unique_inverse", "unique_all",
           "intersect1d", "union1d", "setdiff1d", "setxor1d"}
"""The functions this file tests (the namespace coverage test of test_numpy.py reads it)."""

# Few distinct values, so that duplicates, NaNs and both zeros are common.
VALUES: dict[str, list[Any]] = {
    "float32": [np.nan, -0.0, 0.0, 1.0, -1.0, 2.5, np.inf],
    "int32": [-2, 0, 1, 3, 7],
    "bool": [False, True],
}
DTYPES = sorted(VALUES)
A = np.array([3.0, 1.0, np.nan, 1.0, -0.0, 0.0, np.nan, 2.0], np.float32)
B = np.array([1.0, 5.0, 2.0, np.nan], np.float32)


def assert_same(ours: Any, theirs: Any, what: str) -> None:
    """Equal structure (down to the result type's name and fields), dtypes, shapes and
    values, NaNs and the sign of zeros included."""
    if isinstance(theirs, tuple):
        assert isinstance(ours, tuple) and len(ours) == len(theirs), f"{what}: {ours}"
        assert type(ours).__name__ == type(theirs).__name__, what
        assert getattr(ours, "_fields", None) == getattr(theirs, "_fields", None), what
        for i, (o, t) in enumerate(zip(ours, theirs)):
            assert_same(o, t, f"{what}[{i}]")
        return
    assert not isinstance(ours, tuple), f"{what}: {ours}"
    o, t = np.asarray(ours), np.asarray(theirs)
    assert (o.dtype, o.shape) == (t.dtype, t.shape), \
        f"{what}: {o.dtype}{o.shape} vs {t.dtype}{t.shape}"
    np.testing.assert_array_equal(o, t, err_msg=what)
    if o.dtype.kind == "f":
        np.testing.assert_array_equal(np.signbit(o), np.signbit(t), err_msg=f"{what} (zeros)")


def _array(data: st.DataObject, dtype: str, shape: tuple[int, ...]) -> np.ndarray:
    n = int(np.prod(shape))
    xs = data.draw(st.lists(st.sampled_from(VALUES[dtype]), min_size=n, max_size=n))
    return np.array(xs, dtype).reshape(shape)


def _check(fn: Callable[[Any], Any], args: tuple[Any, ...], jit: bool, what: str) -> None:
    """``fn(sets)`` against ``fn(jnp)``, eagerly and (when ``jit``) under plait.jit."""
    want = fn(jnp)(*args)
    assert_same(fn(sets)(*args), want, what)
    if jit:
        assert_same(plait.jit(fn(sets))(*args), want, what + " under jit")


@settings(max_examples=20, deadline=None)
@given(st.sampled_from(DTYPES), st.data())
def test_unique_matches_jax(dtype: str, data: st.DataObject) -> None:
    x = _array(data, dtype, (7,))
    flags = data.draw(st.tuples(st.booleans(), st.booleans(), st.booleans()))
    equal_nan = data.draw(st.booleans())
    size = data.draw(st.sampled_from([None, 2, 9]))
    fill = data.draw(st.sampled_from([None, 1])) if size else None
    _check(lambda L: lambda v: L.unique(v, *flags, equal_nan=equal_nan, size=size,
                                        fill_value=fill),
           (x,), size is not None, f"unique({x}, {flags}, {equal_nan=}, {size=}, {fill=})")


@settings(max_examples=10, deadline=None)
@given(st.sampled_from(["float32", "int32"]), st.sampled_from([0, 1, -1, None]), st.data())
def test_unique_along_an_axis_matches_jax(dtype: str, axis: int | None,
                                          data: st.DataObject) -> None:
    # Two values per element: equal rows and columns are common.
    x = np.array(data.draw(st.lists(st.sampled_from(VALUES[dtype][1:3]), min_size=10,
                                    max_size=10)), dtype).reshape(5, 2)
    size, fill = data.draw(st.sampled_from([(None, None), (2, None), (6, -1)]))
    _check(lambda L: lambda v: L.unique(v, True, True, True, axis=axis, size=size,
                                        fill_value=fill),
           (x,), size is not None, f"unique({x}, {axis=}, {size=}, {fill=})")


@pytest.mark.parametrize("name", ["unique_values", "unique_counts", "unique_inverse",
                                  "unique_all"])
@pytest.mark.parametrize("size, fill", [(None, None), (8, None), (3, -1.0)])
def test_array_api_unique_functions_match_jax(name: str, size: int | None,
                                              fill: float | None) -> None:
    x = A.reshape(2, 4)  # the inverse indices keep this shape; NaNs stay apart
    _check(lambda L: lambda v: getattr(L, name)(v, size=size, fill_value=fill), (x,),
           size is not None, name)


@settings(max_examples=22, deadline=None)
@given(st.sampled_from(["union1d", "intersect1d", "setdiff1d", "setxor1d"]),
       st.sampled_from(DTYPES), st.booleans(), st.data())
def test_set_operations_match_jax(name: str, dtype: str, assume_unique: bool,
                                  data: st.DataObject) -> None:
    if assume_unique and name != "union1d":
        # Unique values (a promise the caller makes): distinct integers, in float32 too.
        dtype = data.draw(st.sampled_from(["float32", "int32"]))
        a, b = (np.array(data.draw(st.lists(st.integers(-4, 4), min_size=n, max_size=n,
                                            unique=True)), dtype) for n in (5, 3))
        kw: dict[str, Any] = {"assume_unique": True}
    else:
        a, b = _array(data, dtype, (6,)), _array(data, data.draw(st.sampled_from(
            [dtype, "float32"])), (2, 2))
        kw = {} if name == "union1d" else {"assume_unique": False}
    if name == "intersect1d":
        kw["return_indices"] = data.draw(st.booleans())
    size = data.draw(st.sampled_from([None, 2, 11]))
    fill = data.draw(st.sampled_from([None, -7, 0.5])) if size else None
    _check(lambda L: lambda u, v: getattr(L, name)(u, v, **kw, size=size, fill_value=fill),
           (a, b), size is not None, f"{name}({a}, {b}, {kw}, {size=}, {fill=})")


EDGE_CASES: dict[str, Callable[[Any], Any]] = {
    "unique_empty": lambda L: L.unique(np.zeros(0, np.float32), True, True, True),
    "unique_empty_size": lambda L: L.unique(np.zeros(0, np.int32), True, True, True, size=3,
                                            fill_value=2),
    "unique_empty_slices": lambda L: L.unique(np.zeros((3, 0)), True, True, True, axis=0),
    "unique_empty_slices_size": lambda L: L.unique(np.zeros((3, 0)), True, True, True,
                                                   axis=0, size=2),
    "unique_scalar": lambda L: L.unique(np.float32(2.0), return_inverse=True),
    "unique_python_scalar": lambda L: L.unique(3, return_counts=True),
    "unique_complex": lambda L: L.unique(np.array([1j, complex(np.nan, 1), 1j, np.nan, 2],
                                                  np.complex64), True, True, True),
    "unique_3d_axis": lambda L: L.unique(np.array([[[1, 2], [1, 2]], [[0, 2], [1, 2]]]),
                                         True, True, True, axis=1),
    "union1d_empty_size": lambda L: L.union1d(np.zeros(0, np.int32), np.zeros(0, np.int32),
                                              size=2, fill_value=1),
    "setdiff1d_empty": lambda L: L.setdiff1d(np.zeros(0, np.float32), A),
    "setdiff1d_empty_size": lambda L: L.setdiff1d(np.zeros(0, np.float32), A, size=2,
                                                  fill_value=4),
    "setdiff1d_fill_cast": lambda L: L.setdiff1d(np.array([1, 2]), np.array([2]), size=3,
                                                 fill_value=0.5),
    "setxor1d_empty": lambda L: L.setxor1d(np.zeros(0), np.zeros(0)),
    "setxor1d_empty_size": lambda L: L.setxor1d(np.zeros(0), np.zeros(0), size=2),
    "setxor1d_fill_promotes": lambda L: L.setxor1d(np.array([1, 2]), np.array([2, 3]),
                                                   size=3, fill_value=0.5),
    "intersect1d_empty_indices": lambda L: L.intersect1d(np.zeros(0), np.zeros(0),
                                                         return_indices=True),
    "intersect1d_empty_size_indices": lambda L: L.intersect1d(
        np.zeros(0), np.zeros(0), return_indices=True, size=3),
    "intersect1d_one_value": lambda L: L.intersect1d(np.zeros(0, bool), np.ones(1, bool),
                                                     assume_unique=True, size=3),
    "intersect1d_2d": lambda L: L.intersect1d(A.reshape(2, 4), B.reshape(2, 2),
                                              return_indices=True),
    "size_zero_with_fill": lambda L: (L.setxor1d(A, B, size=0, fill_value=1.0),
                                      L.intersect1d(A, B, size=0, fill_value=1.0),
                                      L.union1d(A, B, size=0),
                                      L.setdiff1d(A, B, assume_unique=True, size=0)),
}


@pytest.mark.parametrize("name", sorted(EDGE_CASES))
def test_edge_cases_match_jax(name: str) -> None:
    assert_same(EDGE_CASES[name](sets), EDGE_CASES[name](jnp), name)


ERROR_CASES: dict[str, tuple[Callable[[Any], Any], type[Exception]]] = {
    "unique_empty_needs_fill": (lambda L: L.unique(np.zeros(0), size=3), ValueError),
    # Where JAX fails on its own padding (an empty or zero-size array), so do we.
    "setdiff1d_size_zero": (lambda L: L.setdiff1d(A, B, size=0), IndexError),
    "setxor1d_size_zero": (lambda L: L.setxor1d(A, B, size=0), ValueError),
    "intersect1d_size_zero": (lambda L: L.intersect1d(A, B, size=0), ValueError),
    "intersect1d_one_empty_indices": (lambda L: L.intersect1d(A, np.zeros(0), size=2,
                                                              return_indices=True), TypeError),
    "list_input": (lambda L: L.unique([1, 2]), TypeError),
}


@pytest.mark.parametrize("name", sorted(ERROR_CASES))
def test_errors_match_jax(name: str) -> None:
    fn, kind = ERROR_CASES[name]
    for lib in (sets, jnp):
        with pytest.raises(kind):
            fn(lib)


TRACED: list[tuple[str, dict[str, Any], type[Exception]]] = [
    *((n, {}, ConcretizationTypeError) for n in ("unique", "unique_values", "unique_counts",
                                                  "unique_inverse", "unique_all")),
    *((n, {}, ConcretizationTypeError) for n in ("union1d", "setdiff1d", "setxor1d",
                                                  "intersect1d")),
    # With assume_unique there is no unique() to refuse: the final boolean mask fails.
    ("setxor1d", {"assume_unique": True}, NonConcreteBooleanIndexError),
    ("intersect1d", {"assume_unique": True}, NonConcreteBooleanIndexError),
]


@pytest.mark.parametrize("name, kw, error", TRACED, ids=[f"{n}{kw}" for n, kw, _ in TRACED])
def test_traced_input_without_size_fails_as_in_jax(name: str, kw: dict[str, Any],
                                                   error: type[Exception]) -> None:
    args = (A,) if name.startswith("unique") else (A, B)
    with pytest.raises(error, match=rf"(?s)jnp\.{name}\(\).*pass a static size= argument"):
        plait.jit(lambda *a: getattr(sets, name)(*a, **kw))(*args)
    jax_error = getattr(jax.errors, error.__name__)
    with pytest.raises(jax_error):
        jax.jit(lambda *a: getattr(jnp, name)(*a, **kw))(*args)


def test_static_size_argument_under_jit() -> None:
    f = plait.jit(sets.unique, static_argnames=("size", "return_counts"))
    assert_same(f(A, size=6, return_counts=True), jnp.unique(A, size=6, return_counts=True),
                "static size")


def test_constant_input_inside_jit_still_needs_size() -> None:
    # Inside jit, computations on a constant are traced too (as in JAX).
    with pytest.raises(ConcretizationTypeError, match="pass a static size="):
        plait.jit(lambda v: sets.setdiff1d(A, B) + v)(np.float32(1))
    with pytest.raises(jax.errors.ConcretizationTypeError):
        jax.jit(lambda v: jnp.setdiff1d(A, B) + v)(np.float32(1))


@pytest.mark.parametrize("name", sorted(COVERED))
def test_signatures_match_jax(name: str) -> None:
    def params(f: Any) -> list[tuple[str, Any, Any]]:
        return [(p.name, p.kind, p.default) for p in inspect.signature(f).parameters.values()]
    assert params(getattr(sets, name)) == params(getattr(jnp, name))


def test_every_flag_combination_of_unique_on_one_input() -> None:
    for flags in itertools.product([False, True], repeat=3):
        for equal_nan in (False, True):
            assert_same(sets.unique(A, *flags, equal_nan=equal_nan),
                        jnp.unique(A, *flags, equal_nan=equal_nan), f"{flags} {equal_nan}")

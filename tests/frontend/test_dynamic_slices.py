"""``plait.ds`` (``Slice``): slices with a traced start, in ``x[...]``, ``x.at[...]`` and
Refs, against JAX 0.10.2 (the oracle): values, clamping and the printed jaxpr."""

from __future__ import annotations

from typing import Any

import hypothesis.strategies as st
import jax
import jax.numpy as jjnp
import numpy as np
import pytest
from hypothesis import given, settings

import plait
import plait.numpy as pjnp
from plait.frontend.core.slices import Slice

X = np.arange(20.0, dtype=np.float32).reshape(4, 5)


def _eq(a: Any, b: Any) -> None:
    assert np.asarray(a).dtype == np.asarray(b).dtype
    np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


@st.composite
def _slices(draw: Any, n: int) -> tuple[int, int, int]:
    stride = draw(st.integers(1, 3))
    size = draw(st.integers(0, (n - 1) // stride + 1))
    start = draw(st.integers(-n - 2, n + 2))
    return start, size, stride


@settings(deadline=None)
@given(st.data())
def test_getitem_with_a_traced_start_matches_jax(data: st.DataObject) -> None:
    (a, m, s), (b, k, t) = data.draw(_slices(4)), data.draw(_slices(5))
    second = data.draw(st.sampled_from(["ds", "int", "slice", "array"]))

    def index(lib: Any, np_: Any, i: Any, j: Any) -> Any:
        other = {"ds": lib.ds(j, k, t), "int": j, "slice": slice(1, None, 2),
                 "array": np_.array([0, 4, 2])}[second]
        return (lib.ds(i, m, s), other)
    got = plait.jit(lambda x, i, j: x[index(plait, pjnp, i, j)])(X, a, b)
    want = jax.jit(lambda x, i, j: x[index(jax, jjnp, i, j)])(X, a, b)
    _eq(got, want)


def _window(start: int, size: int, n: int) -> range:
    """Where a unit-stride slice reads: a negative start from the end, then clamped."""
    start = start + n if start < 0 else start
    start = min(max(start, 0), n - size)
    return range(start, start + size)


@settings(deadline=None)
@given(st.data())
def test_updates_with_a_traced_start_write_where_a_read_reads(data: st.DataObject) -> None:
    # plait writes the window a read of the same index reads (NumPy oracle). JAX 0.10.2
    # agrees inside bounds when the start is static (eagerly); under jit it ignores
    # .at[ds(i, n)] updates (x comes back unchanged), and at the edges it drops elements
    # instead of clamping the window.
    a, b = data.draw(st.integers(-6, 6)), data.draw(st.integers(-7, 7))
    m, k = data.draw(st.integers(0, 4)), data.draw(st.integers(0, 5))
    op = data.draw(st.sampled_from(["set", "add", "multiply"]))
    v = np.arange(1, m * k + 1, dtype=np.float32).reshape(m, k) * 100

    def update(x: Any, lib: Any, i: Any, j: Any) -> Any:
        return getattr(x.at[lib.ds(i, m), lib.ds(j, k)], op)(v)
    got = plait.jit(lambda x, i, j: update(x, plait, i, j))(X, a, b)
    want = X.copy()
    rows, cols = np.ix_(_window(a, m, 4), _window(b, k, 5))
    want[rows, cols] = {"set": v, "add": want[rows, cols] + v,
                        "multiply": want[rows, cols] * v}[op]
    _eq(got, want)
    if 0 <= a <= 4 - m and 0 <= b <= 5 - k:
        _eq(got, update(jjnp.asarray(X), jax, a, b))


@settings(deadline=None)
@given(st.data())
def test_strided_updates_match_jax_inside_bounds(data: st.DataObject) -> None:
    (a, m, s), (b, k, t) = data.draw(_slices(4)), data.draw(_slices(5))
    a, b = min(max(a, 0), 4 - ((m - 1) * s + 1 if m else 0)), min(max(b, 0), 5 - (
        (k - 1) * t + 1 if k else 0))
    v = np.arange(1, m * k + 1, dtype=np.float32).reshape(m, k) * 100
    got = plait.jit(lambda x, i, j: x.at[plait.ds(i, m, s), plait.ds(j, k, t)].add(v))(X, a, b)
    _eq(got, jjnp.asarray(X).at[jax.ds(a, m, s), jax.ds(b, k, t)].add(v))


def test_ds_forms_and_jaxpr_are_jaxs() -> None:
    assert plait.ds(None) == slice(None)
    assert plait.ds(3) == Slice(0, 3, 1)
    assert plait.ds(1, 2, 3) == Slice(1, 2, 3)
    assert repr(plait.ds(1, 2)) == repr(jax.ds(1, 2))
    def f(lib: Any) -> Any:
        return lambda x, i: x[lib.ds(i, 2), 1:4]
    assert str(plait.make_jaxpr(f(plait))(X, 3)) == str(jax.make_jaxpr(f(jax))(X, 3))
    _eq(plait.numpy.arange(10.0)[plait.ds(6, 3, 3)], jjnp.arange(10.0)[jax.ds(6, 3, 3)])
    _eq(pjnp.asarray(X).at[plait.ds(2, 2)].get(), jjnp.asarray(X).at[jax.ds(2, 2)].get())
    leaves, tree = plait.tree_util.tree_flatten(plait.ds(1, 2))
    assert leaves == [] and plait.tree_util.tree_unflatten(tree, leaves) == Slice(1, 2, 1)


def test_gradient_and_vmap_through_a_slice() -> None:
    def f(lib: Any, np_: Any) -> Any:
        return lib.grad(lambda x, i: np_.sum(x[lib.ds(i, 2)] ** 2))(X, 1)
    _eq(f(plait, pjnp), f(jax, jjnp))
    def g(lib: Any) -> Any:
        return lib.vmap(lambda x, i: x[lib.ds(i, 2)])
    _eq(g(plait)(X, np.arange(4)), g(jax)(X, np.arange(4)))


def test_refs_take_slices_as_jaxs_do() -> None:
    def f(lib: Any, np_: Any) -> Any:
        @lib.jit
        def run(i: Any) -> Any:
            r = lib.new_ref(np_.arange(6.0))
            r[lib.ds(i, 2)] = np_.ones(2)
            return r[lib.ds(i, 3)], lib.freeze(r)
        return run(4)
    for a, b in zip(f(plait, pjnp), f(jax, jjnp)):
        _eq(a, b)


def test_bad_slices_raise_clear_errors() -> None:
    with pytest.raises(TypeError, match="the size of a Slice must be a static int"):
        plait.jit(lambda x, n: x[plait.ds(0, n)])(X, 2)
    with pytest.raises(TypeError, match="expected a Slice spanning at most the 4 elements of "
                                        "axis 0, but got one of 5 elements"):
        pjnp.asarray(X)[plait.ds(0, 5)]
    with pytest.raises(ValueError, match="the stride of a Slice must be a static int >= 1"):
        plait.ds(0, 2, 0)
    with pytest.raises(TypeError, match="the start of a Slice must be an integer scalar"):
        pjnp.asarray(X)[plait.ds(1.5, 2), ::2]


@pytest.mark.parametrize("allow", [True, False, (False, True)])
@pytest.mark.parametrize("start", [-2, 1, -7])
def test_allow_negative_indices_as_jax(allow: Any, start: int) -> None:
    """``allow_negative_indices=False`` leaves a negative start to the clamping."""
    def f(L: Any, traced: bool) -> Any:
        def g(i: Any) -> Any:
            return (L.lax.dynamic_slice(X, (i, i), (2, 2), allow_negative_indices=allow),
                    L.lax.dynamic_update_slice(X, np.ones((2, 2), np.float32), (i, 0),
                                               allow_negative_indices=allow),
                    L.lax.dynamic_index_in_dim(X, i, 1, allow_negative_indices=any(
                        np.atleast_1d(allow))))
        return L.jit(g)(np.int32(start)) if traced else g(start)
    for traced in (False, True):
        if not traced and start < 0 and not all(np.atleast_1d(allow)):
            with pytest.raises(ValueError, match=f"Index {start} is out of bounds for "
                                                 "dimension 4 if allow_negative_indices=False"):
                f(plait, traced)
            with pytest.raises(ValueError):
                f(jax, traced)
            continue
        for ours, theirs in zip(f(plait, traced), f(jax, traced)):
            _eq(ours, theirs)


def test_allow_negative_indices_refuses_a_wrong_count() -> None:
    with pytest.raises(TypeError, match=r"expected allow_negative_indices to be a bool or 2 "
                                        r"bools \(one per dimension\), but got \(True,\)"):
        plait.lax.dynamic_slice(X, (0, 0), (1, 1), allow_negative_indices=(True,))

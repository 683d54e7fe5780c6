"""plait.scipy.integrate.trapezoid and plait.scipy.interpolate.RegularGridInterpolator
against jax.scipy 0.10.2 (and SciPy): values, dtypes and weak types, axes and spacings,
jit, grad and vmap, the interpolator as a pytree, and the error cases."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from functools import partial
from typing import Any

import hypothesis.extra.numpy as hnp
import jax
import jax.numpy as jjnp
import jax.scipy.integrate as jintegrate
import jax.scipy.interpolate as jinterpolate
import numpy as np
import pytest
import scipy.integrate  # type: ignore[import-untyped]  # scipy ships no stubs
import scipy.interpolate  # type: ignore[import-untyped]
from hypothesis import given, settings
from hypothesis import strategies as st

import plait
import plait.numpy as pnp
import plait.scipy.integrate as pintegrate
import plait.scipy.interpolate as pinterpolate
from tests.frontend.jax_oracle import assert_close, raised


def _weak(x: Any) -> bool:
    return bool(x.aval.weak_type) if isinstance(x, plait.Array) else bool(x.weak_type)


def check(got: Any, want: Any, rtol: float = 2e-6, atol: float = 1e-6) -> None:
    """Equal structures, dtypes, weak types, and values up to the tolerances."""
    assert_close(got, want, rtol=rtol, atol=atol)
    for g, w in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
        assert _weak(g) == _weak(w), (got, want)


@contextlib.contextmanager
def both_x64(on: bool) -> Iterator[None]:
    previous = jax.config.read("jax_enable_x64")
    jax.config.update("jax_enable_x64", on)
    try:
        with plait.enable_x64(on):
            yield
    finally:
        jax.config.update("jax_enable_x64", previous)


rng = np.random.default_rng(0)
Y2 = rng.standard_normal((3, 5)).astype(np.float32)
X1 = np.cumsum(rng.uniform(0.1, 1.0, 5)).astype(np.float32)

# -- trapezoid ----------------------------------------------------------------------------

TRAPZ_CASES: dict[str, tuple[tuple[Any, ...], dict[str, Any]]] = {
    "int_samples": ((np.array([1, 2, 3, 2, 3, 2, 1]),), {}),
    "int_samples_int_x": ((np.array([1, 2, 3, 2, 3, 2, 1]), np.array([0, 2, 5, 7, 10, 15, 20])),
                          {}),
    "dx": ((Y2,), {"dx": 0.5}),
    "dx_axis0": ((Y2,), {"dx": 0.25, "axis": 0}),
    "x_1d": ((Y2, X1), {}),
    "x_2d_axis0": ((Y2, np.cumsum(np.abs(Y2), axis=0)), {"axis": 0}),
    "x_2d": ((Y2, np.cumsum(np.abs(Y2) + 0.1, axis=1)), {}),
    "dx_array": ((Y2,), {"dx": np.array([0.5, 1.0, 2.0, 1.5], np.float32)}),
    "dx_array_const": ((Y2,), {"dx": np.array([0.5], np.float32)}),
    "numpy_scalar_dx": ((Y2,), {"dx": np.float32(0.3)}),
    "one_sample": ((np.ones((2, 1), np.float32),), {}),
    "bool": ((np.array([True, False, True]),), {}),
    "float16": ((Y2.astype(np.float16),), {"dx": 0.5}),
    "complex": ((Y2 + 1j * Y2[::-1], X1), {}),
    "negative_axis": ((rng.standard_normal((2, 3, 4)).astype(np.float32),), {"axis": -2}),
}


@pytest.mark.parametrize("name", sorted(TRAPZ_CASES))
def test_trapezoid_matches_jax(name: str) -> None:
    args, kw = TRAPZ_CASES[name]
    check(pintegrate.trapezoid(*args, **kw), jintegrate.trapezoid(*args, **kw), rtol=2e-3
          if name == "float16" else 2e-6)


def test_trapezoid_weak_types_x64_and_scipy() -> None:
    # Python-scalar spacing keeps the result's dtype; a float64 spacing array does not.
    check(pintegrate.trapezoid(Y2, dx=2), jintegrate.trapezoid(Y2, dx=2))
    with both_x64(True):
        y64 = Y2.astype(np.float64)
        check(pintegrate.trapezoid(y64, X1.astype(np.float64)),
              jintegrate.trapezoid(y64, X1.astype(np.float64)), rtol=1e-12, atol=1e-12)
        check(pintegrate.trapezoid(Y2, dx=np.float64(0.5)),
              jintegrate.trapezoid(Y2, dx=np.float64(0.5)))
        check(pintegrate.trapezoid(np.arange(5)), jintegrate.trapezoid(np.arange(5)))
        x64 = X1.astype(np.float64)
        np.testing.assert_allclose(np.asarray(pintegrate.trapezoid(y64, x64, axis=1)),
                                   scipy.integrate.trapezoid(y64, x64, axis=1), rtol=1e-12)


def test_trapezoid_under_grad_and_vmap() -> None:
    g = plait.grad(lambda y, x: pintegrate.trapezoid(y ** 2, x), argnums=(0, 1))(Y2[0], X1)
    jg = jax.grad(lambda y, x: jintegrate.trapezoid(y ** 2, x), argnums=(0, 1))(Y2[0], X1)
    check(g, jg)
    v = plait.vmap(pintegrate.trapezoid, in_axes=(0, None))(Y2, X1)
    check(v, jax.vmap(jintegrate.trapezoid, in_axes=(0, None))(Y2, X1))
    check(plait.jit(pintegrate.trapezoid, static_argnames="axis")(Y2, axis=0),
          jintegrate.trapezoid(Y2, axis=0))


def test_trapezoid_errors() -> None:
    for call in (lambda m: m.trapezoid([1.0, 2.0]), lambda m: m.trapezoid(Y2, [1.0, 2.0])):
        e, je = raised(partial(call, pintegrate)), raised(partial(call, jintegrate))
        assert type(e) is type(je) is TypeError
        assert "trapezoid requires ndarray or scalar arguments" in str(e)
    for call in (lambda m: m.trapezoid(Y2, axis=2),  # no such axis
                 lambda m: m.trapezoid(np.ones((2, 0), np.float32)),  # no samples
                 lambda m: m.trapezoid(Y2, dx=np.ones(5, np.float32))):  # one dx per sample
        e, je = raised(partial(call, pintegrate)), raised(partial(call, jintegrate))
        assert isinstance(e, type(je)), (e, je)


# -- RegularGridInterpolator ---------------------------------------------------------------

G1 = (np.array([0.0, 0.5, 1.5, 3.0], np.float32), np.array([-1.0, 0.0, 2.0], np.float32))
V1 = rng.standard_normal((4, 3)).astype(np.float32)
# Inside, on grid points and edges, outside on each side, and a NaN.
Q1 = np.array([[0.2, -0.5], [0.5, 0.0], [3.0, 2.0], [0.0, -1.0], [1.4, 1.9], [-0.1, 0.0],
               [3.5, 1.0], [1.0, -2.0], [1.0, 2.5], [np.nan, 0.0], [0.75, 1.0], [2.9, -0.9]],
              np.float32)


def _pair(points: Any, values: Any, **kw: Any) -> tuple[Any, Any]:
    return (pinterpolate.RegularGridInterpolator(points, values, **kw),
            jinterpolate.RegularGridInterpolator(points, values, **kw))


def _at(p: Any, j: Any, q: Any, **kw: Any) -> tuple[Any, Any]:
    """Both interpolators at ``q``, each passed through its library's jit as a pytree
    (eager calls compile every operation for each new shape: slow)."""
    return (plait.jit(lambda f, q: f(q, **kw))(p, q),
            jax.jit(lambda f, q: f(q, **kw))(j, q))


@pytest.mark.parametrize("method", ["linear", "nearest"])
@pytest.mark.parametrize("fill", ["nan", "none", "number"])
def test_interpolator_2d_matches_jax_and_scipy(method: str, fill: str) -> None:
    fill_value = {"nan": np.nan, "none": None, "number": -7.0}[fill]
    p, j = _pair(G1, V1, method=method, fill_value=fill_value)
    got, want = _at(p, j, Q1)
    check(got, want, rtol=1e-6)
    if method == "linear" and fill == "nan":  # eagerly too
        check(p(Q1), want, rtol=1e-6)
    s = scipy.interpolate.RegularGridInterpolator(G1, V1, method=method, bounds_error=False,
                                                  fill_value=fill_value)
    inside = ~np.isnan(Q1).any(axis=1)
    if method == "linear":  # SciPy breaks nearest ties differently (upwards)
        np.testing.assert_allclose(np.asarray(got)[inside], s(Q1)[inside], rtol=1e-5,
                                   atol=1e-6)


def test_interpolator_query_forms_and_trailing_axes() -> None:
    values = rng.standard_normal((4, 3, 2)).astype(np.float32)
    p, j = _pair(G1, values)
    check(*_at(p, j, Q1[:3]))  # trailing value axes carried along
    check(*_at(p, j, Q1[0]))  # one point as a 1-D array
    grid = np.stack(np.meshgrid(np.linspace(0, 3, 5), np.linspace(-1, 2, 4), indexing="ij"), -1)
    check(*_at(p, j, grid.astype(np.float32)))  # leading query shape
    xs, ys = Q1[:4, 0], Q1[:4, 1]
    check(*_at(p, j, (xs, ys)))  # a tuple of coordinate arrays
    check(*_at(p, j, (Q1[:4],)))  # a one-element tuple holding the points
    check(*_at(p, j, Q1[:3], method="nearest"))
    # Fewer grid axes than value axes: the rest are carried along.
    p1, j1 = _pair((G1[0],), V1)
    check(*_at(p1, j1, np.array([0.3, 2.0], np.float32)))


def test_interpolator_dtypes_and_x64() -> None:
    # Integer values become float32; integer query points work too.
    p, j = _pair(G1, np.arange(12).reshape(4, 3))
    check(*_at(p, j, np.array([[1, 0]])))
    check(*_at(p, j, Q1))
    with both_x64(True):
        g64 = tuple(g.astype(np.float64) for g in G1)
        p, j = _pair(g64, V1.astype(np.float64))
        check(*_at(p, j, Q1.astype(np.float64)), rtol=1e-12, atol=1e-12)
        check(*_at(p, j, Q1), rtol=1e-6)  # float32 queries on a float64 grid
        p, j = _pair(G1, V1, fill_value=np.float64(3.0))
        check(*_at(p, j, Q1))


def test_interpolator_is_a_pytree_under_jit_vmap_and_grad() -> None:
    p, j = _pair(G1, V1)
    assert str(plait.tree_util.tree_structure(p)) == str(jax.tree_util.tree_structure(j))
    leaves = plait.tree_util.tree_leaves(p)
    assert len(leaves) == 4
    check(plait.jit(lambda f, q: f(q))(p, Q1), jax.jit(lambda f, q: f(q))(j, Q1))
    # A batch of interpolators built and applied under vmap.
    vs = np.stack([V1, 2 * V1, -V1])
    pb = plait.vmap(lambda v: pinterpolate.RegularGridInterpolator(G1, v))(vs)
    jb = jax.vmap(lambda v: jinterpolate.RegularGridInterpolator(G1, v))(vs)
    assert isinstance(pb, pinterpolate.RegularGridInterpolator) and pb.values.shape == (3, 4, 3)
    check(plait.jit(plait.vmap(lambda f, q: f(q), in_axes=(0, None)))(pb, Q1),
          jax.jit(jax.vmap(lambda f, q: f(q), in_axes=(0, None)))(jb, Q1))
    check(plait.jit(plait.vmap(p))(Q1[:, None, :]), jax.jit(jax.vmap(j))(Q1[:, None, :]))
    # Gradients with respect to the values and to the query points.
    inside = Q1[:5]

    def loss_p(v: Any, q: Any) -> Any:
        return pnp.sum(pinterpolate.RegularGridInterpolator(G1, v)(q) ** 2)

    def loss_j(v: Any, q: Any) -> Any:
        return jjnp.sum(jinterpolate.RegularGridInterpolator(G1, v)(q) ** 2)

    check(plait.jit(plait.grad(loss_p, argnums=(0, 1)))(V1, inside),
          jax.jit(jax.grad(loss_j, argnums=(0, 1)))(V1, inside), rtol=1e-5, atol=1e-5)


def test_interpolator_errors_match_jax() -> None:
    cases = [
        lambda m: m.RegularGridInterpolator(G1, V1, method="cubic"),
        lambda m: m.RegularGridInterpolator(G1, V1, bounds_error=True),
        lambda m: m.RegularGridInterpolator(G1 + (G1[0],), V1),
        lambda m: m.RegularGridInterpolator(G1, V1, fill_value=1j),
        lambda m: m.RegularGridInterpolator(G1, [[1.0, 2.0]]),
        lambda m: m.RegularGridInterpolator(G1, V1)(Q1, method="cubic"),
        lambda m: m.RegularGridInterpolator(G1, V1)(np.ones((2, 3), np.float32)),
    ]
    for case in cases:
        e, je = raised(partial(case, pinterpolate)), raised(partial(case, jinterpolate))
        assert type(e) is type(je), (e, je)
        if isinstance(je, ValueError | NotImplementedError):
            assert str(e) == str(je)


@settings(max_examples=6, deadline=None)
@given(hnp.arrays(np.float32, st.tuples(st.integers(1, 6), st.just(2)),
                  elements=st.floats(-2.0, 4.0, width=32)),
       st.sampled_from(["linear", "nearest"]))
def test_interpolator_random_points(points: np.ndarray, method: str) -> None:
    p, j = _pair(G1, V1, method=method)
    check(*_at(p, j, points), rtol=1e-5, atol=1e-6)

"""plait.scipy.ndimage.map_coordinates against jax.scipy.ndimage 0.10.2 (values and
dtypes, every order and mode, x64), against scipy.ndimage where the two agree (JAX's
``'constant'`` and ``'wrap'`` are SciPy's ``'grid-constant'`` and ``'grid-wrap'``), under
jit, grad and vmap, and its errors."""

from __future__ import annotations

from typing import Any

import hypothesis.extra.numpy as hnp
import jax
import jax.scipy.ndimage as jnd
import numpy as np
import pytest
import scipy.ndimage as snd  # type: ignore[import-untyped]  # scipy ships no stubs
from hypothesis import given, settings
from hypothesis import strategies as st

import plait
import plait.scipy.ndimage as pnd
from tests.frontend.jax_oracle import assert_close, both_x64, raised

MODES = ["constant", "nearest", "wrap", "mirror", "reflect"]
SCIPY_MODE = {"constant": "grid-constant", "nearest": "nearest", "wrap": "grid-wrap",
              "mirror": "mirror", "reflect": "reflect"}
RNG = np.random.default_rng(0)
X = RNG.standard_normal((4, 5)).astype(np.float32)
# Coordinates inside, on and beyond the edges (several periods out), and on .5 ties.
COORDS = [np.array([-7.3, -1.5, -0.5, 0.0, 0.4, 1.5, 2.5, 3.0, 3.6, 4.5, 9.2, 2.2], np.float32),
          np.array([-6.1, -0.7, 0.5, 4.0, 4.7, 1.2, -2.5, 5.5, 0.0, 3.3, 12.9, 1.8], np.float32)]


def exact(got: Any, want: Any) -> None:
    assert_close(got, want, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("order", [0, 1])
def test_matches_jax(order: int, mode: str) -> None:
    for dtype in (np.float32, np.int32, np.uint8, np.float16, np.bool_):
        x = (X * 10).astype(dtype)
        want = jnd.map_coordinates(x, COORDS, order, mode, cval=1.5)
        exact(pnd.map_coordinates(x, COORDS, order, mode, cval=1.5), want)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("order", [0, 1])
def test_matches_scipy(order: int, mode: str) -> None:
    x = RNG.standard_normal((3, 4, 5))
    coords = [RNG.uniform(-8, 12, (40,)) for _ in range(3)]
    if order == 0:  # away from the .5 ties, which SciPy rounds otherwise
        coords = [np.round(c) + RNG.uniform(-0.4, 0.4, c.shape) for c in coords]
    got = pnd.map_coordinates(x.astype(np.float32), [c.astype(np.float32) for c in coords],
                              order, mode, cval=0.25)
    want = snd.map_coordinates(x, coords, order=order, mode=SCIPY_MODE[mode], cval=0.25)
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-5)


def test_coordinate_forms_and_dtypes() -> None:
    # Integer coordinates, a stacked coordinate array, broadcasting coordinates, size-1
    # dimensions, 1-D and 3-D inputs.
    ic = [np.array([-1, 0, 3, 7]), np.array([2, 5, -3, 1])]
    for order in (0, 1):
        for mode in ("constant", "mirror"):
            exact(pnd.map_coordinates(X, ic, order, mode), jnd.map_coordinates(X, ic, order, mode))
            exact(pnd.map_coordinates(X.astype(np.int32), ic, order, mode),
                  jnd.map_coordinates(X.astype(np.int32), ic, order, mode))
    stacked = np.stack(COORDS)
    exact(pnd.map_coordinates(X, stacked, 1),  # type: ignore[arg-type]  # (as in JAX)
          jnd.map_coordinates(X, stacked, 1))  # type: ignore[arg-type]
    bc = [np.array([[0.5], [1.5], [2.7]], np.float32), np.array([0.2, 3.9], np.float32)]
    exact(pnd.map_coordinates(X, bc, 1, "reflect"), jnd.map_coordinates(X, bc, 1, "reflect"))
    one = np.array([2.0], np.float32)
    c1 = [np.array([-1.5, 0.3, 2.0], np.float32)]
    for mode in MODES:
        exact(pnd.map_coordinates(one, c1, 1, mode), jnd.map_coordinates(one, c1, 1, mode))
    x3 = RNG.standard_normal((2, 3, 4)).astype(np.float32)
    c3 = [RNG.uniform(-1, 4, (5,)).astype(np.float32) for _ in range(3)]
    exact(pnd.map_coordinates(x3, c3, 1, "wrap"), jnd.map_coordinates(x3, c3, 1, "wrap"))
    # Python-scalar coordinates and an integer cval.
    exact(pnd.map_coordinates(X, [1.25, 7.5], 1, cval=3),
          jnd.map_coordinates(X, [1.25, 7.5], 1, cval=3))


@pytest.mark.parametrize("order", [0, 1])
def test_x64(order: int) -> None:
    with both_x64(True):
        for xd, cd in ((np.float64, np.float64), (np.float32, np.float64),
                       (np.int64, np.float32)):
            x = (X * 10).astype(xd)
            c = [a.astype(cd) for a in COORDS]
            assert_close(pnd.map_coordinates(x, c, order, "reflect", cval=0.5),
                         jnd.map_coordinates(x, c, order, "reflect", cval=0.5),
                         rtol=1e-12, atol=1e-12)


def test_jit_grad_vmap() -> None:
    def ours(x: Any, c: Any) -> Any:
        return (pnd.map_coordinates(x, c, 1, "reflect") ** 2).sum()

    def theirs(x: Any, c: Any) -> Any:
        return (jnd.map_coordinates(x, c, 1, "reflect") ** 2).sum()
    exact(plait.jit(ours)(X, COORDS), jax.jit(theirs)(X, COORDS))
    assert_close(plait.grad(ours, argnums=(0, 1))(X, COORDS),
                 jax.grad(theirs, argnums=(0, 1))(X, COORDS), rtol=1e-5, atol=1e-5)
    stacked = np.stack([np.stack(COORDS), np.stack(COORDS)[::-1] * 0.5])
    exact(plait.vmap(lambda c: pnd.map_coordinates(X, c, 1))(stacked),
          jax.vmap(lambda c: jnd.map_coordinates(X, c, 1))(stacked))
    xs = np.stack([X, 2 * X, -X])
    exact(plait.vmap(lambda x: pnd.map_coordinates(x, COORDS, 0, "wrap"))(xs),
          jax.vmap(lambda x: jnd.map_coordinates(x, COORDS, 0, "wrap"))(xs))


@settings(max_examples=10, deadline=None)
@given(hnp.arrays(np.float32, (2, 12), elements=st.floats(-9, 9, width=32)),
       st.sampled_from(MODES), st.sampled_from([0, 1]))
def test_random_coordinates(coords: np.ndarray, mode: str, order: int) -> None:
    exact(pnd.map_coordinates(X, list(coords), order, mode),
          jnd.map_coordinates(X, list(coords), order, mode))


def test_errors() -> None:
    e = raised(lambda: pnd.map_coordinates(X, COORDS[:1], 1))
    assert isinstance(e, ValueError) and "length input.ndim" in str(e)
    assert isinstance(raised(lambda: jnd.map_coordinates(X, COORDS[:1], 1)), ValueError)
    e = raised(lambda: pnd.map_coordinates(X, COORDS, 1, mode="grid-wrap"))
    assert isinstance(e, NotImplementedError) and "mode" in str(e)
    assert isinstance(raised(lambda: jnd.map_coordinates(X, COORDS, 1, mode="grid-wrap")),
                      NotImplementedError)
    e = raised(lambda: pnd.map_coordinates(X, COORDS, 3))
    assert isinstance(e, NotImplementedError) and "order<=1" in str(e)
    assert isinstance(raised(lambda: jnd.map_coordinates(X, COORDS, 3)), NotImplementedError)
    e = raised(lambda: pnd.map_coordinates(X, COORDS, 1, cval=np.array([1.0])))
    assert isinstance(e, ValueError) and "hashable" in str(e)
    e = raised(lambda: pnd.map_coordinates([[1.0, 2.0]], COORDS, 1))
    assert isinstance(e, TypeError)

"""Running sparse programs against both plait and JAX 0.10.2 (the oracle).

A test writes its program once against a namespace ``S`` (:data:`PLAIT` or :data:`JAX`):
``S.sparse`` is ``plait.experimental.sparse`` or ``jax.experimental.sparse``, ``S.np``
the NumPy namespace, and the transformations; :func:`check` compares the results,
BCOO arrays buffer by buffer.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import jax
import jax.experimental.sparse as jsparse
import jax.numpy as jjnp
import numpy as np

import plait
import plait.experimental.sparse as psparse
import plait.lax as plax
import plait.numpy as pjnp
from tests.frontend.jax_oracle import raised


class Sparse(NamedTuple):
    sparse: Any
    np: Any
    lax: Any
    jit: Any
    vmap: Any
    grad: Any
    jvp: Any
    random: Any


JAX = Sparse(jsparse, jjnp, jax.lax, jax.jit, jax.vmap, jax.grad, jax.jvp, jax.random)
PLAIT = Sparse(psparse, pjnp, plax, plait.jit, plait.vmap, plait.grad, plait.jvp,
               plait.random)


def sparse_array(shape: tuple[int, ...], dtype: Any = np.float32, density: float = 0.45,
                 seed: int = 0) -> np.ndarray:
    """A NumPy array with about ``density`` of its elements nonzero."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape)
    if np.issubdtype(dtype, np.complexfloating):
        x = x + 1j * rng.standard_normal(shape)
    x[rng.random(shape) > density] = 0
    if np.issubdtype(dtype, np.integer):
        x = np.round(x * 3)
    return np.asarray(x).astype(dtype)


def default_nse(x: np.ndarray, n_batch: int = 0, n_dense: int = 0) -> int:
    """The nse ``BCOO.fromdense`` takes by default (computed with NumPy, so that a test
    can pass it under ``jit``)."""
    mask = np.any(x != 0, axis=tuple(range(x.ndim - n_dense, x.ndim)))
    return int(mask.sum(axis=tuple(range(n_batch, mask.ndim))).max(initial=0))


def fromdense(S: Sparse, x: np.ndarray, n_batch: int = 0, n_dense: int = 0) -> Any:
    """``S.sparse.BCOO.fromdense`` with the default nse given: usable under ``jit``."""
    return S.sparse.BCOO.fromdense(x, n_batch=n_batch, n_dense=n_dense,
                                   nse=default_nse(x, n_batch, n_dense))


def _array_equal(got: Any, want: Any, what: str, exact: bool, rtol: float) -> None:
    g, w = np.asarray(got), np.asarray(want)
    assert g.shape == w.shape and g.dtype == w.dtype, (what, g.shape, w.shape, g.dtype, w.dtype)
    if exact:
        np.testing.assert_array_equal(g, w, err_msg=what)
    else:
        np.testing.assert_allclose(g, w, rtol=rtol, atol=rtol, err_msg=what)


def check(got: Any, want: Any, exact: bool = True, rtol: float = 1e-6) -> None:
    """Equal results: a BCOO array has JAX's shape, flags, data and indices (data bit for
    bit unless ``exact`` is false); an array JAX's shape, dtype and values; a tuple, list
    or dict is compared element by element."""
    if isinstance(want, tuple | list):
        assert isinstance(got, tuple | list) and len(got) == len(want), (got, want)
        for g, w in zip(got, want):
            check(g, w, exact, rtol)
        return
    if isinstance(want, dict):
        assert isinstance(got, dict) and got.keys() == want.keys(), (got, want)
        for k in want:
            check(got[k], want[k], exact, rtol)
        return
    if isinstance(want, jsparse.BCOO):
        assert isinstance(got, psparse.BCOO), f"expected a BCOO array, but got {got!r}"
        assert (got.shape, got.indices_sorted, got.unique_indices) == (
            want.shape, want.indices_sorted, want.unique_indices), (got, want)
        _array_equal(got.data, want.data, "data", exact, rtol)
        _array_equal(got.indices, want.indices, "indices", True, 0)
        return
    assert not isinstance(got, psparse.BCOO), f"expected an array, but got {got!r}"
    _array_equal(got, want, "array", exact, rtol)


def both(program: Callable[..., Any], *args: Any, jit: bool = False, exact: bool = True,
         rtol: float = 1e-6) -> Any:
    """``program(S, *args)`` in both libraries (under each one's ``jit`` with ``jit``),
    the results compared; plait's result."""
    def run(S: Sparse) -> Any:
        if jit:
            return S.jit(lambda *a: program(S, *a))(*args)
        return program(S, *args)
    want = run(JAX)
    got = run(PLAIT)
    check(got, want, exact, rtol)
    return got


def both_raise(program: Callable[..., Any], *args: Any) -> BaseException:
    """The exception plait raises for ``program``, checked to be of the type of JAX's
    (or a subclass)."""
    want = raised(lambda: program(JAX, *args))
    got = raised(lambda: program(PLAIT, *args))
    assert isinstance(got, type(want)) or type(got).__name__ == type(want).__name__, (
        f"JAX raised {type(want).__name__}: {want}; plait {type(got).__name__}: {got}")
    return got

"""The function ``vjp`` returns is a pytree (as JAX's ``VJP`` object): it can be
returned from ``jit``, passed into it, mapped over and carried through ``scan``, and
still gives JAX's cotangents."""

from __future__ import annotations

from typing import Any

import jax
import numpy as np
import pytest

import plait
from plait.errors import ArgumentError
from tests.frontend.jax_oracle import JAX, PLAIT, Lib, assert_close

W = np.linspace(-1.0, 1.0, 12, dtype=np.float32).reshape(3, 4)
X = np.linspace(0.5, 2.0, 4, dtype=np.float32)
CT = np.array([1.0, -2.0, 0.5], np.float32)


def f(L: Lib) -> Any:
    return lambda w, x: L.np.tanh(w @ x) * L.np.sum(x)


def tree_util(L: Lib) -> Any:
    return plait.tree_util if L is PLAIT else jax.tree_util


@pytest.mark.parametrize("how", ["returned_from_jit", "passed_into_jit", "tree_map",
                                 "has_aux", "scan_carry", "vmap_of_cotangent"])
def test_pullback_is_a_pytree(how: str) -> None:
    def run(L: Lib) -> Any:
        fn = f(L)
        if how == "returned_from_jit":
            _, pb = L.jit(lambda w, x: L.vjp(fn, w, x))(W, X)
            return pb(CT)
        if how == "passed_into_jit":
            _, pb = L.vjp(fn, W, X)
            return L.jit(lambda p, c: p(c))(pb, CT)
        if how == "tree_map":
            _, pb = L.vjp(fn, W, X)
            return tree_util(L).tree_map(lambda r: r * 1.0, pb)(CT)
        if how == "has_aux":
            _, pb, aux = L.jit(lambda w, x: L.vjp(lambda w, x: (fn(w, x), {"n": x[0]}), w, x,
                                                  has_aux=True))(W, X)
            return pb(CT), aux
        if how == "scan_carry":
            _, pb = L.vjp(fn, W, X)
            def step(p: Any, c: Any) -> Any:
                return p, p(c)[1]
            return L.lax.scan(step, pb, np.stack([CT, 2 * CT]))[1]
        _, pb = L.vjp(fn, W, X)
        return L.vmap(pb)(np.stack([CT, -CT]))
    assert_close(run(PLAIT), run(JAX), rtol=1e-5, atol=1e-6)


def test_pullback_leaves_are_its_residuals_and_errors_are_kept() -> None:
    _, pb = plait.vjp(f(PLAIT), W, X)
    leaves, treedef = plait.tree_util.tree_flatten(pb)
    assert leaves and all(hasattr(r, "shape") for r in leaves)
    rebuilt = plait.tree_util.tree_unflatten(treedef, leaves)
    assert_close(rebuilt(CT), pb(CT))
    with pytest.raises(ArgumentError, match=r"expected a cotangent of shape \(3,\) for output "
                                            r"0, but got float32\[4\]"):
        pb(np.ones(4, np.float32))
    with pytest.raises(ArgumentError, match="expected a cotangent of structure"):
        pb((CT, CT))


@pytest.mark.parametrize("argnums", [(0, 1), 1, (1,), (-1, 0)])
@pytest.mark.parametrize("jitted", [True, False])
def test_fwd_and_bwd_match_jax(argnums: Any, jitted: bool) -> None:
    def run(lib: Any) -> Any:
        fn = f(JAX if lib is jax else PLAIT)
        fwd, bwd = lib.fwd_and_bwd(fn, argnums=argnums, jitted=jitted)
        y, res = fwd(W, X)
        return y, bwd(res, CT)
    assert_close(run(plait), run(jax), rtol=1e-5, atol=1e-6)


def test_fwd_and_bwd_compile_once_and_carry_aux() -> None:
    from plait.lowering import compile_count
    fwd, bwd = plait.fwd_and_bwd(lambda w, x: (f(PLAIT)(w, x), {"n": x[0]}), argnums=0,
                                 has_aux=True)
    jfwd, jbwd = jax.fwd_and_bwd(lambda w, x: (f(JAX)(w, x), {"n": x[0]}), argnums=0,
                                 has_aux=True)
    for i in range(3):
        y, res, aux = fwd(W, X + i)
        if i == 0:
            compiled = compile_count()
        jy, jres, jaux = jfwd(W, X + i)
        assert_close((y, bwd(res, CT), aux), (jy, jbwd(jres, CT), jaux), rtol=1e-5, atol=1e-6)
    assert compile_count() == compiled + 1  # bwd, once
    with pytest.raises(ArgumentError, match=r"argnums \(2,\) expected at least 3 positional "
                                            r"arguments, but got 2"):
        plait.fwd_and_bwd(f(PLAIT), argnums=2)[0](W, X)
    with pytest.raises(TypeError, match="expected argnums an int or a sequence of ints"):
        plait.fwd_and_bwd(f(PLAIT), argnums="w")  # type: ignore[arg-type]

"""custom_gradient and closure_convert against JAX 0.10.2."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import plait
import plait.numpy as pnp

X = np.linspace(-1.0, 2.0, 4).astype(np.float32)


def _same(ours: Any, theirs: Any) -> None:
    la, lb = plait.tree_util.tree_leaves(ours), jax.tree_util.tree_leaves(theirs)
    assert len(la) == len(lb)
    for a, b in zip(la, lb):
        assert np.asarray(a).dtype == np.asarray(b).dtype
        assert getattr(a, "weak_type", False) == getattr(b, "weak_type", False)
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-6)


def _scaled_sin(np_: Any, lib: Any) -> Callable[..., Any]:
    # The rule is deliberately not the true derivative: the test sees which one is used.
    @lib.custom_gradient
    def f(x: Any, y: Any) -> Any:
        s = np_.sin(x) * y
        return s * 2.0, lambda g: (g * np_.cos(x) * y * 10.0, g * s)
    return f


def _dict_valued(np_: Any, lib: Any) -> Callable[..., Any]:
    @lib.custom_gradient
    def f(x: Any) -> Any:
        out = {"a": np_.exp(x), "b": x * 3.0}
        return out, lambda g: (g["a"] * 7.0 + g["b"],)
    return f


def test_custom_gradient_values_and_derivatives_match_jax() -> None:
    ours, theirs = _scaled_sin(pnp, plait), _scaled_sin(jnp, jax)
    _same(ours(1.0, 2.0), theirs(1.0, 2.0))
    _same(plait.grad(ours, argnums=(0, 1))(1.0, 2.0), jax.grad(theirs, argnums=(0, 1))(1.0, 2.0))
    _same(plait.jit(plait.grad(ours))(X[1], X[2]), jax.jit(jax.grad(theirs))(X[1], X[2]))
    _same(plait.vmap(plait.grad(ours))(X, X + 1), jax.vmap(jax.grad(theirs))(X, X + 1))
    _same(plait.vjp(ours, X, X)[1](X), jax.vjp(theirs, X, X)[1](X))


def test_custom_gradient_with_pytree_values() -> None:
    ours, theirs = _dict_valued(pnp, plait), _dict_valued(jnp, jax)

    def loss(np_: Any, f: Callable[..., Any]) -> Callable[[Any], Any]:
        return lambda x: np_.sum(f(x)["a"] + f(x)["b"] ** 2)

    _same(ours(X), theirs(X))
    _same(plait.grad(loss(pnp, ours))(X), jax.grad(loss(jnp, theirs))(X))


def test_closure_convert_hoists_the_traced_values_as_jax() -> None:
    def program(np_: Any, lib: Any) -> Callable[[Any], Any]:
        k = np_.asarray(3.0)  # a concrete array: stays closed over

        def outer(w: Any) -> Any:
            def inner(x: Any) -> Any:
                return np_.sin(x * w) + w * k
            converted, consts = lib.closure_convert(inner, 1.0)
            assert len(consts) == 1  # w only (traced under grad); k is concrete
            return converted(2.0, *consts)
        return outer

    ours, theirs = program(pnp, plait), program(jnp, jax)
    _same(plait.grad(ours)(0.5), jax.grad(theirs)(0.5))
    _same(plait.jit(plait.grad(ours))(0.5), jax.jit(jax.grad(theirs))(0.5))


def test_closure_convert_feeds_a_custom_vjp_as_jax() -> None:
    def program(np_: Any, lib: Any) -> Callable[[Any], Any]:
        def apply(f: Callable[..., Any], x: Any, *consts: Any) -> Any:
            return f(x, *consts)

        apply_vjp = lib.custom_vjp(apply, nondiff_argnums=(0,))

        def fwd(f: Callable[..., Any], x: Any, *consts: Any) -> Any:
            return f(x, *consts), (x, consts)

        def bwd(f: Callable[..., Any], res: Any, g: Any) -> Any:
            x, consts = res
            _, pull = lib.vjp(f, x, *consts)
            return tuple(2.0 * c for c in pull(g))  # twice the true gradient

        apply_vjp.defvjp(fwd, bwd)

        def outer(a: Any) -> Any:
            f = lambda x: np_.tanh(x * a) + a  # noqa: E731
            converted, consts = lib.closure_convert(f, 0.3)
            return apply_vjp(converted, 0.3, *consts)
        return outer

    ours, theirs = program(pnp, plait), program(jnp, jax)
    _same(ours(1.5), theirs(1.5))
    _same(plait.grad(ours)(1.5), jax.grad(theirs)(1.5))


def test_closure_convert_checks_the_argument_structure() -> None:
    for lib in (plait, jax):
        converted, consts = lib.closure_convert(lambda x: x[0].sum(), (np.ones(2),))
        with pytest.raises(TypeError, match="must have the same Pytree structure as the example"):
            converted(np.ones(2), *consts)

"""lax.associative_scan against jax.lax 0.10.2: values for every length (odd, even,
one, zero), pytrees and non-commutative functions, reverse and other axes, printed
jaxprs, gradients, vmap, and bad arguments."""

from __future__ import annotations

from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jax import lax as jlax

import plait
import plait.lax as plax
import plait.numpy as pnp

jax.config.update("jax_platforms", "cpu")

RNG = np.random.default_rng(11)


def _check(ours: Any, theirs: Any, tol: float = 1e-5) -> None:
    for o, t in zip(jax.tree_util.tree_leaves(ours), jax.tree_util.tree_leaves(theirs)):
        o, t = np.asarray(o), np.asarray(t)
        assert o.shape == t.shape and o.dtype == t.dtype
        np.testing.assert_allclose(o, t, rtol=tol, atol=tol)


def _affine(L: Any) -> Any:
    # Composition of affine maps x -> a x + b: associative, not commutative.
    return lambda p, q: {"a": L.mul(q["a"], p["a"]), "b": L.add(L.mul(q["a"], p["b"]), q["b"])}


@settings(max_examples=15, deadline=None)
@given(st.integers(0, 17), st.booleans(), st.integers(0, 1))
def test_matches_jax_for_every_length(n: int, reverse: bool, axis: int) -> None:
    shape = (n, 3) if axis == 0 else (3, n)
    elems = {"a": RNG.uniform(0.5, 1.5, shape).astype(np.float32),
             "b": RNG.normal(size=shape).astype(np.float32)}
    ours = plax.associative_scan(_affine(plax), elems, reverse=reverse, axis=axis)
    theirs = jlax.associative_scan(_affine(jlax), elems, reverse=reverse, axis=axis)
    _check(ours, theirs, 1e-4)


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.bool_])
def test_jaxpr_and_dtypes_match_jax(dtype: Any) -> None:
    x = (RNG.integers(0, 3, size=(2, 9)) > 0).astype(dtype)
    op = (plax.bitwise_or, jlax.bitwise_or) if dtype == np.bool_ else (plax.add, jlax.add)
    f = lambda L, fn: (lambda v: L.associative_scan(fn, v, axis=1))  # noqa: E731
    _check(f(plax, op[0])(x), f(jlax, op[1])(x))
    assert str(plait.make_jaxpr(f(plax, op[0]))(x)) == str(jax.make_jaxpr(f(jlax, op[1]))(x))


def test_gradient_jit_and_vmap() -> None:
    x = RNG.normal(size=(6, 4)).astype(np.float32)

    def loss(L: Any, N: Any) -> Any:
        return lambda v: N.sum(N.sin(L.associative_scan(L.mul, v, reverse=True)))
    _check(plait.grad(loss(plax, pnp))(x), jax.grad(loss(jlax, jnp))(x), 1e-4)
    _check(plait.jit(lambda v: plax.associative_scan(plax.max, v))(x),
           jlax.associative_scan(jlax.max, x))
    _check(plait.vmap(lambda v: plax.associative_scan(plax.add, v), 1)(x),
           jax.vmap(lambda v: jlax.associative_scan(jlax.add, v), 1)(x))


def test_bad_arguments() -> None:
    with pytest.raises(ValueError, match="must have the same first dimension"):
        plax.associative_scan(plax.add, (np.ones(3), np.ones(4)))
    with pytest.raises(ValueError, match="axis 2 is out of bounds"):
        plax.associative_scan(plax.add, np.ones((3, 2)), axis=2)
    with pytest.raises(TypeError, match="expected fn to return the 1 leaves of elems"):
        plax.associative_scan(lambda a, b: (a, b), np.ones(4))


class _Pair(NamedTuple):
    a: Any
    b: Any


@pytest.mark.parametrize("L", [plait, jax], ids=["plait", "jax"])
def test_fn_may_return_another_structure_with_the_same_leaves(L: Any) -> None:
    """dynamax's smoother returns a tuple for a namedtuple of messages: JAX takes the
    leaves."""
    elems = _Pair(np.arange(1.0, 6.0, dtype=np.float32), np.ones(5, np.float32))
    out = L.lax.associative_scan(lambda x, y: (x.a + y.a, x.b * y.b), elems, reverse=True)
    assert type(out) is _Pair
    np.testing.assert_allclose(out.a, np.cumsum(elems.a[::-1])[::-1])
    with pytest.raises(Exception):  # noqa: B017  (the kinds differ: plait's is a TypeError)
        L.lax.associative_scan(lambda x, y: (x.a + y.a,), elems)

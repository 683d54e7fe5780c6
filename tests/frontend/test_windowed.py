"""lax.reduce_window (pooling) and lax.cumlogsumexp against jax.lax 0.10.2: values
eagerly and under jit, gradients, forward derivatives, vmap, printed jaxprs, pytrees
of operands, and bad arguments."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax as jlax

import plait
import plait.lax as plax
import plait.numpy as pnp
from plait.errors import ArgumentError

jax.config.update("jax_platforms", "cpu")

RNG = np.random.default_rng(5)
X = RNG.permutation(2 * 7 * 6 * 3).reshape(2, 7, 6, 3).astype(np.float32) / 10 - 5

Fn = Callable[[Any], Any]

# name -> fn(L, N) over lax namespace L and numpy namespace N; differentiable in reverse?
POOLS: dict[str, tuple[Callable[[Any, Any], Fn], bool]] = {
    "max_pool_same": (lambda L, N: lambda x: L.reduce_window(
        x, -N.inf, L.max, (1, 2, 2, 1), (1, 2, 2, 1), "SAME"), True),
    "max_pool_overlapping_padded": (lambda L, N: lambda x: L.reduce_window(
        x, -N.inf, L.max, (1, 3, 3, 1), (1, 2, 1, 1), ((0, 0), (1, 1), (2, 0), (0, 0))), True),
    "min_pool_base_dilated": (lambda L, N: lambda x: L.reduce_window(
        x, N.inf, L.min, (1, 2, 2, 1), (1, 1, 2, 1), "VALID", (1, 2, 1, 1)), True),
    "max_pool_window_dilated": (lambda L, N: lambda x: L.reduce_window(
        x, -N.inf, L.max, (1, 2, 2, 1), (1, 1, 1, 1), "SAME", None, (1, 2, 2, 1)), False),
    "avg_pool": (lambda L, N: lambda x: L.reduce_window(
        x, 0.0, L.add, (1, 3, 3, 1), (1, 2, 2, 1), "SAME") / 9, True),
    "sum_dilated_both": (lambda L, N: lambda x: L.reduce_window(
        x, 0.0, L.add, (2, 2, 1, 1), (1, 2, 1, 1), "SAME_LOWER", (1, 1, 2, 1), (1, 2, 1, 1)),
        True),
    "generic_mul": (lambda L, N: lambda x: L.reduce_window(
        x, 1.0, L.mul, (1, 2, 2, 1), (1, 2, 2, 1), "SAME"), False),
    "generic_max_from_zero": (lambda L, N: lambda x: L.reduce_window(
        x, 0.0, L.max, (1, 3, 1, 1), (1, 1, 1, 1), "VALID"), False),
}


def _check(ours: Any, theirs: Any, tol: float = 1e-5) -> None:
    o, t = np.asarray(ours), np.asarray(theirs)
    assert o.shape == t.shape and o.dtype == t.dtype, (o.shape, t.shape, o.dtype, t.dtype)
    np.testing.assert_allclose(o, t, rtol=tol, atol=tol)


@pytest.mark.parametrize("name", sorted(POOLS))
def test_reduce_window_matches_jax(name: str) -> None:
    make, reverse_mode = POOLS[name]
    f, g = make(plax, pnp), make(jlax, jnp)
    _check(f(X), g(X))
    _check(plait.jit(f)(X), g(X))
    assert str(plait.make_jaxpr(f)(X)) == str(jax.make_jaxpr(g)(X))
    t = RNG.normal(size=X.shape).astype(np.float32)
    _check(plait.jvp(f, (X,), (t,))[1], jax.jvp(g, (X,), (t,))[1], 1e-4)
    xs = np.stack([X, -X, 2 * X])
    _check(plait.vmap(f)(xs), jax.vmap(g)(xs))
    _check(plait.vmap(f, 0, 3)(xs), jax.vmap(g, 0, 3)(xs))
    if reverse_mode:
        def loss(h: Fn, N: Any) -> Fn:
            return lambda x: N.sum(N.sin(h(x)) * h(x))
        _check(plait.grad(loss(f, pnp))(X), jax.grad(loss(g, jnp))(X), 1e-4)
        _check(plait.vmap(plait.grad(loss(f, pnp)))(xs), jax.vmap(jax.grad(loss(g, jnp)))(xs),
               1e-4)
        _check(plait.jit(plait.grad(loss(f, pnp)))(X), jax.grad(loss(g, jnp))(X), 1e-4)


def test_gradient_of_max_pool_uses_jax_equations() -> None:
    # (plait drops the unused forward pool that JAX's printed gradient keeps, so the
    # equations are compared rather than the whole text.)
    f, g = POOLS["max_pool_same"][0](plax, pnp), POOLS["max_pool_same"][0](jlax, jnp)
    ours = plait.make_jaxpr(plait.grad(lambda x: pnp.sum(f(x) * 3)))(X)
    theirs = jax.make_jaxpr(jax.grad(lambda x: jnp.sum(g(x) * 3)))(X)

    def eqn(jaxpr: Any, name: str) -> tuple[str, list[str], dict[str, str]]:
        e, = [e for e in jaxpr.eqns if e.primitive.name == name]
        return (name, [str(v.aval.shape) for v in e.outvars],
                {k: str(v) for k, v in sorted(e.params.items())})
    assert eqn(ours.jaxpr, "select_and_scatter_add") == \
        eqn(theirs.jaxpr, "select_and_scatter_add")


@pytest.mark.parametrize("dtype", [np.int32, np.uint8, np.bool_, np.float16, jnp.bfloat16])
def test_integer_bool_and_half_operands(dtype: Any) -> None:
    x = (RNG.integers(0, 50, size=(4, 6)) % 7).astype(dtype)
    for op, is_max in ((jlax.max, True), (jlax.min, False), (jlax.add, None)):
        if dtype == np.bool_ and op is jlax.add:
            continue
        pop = {jlax.max: plax.max, jlax.min: plax.min, jlax.add: plax.add}[op]
        init: Any = 0
        if is_max is not None:
            info = np.iinfo(dtype) if np.dtype(dtype).kind in "iu" else None
            init = ((not is_max) if dtype == np.bool_ else
                    (info.min if is_max else info.max) if info else (-np.inf if is_max else np.inf))
        init = np.asarray(init, dtype)
        args = ((2, 3), (1, 2), "SAME")
        _check(plax.reduce_window(x, init, pop, *args), jlax.reduce_window(x, init, op, *args))


def test_pytree_operands_and_a_computation_over_pairs() -> None:
    # An argmax pool: the maximum of each window and (the value of) its index.
    idx = np.arange(X.size, dtype=np.int32).reshape(X.shape)

    def pool(L: Any, N: Any) -> Fn:
        def combine(a: tuple[Any, Any], b: tuple[Any, Any]) -> tuple[Any, Any]:
            pick = a[0] >= b[0]
            return L.select(pick, a[0], b[0]), L.select(pick, a[1], b[1])
        return lambda x: L.reduce_window({"v": x, "i": idx}, {"v": -N.inf, "i": np.int32(0)},
                                         lambda a, b: dict(zip("vi", combine(
                                             (a["v"], a["i"]), (b["v"], b["i"])))),
                                         (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
    ours, theirs = pool(plax, pnp)(X), pool(jlax, jnp)(X)
    assert sorted(ours) == ["i", "v"]
    for k in ours:
        _check(ours[k], theirs[k])
    _check(plait.jit(pool(plax, pnp))(X)["i"], theirs["i"])
    # (JAX's own jvp fails on the integer operand; the max pool is the oracle here.)
    t = RNG.normal(size=X.shape).astype(np.float32)
    _check(plait.jvp(lambda x: pool(plax, pnp)(x)["v"], (X,), (t,))[1],
           jax.jvp(lambda x: jlax.reduce_window(x, -jnp.inf, jlax.max, (1, 2, 2, 1),
                                                (1, 2, 2, 1), "VALID"), (X,), (t,))[1])


def test_generic_reduce_window_has_no_reverse_mode_like_jax() -> None:
    f = POOLS["generic_mul"][0](plax, pnp)
    with pytest.raises(NotImplementedError, match="Transpose rule for 'reduce_window'"):
        plait.grad(lambda x: f(x).sum())(X)


def test_bad_arguments() -> None:
    x = np.ones((4, 4), np.float32)
    with pytest.raises(TypeError, match=r"expected 2 window_dimensions .* but got \(2,\)"):
        plax.reduce_window(x, 0.0, plax.add, (2,), (1, 1))
    with pytest.raises(TypeError, match=r"expected positive ints in window_strides"):
        plax.reduce_window(x, 0.0, plax.add, (2, 2), (0, 1))
    with pytest.raises(ValueError, match="Operands must have the same tree structure as "
                                         "init_values"):
        plax.reduce_window((x, x), 0.0, plax.add, (2, 2), (1, 1))
    with pytest.raises(ValueError, match="output must have the same tree structure"):
        plax.reduce_window(x, 0.0, lambda a, b: (a, b), (2, 2), (1, 1))
    with pytest.raises(TypeError, match=r"expected the computation to return \['f32\[\]'\]"):
        plax.reduce_window(x, 0.0, lambda a, b: a > b, (2, 2), (1, 1))
    with pytest.raises(RuntimeError, match="Unrecognized padding type"):
        plax.reduce_window(x, 0.0, plax.add, (2, 2), (1, 1), "FULL")
    w = pnp.ones(3)
    with pytest.raises(ArgumentError, match="closes over no arrays"):
        plait.jit(lambda x, w: plax.reduce_window(x, 0.0, lambda a, b: a + b * w[0], (2, 2),
                                                  (1, 1)))(x, w)
    with pytest.raises(NotImplementedError, match="batched init values"):
        plait.vmap(lambda i: plax.reduce_window(x, i, plax.mul, (2, 2), (1, 1)))(np.ones(3))


@pytest.mark.parametrize("axis, reverse", [(0, False), (1, True), (1, False)])
def test_cumlogsumexp_matches_jax(axis: int, reverse: bool) -> None:
    x = RNG.normal(size=(4, 5)).astype(np.float32) * 30
    x[1, :2] = -np.inf
    f = lambda L: (lambda a: L.cumlogsumexp(a, axis=axis, reverse=reverse))  # noqa: E731
    _check(f(plax)(x), f(jlax)(x), 1e-5)
    _check(plait.jit(f(plax))(x), f(jlax)(x), 1e-5)
    assert str(plait.make_jaxpr(f(plax))(x)) == str(jax.make_jaxpr(f(jlax))(x))
    finite = np.where(np.isinf(x), -40.0, x).astype(np.float32)
    w = RNG.normal(size=x.shape).astype(np.float32)
    ours = plait.grad(lambda a: pnp.sum(f(plax)(a) * w))(finite)
    _check(ours, jax.grad(lambda a: jnp.sum(f(jlax)(a) * w))(finite), 1e-4)
    _check(plait.jvp(f(plax), (finite,), (w,))[1], jax.jvp(f(jlax), (finite,), (w,))[1], 1e-4)
    xs = np.stack([x, x[::-1]], axis=2)
    _check(plait.vmap(f(plax), 2)(xs), jax.vmap(f(jlax), 2)(xs), 1e-5)
    _check(plax.cumlogsumexp(x, axis=axis - 2, reverse=reverse), f(jlax)(x), 1e-5)
    # Where JAX's derivative is NaN (a leading run of -inf), plait's is the limit, 0.
    g = np.asarray(plait.grad(lambda a: pnp.sum(f(plax)(a) * w))(x))
    assert np.isfinite(g).all() and (g[np.isinf(x)] == 0).all()


REDUCES: dict[str, Callable[[Any], Fn]] = {
    # Composition of affine maps: associative (as reduce requires), not commutative.
    "affine": lambda L: lambda x: L.reduce(
        (x, x - 1), (1.0, 0.0), lambda p, q: (p[0] * q[0], q[0] * p[1] + q[1]), (1,)),
    "mul_two_axes": lambda L: lambda x: L.reduce(x, 1.0, lambda a, b: a * b, (0, 2)),
    "pair_sum_and_max": lambda L: lambda x: L.reduce(
        (x, x * 2), (0.0, -np.inf), lambda a, b: (a[0] + b[0], L.max(a[1], b[1])), (2,)),
    "all_axes": lambda L: lambda x: L.reduce(x, 0.0, lambda a, b: L.max(a, b) + L.min(a, b),
                                             (0, 1, 2)),
}


@pytest.mark.parametrize("name", sorted(REDUCES))
def test_reduce_with_a_computation_matches_jax(name: str) -> None:
    f, g = REDUCES[name](plax), REDUCES[name](jlax)
    x = RNG.uniform(0.5, 1.5, size=(3, 4, 5)).astype(np.float32)
    _check(f(x), g(x), 1e-5)
    _check(plait.jit(f)(x), g(x), 1e-5)
    assert str(plait.make_jaxpr(f)(x)).replace("\n", "") == \
        "".join(line for line in str(jax.make_jaxpr(g)(x)).split("\n")
                if "computation=" not in line)

    def loss(h: Fn, N: Any) -> Fn:
        return lambda v: sum(N.sum(o * o) for o in jax.tree_util.tree_leaves(h(v)))
    _check(plait.grad(loss(f, pnp))(x), jax.grad(loss(g, jnp))(x), 1e-4)
    t = RNG.normal(size=x.shape).astype(np.float32)
    _check(plait.jvp(f, (x,), (t,))[1], jax.jvp(g, (x,), (t,))[1], 1e-4)
    xs = np.stack([x, x[::-1]], 1)
    _check(plait.vmap(f, 1)(xs), jax.vmap(g, 1)(xs), 1e-5)


@pytest.mark.parametrize("op, init, dtype", [
    ("add", 0, np.float32), ("mul", 1, np.int32), ("max", -np.inf, np.float32),
    ("min", np.iinfo(np.int32).max, np.int32), ("bitwise_or", 0, np.int32),
    ("bitwise_and", True, np.bool_), ("bitwise_xor", False, np.bool_),
    ("max", np.uint8(0), np.uint8), ("add", np.float32(0), np.float32)])
def test_reduce_monoids_bind_the_dedicated_reductions_as_in_jax(op: str, init: Any,
                                                                 dtype: Any) -> None:
    x = (RNG.integers(0, 5, size=(3, 4)) > 1).astype(dtype) * 3 if dtype != np.bool_ else \
        RNG.integers(0, 5, size=(3, 4)) > 1
    f = lambda L: (lambda v: L.reduce(v, init, getattr(L, op), (1,)))  # noqa: E731
    _check(f(plax)(x), f(jlax)(x))
    assert str(plait.make_jaxpr(f(plax))(x)) == str(jax.make_jaxpr(f(jlax))(x))
    assert plait.eval_shape(f(plax), x).weak_type == jax.eval_shape(f(jlax), x).weak_type


def test_reduce_refuses_init_tangents_and_batched_inits_like_jax() -> None:
    x = np.ones((3, 4), np.float32)
    with pytest.raises(NotImplementedError, match="non-zero tangents for initial values"):
        plait.jvp(lambda i: plax.reduce(x, i, lambda a, b: a * b, (0,)), (1.0,), (1.0,))
    with pytest.raises(NotImplementedError, match="batched init values"):
        plait.vmap(lambda i: plax.reduce(x, i, lambda a, b: a * b, (0,)))(np.ones(3))
    with pytest.raises(ValueError, match="Operands must have the same tree structure"):
        plax.reduce((x, x), 0.0, plax.add, (0,))

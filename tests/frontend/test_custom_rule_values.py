"""What ``custom_jvp``/``custom_vjp`` rules receive and may return, against JAX 0.10.2
(equinox's rules rely on each): Python scalars among the residuals reach bwd as Python
values, ``SymbolicZero`` tangents and cotangents, cotangents shaped like arguments with
``None`` subtrees, a bwd that loops a number of times known only at run time, and float0
zeros made by ``jnp.zeros``."""

from __future__ import annotations

import functools
from collections.abc import Iterator
from typing import Any

import jax
import jax.extend.core as jcore
import jax.interpreters.batching as jbatching
import jax.interpreters.mlir as jmlir
import jax.numpy as jjnp
import numpy as np
import pytest

import plait
import plait.extend.core as pcore
import plait.interpreters.batching as pbatching
import plait.interpreters.mlir as pmlir
import plait.numpy as pjnp
from plait.ir import PRIMITIVES
from tests.frontend.jax_oracle import JAX, PLAIT, Lib

X = np.array([0.5, -1.25, 2.0], np.float32)
LIBS = [PLAIT, JAX]


def _python_residuals(L: Lib) -> tuple[Any, Any, list[str]]:
    seen: list[str] = []

    @L.custom_vjp
    def f(x: Any) -> Any:
        return x * 2

    def fwd(x: Any) -> tuple[Any, Any]:
        return x * 2, (x, True, 3, 0.5)

    def bwd(res: Any, g: Any) -> tuple[Any]:
        x, flag, count, half = res
        seen.append(type(flag).__name__)
        return (g * count * half if flag else g,)  # (a Python branch on a residual)
    f.defvjp(fwd, bwd)
    return L.grad(lambda v: f(v).sum())(X), L.jit(L.grad(lambda v: f(v).sum()))(X), seen


def test_python_residuals_reach_bwd_as_python_values() -> None:
    ours, theirs = _python_residuals(PLAIT), _python_residuals(JAX)
    for a, b in zip(ours[:2], theirs[:2]):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b))
    assert ours[2] == theirs[2] == ["bool", "bool"]


def _symbolic(L: Lib, cd: Any) -> list[Any]:
    @L.custom_jvp
    def f(i: Any, x: Any) -> Any:
        return i, x * 3

    def f_jvp(primals: Any, tangents: Any) -> Any:
        i, x = primals
        _, tx = tangents
        # The integer output's tangent as a SymbolicZero, as equinox's rules return it.
        return (i, x * 3), (cd.SymbolicZero(jax.core.ShapedArray(i.shape, jax.dtypes.float0)
                                            if L is JAX else plait.core.ShapedArray(
                                                i.shape, plait.dtypes.float0)), tx * 3)
    f.defjvp(f_jvp, symbolic_zeros=True)

    @L.custom_vjp
    def g(x: Any, y: Any) -> Any:
        return x * y

    g.defvjp(lambda x, y: (x * y, (x, y)),
             lambda res, ct: (ct * res[1], cd.SymbolicZero(
                 (jax.core if L is JAX else plait.core).ShapedArray(res[1].shape,
                                                                    res[1].dtype))))
    idx = np.arange(3, dtype=np.int32)
    _, (_, t) = L.jvp(lambda x: f(idx, x), (X,), (np.ones(3, np.float32),))
    return [t, *L.grad(lambda a, b: g(a, b).sum(), argnums=(0, 1))(X, X + 1)]


def test_rules_may_return_symbolic_zeros_as_in_jax() -> None:
    ours = _symbolic(PLAIT, plait.custom_derivatives)
    theirs = _symbolic(JAX, jax.custom_derivatives)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b))


def _none_subtrees(L: Lib) -> Any:
    @L.custom_vjp
    def f(args: Any) -> Any:
        return args

    # The argument is a tuple with None subtrees and one array; bwd returns the cotangent
    # of the output, which has the same structure.
    f.defvjp(lambda args: (args, None), lambda _, ct: (ct,))
    return L.grad(lambda x: f((None, None, (None, x)))[2][1].sum())(X)


def test_cotangents_may_keep_the_arguments_none_subtrees() -> None:
    np.testing.assert_allclose(np.asarray(_none_subtrees(PLAIT)),
                               np.asarray(_none_subtrees(JAX)))


def _looping_bwd(L: Lib) -> Any:
    @L.custom_vjp
    def f(x: Any) -> Any:
        return L.np.sin(x)

    def bwd(x: Any, g: Any) -> tuple[Any]:
        # A loop whose trip count depends on the values (not transposable).
        _, out = L.lax.while_loop(lambda c: c[0] < 3 + (x[0] > 0),
                                  lambda c: (c[0] + 1, c[1] * 0.5), (0, g * L.np.cos(x)))
        return (out,)
    f.defvjp(lambda x: (L.np.sin(x), x), bwd)
    return L.jit(L.grad(lambda v: f(v).sum()))(X)


def test_a_bwd_with_a_run_time_loop_still_differentiates() -> None:
    np.testing.assert_allclose(np.asarray(_looping_bwd(PLAIT)), np.asarray(_looping_bwd(JAX)),
                               rtol=1e-6)


@pytest.mark.parametrize("make", ["zeros", "ones", "empty", "full", "zeros_like", "full_like"])
def test_float0_arrays_are_host_zeros_as_in_jax(make: str) -> None:
    results = []
    for np_, float0 in ((pjnp, plait.dtypes.float0), (jjnp, jax.dtypes.float0)):
        fn = getattr(np_, make)
        if make in ("zeros", "ones", "empty"):
            out = fn((2, 3), float0)
        elif make == "full":
            out = fn((2, 3), 0, float0)
        elif make == "zeros_like":
            out = fn(np.zeros((2, 3), float0))
        else:
            out = fn(np.zeros((2, 3), np.float32), 0, dtype=float0)
        results.append((isinstance(out, np.ndarray), out.shape, out.dtype))
    assert results[0] == results[1] == (True, (2, 3), plait.dtypes.float0)


@pytest.fixture
def _forget_primitives() -> Iterator[None]:
    """Other tests check every registered primitive has plait's rules: drop ours."""
    before = set(PRIMITIVES)
    yield
    for name in set(PRIMITIVES) - before:
        del PRIMITIVES[name]


def _refusing(core: Any, batching: Any, mlir: Any) -> Any:
    """A primitive whose batching rule refuses a batched operand (equinox's nonbatchable)."""
    p = core.Primitive("refuses_batching")
    p.def_impl(lambda x: x)
    p.def_abstract_eval(lambda a: a)
    mlir.register_lowering(p, mlir.lower_fun(lambda x: x, multiple_results=False))

    def rule(args: Any, dims: Any) -> Any:
        if dims[0] is not None:
            raise ValueError("refuses to be batched")
        return p.bind(*args), None
    batching.primitive_batchers[p] = rule
    return p


def _scaled_by_counter(L: Lib, kind: str, p: Any) -> Any:
    def f(n: Any, x: Any) -> Any:
        return x * p.bind(n)

    g = getattr(L, kind)(f)
    if kind == "custom_vjp":
        g.defvjp(lambda n, x: (f(n, x), (p.bind(n),)), lambda res, ct: (None, ct * res[0]))
    else:
        g.defjvp(lambda prim, tan: (f(*prim), tan[1] * p.bind(prim[0])))
    return g


@pytest.mark.usefixtures("_forget_primitives")
@pytest.mark.parametrize("kind", ["custom_vjp", "custom_jvp"])
def test_vmap_of_custom_rules_batches_only_what_depends_on_the_batch(kind: str) -> None:
    # A counter that does not depend on the mapped value stays unbatched inside the call.
    results = []
    for L, core, batching, mlir in ((PLAIT, pcore, pbatching, pmlir),
                                    (JAX, jcore, jbatching, jmlir)):
        g = _scaled_by_counter(L, kind, _refusing(core, batching, mlir))
        out = L.vmap(g, in_axes=(None, 0))(np.float32(3.0), np.ones((2, 3), np.float32))
        results.append(np.asarray(out))
    np.testing.assert_array_equal(results[0], results[1])


def _defaulted_nondiff(lib: Any) -> Any:
    # (flax's fp8 dot_general: nondiff_argnums name parameters the call leaves to their
    # defaults; JAX fills them in)
    @functools.partial(lib.custom_jvp, nondiff_argnums=(1, 2))
    def scale(x: Any, factor: Any = 3.0, precision: Any = lib.lax.Precision.DEFAULT) -> Any:
        return x * factor

    @scale.defjvp
    def scale_jvp(factor: Any, precision: Any, primals: Any, tangents: Any) -> Any:
        assert precision  # (a Precision is true, as JAX's enum members are)
        return scale(primals[0], factor, precision), tangents[0] * factor * 2.0
    return scale(X), lib.jvp(scale, (X,), (np.ones(3, np.float32),))


def test_nondiff_arguments_left_to_their_defaults_as_jax() -> None:
    ours, theirs = _defaulted_nondiff(plait), _defaulted_nondiff(jax)
    for o, t in zip(jax.tree_util.tree_leaves(ours), jax.tree_util.tree_leaves(theirs)):
        np.testing.assert_allclose(np.asarray(o), np.asarray(t), rtol=1e-6)


def _prefix_cotangents(lib: Any) -> Any:
    # (flax's nnx.custom_vjp returns a cotangent where the argument has None, and bare
    # arrays where it has Variables of one leaf)
    @lib.custom_vjp
    def f(pair: Any, skip: Any, x: Any) -> Any:
        return pair["a"] * pair["b"] * x

    def fwd(pair: Any, skip: Any, x: Any) -> Any:
        return f(pair, skip, x), (pair, x)

    def bwd(res: Any, g: Any) -> Any:
        pair, x = res
        # one leaf for the whole dict (each of its leaves gets it), something for None
        return g * pair["b"] * x, np.float32(7.0), g * pair["a"] * pair["b"]
    f.defvjp(fwd, bwd)
    pair = {"a": np.float32(2.0), "b": np.float32(3.0)}
    return lib.grad(lambda p, x: f(p, None, x), argnums=(0, 1))(pair, np.float32(5.0))


def test_bwd_cotangents_may_be_prefixes_of_the_arguments_as_in_jax() -> None:
    ours, theirs = _prefix_cotangents(plait), _prefix_cotangents(jax)
    assert str(jax.tree_util.tree_structure(ours)) == str(jax.tree_util.tree_structure(theirs))
    for o, t in zip(jax.tree_util.tree_leaves(ours), jax.tree_util.tree_leaves(theirs)):
        np.testing.assert_allclose(np.asarray(o), np.asarray(t))

"""``plait.api_util``, ``plait.extend.linear_util``, ``call_p``/``closed_call_p`` and
``plait.core.trace_state_clean``, each against its JAX namesake (``jax.api_util``,
``jax.extend.linear_util``, ...)."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import jax
import jax.api_util
import jax.extend.linear_util
import jax.numpy as jnp
import numpy as np
import pytest

import plait
import plait.api_util
import plait.extend.core.primitives
import plait.extend.linear_util
import plait.numpy as pnp
from plait.ir import ShapedArray
from plait.ir.debug_info import DebugInfo
from plait.tree_util import tree_flatten


def _f(x: Any, y: Any, *, scale: float = 1.0) -> Any:
    return {"sum": (x["a"] + y) * scale, "y": y}


def _flat_call(mod: Any, lu: Any, tree_flatten: Any, args: tuple[Any, ...],
               kwargs: dict[str, Any]) -> tuple[list[Any], Any]:
    flat, in_tree = tree_flatten((args, kwargs))
    dbg = mod.debug_info("test", _f, args, kwargs)
    wrapped, out_tree = mod.flatten_fun(lu.wrap_init(_f, debug_info=dbg), in_tree)
    return wrapped.call_wrapped(*flat), out_tree()


def test_flatten_fun_calls_on_leaves_and_stores_the_output_tree() -> None:
    args, kwargs = ({"a": np.float32(2.0)}, np.float32(3.0)), {"scale": 2.0}
    ours, our_tree = _flat_call(plait.api_util, plait.extend.linear_util, tree_flatten,
                                args, kwargs)
    theirs, their_tree = _flat_call(jax.api_util, jax.extend.linear_util,
                                    jax.tree_util.tree_flatten, args, kwargs)
    np.testing.assert_array_equal(ours, theirs)
    assert str(our_tree) == str(their_tree)


def test_make_jaxpr_of_a_wrapped_function_and_debug_info() -> None:
    def f(x: Any, w: Any) -> Any:
        return pnp.sin(x) * w
    args = (np.ones(3, np.float32), np.float32(2.0))
    flat, in_tree = tree_flatten((args, {}))
    dbg = plait.api_util.debug_info("test", f, args, {})
    assert isinstance(dbg, DebugInfo)
    assert dbg.func_name == "f" and dbg.arg_names == ("x", "w")
    assert dbg.func_src_info.startswith("f at ") and dbg.result_paths == ()
    wrapped, out_tree = plait.api_util.flatten_fun(
        plait.extend.linear_util.wrap_init(f, debug_info=dbg), in_tree)
    jaxpr = plait.make_jaxpr(wrapped.call_wrapped)(*flat)
    assert [e.primitive.name for e in jaxpr.jaxpr.eqns] == ["sin", "mul"]
    assert out_tree().num_leaves == 1
    static = plait.api_util.debug_info("test", f, args, {}, static_argnums=(1,))
    assert static.arg_names == jax.api_util.debug_info(
        "test", f, args, {}, static_argnums=(1,)).arg_names == ("x",)


def test_stores_fill_once_and_merge_linear_aux() -> None:
    lu = plait.extend.linear_util

    def gen(f: Any, store: Any, k: int, x: Any) -> Any:
        store.store(k)
        return f(x) + k
    wrapped, aux = lu.transformation_with_aux2(gen)(
        lu.wrap_init(lambda x: x * 2, debug_info=DebugInfo("f", (), ())), 10)
    with pytest.raises(lu.StoreException, match="Store empty"):
        aux()
    assert wrapped.call_wrapped(1) == 12 and aux() == 10
    with pytest.raises(lu.StoreException, match="Store occupied"):
        wrapped.call_wrapped(1)
    _, empty = lu.transformation_with_aux2(gen)(lu.wrap_init(abs, debug_info=DebugInfo(
        "abs", (), ())), 1)
    assert lu.merge_linear_aux(aux, empty) == (True, 10)
    assert lu.merge_linear_aux(empty, aux) == (False, 10)
    with pytest.raises(lu.StoreException, match="neither store occupied"):
        lu.merge_linear_aux(empty, empty)
    with pytest.raises(lu.StoreException, match="both stores occupied"):
        lu.merge_linear_aux(aux, aux)


@pytest.mark.parametrize("lu", [plait.extend.linear_util, jax.extend.linear_util],
                         ids=["plait", "jax"])
def test_generator_transformations_cache_and_equality(lu: Any) -> None:
    def scale(k: int, x: Any) -> Any:
        y = yield (x * k,), {}
        yield y + 1

    def with_aux(x: Any) -> Any:
        y = yield (x,), {}
        yield y, "aux"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # (no debug_info, as JAX warns)
        base = lu.wrap_init(lambda x, p: x - p, {"p": 1})
    assert lu.transformation(scale)(base, 3).call_wrapped(2) == 6  # (2*3 - 1) + 1
    wrapped, aux = lu.transformation_with_aux(with_aux)(base)
    assert wrapped.call_wrapped(5) == 4 and aux() == "aux"
    calls = []

    @lu.cache
    def traced(fun: Any, n: int) -> Any:
        calls.append(n)
        return fun.call_wrapped(n)
    assert traced(base, 4) == traced(base, 4) == 3 and calls == [4]
    assert base == lu.wrap_init(base.f, {"p": 1}, debug_info=base.debug_info)


def test_argnums_partial_donation_and_rebase_match_jax() -> None:
    def f(a: Any, b: Any, c: Any) -> Any:
        return a * b + c
    for mod, lu in [(plait.api_util, plait.extend.linear_util),
                    (jax.api_util, jax.extend.linear_util)]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            wrapped, dyn = mod.argnums_partial(lu.wrap_init(f), (0, 2), (2.0, 3, 1.0))
        assert dyn == (2.0, 1.0) and wrapped.call_wrapped(*dyn) == 7.0
        with pytest.raises(ValueError, match="hashable"):
            mod.argnums_partial(wrapped, 0, (1.0, [1]))
    tree = jax.tree_util.tree_structure(((1, (2, 3)), {"k": 4, "j": (5, 6)}))
    ours = plait.tree_util.tree_structure(((1, (2, 3)), {"k": 4, "j": (5, 6)}))
    assert (plait.api_util.donation_vector((1,), ("j",), ours)
            == jax.api_util.donation_vector((1,), ("j",), tree))
    for d, s in [((3, 4), (0, 1)), ((0, 5), (2,)), ((), (1,))]:
        assert plait.api_util.rebase_donate_argnums(d, s) == jax.api_util.rebase_donate_argnums(
            d, s)
    with pytest.raises(ValueError, match="disjoint"):
        plait.api_util.rebase_donate_argnums((1,), (1,))


def test_flatten_axes_safe_map_and_shaped_abstractify() -> None:
    value = ((1, (2, 3)), {"a": 4})
    axes = ((0, None), {"a": 1})
    assert (plait.api_util.flatten_axes("in_axes", plait.tree_util.tree_structure(value), axes)
            == jax.api_util.flatten_axes("in_axes", jax.tree_util.tree_structure(value), axes))
    with pytest.raises(ValueError, match="in_axes"):
        plait.api_util.flatten_axes("in_axes", plait.tree_util.tree_structure(value),
                                    ((0, None, 1), {"a": 1}))
    assert plait.api_util.safe_map(lambda a, b: a + b, [1, 2], (3, 4)) == [4, 6]
    with pytest.raises(ValueError, match=r"one length, but got lengths \[2, 1\]"):
        plait.api_util.safe_map(lambda a, b: a, [1, 2], [1])
    for x in [1.0, np.ones((2, 3), np.int32), jnp.ones(2)]:
        theirs = jax.api_util.shaped_abstractify(x)
        ours = plait.api_util.shaped_abstractify(x)
        assert isinstance(ours, ShapedArray)
        assert (ours.shape, ours.dtype, ours.weak_type) == (theirs.shape, theirs.dtype,
                                                            theirs.weak_type)
    with pytest.raises(TypeError, match="expected arrays"):
        plait.api_util.shaped_abstractify("text")


def test_call_primitives_evaluate_their_call_under_jit_and_grad() -> None:
    prims = plait.extend.core.primitives
    closed = plait.make_jaxpr(lambda x, y: pnp.sin(x) * y)(1.0, 2.0)
    assert {prims.call_p: 1, prims.closed_call_p: 2}[prims.closed_call_p] == 2

    def f(x: Any) -> Any:
        return prims.closed_call_p.bind(x, 3.0, call_jaxpr=closed)[0]
    their_closed = jax.make_jaxpr(lambda x, y: jnp.sin(x) * y)(1.0, 2.0)

    def g(x: Any) -> Any:  # (JAX's own bind of closed_call_p needs internal params)
        return jax.core.eval_jaxpr(their_closed.jaxpr, their_closed.consts, x, 3.0)[0]
    pairs: list[tuple[Callable[..., Any], Callable[..., Any]]] = [
        (f, g), (plait.jit(f), jax.jit(g)), (plait.grad(f), jax.grad(g))]
    for ours, theirs in pairs:
        np.testing.assert_allclose(ours(0.5), theirs(0.5), rtol=1e-6)
    assert [e.primitive.name for e in plait.make_jaxpr(f)(0.5).jaxpr.eqns] == ["sin", "mul"]
    wrapped = plait.extend.linear_util.wrap_init(lambda a, b: [a + b],
                                                 debug_info=DebugInfo("add", (), ()))
    assert prims.call_p.bind(wrapped, 1.0, 2.0) == [3.0]
    with pytest.raises(TypeError, match="expected call_jaxpr=<a ClosedJaxpr>, but got None"):
        prims.closed_call_p.bind(1.0)
    with pytest.raises(TypeError, match="expected a WrappedFun"):
        prims.call_p.bind(abs, 1.0)


def test_trace_state_clean_is_false_under_every_transformation() -> None:
    clean = plait.core.trace_state_clean
    assert clean()
    assert int(plait.jit(lambda x: x + clean())(1)) == int(jax.jit(
        lambda x: x + jax._src.core.trace_state_clean())(1)) == 1
    assert float(plait.grad(lambda x: x * clean())(1.0)) == 0.0
    np.testing.assert_array_equal(plait.vmap(lambda x: x + clean())(pnp.zeros(2)), [0.0, 0.0])


def test_a_division_by_a_broadcast_exp_rounds_as_jaxs_under_jit() -> None:
    # Each use of a broadcast gets its own broadcast_in_dim, as in JAX's lowering: a shared
    # one changed how XLA simplified the backward division (numpyro's NUTS gradients).
    x = np.asarray(jax.random.normal(jax.random.key(0), (50, 2)))
    y = np.asarray(jax.random.normal(jax.random.key(1), (50,)))

    def loss(np_: Any) -> Any:
        def f(b: Any, log_s: Any, w: Any) -> Any:
            s = np_.reshape(np_.exp(log_s), (1,))
            z = (y - (x @ w + b)) / s
            return -np_.sum(-0.5 * z ** 2 - np_.log(np_.sqrt(2 * np.pi) * s))
        return f
    args = (np.float32(0.8453784), np.float32(-0.18600082),
            np.array([-1.6366563, -0.551168], np.float32))
    ours = plait.jit(plait.value_and_grad(loss(pnp), argnums=(0, 1, 2)))(*args)
    theirs = jax.jit(jax.value_and_grad(loss(jnp), argnums=(0, 1, 2)))(*args)
    for a, b in zip(tree_flatten(ours)[0], jax.tree_util.tree_leaves(theirs)):
        np.testing.assert_array_equal(a, b)

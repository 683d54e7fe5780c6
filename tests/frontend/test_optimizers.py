"""plait.example_libraries.optimizers against jax.example_libraries.optimizers (JAX 0.10.2).

Every optimizer takes the same steps from the same parameters and gradients in both
libraries, eagerly and under ``jit``; schedules, utilities, the state's pytree and
its (un)packing, and the errors are compared too.
"""

from __future__ import annotations

import pickle
from collections.abc import Callable
from typing import Any

import jax
import jax.example_libraries.optimizers as jopt
import jax.numpy as jnp
import numpy as np
import pytest

import plait
import plait.example_libraries.optimizers as popt
import plait.numpy as pnp
from tests.frontend.jax_oracle import assert_close
from tests.frontend.test_x64 import both_x64

rng = np.random.default_rng(0)


def _params(dtype: Any = np.float32) -> dict[str, Any]:
    return {"w": rng.normal(size=(3, 4)).astype(dtype),
            "b": (rng.normal(size=4).astype(dtype), np.asarray(0.5, dtype)),
            "k": rng.normal(size=(2, 3, 2)).astype(dtype)}


def _grads(params: Any, steps: int) -> list[Any]:
    return [jax.tree_util.tree_map(lambda p: rng.normal(size=np.shape(p)).astype(p.dtype),
                                   params) for _ in range(steps)]


OPTIMIZERS: dict[str, Callable[[Any], Any]] = {
    "sgd": lambda o: o.sgd(0.1),
    "sgd, a schedule": lambda o: o.sgd(o.exponential_decay(0.1, 2, 0.5)),
    "momentum": lambda o: o.momentum(0.05, mass=0.9),
    "nesterov": lambda o: o.nesterov(0.05, 0.8),
    "adagrad": lambda o: o.adagrad(0.1),
    "adagrad, momentum 0.5": lambda o: o.adagrad(0.1, momentum=0.5),
    "rmsprop": lambda o: o.rmsprop(0.01),
    "rmsprop_momentum": lambda o: o.rmsprop_momentum(0.01, gamma=0.8, momentum=0.7),
    "adam": lambda o: o.adam(1e-2),
    "adam, a schedule": lambda o: o.adam(o.inverse_time_decay(1e-2, 3, 0.5, staircase=True)),
    "adamax": lambda o: o.adamax(1e-2, b1=0.8),
    "sm3": lambda o: o.sm3(0.1),
}


def _run(make: Callable[[Any], Any], lib: Any, opt: Any, params: Any, grads: list[Any],
         jit: bool) -> list[Any]:
    init, update, get_params = make(opt)
    if jit:
        update = lib.jit(update)
    state = init(params)
    seen = [get_params(state)]
    for i, g in enumerate(grads):
        state = update(i, g, state)
        seen.append(get_params(state))
    return seen


@pytest.mark.parametrize("jit", [False, True], ids=["eager", "jit"])
@pytest.mark.parametrize("name", OPTIMIZERS)
def test_steps_match_jax(name: str, jit: bool) -> None:
    params = _params()
    grads = _grads(params, 4)
    ours = _run(OPTIMIZERS[name], plait, popt, params, grads, jit)
    theirs = _run(OPTIMIZERS[name], jax, jopt, params, grads, jit)
    for got, want in zip(ours, theirs, strict=True):
        assert_close(got, want, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("name", ["adam", "sm3", "momentum"])
def test_float64_steps_match_jax(name: str) -> None:
    with both_x64(True):
        params = _params(np.float64)
        grads = _grads(params, 3)
        ours = _run(OPTIMIZERS[name], plait, popt, params, grads, False)
        theirs = _run(OPTIMIZERS[name], jax, jopt, params, grads, False)
        for got, want in zip(ours, theirs, strict=True):
            assert_close(got, want, rtol=1e-12, atol=1e-14)


def test_state_is_a_pytree_of_the_state_arrays() -> None:
    params = _params()
    ours = popt.adam(0.1).init_fn(params)
    theirs = jopt.adam(0.1).init_fn(params)
    assert len(plait.tree_util.tree_leaves(ours)) == len(jax.tree_util.tree_leaves(theirs)) == 12
    moved = plait.device_put(ours)  # through the pytree machinery and back
    assert type(moved) is popt.OptimizerState
    assert_close(popt.adam(0.1).params_fn(moved), params)
    doubled = plait.tree_util.tree_map(lambda x: x * 2, ours)
    assert_close(doubled.packed_state, jax.tree_util.tree_map(lambda x: x * 2,
                                                              theirs.packed_state))


def test_training_loop_under_jit_matches_jax() -> None:
    x = rng.normal(size=(32, 3)).astype(np.float32)
    y = x @ np.array([1.0, -2.0, 0.5], np.float32) + 0.3

    def run(lib: Any, np_: Any, opt: Any) -> Any:
        def loss(p: Any) -> Any:
            return np_.mean((x @ p["w"] + p["b"] - y) ** 2)
        init, update, get_params = opt.adam(0.05)

        @lib.jit
        def step(i: Any, state: Any) -> Any:
            return update(i, lib.grad(loss)(get_params(state)), state)
        state = init({"w": np.zeros(3, np.float32), "b": np.float32(0.0)})
        for i in range(25):
            state = step(i, state)
        return get_params(state)
    assert_close(run(plait, pnp, popt), run(jax, jnp, jopt), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("make", [
    lambda o: o.constant(0.3),
    lambda o: o.exponential_decay(0.5, 10, 0.3),
    lambda o: o.inverse_time_decay(0.5, 4, 2.0),
    lambda o: o.inverse_time_decay(0.5, 4, 2.0, staircase=True),
    lambda o: o.polynomial_decay(1.0, 10, 0.1),
    lambda o: o.polynomial_decay(1.0, 10, 0.1, power=2.0),
    lambda o: o.piecewise_constant([3, 7], [1.0, 0.5, 0.1]),
])
def test_schedules_match_jax(make: Callable[[Any], Any]) -> None:
    ours, theirs = make(popt), make(jopt)
    for i in [0, 1, 3, 4, 7, 8, 10, 25]:
        assert_close(pnp.asarray(ours(i)), jnp.asarray(theirs(i)), rtol=1e-6, atol=0)
        assert_close(plait.jit(ours)(i), jax.jit(theirs)(i), rtol=1e-6, atol=0)


def test_utilities_match_jax() -> None:
    grads = _params()
    assert_close(popt.l2_norm(grads), jopt.l2_norm(grads))
    for max_norm in (0.5, 100.0):
        assert_close(popt.clip_grads(grads, max_norm), jopt.clip_grads(grads, max_norm))


def test_unpacked_state_pickles_and_packs_back() -> None:
    params = _params()
    init, update, get_params = popt.momentum(0.1, 0.9)
    state = update(0, _grads(params, 1)[0], init(params))
    marked = popt.unpack_optimizer_state(state)
    assert isinstance(marked["w"], popt.JoinPoint)
    back = popt.pack_optimizer_state(pickle.loads(pickle.dumps(marked)))
    assert back.tree_def == state.tree_def and back.subtree_defs == state.subtree_defs
    assert_close(back.packed_state, state.packed_state, rtol=0, atol=0)
    j_init, j_update, _ = jopt.momentum(0.1, 0.9)
    j_marked = jopt.unpack_optimizer_state(j_update(0, _grads(params, 1)[0], j_init(params)))
    assert len(plait.tree_util.tree_leaves(marked)) == len(jax.tree_util.tree_leaves(j_marked))


def test_errors_match_jax() -> None:
    params = _params()
    init, update, _ = popt.sgd(0.1)
    with pytest.raises(TypeError, match="optimizer update function was passed a gradient tree "
                                        "that did not match the parameter tree structure"):
        update(0, {"w": params["w"]}, init(params))
    with pytest.raises(ValueError, match="boundaries length must be one shorter than values"):
        popt.piecewise_constant([1, 2], [1.0, 2.0])
    with pytest.raises(ValueError, match="boundaries and values must be sequences"):
        popt.piecewise_constant(1, [1.0, 2.0])
    with pytest.raises(TypeError, match="ndarray"):
        popt.make_schedule(np.ones(3))  # type: ignore[arg-type]  # (the error under test)
    with pytest.raises(TypeError, match="expected a JoinPoint at every leaf, but got"):
        popt.pack_optimizer_state({"w": 1.0})
    with pytest.raises(TypeError, match="produced an output structure that did not match"):
        bad = popt.optimizer(lambda: (lambda x: (x, x), lambda i, g, s: (s[0],),
                                      lambda s: s[0]))()
        bad.update_fn(0, params, bad.init_fn(params))

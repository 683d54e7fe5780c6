"""plait's stax against jax.example_libraries.stax 0.10.2: for the same key, every layer
and combinator gives JAX's output shapes and parameters (bit for bit) and, on the same
inputs, JAX's outputs; a small CNN built with stax has JAX's jitted gradient."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jjnp
import numpy as np
import pytest
from jax.example_libraries import stax as jstax

import plait
import plait.numpy as pnp
from plait.example_libraries import stax as pstax
from tests.frontend.jax_oracle import assert_close, raised

Build = Callable[[Any], Any]  # a stax module (plait's or JAX's) -> a layer


def _keys(kind: str, seed: int = 0) -> tuple[Any, Any]:
    if kind == "key":
        return plait.random.key(seed), jax.random.key(seed)
    return plait.random.PRNGKey(seed), jax.random.PRNGKey(seed)


def _leaves(tree: Any) -> list[np.ndarray]:
    return [np.asarray(x) for x in jax.tree_util.tree_leaves(tree)]


def _shapes(shape: Any) -> Any:
    """An output shape with Python ints, its lists and tuples kept apart."""
    if isinstance(shape, (list, tuple)):
        return type(shape)(_shapes(s) for s in shape)
    return int(shape)


def _input(shape: Any, seed: int = 0) -> Any:
    if isinstance(shape, list):
        return [_input(s, seed + i) for i, s in enumerate(shape)]
    return np.random.default_rng(seed).normal(size=shape).astype(np.float32)


def _check_init(build: Build, shape: Any, kind: str = "key") -> tuple[Any, Any, Any, Any]:
    """Both layers initialized from the same key: equal shapes, parameters bit for bit.
    Returns (plait layer, plait params, JAX layer, JAX params)."""
    ours, theirs = build(pstax), build(jstax)
    k_ours, k_theirs = _keys(kind)
    got_shape, got = ours[0](k_ours, shape)
    want_shape, want = theirs[0](k_theirs, shape)
    assert _shapes(got_shape) == _shapes(want_shape)
    assert str(jax.tree_util.tree_structure(got)) == str(jax.tree_util.tree_structure(want))
    for g, w in zip(_leaves(got), _leaves(want), strict=True):
        assert g.dtype == w.dtype
        np.testing.assert_array_equal(g, w)
    return ours, got, theirs, want


def _check(build: Build, shape: Any, kind: str = "key") -> None:
    """Same initialization, then the same outputs on the same inputs (of the shape
    init_fun announced, for a single output)."""
    ours, params, theirs, jparams = _check_init(build, shape, kind)
    x = _input(shape)
    got = ours[1](params, x)
    assert_close(got, theirs[1](jparams, x))
    out_shape = ours[0](_keys(kind)[0], shape)[0]
    if all(isinstance(d, int) for d in out_shape):
        assert np.shape(got) == out_shape


X4 = (2, 8, 8, 3)

LAYERS: dict[str, tuple[Build, Any]] = {
    "dense": (lambda s: s.Dense(4), (3, 5)),
    "dense_batched": (lambda s: s.Dense(4), (2, 3, 5)),
    "dense_inits": (lambda s: s.Dense(4, s.randn(0.5), s.zeros), (3, 5)),
    "conv": (lambda s: s.Conv(4, (3, 3)), X4),
    "conv_strided_same": (lambda s: s.Conv(4, (3, 3), (2, 2), "SAME"), X4),
    "conv_explicit_pads": (lambda s: s.Conv(4, (3, 3), (1, 2), [(1, 0), (2, 1)]), X4),
    "conv_nchw": (lambda s: s.GeneralConv(("NCHW", "IHWO", "NCHW"), 4, (3, 3), (1, 2),
                                          "SAME"), (2, 3, 7, 6)),
    "conv_glorot": (lambda s: s.Conv(4, (3, 3), W_init=s.glorot(), b_init=s.ones), X4),
    "conv_transpose": (lambda s: s.ConvTranspose(4, (3, 3)), X4),
    "conv_transpose_same": (lambda s: s.ConvTranspose(4, (3, 3), (2, 2), "SAME"), X4),
    "conv1d_transpose": (lambda s: s.Conv1DTranspose(4, (3,), (2,)), (2, 5, 3)),
    "conv_transpose_nchw": (lambda s: s.GeneralConvTranspose(
        ("NCHW", "IHWO", "NCHW"), 4, (3, 3), (2, 1), "SAME"), (2, 3, 5, 4)),
    "batchnorm": (lambda s: s.BatchNorm(), X4),
    "batchnorm_axis0": (lambda s: s.BatchNorm(axis=0), (6, 3)),
    "batchnorm_no_center": (lambda s: s.BatchNorm((0, 1), center=False), (4, 3, 2)),
    "batchnorm_no_scale": (lambda s: s.BatchNorm((0, 2), scale=False,
                                                 beta_init=s.randn()), (4, 3, 2)),
    "batchnorm_neither": (lambda s: s.BatchNorm((0,), 1e-3, False, False), (5, 2)),
    "flatten": (lambda s: s.Flatten, (2, 3, 4, 2)),
    "identity": (lambda s: s.Identity, (2, 3)),
    "elementwise_kwargs": (lambda s: s.elementwise(s.leaky_relu, negative_slope=0.3),
                           (3, 4)),
}
for _name in ["Tanh", "Relu", "Exp", "LogSoftmax", "Softmax", "Softplus", "Sigmoid", "Elu",
              "LeakyRelu", "Selu", "Gelu"]:
    LAYERS[_name] = ((lambda name: lambda s: getattr(s, name))(_name), (3, 7))

POOLS = ["MaxPool", "SumPool", "AvgPool"]
POOL_ARGS: dict[str, tuple[dict[str, Any], tuple[int, ...]]] = {
    "valid": ({"window_shape": (2, 2)}, X4),
    "strided_same": ({"window_shape": (3, 3), "strides": (2, 2), "padding": "SAME"},
                     (2, 7, 8, 3)),
    "spec_nchw_same": ({"window_shape": (2, 3), "strides": (2, 1), "padding": "SAME",
                        "spec": "NCHW"}, (2, 3, 5, 7)),
    "spec_hwnc": ({"window_shape": (3, 2), "padding": "SAME", "spec": "HWNC"},
                  (5, 4, 2, 3)),
    "one_dim": ({"window_shape": (3,), "strides": (2,)}, (2, 9, 3)),
}


@pytest.mark.parametrize("name", list(LAYERS))
def test_layer_matches_jax(name: str) -> None:
    build, shape = LAYERS[name]
    _check(build, shape)


@pytest.mark.parametrize("pool", POOLS)
@pytest.mark.parametrize("case", list(POOL_ARGS))
def test_pooling_matches_jax(pool: str, case: str) -> None:
    kwargs, shape = POOL_ARGS[case]
    _check(lambda s: getattr(s, pool)(**kwargs), shape)


COMBINATORS: dict[str, tuple[Build, Any]] = {
    "serial_mlp": (lambda s: s.serial(s.Dense(4), s.Relu, s.Dense(4), s.LogSoftmax), (3, 5)),
    "residual": (lambda s: s.serial(s.FanOut(2), s.parallel(s.Dense(4), s.Identity),
                                    s.FanInSum, s.Tanh), (3, 4)),
    "concat": (lambda s: s.serial(s.FanOut(3), s.parallel(s.Dense(4), s.Dense(4), s.Sigmoid),
                                  s.FanInConcat()), (3, 5)),
    "concat_axis0": (lambda s: s.serial(s.FanOut(2), s.FanInConcat(0)), (3, 5)),
    "fan_out": (lambda s: s.FanOut(3), (2, 4)),
    "fan_in_sum": (lambda s: s.FanInSum, [(2, 3), (2, 3), (2, 3)]),
    "fan_in_concat": (lambda s: s.FanInConcat(1), [(2, 3), (2, 5)]),
    "parallel": (lambda s: s.parallel(s.Dense(4), s.Conv(4, (3, 3)), s.Relu),
                 [(2, 4), (1, 5, 5, 3), (3,)]),
    "nested_serial": (lambda s: s.serial(s.serial(s.Dense(4), s.Elu),
                                         s.serial(s.BatchNorm(0), s.Dense(4))), (6, 5)),
    "shape_dependent": (lambda s: s.shape_dependent(lambda shape: s.Dense(shape[-1])),
                        (3, 4)),
}


@pytest.mark.parametrize("name", list(COMBINATORS))
def test_combinator_matches_jax(name: str) -> None:
    build, shape = COMBINATORS[name]
    _check(build, shape)


@pytest.mark.parametrize("kind", ["key", "PRNGKey"])
def test_raw_and_typed_keys_give_jax_parameters(kind: str) -> None:
    _check(COMBINATORS["concat"][0], (3, 5), kind)
    _check(LAYERS["conv_strided_same"][0], X4, kind)


def _check_with_rng(build: Build, shape: Any, kind: str) -> None:
    ours, params, theirs, jparams = _check_init(build, shape, kind)
    k_ours, k_theirs = _keys(kind, seed=7)
    x = _input(shape)
    got = ours[1](params, x, rng=k_ours)
    want = theirs[1](jparams, x, rng=k_theirs)
    assert_close(got, want, rtol=0, atol=0)


DROPOUTS: dict[str, Build] = {
    "train": lambda s: s.Dropout(0.7),
    "test": lambda s: s.Dropout(0.7, mode="test"),  # which needs a key too
    "test_in_serial": lambda s: s.serial(s.Dense(4), s.Dropout(0.5, "test")),
    "in_serial": lambda s: s.serial(s.Dropout(0.5), s.Relu, s.Dropout(0.8)),
    "in_parallel": lambda s: s.serial(s.FanOut(2), s.parallel(s.Dropout(0.5), s.Dropout(0.9)),
                                      s.FanInSum),
}


@pytest.mark.parametrize("kind", ["key", "PRNGKey"])
@pytest.mark.parametrize("name", list(DROPOUTS))
def test_dropout_keeps_what_jax_keeps(name: str, kind: str) -> None:
    _check_with_rng(DROPOUTS[name], (4, 5), kind)


@pytest.mark.parametrize("mode", ["train", "test"])
def test_dropout_without_a_key_is_an_error_as_in_jax(mode: str) -> None:
    x = _input((2, 3))
    theirs = raised(lambda: jstax.Dropout(0.5, mode)[1]((), x))
    ours = raised(lambda: pstax.Dropout(0.5, mode)[1]((), x))
    assert type(ours) is type(theirs) is ValueError
    assert "Dropout" in str(ours) and "rng=" in str(ours)
    serial = pstax.serial(pstax.Dense(3), pstax.Dropout(0.5, mode))
    _, params = serial[0](plait.random.key(0), (2, 3))
    assert type(raised(lambda: serial[1](params, x))) is ValueError


def test_public_names_are_jax_s() -> None:
    modules = {"functools", "math", "lax", "random", "jnp"}
    theirs = {n for n in vars(jstax) if not n.startswith("_")} - modules
    ours = {n for n in vars(pstax) if not n.startswith("_")}
    assert not theirs - ours, f"missing from plait.example_libraries.stax: {theirs - ours}"


def _cnn(s: Any) -> Any:
    return s.serial(s.Conv(4, (3, 3), padding="SAME"), s.Relu, s.MaxPool((2, 2), (2, 2)),
                    s.Flatten, s.Dense(10), s.LogSoftmax)


def _loss(np_: Any, apply_fun: Callable[..., Any]) -> Callable[..., Any]:
    def loss(params: Any, x: Any, y: Any) -> Any:
        logp = apply_fun(params, x)
        return -np_.mean(np_.sum(logp * y, axis=-1))
    return loss


def test_cnn_gradient_matches_jax() -> None:
    shape = (4, 8, 8, 3)
    ours, params, theirs, jparams = _check_init(_cnn, shape)
    x = _input(shape)
    y = np.eye(10, dtype=np.float32)[np.arange(4) % 10]
    got = plait.jit(plait.grad(_loss(pnp, ours[1])))(params, x, y)
    want = jax.jit(jax.grad(_loss(jjnp, theirs[1])))(jparams, x, y)
    assert_close(got, want, rtol=1e-5, atol=1e-6)
    got_loss = plait.jit(_loss(pnp, ours[1]))(params, x, y)
    want_loss = jax.jit(_loss(jjnp, theirs[1]))(jparams, x, y)
    np.testing.assert_allclose(np.asarray(got_loss), np.asarray(want_loss), rtol=1e-6)

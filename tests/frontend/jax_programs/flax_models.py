"""Flax's linen models, written for JAX: ``python flax_models.py [name ...]`` prints, per
model (all of them unless named), numbers to compare as JSON."""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable
from typing import Any

import flax
import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np
import optax
from flax import serialization, traverse_util
from flax.linen import partitioning as nn_partitioning
from flax.training import train_state

_X = np.linspace(-1.0, 1.0, 4 * 6, dtype=np.float32).reshape(4, 6)
_IMAGES = np.linspace(-1.0, 1.0, 2 * 8 * 8 * 3, dtype=np.float32).reshape(2, 8, 8, 3)


def _apply(model: nn.Module, *args: Any) -> Any:
    return model.apply(*args)  # (flax's union of return types, for mypy)


def _flat(tree: Any) -> list[float]:
    return [float(v) for leaf in jax.tree_util.tree_leaves(tree)
            for v in np.ravel(np.asarray(leaf, np.float64))]


class _MLP(nn.Module):
    features: tuple[int, ...] = (16, 3)

    @nn.compact
    def __call__(self, x: Any) -> Any:
        for f in self.features[:-1]:
            x = nn.gelu(nn.LayerNorm()(nn.Dense(f)(x)))
        return nn.Dense(self.features[-1])(x)


def _mlp_train() -> list[float]:
    model = _MLP()
    state = train_state.TrainState.create(
        apply_fn=model.apply, params=model.init(jax.random.key(0), _X)["params"],
        tx=optax.adamw(1e-2))
    targets = jnp.asarray(_X[:, :3])

    @jax.jit
    def step(state: Any) -> tuple[Any, Any]:
        def loss(params: Any) -> Any:
            return jnp.mean((state.apply_fn({"params": params}, _X) - targets) ** 2)
        value, grads = jax.value_and_grad(loss)(state.params)
        return state.apply_gradients(grads=grads), value

    losses = []
    for _ in range(4):
        state, value = step(state)
        losses.append(value)
    return [*_flat(losses), *_flat(state.params)]


class _CNN(nn.Module):
    @nn.compact
    def __call__(self, x: Any, train: bool) -> Any:
        x = nn.Conv(8, (3, 3), padding="SAME")(x)
        x = nn.BatchNorm(use_running_average=not train, momentum=0.9)(x)
        x = nn.relu(x)
        x = nn.max_pool(x, (2, 2), strides=(2, 2))
        x = nn.Dropout(0.5, deterministic=not train)(x)
        x = nn.Conv(4, (3, 3), strides=2, feature_group_count=2)(x)
        x = nn.avg_pool(x, (2, 2), padding="SAME")
        x = nn.GroupNorm(num_groups=2)(x)
        return nn.Dense(2)(x.reshape(x.shape[0], -1))


def _cnn_batchnorm_dropout() -> list[float]:
    model = _CNN()
    variables = model.init({"params": jax.random.key(1), "dropout": jax.random.key(2)},
                           _IMAGES, train=False)

    def loss(params: Any, stats: Any, key: Any) -> Any:
        out, updates = model.apply({"params": params, "batch_stats": stats}, _IMAGES, train=True,
                                   rngs={"dropout": key}, mutable=["batch_stats"])
        return jnp.sum(out ** 2), updates

    (value, updates), grads = jax.jit(jax.value_and_grad(loss, has_aux=True))(
        variables["params"], variables["batch_stats"], jax.random.key(3))
    evaluated = model.apply({"params": variables["params"], **updates}, _IMAGES, train=False)
    return [float(value), *_flat(grads), *_flat(updates), *_flat(evaluated)]


class _ScanCell(nn.Module):
    @nn.compact
    def __call__(self, carry: Any, x: Any) -> tuple[Any, Any]:
        h = nn.tanh(nn.Dense(5, name="h")(carry) + nn.Dense(5, name="x")(x))
        return h, nn.Dense(2)(h)


def _scan_rnn() -> list[float]:
    # nn.scan shares the cell's parameters over steps (flax's lifted scan traces the body
    # with jax.interpreters.partial_eval to find the broadcast variables).
    scan = nn.scan(_ScanCell, variable_broadcast="params", split_rngs={"params": False},
                   in_axes=1, out_axes=1)()
    xs = jnp.asarray(_X.reshape(4, 3, 2))
    carry = jnp.zeros((4, 5))
    params = scan.init(jax.random.key(4), carry, xs)
    (final, ys) = scan.apply(params, carry, xs)
    grads = jax.grad(lambda p: jnp.sum(_apply(scan, p, carry, xs)[1] ** 2))(params)
    return [*_flat(final), *_flat(ys), *_flat(grads)]


def _lstm_rnn() -> list[float]:
    model = nn.RNN(nn.OptimizedLSTMCell(6))
    xs = jnp.asarray(_X.reshape(2, 4, 3))
    params = model.init(jax.random.key(5), xs)
    gru = nn.RNN(nn.GRUCell(4), return_carry=True)
    gru_params = gru.init(jax.random.key(6), xs)
    carry, out = gru.apply(gru_params, xs, seq_lengths=jnp.array([4, 2]))
    return [*_flat(model.apply(params, xs)), *_flat(carry), *_flat(out)]


class _Encoder(nn.Module):
    @nn.compact
    def __call__(self, tokens: Any, train: bool = False) -> Any:
        x = nn.Embed(11, 8)(tokens)
        mask = nn.make_causal_mask(tokens)
        x = x + nn.MultiHeadDotProductAttention(num_heads=2, qkv_features=8)(x, mask=mask)
        x = nn.RMSNorm()(x)
        return nn.Sequential([nn.Dense(8), nn.silu, nn.Dense(3)])(x)


def _attention() -> list[float]:
    tokens = jnp.array([[1, 4, 2, 9, 0], [3, 3, 7, 1, 5]])
    model = _Encoder()
    params = model.init(jax.random.key(7), tokens)
    grads = jax.grad(lambda p: jnp.sum(_apply(model, p, tokens) ** 2))(params)
    return [*_flat(model.apply(params, tokens)), *_flat(grads)]


class _Lifted(nn.Module):
    @nn.compact
    def __call__(self, x: Any) -> Any:
        batched = nn.vmap(nn.Dense, in_axes=0, out_axes=0, variable_axes={"params": 0},
                          split_rngs={"params": True})(3)
        remat = nn.remat(nn.Dense)(4)
        y = remat(batched(x.reshape(2, 2, 6)).reshape(4, 3))
        return nn.jit(nn.Dense)(2)(y)


def _lifted_transforms() -> list[float]:
    model = _Lifted()
    params = model.init(jax.random.key(8), _X)
    grads = jax.jit(jax.grad(lambda p: jnp.sum(_apply(model, p, _X) ** 2)))(params)
    return [*_flat(model.apply(params, _X)), *_flat(grads)]


def _lazy_init_and_serialization() -> list[float]:
    # lazy_init traces with jax.interpreters.partial_eval (the input is a shape only).
    model = _MLP((7, 2))
    params = model.lazy_init(jax.random.key(9), jax.ShapeDtypeStruct((4, 6), jnp.float32))
    restored = serialization.from_bytes(params, serialization.to_bytes(params))
    flat = traverse_util.flatten_dict(flax.core.unfreeze(restored), sep="/")
    shapes = [float(d) for k in sorted(flat) for d in flat[k].shape]
    return [*shapes, *_flat(model.apply(restored, _X)),
            *_flat(jax.eval_shape(model.init, jax.random.key(0), _X)["params"]["Dense_0"]
                   ["kernel"].shape)]


class _Decoder(nn.Module):
    @nn.compact
    def __call__(self, x: Any, decode: bool = False) -> Any:
        return nn.MultiHeadDotProductAttention(num_heads=2, qkv_features=4, decode=decode)(x)


def _decode_cache() -> list[float]:
    # Autoregressive decoding: the attention keeps its keys and values in a mutable cache.
    x = jnp.asarray(_X.reshape(2, 3, 4))
    model = _Decoder()
    params = model.init(jax.random.key(10), x)["params"]
    cache = model.init(jax.random.key(10), x, decode=True)["cache"]
    steps = []
    for t in range(3):
        y, changed = model.apply({"params": params, "cache": cache}, x[:, t:t + 1],
                                 decode=True, mutable=["cache"])
        cache = changed["cache"]
        steps.append(y)
    return _flat(steps)


class _Control(nn.Module):
    @nn.compact
    def __call__(self, x: Any) -> Any:
        dense = nn.Dense(6)
        y = nn.cond(x.sum() > 0, lambda m, v: m(v), lambda m, v: -m(v), dense, x)
        def large(m: Any, c: Any) -> Any:
            return jnp.abs(c).sum() > 1.0
        y = nn.while_loop(large, lambda m, c: c * 0.5, self, y)
        return nn.switch(1, [lambda m, v: m(v), lambda m, v: m(v) * 2], dense, y)


class _Layers(nn.Module):
    @nn.compact
    def __call__(self, x: Any) -> tuple[Any, Any]:
        x = nn.Einsum((6, 3), "bi,io->bo")(x)
        x = nn.SpectralNorm(nn.Dense(3))(x, update_stats=False)
        x = nn.WeightNorm(nn.Dense(3))(x)
        x = nn.PReLU()(x)[:, :, None]
        x = nn.ConvLocal(2, (2,))(nn.ConvTranspose(2, (3,))(x))
        return nn.Embed(7, 2).attend(x), nn.dot_product_attention(x, x, x)


def _control_and_layers() -> list[float]:
    control, layers = _Control(), _Layers()
    cparams = control.init(jax.random.key(11), _X[0])
    lparams = layers.init(jax.random.key(12), _X)
    grads = jax.grad(lambda p: jnp.sum(_apply(layers, p, _X)[0]))(lparams)
    # (tabulate's flops come from XLA's cost analysis of each module's program, whose
    # HLO differs from JAX's by a few operations; its column order follows a set.)
    table = layers.tabulate(jax.random.key(12), _X, compute_flops=True)
    total = re.search(r"Total Parameters: (\d+)", table)
    return [*_flat(_apply(control, cparams, _X[0])), *_flat(_apply(layers, lparams, _X)),
            *_flat(grads), float(total.group(1)) if total else -1.0]


class _Partitioned(nn.Module):
    @nn.compact
    def __call__(self, x: Any) -> Any:
        w = self.param("w", nn.with_logical_partitioning(nn.initializers.lecun_normal(),
                                                          ("embed", "mlp")), (6, 8))
        return nn_partitioning.with_sharding_constraint(x @ w, ("batch", "mlp"))


class _LiftedAD(nn.Module):
    @nn.compact
    def __call__(self, x: Any) -> Any:
        dense = nn.Dense(6)

        def f(m: Any, v: Any) -> Any:
            return m(v) ** 2
        y, vjp_fn = nn.vjp(f, dense, x)
        _, x_grad = vjp_fn(jnp.ones_like(y))
        lifted_jvp: Any = nn.jvp(f, dense, (x,), (jnp.ones_like(x),), {})
        t = lifted_jvp[1]
        doubled = nn.map_variables(nn.Dense, "params", init=True, trans_in_fn=lambda v:
                                   jax.tree_util.tree_map(lambda a: a * 2, v))(6)
        return y + x_grad + t + doubled(x)


def _partitioning_and_lifted_ad() -> list[float]:
    model = _Partitioned()
    with nn_partitioning.axis_rules((("batch", None), ("embed", None), ("mlp", None))):
        params = model.init(jax.random.key(13), _X)
        specs = nn.get_partition_spec(params)
        y = jax.jit(model.apply)(params, _X)
    lifted = _LiftedAD()
    lparams = lifted.init(jax.random.key(14), _X)
    return [*_flat(y), float(len(jax.tree_util.tree_leaves(specs))),
            *_flat(_apply(lifted, lparams, _X))]


def models() -> dict[str, Callable[[], list[float]]]:
    """Each model's numbers."""
    return {"mlp_train": _mlp_train, "cnn": _cnn_batchnorm_dropout, "scan_rnn": _scan_rnn,
            "lstm": _lstm_rnn, "attention": _attention, "lifted": _lifted_transforms,
            "lazy_init": _lazy_init_and_serialization, "decode": _decode_cache,
            "control_layers": _control_and_layers,
            "partitioning": _partitioning_and_lifted_ad}


def main(names: list[str] | None = None) -> dict[str, list[float]]:
    """The numbers of the models named (all by default)."""
    return {name: run() for name, run in models().items() if not names or name in names}


if __name__ == "__main__":
    print(json.dumps({"jax": jax.__version__, "results": main(sys.argv[1:])}))

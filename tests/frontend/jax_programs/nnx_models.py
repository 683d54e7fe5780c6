"""Flax's nnx models, written for JAX: ``python nnx_models.py [name ...]`` prints, per
use (all of them unless named), numbers to compare as JSON."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import Any

import flax.linen as linen
import jax
import jax.numpy as jnp
import numpy as np
import optax
from flax import nnx

_X: Any = np.linspace(-1.0, 1.0, 4 * 6, dtype=np.float32).reshape(4, 6)
_IMAGES: Any = np.linspace(-1.0, 1.0, 2 * 8 * 8 * 3, dtype=np.float32).reshape(2, 8, 8, 3)
_TOKENS: Any = np.array([[1, 4, 2, 7, 3], [5, 0, 6, 2, 1]], dtype=np.int32)


def _flat(tree: Any) -> list[float]:
    return [float(v) for leaf in jax.tree_util.tree_leaves(tree)
            for v in np.ravel(np.asarray(leaf, np.float64))]


class _MLP(nnx.Module):
    def __init__(self, rngs: nnx.Rngs) -> None:
        self.hidden = nnx.Linear(6, 16, rngs=rngs)
        self.norm = nnx.LayerNorm(16, rngs=rngs)
        self.out = nnx.Linear(16, 3, rngs=rngs)

    def __call__(self, x: Any) -> Any:
        return self.out(nnx.gelu(self.norm(self.hidden(x))))


def _mlp_train() -> list[float]:
    model = _MLP(nnx.Rngs(0))
    optimizer = nnx.Optimizer(model, optax.adamw(1e-2), wrt=nnx.Param)
    targets = jnp.asarray(_X[:, :3])

    @nnx.jit
    def step(model: _MLP, optimizer: nnx.Optimizer, x: Any) -> Any:
        def loss(model: _MLP) -> Any:
            return jnp.mean((model(x) - targets) ** 2)
        value, grads = nnx.value_and_grad(loss)(model)
        optimizer.update(model, grads)
        return value

    losses = [float(step(model, optimizer, _X)) for _ in range(4)]
    return [*losses, *_flat(nnx.state(model, nnx.Param))]


class _CNN(nnx.Module):
    def __init__(self, rngs: nnx.Rngs) -> None:
        self.conv = nnx.Conv(3, 4, kernel_size=(3, 3), rngs=rngs)
        self.bn = nnx.BatchNorm(4, rngs=rngs)
        self.dropout = nnx.Dropout(0.5, rngs=rngs)
        self.head = nnx.Linear(4 * 4 * 4, 2, rngs=rngs)

    def __call__(self, x: Any) -> Any:
        x = nnx.relu(self.bn(self.conv(x)))
        x = nnx.avg_pool(x, window_shape=(2, 2), strides=(2, 2))
        x = self.dropout(x.reshape(x.shape[0], -1))
        return self.head(x)


def _cnn_batchnorm_dropout() -> list[float]:
    model = _CNN(nnx.Rngs(params=1, dropout=2))
    optimizer = nnx.Optimizer(model, optax.sgd(0.1, momentum=0.9), wrt=nnx.Param)
    metrics = nnx.MultiMetric(loss=nnx.metrics.Average("loss"),
                              accuracy=nnx.metrics.Accuracy())
    labels = jnp.array([0, 1])

    @nnx.jit
    def train_step(model: _CNN, optimizer: nnx.Optimizer, metrics: nnx.MultiMetric) -> None:
        def loss_fn(model: _CNN) -> Any:
            logits = model(_IMAGES)
            return optax.softmax_cross_entropy_with_integer_labels(logits, labels).mean(), logits
        (loss, logits), grads = nnx.value_and_grad(loss_fn, has_aux=True)(model)
        metrics.update(loss=loss, logits=logits, labels=labels)
        optimizer.update(model, grads)

    model.train()
    for _ in range(3):
        train_step(model, optimizer, metrics)
    computed = metrics.compute()
    model.eval()
    return [*_flat(computed), *_flat(model(_IMAGES)), *_flat(nnx.state(model, nnx.BatchStat))]


class _Block(nnx.Module):
    def __init__(self, rngs: nnx.Rngs) -> None:
        self.linear = nnx.Linear(6, 6, rngs=rngs)
        self.dropout = nnx.Dropout(0.1, rngs=rngs)

    def __call__(self, x: Any) -> Any:
        return self.dropout(nnx.tanh(self.linear(x)))


def _scan_over_layers() -> list[float]:
    @nnx.split_rngs(splits=3)
    @nnx.vmap(in_axes=(0,), out_axes=0)
    def create(rngs: nnx.Rngs) -> _Block:
        return _Block(rngs)

    blocks = create(nnx.Rngs(params=3, dropout=4))

    @nnx.scan(in_axes=(0, nnx.Carry), out_axes=nnx.Carry)
    @nnx.remat
    def forward(block: _Block, x: Any) -> Any:
        return block(x)

    def loss(blocks: _Block) -> Any:
        return jnp.sum(forward(blocks, _X) ** 2)

    grads = nnx.grad(loss)(blocks)
    return [*_flat(forward(blocks, _X)), *_flat(grads)]


class _Encoder(nnx.Module):
    def __init__(self, rngs: nnx.Rngs) -> None:
        self.embed = nnx.Embed(8, 16, rngs=rngs)
        self.attention = nnx.MultiHeadAttention(num_heads=4, in_features=16, decode=False,
                                                rngs=rngs)
        self.norm = nnx.RMSNorm(16, rngs=rngs)
        self.rnn = nnx.RNN(nnx.LSTMCell(16, 8, rngs=rngs))

    def __call__(self, tokens: Any) -> Any:
        x = self.embed(tokens)
        mask = nnx.make_causal_mask(tokens)
        x = self.norm(x + self.attention(x, mask=mask))
        return self.rnn(x)


def _attention_lstm() -> list[float]:
    model = _Encoder(nnx.Rngs(5))
    y = nnx.jit(lambda m, t: m(t))(model, _TOKENS)
    grads = nnx.jit(nnx.grad(lambda m: jnp.mean(m(_TOKENS) ** 2)))(model)
    return [*_flat(y), *_flat(grads)]


class _Counter(nnx.Variable[Any]):
    pass


class _Stateful(nnx.Module):
    def __init__(self, rngs: nnx.Rngs) -> None:
        self.linear = nnx.Linear(6, 3, rngs=rngs)
        self.count = _Counter(jnp.array(0))

    def __call__(self, x: Any) -> Any:
        self.count[...] += 1
        return self.linear(x)


def _split_merge_state() -> list[float]:
    model = _Stateful(nnx.Rngs(6))
    parts: Any = nnx.split(model, nnx.Param, _Counter)
    graphdef, params, counts = parts

    @jax.jit
    def pure_step(params: Any, counts: Any, x: Any) -> tuple[Any, Any]:
        model = nnx.merge(graphdef, params, counts)
        y = model(x)
        new_parts: Any = nnx.split(model, nnx.Param, _Counter)
        return y, new_parts[2]

    y, counts = pure_step(params, counts, _X)
    y, counts = pure_step(params, counts, _X)
    shapes = nnx.eval_shape(lambda: _Stateful(nnx.Rngs(0)))
    diff = nnx.DiffState(0, nnx.Param)
    grads = nnx.grad(lambda m, x: jnp.sum(m(x)), argnums=diff)(model, _X)
    vmapped = nnx.vmap(lambda m, x: m(x), in_axes=(None, 0))(model, _X[None].repeat(2, 0))
    return [*_flat(y), *_flat(counts), float(shapes.linear.kernel.get_value().shape[0]),
            *_flat(grads), *_flat(vmapped), float(model.count.get_value())]


def _control_flow() -> list[float]:
    model = _MLP(nnx.Rngs(7))

    @nnx.jit
    def run(model: _MLP, x: Any) -> Any:
        def body(i: Any, carry: tuple[_MLP, Any]) -> tuple[_MLP, Any]:
            model, x = carry
            return model, x + 0.1 * jnp.pad(model(x), ((0, 0), (0, 3)))
        model, x = nnx.fori_loop(0, 3, body, (model, x))
        return nnx.cond(jnp.sum(x) > 0, lambda m, x: m(x), lambda m, x: -m(x), model, x)

    return _flat(run(model, _X))


def _layers_and_transforms() -> list[float]:
    rngs = nnx.Rngs(8)
    seq = nnx.Sequential(nnx.ConvTranspose(3, 4, kernel_size=(3, 3), rngs=rngs),
                         nnx.GroupNorm(4, num_groups=2, rngs=rngs),
                         nnx.Conv(4, 2, kernel_size=(2, 2), strides=(2, 2), rngs=rngs))
    einsum = nnx.Einsum("bi,io->bo", (6, 5), (5,), rngs=rngs)
    lora = nnx.LoRALinear(6, 5, lora_rank=2, rngs=rngs)
    prelu = nnx.PReLU()

    @nnx.custom_vjp
    def clipped(m: nnx.Einsum) -> Any:
        return m(_X)

    def clipped_fwd(m: nnx.Einsum) -> tuple[Any, Any]:
        return clipped(m), (m,)

    def clipped_bwd(res: Any, g: Any) -> tuple[Any]:
        (m,), ((_,), y_bar) = res, g
        return (nnx.grad(lambda m: jnp.vdot(m(_X), jnp.clip(y_bar, -0.1, 0.1)))(m),)

    clipped.defvjp(clipped_fwd, clipped_bwd)

    @nnx.jit
    def loops(m: nnx.LoRALinear, x: Any) -> Any:
        def cond(c: tuple[nnx.LoRALinear, Any, Any]) -> Any:
            return c[2] < 3
        def body(c: tuple[nnx.LoRALinear, Any, Any]) -> tuple[nnx.LoRALinear, Any, Any]:
            m, x, i = c
            y = nnx.switch(i % 2, [lambda: jnp.tanh(m(x)), lambda: jnp.sin(m(x))])
            return m, x + 0.1 * jnp.sum(y), i + 1
        return nnx.while_loop(cond, body, (m, x, jnp.array(0)))[1]

    err, out = nnx.checkify(lambda m, x: m(x))(prelu, -_X)
    grads = nnx.grad(lambda m: jnp.sum(clipped(m) ** 2))(einsum)
    tangent = jax.jvp(lambda x: seq(x), (_IMAGES,), (jnp.ones_like(_IMAGES),))[1]
    return [*_flat(seq(_IMAGES)), *_flat(grads), *_flat(loops(lora, _X)), *_flat(out),
            float(err.get() is None), *_flat(tangent)]


def _decode_and_bridge() -> list[float]:
    attention = nnx.MultiHeadAttention(num_heads=2, in_features=8, qkv_features=8,
                                       decode=True, rngs=nnx.Rngs(9))
    attention.init_cache((2, 4, 8))
    steps: Any = np.linspace(-1, 1, 2 * 4 * 8, dtype=np.float32).reshape(2, 4, 8)
    decoded = [attention(steps[:, i:i + 1]) for i in range(4)]
    bridged = nnx.bridge.ToNNX(linen.Dense(3), rngs=nnx.Rngs(10))
    nnx.bridge.lazy_init(bridged, _X)
    back = nnx.bridge.ToLinen(_MLP, args=())
    variables = back.init(jax.random.key(11), _X)
    mesh = jax.make_mesh((1,), ("data",))
    with jax.set_mesh(mesh):
        sharded = nnx.Linear(6, 4, rngs=nnx.Rngs(12), kernel_init=nnx.with_partitioning(
            nnx.initializers.lecun_normal(), (None, "data")))
        state = nnx.state(sharded)
        specs = nnx.get_partition_spec(state)
    return [*_flat(decoded), *_flat(bridged(_X)), *_flat(back.apply(variables, _X)),
            *_flat(sharded(_X)), float(len(jax.tree_util.tree_leaves(specs)))]


def _ref_variables() -> list[float]:
    with nnx.var_defaults(ref=True):
        model = _Stateful(nnx.Rngs(13))

    @nnx.jit
    def step(model: _Stateful) -> Any:
        return model(_X)

    ys = [step(model) for _ in range(2)]
    return [*_flat(ys), float(model.count[...]),
            float(isinstance(model.count.get_raw_value(), jax.Ref))]


def uses() -> dict[str, Callable[[], list[float]]]:
    """Each use's numbers."""
    return {"mlp_train": _mlp_train, "cnn": _cnn_batchnorm_dropout,
            "scan_layers": _scan_over_layers, "attention_lstm": _attention_lstm,
            "split_merge": _split_merge_state, "control_flow": _control_flow,
            "layers_transforms": _layers_and_transforms, "decode_bridge": _decode_and_bridge,
            "ref_variables": _ref_variables}


def main(names: list[str] | None = None) -> dict[str, list[float]]:
    """The numbers of the uses named (all by default)."""
    return {name: run() for name, run in uses().items() if not names or name in names}


if __name__ == "__main__":
    print(json.dumps({"jax": jax.__version__, "results": main(sys.argv[1:])}))

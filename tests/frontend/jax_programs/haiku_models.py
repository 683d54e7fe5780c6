"""DeepMind's Haiku models, rlax losses and distrax distributions, written for JAX:
``python haiku_models.py [name ...]`` prints, per use (all of them unless named), numbers
to compare as JSON."""

from __future__ import annotations

import json
import sys
import warnings
from collections.abc import Callable
from typing import Any

import distrax
import haiku
import jax
import jax.numpy as jnp
import numpy as np
import optax
import rlax

hk: Any = haiku  # (Haiku's own annotations of its transforms do not type-check here)
_X: Any = np.linspace(-1.0, 1.0, 4 * 6, dtype=np.float32).reshape(4, 6)
_IMAGES: Any = np.linspace(-1.0, 1.0, 2 * 8 * 8 * 3, dtype=np.float32).reshape(2, 8, 8, 3)
_TOKENS: Any = np.array([[1, 4, 2, 7, 3], [5, 0, 6, 2, 1]], dtype=np.int32)
_SEQ: Any = np.linspace(-1.0, 1.0, 5 * 2 * 3, dtype=np.float32).reshape(5, 2, 3)


def _flat(tree: Any) -> list[float]:
    return [float(v) for leaf in jax.tree_util.tree_leaves(tree)
            for v in np.ravel(np.asarray(leaf, np.float64))]


def _mlp_train() -> list[float]:
    def forward(x: Any) -> Any:
        h = hk.nets.MLP([16, 16], activation=jax.nn.gelu, activate_final=True)(x)
        return hk.Linear(3)(hk.LayerNorm(-1, True, True)(h))

    model = hk.without_apply_rng(hk.transform(forward))
    params = model.init(jax.random.PRNGKey(0), _X)
    opt = optax.adam(1e-2)
    opt_state = opt.init(params)
    targets = jnp.asarray(_X[:, :3])

    @jax.jit
    def step(params: Any, opt_state: Any) -> Any:
        def loss(p: Any) -> Any:
            return jnp.mean((model.apply(p, _X) - targets) ** 2)
        value, grads = jax.value_and_grad(loss)(params)
        updates, opt_state = opt.update(grads, opt_state)
        return optax.apply_updates(params, updates), opt_state, value

    losses = []
    for _ in range(4):
        params, opt_state, value = step(params, opt_state)
        losses.append(float(value))
    return [*losses, *_flat(params)]


def _cnn_state() -> list[float]:
    def forward(x: Any, training: bool) -> Any:
        x = hk.Conv2D(4, 3)(x)
        x = hk.BatchNorm(True, True, 0.9)(x, is_training=training)
        x = jax.nn.relu(x)
        x = hk.MaxPool((1, 2, 2, 1), (1, 2, 2, 1), "SAME")(x)
        if training:
            x = hk.dropout(hk.next_rng_key(), 0.5, x)
        x = hk.Conv2DTranspose(2, 3, stride=2)(x)
        x = hk.GroupNorm(2)(x)
        x = hk.AvgPool((1, 2, 2, 1), (1, 2, 2, 1), "VALID")(x)
        return hk.Linear(2)(hk.Flatten()(x))

    model = hk.transform_with_state(forward)
    params, state = model.init(jax.random.PRNGKey(1), _IMAGES, True)
    apply = jax.jit(model.apply, static_argnums=4)
    outs = []
    for i in range(2):
        y, state = apply(params, state, jax.random.PRNGKey(i + 2), _IMAGES, True)
        outs.append(y)
    y_eval, _ = apply(params, state, None, _IMAGES, False)

    def loss(p: Any) -> Any:
        y, _ = model.apply(p, state, jax.random.PRNGKey(5), _IMAGES, True)
        return jnp.sum(y ** 2)
    return [*_flat(outs), *_flat(y_eval), *_flat(state), *_flat(jax.jit(jax.grad(loss))(params))]


def _recurrent() -> list[float]:
    def forward(xs: Any) -> Any:
        core = hk.DeepRNN([hk.LSTM(6), jax.nn.tanh, hk.GRU(4)])
        ys, _ = hk.dynamic_unroll(core, xs, core.initial_state(2))
        vanilla = hk.VanillaRNN(3)
        zs, _ = hk.static_unroll(vanilla, xs, vanilla.initial_state(2))
        reset = hk.ResetCore(hk.LSTM(2))
        should_reset = jnp.asarray(np.array([[0, 1], [0, 0], [1, 0], [0, 0], [0, 1]], bool))
        rs, _ = hk.dynamic_unroll(reset, (xs, should_reset), reset.initial_state(2))
        return ys, zs, rs

    model = hk.without_apply_rng(hk.transform(forward))
    params = model.init(jax.random.PRNGKey(3), _SEQ)
    outs = jax.jit(model.apply)(params, _SEQ)
    grads = jax.jit(jax.grad(lambda p: jnp.sum(jnp.stack(
        [jnp.sum(o ** 2) for o in model.apply(p, _SEQ)]))))(params)
    return [*_flat(outs), *_flat(grads)]


def _attention() -> list[float]:
    def forward(tokens: Any) -> Any:
        x = hk.Embed(8, 8)(tokens)
        mask = jnp.tril(jnp.ones((1, 1, tokens.shape[1], tokens.shape[1]), bool))
        attn = hk.MultiHeadAttention(num_heads=2, key_size=4, model_size=8,
                                     w_init=hk.initializers.VarianceScaling(1.0))
        x = x + attn(x, x, x, mask=mask)
        x = hk.RMSNorm(-1)(x)
        mlp = hk.Sequential([hk.Linear(16), jax.nn.silu, hk.Linear(8)])
        return hk.Linear(8)(x + mlp(x))

    model = hk.without_apply_rng(hk.transform(forward))
    params = model.init(jax.random.PRNGKey(4), _TOKENS)

    def loss(p: Any) -> Any:
        logits = model.apply(p, _TOKENS)
        return jnp.mean(optax.softmax_cross_entropy_with_integer_labels(logits, _TOKENS))
    value, grads = jax.jit(jax.value_and_grad(loss))(params)
    return [float(value), *_flat(grads)]


def _lifted() -> list[float]:
    def forward(x: Any) -> Any:
        # Lifted transforms: a vmapped layer with split rngs, a scan over layers, remat.
        stacked = hk.vmap(lambda r: hk.Linear(6)(r), split_rng=False)(x)
        layer = hk.remat(lambda h: jnp.tanh(hk.Linear(6)(h)))
        y = layer(stacked)

        scan_linear = hk.Linear(6, name="scan_linear")

        def body(carry: Any, inp: Any) -> Any:
            out = scan_linear(carry) + inp
            return out, jnp.sum(out)
        carry, sums = hk.scan(body, y[0], y)
        looped = hk.fori_loop(0, 3, lambda i, h: h * 0.5 + 1.0, carry)
        branch_linear = hk.Linear(6, name="branch_linear")
        branch = hk.cond(jnp.sum(looped) > 0, branch_linear, lambda h: -branch_linear(h),
                         looped)
        sw = hk.switch(1, [lambda h: h + 1.0, lambda h: h * 2.0], branch)

        def stack_layer(h: Any) -> Any:
            return jax.nn.relu(hk.Linear(6)(h))
        staged = hk.layer_stack(3)(stack_layer)(y)
        return sw, sums, staged

    model = hk.transform(forward)
    params = model.init(jax.random.PRNGKey(6), _X)
    outs = jax.jit(model.apply)(params, None, _X)

    def loss(p: Any) -> Any:
        return sum(jnp.sum(o ** 2) for o in model.apply(p, None, _X))
    grads = jax.jit(jax.grad(loss))(params)
    return [*_flat(outs), *_flat(grads)]


def _multi_and_data() -> list[float]:
    def make() -> Any:
        encoder = hk.Linear(4, name="encoder")
        decoder = hk.Linear(6, name="decoder")

        def encode(x: Any) -> Any:
            return encoder(x)

        def decode(z: Any) -> Any:
            return decoder(z)

        def init(x: Any) -> Any:
            return decode(encode(x))
        return init, (encode, decode)

    model = hk.multi_transform(make)
    params = model.init(jax.random.PRNGKey(7), _X)
    encode, decode = model.apply
    z = encode(params, None, _X)
    x_hat = decode(params, None, z)
    enc_params, rest = hk.data_structures.partition(
        lambda module, name, value: module.startswith("encoder"), params)
    merged = hk.data_structures.merge(enc_params, rest)
    sizes = [hk.data_structures.tree_size(params), hk.data_structures.tree_bytes(params)]

    ema = hk.transform_with_state(lambda x: hk.ExponentialMovingAverage(0.9)(x))
    _, ema_state = ema.init(None, _X)
    for i in range(3):
        avg, ema_state = ema.apply({}, ema_state, None, _X * (i + 1))
    seq = hk.PRNGSequence(11)
    keys = [jax.random.key_data(next(seq)) for _ in range(2)]
    return [*_flat(z), *_flat(x_hat), *_flat(merged), *map(float, sizes), *_flat(avg),
            *_flat(keys)]


def _rlax_losses() -> list[float]:
    # (rlax's policy-gradient and entropy losses call its own softmax, which it means to
    # deprecate in favour of distrax's.)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PendingDeprecationWarning)
        return _rlax_numbers()


def _rlax_numbers() -> list[float]:
    q_tm1 = jnp.asarray(np.linspace(-1.0, 1.0, 4 * 3, dtype=np.float32).reshape(4, 3))
    q_t = q_tm1[::-1] * 0.5
    a_tm1 = jnp.asarray(np.array([0, 2, 1, 1], np.int32))
    r_t = jnp.asarray(np.array([1.0, -0.5, 0.25, 0.0], np.float32))
    discount = jnp.asarray(np.array([0.99, 0.99, 0.0, 0.9], np.float32))
    q_learning = jax.vmap(rlax.q_learning)(q_tm1, a_tm1, r_t, discount, q_t)
    double_q = jax.vmap(rlax.double_q_learning)(q_tm1, a_tm1, r_t, discount, q_t, q_tm1)
    td = rlax.td_learning(q_tm1[0, 0], r_t[0], discount[0], q_t[0, 0])
    returns = rlax.lambda_returns(r_t, discount, q_t[:, 0], 0.9)
    gae = rlax.truncated_generalized_advantage_estimation(r_t, discount, 0.95,
                                                          jnp.concatenate([q_t[:, 1], r_t[:1]]))
    vtrace = rlax.vtrace(q_t[:, 0], q_t[:, 1], r_t, discount,
                         jnp.asarray(np.array([1.2, 0.8, 1.0, 0.5], np.float32)))
    pg = rlax.policy_gradient_loss(q_tm1, a_tm1, r_t, jnp.ones_like(r_t))
    entropy = rlax.entropy_loss(q_tm1, jnp.ones_like(r_t))
    huber = rlax.huber_loss(jnp.linspace(-3.0, 3.0, 7), 1.0)
    probs = distrax.Softmax(q_tm1, 0.5).probs
    eps = distrax.EpsilonGreedy(q_tm1, 0.1).sample(seed=jax.random.PRNGKey(8))
    grad = jax.jit(jax.grad(lambda q: jnp.sum(jax.vmap(rlax.q_learning)(
        q, a_tm1, r_t, discount, q_t) ** 2)))(q_tm1)
    return [*_flat(q_learning), *_flat(double_q), float(td), *_flat(returns), *_flat(gae),
            *_flat(vtrace), float(pg), float(entropy), *_flat(huber), *_flat(probs),
            *_flat(eps), *_flat(grad)]


def _distrax_distributions() -> list[float]:
    key = jax.random.PRNGKey(9)
    loc = jnp.asarray(np.array([0.0, 1.0, -1.0], np.float32))
    scale = jnp.asarray(np.array([1.0, 0.5, 2.0], np.float32))
    normal = distrax.Normal(loc, scale)
    samples, log_probs = normal.sample_and_log_prob(seed=key, sample_shape=(2,))
    mvn = distrax.MultivariateNormalDiag(loc, scale)
    categorical = distrax.Categorical(logits=jnp.asarray(_X[0, :4]))
    squashed = distrax.Transformed(distrax.Normal(0.0, 1.0), distrax.Tanh())
    chain = distrax.Chain([distrax.ScalarAffine(1.0, 2.0), distrax.Sigmoid()])
    y, log_det = chain.forward_and_log_det(loc)
    mixture = distrax.MixtureSameFamily(distrax.Categorical(logits=jnp.zeros(3)),
                                        distrax.Normal(loc, scale))

    def nll(params: Any) -> Any:
        return -jnp.sum(distrax.Normal(params[0], jnp.exp(params[1])).log_prob(loc))
    grad = jax.jit(jax.grad(nll))(jnp.asarray(np.array([0.3, -0.2], np.float32)))
    return [*_flat(samples), *_flat(log_probs), float(mvn.log_prob(loc + 0.5)),
            float(mvn.entropy()), *_flat(normal.kl_divergence(distrax.Normal(0.0, 1.0))),
            float(categorical.log_prob(2)), float(categorical.entropy()),
            *_flat(categorical.sample(seed=key, sample_shape=(4,))),
            float(squashed.log_prob(0.3)), *_flat(y), *_flat(log_det),
            float(mixture.log_prob(0.2)), *_flat(jax.jit(mixture.sample, static_argnames=(
                "sample_shape",))(seed=key, sample_shape=(3,))), *_flat(grad)]


def uses() -> dict[str, Callable[[], list[float]]]:
    """Each use's numbers."""
    return {"mlp_train": _mlp_train, "cnn_state": _cnn_state, "recurrent": _recurrent,
            "attention": _attention, "lifted": _lifted, "multi_and_data": _multi_and_data,
            "rlax": _rlax_losses, "distrax": _distrax_distributions}


def main(names: list[str] | None = None) -> dict[str, list[float]]:
    """The numbers of the uses named (all by default)."""
    return {name: run() for name, run in uses().items() if not names or name in names}


if __name__ == "__main__":
    print(json.dumps({"jax": jax.__version__, "results": main(sys.argv[1:])}))

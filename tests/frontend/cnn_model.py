"""A small convolutional network written once against a JAX-like library, so that the
same code runs on plait (``plait``, ``plait.numpy``, ``plait.lax``) and on jax: two
strided 3x3 convolutions with 'SAME' padding and ReLU, a 2x2 max pool, a dense layer,
softmax cross-entropy.  Used by tests/frontend/test_cnn.py and bench/bench_cnn.py."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

CLASSES = 10
DN = ("NHWC", "HWIO", "NHWC")


def init_params(rng: np.random.Generator, image: int = 32,
                channels: tuple[int, int, int] = (3, 16, 32)) -> dict[str, np.ndarray]:
    """He-initialized float32 weights for ``image`` x ``image`` inputs."""
    c0, c1, c2 = channels
    flat = (image // 8) ** 2 * c2

    def he(shape: tuple[int, ...], fan_in: int) -> np.ndarray:
        return (rng.normal(size=shape) * np.sqrt(2 / fan_in)).astype(np.float32)

    return {"w1": he((3, 3, c0, c1), 9 * c0), "b1": np.zeros(c1, np.float32),
            "w2": he((3, 3, c1, c2), 9 * c1), "b2": np.zeros(c2, np.float32),
            "w3": he((flat, CLASSES), flat), "b3": np.zeros(CLASSES, np.float32)}


def data(rng: np.random.Generator, batch: int, image: int = 32) -> tuple[np.ndarray, np.ndarray]:
    """Random images and integer labels."""
    x = rng.normal(size=(batch, image, image, 3)).astype(np.float32)
    return x, rng.integers(0, CLASSES, size=batch).astype(np.int32)


def loss_fn(np_: Any, lax_: Any) -> Callable[..., Any]:
    """The mean cross-entropy of the network, in the namespaces ``np_`` and ``lax_``."""
    def loss(params: dict[str, Any], x: Any, y: Any) -> Any:
        h = lax_.conv_general_dilated(x, params["w1"], (2, 2), "SAME", dimension_numbers=DN)
        h = np_.maximum(h + params["b1"], 0)
        h = lax_.conv_general_dilated(h, params["w2"], (2, 2), "SAME", dimension_numbers=DN)
        h = np_.maximum(h + params["b2"], 0)
        h = lax_.reduce_window(h, -np_.inf, lax_.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
        logits = h.reshape(h.shape[0], -1) @ params["w3"] + params["b3"]
        shifted = logits - lax_.stop_gradient(logits.max(axis=1, keepdims=True))
        logp = shifted - np_.log(np_.sum(np_.exp(shifted), axis=1, keepdims=True))
        onehot = y[:, None] == np_.arange(CLASSES)
        return -np_.mean(np_.sum(np_.where(onehot, logp, 0), axis=1))
    return loss


def train_step(lib: Any, np_: Any, lax_: Any, lr: float = 0.05) -> Callable[..., Any]:
    """A jitted SGD step ``(params, x, y) -> (params, loss)``."""
    value_and_grad = lib.value_and_grad(loss_fn(np_, lax_))

    def step(params: dict[str, Any], x: Any, y: Any) -> tuple[dict[str, Any], Any]:
        value, grads = value_and_grad(params, x, y)
        new = lib.tree_util.tree_map(lambda p, g: p - lr * g, params, grads)
        return new, value
    return lib.jit(step)

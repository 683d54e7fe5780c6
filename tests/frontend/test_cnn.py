"""The CNN of cnn_model.py trains 20 steps on plait to the losses it reaches on jax."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax as jlax

import plait
import plait.lax as plax
import plait.numpy as pnp
from tests.frontend.cnn_model import data, init_params, loss_fn, train_step

jax.config.update("jax_platforms", "cpu")


def _train(lib: object, np_: object, lax_: object, steps: int) -> list[float]:
    rng = np.random.default_rng(0)
    params = init_params(rng)
    step = train_step(lib, np_, lax_)
    losses = []
    for _ in range(steps):
        x, y = data(rng, 8)
        params, value = step(params, x, y)
        losses.append(float(value))
    return losses


def test_cnn_trains_to_the_same_losses_as_under_jax() -> None:
    ours, theirs = _train(plait, pnp, plax, 20), _train(jax, jnp, jlax, 20)
    np.testing.assert_allclose(ours, theirs, rtol=1e-4)
    assert theirs[-1] < theirs[0]  # it learns (on random labels: it memorizes)


def test_cnn_gradient_matches_jax_and_its_jaxpr_has_jax_primitives() -> None:
    rng = np.random.default_rng(1)
    params = init_params(rng)
    x, y = data(rng, 4)
    ours = plait.grad(loss_fn(pnp, plax))(params, x, y)
    theirs = jax.grad(loss_fn(jnp, jlax))(params, x, y)
    for k in params:
        np.testing.assert_allclose(np.asarray(ours[k]), np.asarray(theirs[k]), rtol=1e-4,
                                   atol=1e-6, err_msg=k)
    text = str(plait.make_jaxpr(plait.grad(loss_fn(pnp, plax)))(params, x, y))
    for name in ("conv_general_dilated", "reduce_window_max", "select_and_scatter_add"):
        assert name in text

"""DeepMind's JAX libraries chex, dm-pix, mctx and jraph, written for JAX: ``python
deepmind_libs.py [name ...]`` prints, per use (all of them unless named), numbers to
compare as JSON."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import Any

import chex
import dm_pix as pix
import jax
import jax.numpy as jnp
import jraph
import mctx
import numpy as np

_IMAGE = np.arange(48.0, dtype=np.float32).reshape(4, 4, 3) / 48


@chex.dataclass
class _Pair:
    a: chex.Array
    b: chex.Array


def _chex() -> list[float]:
    chex.assert_shape(_IMAGE, (4, 4, 3))
    chex.assert_trees_all_close({"a": _IMAGE}, {"a": _IMAGE + 1e-7}, atol=1e-6)
    start = _Pair(a=jnp.ones(2), b=jnp.arange(3.0))  # type: ignore[call-arg]  # (chex.dataclass writes __init__)
    pair = jax.jit(lambda p: jax.tree_util.tree_map(lambda t: t * 2, p))(start)
    return [*np.asarray(pair.a).tolist(), *np.asarray(pair.b).tolist()]


def _pix() -> list[float]:
    x = jnp.asarray(_IMAGE)
    return [float(pix.gaussian_blur(x, 1.0, 3).sum()), float(pix.ssim(x, x * 0.9)),
            float(pix.adjust_brightness(x, 0.1).sum()), float(pix.rgb_to_hsv(x).sum()),
            float(pix.random_flip_left_right(jax.random.key(0), x).sum()),
            float(pix.affine_transform(x, jnp.eye(3) * 0.9).sum()), float(pix.psnr(x, x * 0.9)),
            float(pix.random_crop(jax.random.key(1), x, (2, 2, 3)).sum())]


def _toy_search() -> tuple[Any, Callable[..., Any]]:
    batch, actions = 2, 3
    root = mctx.RootFnOutput(prior_logits=jnp.zeros((batch, actions)), value=jnp.zeros(batch),
                             embedding=jnp.zeros((batch,)))

    def recurrent_fn(params: Any, rng: Any, action: Any, embedding: Any) -> Any:
        out = mctx.RecurrentFnOutput(reward=action.astype(jnp.float32) * 0.1,
                                     discount=jnp.ones(batch) * 0.9,
                                     prior_logits=jnp.zeros((batch, actions)),
                                     value=jnp.zeros(batch))
        return out, embedding + 1
    return root, recurrent_fn


def _mctx() -> list[float]:
    root, recurrent_fn = _toy_search()
    out = jax.jit(lambda k: mctx.muzero_policy((), k, root, recurrent_fn, num_simulations=8))(
        jax.random.key(1))
    gumbel = mctx.gumbel_muzero_policy((), jax.random.key(2), root, recurrent_fn,
                                       num_simulations=8)
    return [*np.ravel(out.action_weights).tolist(), *np.asarray(gumbel.action).tolist()]


def _jraph() -> list[float]:
    graph = jraph.GraphsTuple(
        nodes=jnp.arange(8.0).reshape(4, 2), edges=jnp.ones((3, 1)),
        senders=jnp.array([0, 1, 2]), receivers=jnp.array([1, 2, 3]), n_node=jnp.array([4]),
        n_edge=jnp.array([3]), globals=jnp.zeros((1, 1)))
    net = jraph.GraphNetwork(
        update_edge_fn=lambda e, s, r, g: jnp.concatenate([e, s, r], -1),
        update_node_fn=lambda n, s, r, g: jnp.concatenate([n, s, r], -1),
        update_global_fn=lambda n, e, g: jnp.concatenate([n, e, g], -1))
    out = jax.jit(net)(graph)
    padded = jraph.pad_with_graphs(graph, 6, 5)
    soft = jraph.segment_softmax(jnp.arange(5.0), jnp.array([0, 0, 1, 1, 1]), 2)
    return [float(out.nodes.sum()), *np.ravel(out.globals).tolist(),
            *np.asarray(padded.n_node).tolist(), *np.asarray(soft).tolist()]


def uses() -> dict[str, Callable[[], list[float]]]:
    """One use of each library."""
    return {"chex": _chex, "pix": _pix, "mctx": _mctx, "jraph": _jraph}


def main(names: list[str] | None = None) -> dict[str, list[float]]:
    """The numbers of the uses named (all by default)."""
    return {name: [float(v) for v in run()] for name, run in uses().items()
            if not names or name in names}


if __name__ == "__main__":
    print(json.dumps({"jax": jax.__version__, "results": main(sys.argv[1:])}))

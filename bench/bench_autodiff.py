"""Autodiff speed: tracing grad and vmap(grad) of an MLP, the jitted train step, and
``vjp`` with its pullback outside jit.

A 10-layer tanh MLP (256 -> 512 x 8 -> 10), batch 128; plait and jax side by
side in one process.  Run from the repository root: python -m bench.bench_autodiff
"""

from __future__ import annotations

import numpy as np

from bench._timing import best_of, best_of_pair, record


def init(rng: np.random.Generator) -> list[tuple[np.ndarray, np.ndarray]]:
    sizes = [256] + [512] * 9 + [10]
    return [(rng.normal(size=(m, n)).astype(np.float32) / np.sqrt(m), np.zeros(n, np.float32))
            for m, n in zip(sizes[:-1], sizes[1:])]


def make_loss(np_):
    def loss(params, x, y):
        h = x
        for w, b in params[:-1]:
            h = np_.tanh(h @ w + b)
        w, b = params[-1]
        logits = h @ w + b
        return np_.mean(np_.sum((logits - y) ** 2, axis=-1))
    return loss


def main() -> None:
    import jax
    import jax.numpy as jnp

    import plait
    import plait.numpy as pnp

    rng = np.random.default_rng(0)
    params = init(rng)
    x = rng.normal(size=(128, 256)).astype(np.float32)
    y = rng.normal(size=(128, 10)).astype(np.float32)
    pl, jl = make_loss(pnp), make_loss(jnp)

    # Fresh loss functions each time: neither library may reuse a cached trace.
    t_p = best_of(lambda: plait.make_jaxpr(plait.grad(make_loss(pnp)))(params, x, y), 1,
                  repeat=5)
    t_j = best_of(lambda: jax.make_jaxpr(jax.grad(make_loss(jnp)))(params, x, y), 1, repeat=5)
    record("autodiff: make_jaxpr(grad(MLP loss))", t_p, t_j)
    t_p = best_of(lambda: plait.make_jaxpr(plait.vmap(plait.grad(make_loss(pnp)),
                                                     in_axes=(None, 0, 0)))(params, x, y), 1,
                  repeat=5)
    t_j = best_of(lambda: jax.make_jaxpr(jax.vmap(jax.grad(make_loss(jnp)),
                                                  in_axes=(None, 0, 0)))(params, x, y), 1,
                  repeat=5)
    record("autodiff: make_jaxpr(vmap(grad(MLP loss)))", t_p, t_j)

    def step(ns, tree_map, grad, loss):
        def train_step(p, x, y):
            g = grad(loss)(p, x, y)
            return tree_map(lambda a, b: a - 0.01 * b, p, g)
        return train_step

    pstep = plait.jit(step(pnp, plait.tree_util.tree_map, plait.grad, pl))
    jstep = jax.jit(step(jnp, jax.tree_util.tree_map, jax.grad, jl))
    pp = plait.device_put(params)
    jp = jax.device_put(params)
    px, py = pnp.asarray(x), pnp.asarray(y)
    jx, jy = jnp.asarray(x), jnp.asarray(y)
    for _ in range(3):
        plait.tree_util.tree_leaves(pstep(pp, px, py))[0].block_until_ready()
        jax.tree_util.tree_leaves(jstep(jp, jx, jy))[0].block_until_ready()

    def run_p() -> None:
        plait.tree_util.tree_leaves(pstep(pp, px, py))[0].block_until_ready()

    def run_j() -> None:
        jax.tree_util.tree_leaves(jstep(jp, jx, jy))[0].block_until_ready()

    record("autodiff: jitted MLP train step", *best_of_pair(run_p, run_j, 20, repeat=6))

    # Outside jit: the forward and backward halves run as two compiled programs, and the
    # residuals (the weights among them) are held between the two calls.
    def vjp_p() -> None:
        out, pull = plait.vjp(pl, pp, px, py)
        plait.tree_util.tree_leaves(pull(pnp.ones_like(out)))[0].block_until_ready()

    def vjp_j() -> None:
        out, pull = jax.vjp(jl, jp, jx, jy)
        jax.tree_util.tree_leaves(pull(jnp.ones_like(out)))[0].block_until_ready()

    vjp_p()
    vjp_j()
    record("autodiff: eager vjp and pullback of the MLP loss", *best_of_pair(vjp_p, vjp_j, 10,
                                                                              repeat=6))


if __name__ == "__main__":
    main()

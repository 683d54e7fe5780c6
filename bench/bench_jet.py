"""Taylor mode: ``jet`` of a tanh MLP to order 4, plait and JAX side by side.

Tracing and rewriting (``make_jaxpr`` of the jet, a fresh function each time) and the
jitted jet once compiled.  A 4-layer tanh MLP (64 -> 128 x 3 -> 1), batch 32, along a
random curve through the input.  Run from the repository root: python -m bench.bench_jet
"""

from __future__ import annotations

import numpy as np

from bench._timing import best_of, best_of_pair, record

ORDER = 4


def init(rng: np.random.Generator) -> list[tuple[np.ndarray, np.ndarray]]:
    sizes = [64, 128, 128, 128, 1]
    return [(rng.normal(size=(m, n)).astype(np.float32) / np.sqrt(m), np.zeros(n, np.float32))
            for m, n in zip(sizes[:-1], sizes[1:])]


def make_net(np_, params):
    def net(x):
        h = x
        for w, b in params[:-1]:
            h = np_.tanh(h @ w + b)
        w, b = params[-1]
        return np_.sum(h @ w + b)
    return net


def main() -> None:
    import jax
    import jax.numpy as jnp
    from jax.experimental import jet as jax_jet

    import plait
    import plait.numpy as pnp
    from plait.experimental.jet import jet

    rng = np.random.default_rng(0)
    params = init(rng)
    x = rng.normal(size=(32, 64)).astype(np.float32)
    terms = [rng.normal(size=x.shape).astype(np.float32) for _ in range(ORDER)]

    def taylor(jet_fn, np_):
        return lambda x, *ts: jet_fn(make_net(np_, params), (x,), (list(ts),))

    t_p = best_of(lambda: plait.make_jaxpr(taylor(jet, pnp))(x, *terms), 1, repeat=5)
    t_j = best_of(lambda: jax.make_jaxpr(taylor(jax_jet.jet, jnp))(x, *terms), 1, repeat=5)
    record(f"jet: make_jaxpr(jet(MLP)) to order {ORDER}", t_p, t_j)

    pf = plait.jit(taylor(jet, pnp))
    jf = jax.jit(taylor(jax_jet.jet, jnp))
    px, pts = pnp.asarray(x), [pnp.asarray(t) for t in terms]
    jx, jts = jnp.asarray(x), [jnp.asarray(t) for t in terms]

    def run_p() -> None:
        plait.tree_util.tree_leaves(pf(px, *pts))[0].block_until_ready()

    def run_j() -> None:
        jax.tree_util.tree_leaves(jf(jx, *jts))[0].block_until_ready()

    for _ in range(3):
        run_p()
        run_j()
    record(f"jet: jitted jet(MLP) to order {ORDER}", *best_of_pair(run_p, run_j, 20, repeat=6))


if __name__ == "__main__":
    main()

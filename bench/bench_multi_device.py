"""A data-parallel MLP training step on 8 CPU devices, plait and jax side by side.

Two formulations, each in both libraries: ``pmap`` (per-device gradients averaged with
``pmean``, parameters returned once with ``out_axes=None``), and a sharded ``jit`` (the
batch laid out over a mesh axis, the parameters replicated; XLA's partitioner adds the
all-reduce).  The MLP is 256-512-512-10 with tanh, batch 1024 (128 per device), SGD.
Inputs stay on the devices between steps.  Prints the best time per step of each
library over rounds that alternate which library runs first, and the ratio plait / jax
(lower is better).

Then eager ``sin`` on an ``f32[8]`` put on device 1 (not the default device).

The 8 devices share this machine's cores: the figures measure dispatch and XLA's
partitioned program, not a speed-up.
Run from the repository root: python -m bench.bench_multi_device
"""

from __future__ import annotations

import os

os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"

from collections.abc import Callable  # noqa: E402
from typing import Any  # noqa: E402

import jax  # noqa: E402
import numpy as np  # noqa: E402

import plait  # noqa: E402
from bench._timing import best_of_pair, block, record  # noqa: E402

SIZES = (256, 512, 512, 10)
BATCH = 1024
LR = 0.01


def init(rng: np.random.Generator) -> list[tuple[np.ndarray, np.ndarray]]:
    return [(rng.normal(size=(m, n)).astype(np.float32) / np.sqrt(m),
             np.zeros(n, np.float32)) for m, n in zip(SIZES[:-1], SIZES[1:])]


def loss_fn(lib: Any) -> Callable[..., Any]:
    jnp = lib.numpy

    def loss(params: Any, x: Any, y: Any) -> Any:
        h = x
        for w, b in params[:-1]:
            h = jnp.tanh(h @ w + b)
        w, b = params[-1]
        logits = h @ w + b
        logp = logits - lib.nn.logsumexp(logits, axis=-1, keepdims=True)
        return -jnp.mean(jnp.sum(logp * y, axis=-1))
    return loss


def sgd(lib: Any, params: Any, grads: Any) -> Any:
    return lib.tree_util.tree_map(lambda p, g: p - LR * g, params, grads)


def pmap_step(lib: Any) -> Callable[..., Any]:
    loss = loss_fn(lib)

    def step(params: Any, x: Any, y: Any) -> Any:
        grads = lib.lax.pmean(lib.grad(loss)(params, x, y), "batch")
        return sgd(lib, params, grads)
    return lib.pmap(step, axis_name="batch", in_axes=(None, 0, 0), out_axes=None)


def jit_step(lib: Any, replicated: Any) -> Callable[..., Any]:
    loss = loss_fn(lib)

    def step(params: Any, x: Any, y: Any) -> Any:
        return sgd(lib, params, lib.grad(loss)(params, x, y))
    return lib.jit(step, out_shardings=replicated)


def setup(lib: Any, sharding_mod: Any, mesh: Any) -> dict[str, Any]:
    rng = np.random.default_rng(0)
    params = init(rng)
    x = rng.normal(size=(BATCH, SIZES[0])).astype(np.float32)
    y = np.eye(SIZES[-1], dtype=np.float32)[rng.integers(0, SIZES[-1], BATCH)]
    P, NS = sharding_mod.PartitionSpec, sharding_mod.NamedSharding
    rep, rows = NS(mesh, P()), NS(mesh, P("batch"))
    p_dev = lib.device_put(params, rep)
    xs = lib.device_put(x.reshape(8, BATCH // 8, -1), rows)
    ys = lib.device_put(y.reshape(8, BATCH // 8, -1), rows)
    xg, yg = lib.device_put(x, rows), lib.device_put(y, rows)
    pm, jt = pmap_step(lib), jit_step(lib, rep)
    state = {"pmap": p_dev, "jit": p_dev}

    def run_pmap() -> None:
        state["pmap"] = pm(state["pmap"], xs, ys)
        block(state["pmap"])

    def run_jit() -> None:
        state["jit"] = jt(state["jit"], xg, yg)
        block(state["jit"])
    # One step from the initial parameters: the numbers both libraries must agree on.
    first = {"pmap": pm(p_dev, xs, ys), "jit": jt(p_dev, xg, yg)}
    run_pmap()
    run_jit()
    return {"pmap step": run_pmap, "sharded jit step": run_jit, "first": first}


def check(ours: Any, theirs: Any) -> None:
    """The first step's parameters agree between the libraries (and formulations)."""
    for name in ("pmap", "jit"):
        for a, b in zip(jax.tree_util.tree_leaves(ours[name]),
                        jax.tree_util.tree_leaves(theirs[name])):
            np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=2e-4, atol=2e-5)


def main() -> None:
    import jax.sharding as jsh

    import plait.sharding as psh
    pmesh = psh.Mesh(np.array(plait.devices()), ("batch",))
    jmesh = jsh.Mesh(np.array(jax.devices()), ("batch",))
    ours, theirs = setup(plait, psh, pmesh), setup(jax, jsh, jmesh)
    check(ours.pop("first"), theirs.pop("first"))
    print(f"data-parallel MLP {SIZES}, batch {BATCH} over 8 CPU devices "
          f"({os.cpu_count()} cores); ms per step, best of 9 alternating rounds")
    for name in ours:
        t_p, t_j = best_of_pair(ours[name], theirs[name], 20)
        record(f"multi-device: MLP {name}, 8 CPU devices", t_p, t_j)
    eager_on_device_1()


def eager_on_device_1() -> None:
    """Eager ``sin`` on an array put on a device other than the default one."""
    import jax.numpy as jnp

    import plait.numpy as pnp
    v = np.ones(8, np.float32)
    x, xj = plait.device_put(v, plait.devices()[1]), jax.device_put(v, jax.devices()[1])
    t_p, t_j = best_of_pair(lambda: pnp.sin(x), lambda: jnp.sin(xj), 20000, repeat=7)
    record("multi-device: eager sin on f32[8] on device 1", t_p, t_j, unit="us")


if __name__ == "__main__":
    main()

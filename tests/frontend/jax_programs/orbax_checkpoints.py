"""orbax checkpoints (and flax's older ``training.checkpoints``, which imports JAX's
TensorStore checkpoint manager), written for JAX: ``python orbax_checkpoints.py [name ...]`` prints,
per use (all of them unless named), numbers to compare as JSON.  Each use saves to and
restores from a fresh temporary directory."""

from __future__ import annotations

import json
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import optax
import orbax.checkpoint as ocp
from flax.training import checkpoints


def _flat(tree: Any) -> list[float]:
    return [float(v) for leaf in jax.tree_util.tree_leaves(tree)
            for v in np.ravel(np.asarray(leaf, np.float64))]


def _kinds(tree: Any) -> list[float]:
    """Each leaf's dtype (its NumPy type number) and whether it is a plait/JAX Array."""
    return [float(v) for leaf in jax.tree_util.tree_leaves(tree)
            for v in (np.dtype(getattr(leaf, "dtype", type(leaf))).num,
                      isinstance(leaf, jax.Array))]


def _standard() -> list[float]:
    tree = {"w": jnp.arange(6.0).reshape(2, 3), "b": jnp.ones(3, jnp.int32),
            "half": jnp.linspace(0, 1, 4).astype(jnp.bfloat16),
            "mask": jnp.array([True, False]), "step": 3}
    with tempfile.TemporaryDirectory() as d:
        ckpt = ocp.StandardCheckpointer()
        ckpt.save(Path(d) / "c", tree)
        ckpt.wait_until_finished()
        restored = ckpt.restore(Path(d) / "c")
        target = jax.tree_util.tree_map(ocp.utils.to_shape_dtype_struct, tree)
        typed = ckpt.restore(Path(d) / "c", target)
    return [*_flat(restored), *_kinds(restored), *_flat(typed), *_kinds(typed)]


def _manager_training() -> list[float]:
    key = jax.random.PRNGKey(0)
    params = {"w": jax.random.normal(key, (3, 2)), "b": jnp.zeros(2)}
    opt = optax.adam(0.1)
    x = jnp.linspace(-1.0, 1.0, 12).reshape(4, 3)

    @jax.jit
    def step(params: Any, state: Any) -> Any:
        loss, grads = jax.value_and_grad(
            lambda p: jnp.mean((x @ p["w"] + p["b"] - 1.0) ** 2))(params)
        updates, state = opt.update(grads, state)
        return optax.apply_updates(params, updates), state, loss

    state = opt.init(params)
    losses = []
    with tempfile.TemporaryDirectory() as d:
        options = ocp.CheckpointManagerOptions(max_to_keep=2)
        with ocp.CheckpointManager(Path(d), options=options) as mngr:
            for i in range(4):
                params, state, loss = step(params, state)
                losses.append(float(loss))
                mngr.save(i, args=ocp.args.StandardSave({"params": params, "opt": state}))
            mngr.wait_until_finished()
            steps = [float(s) for s in mngr.all_steps()]
            abstract = jax.tree_util.tree_map(ocp.utils.to_shape_dtype_struct,
                                              {"params": params, "opt": state})
            back = mngr.restore(mngr.latest_step(), args=ocp.args.StandardRestore(abstract))
    params, state = back["params"], back["opt"]
    for _ in range(2):
        params, state, loss = step(params, state)
        losses.append(float(loss))
    return [*losses, *steps, *_flat(params)]


def _sharded() -> list[float]:
    devices = jax.devices()[:4]  # (the tests run with eight CPU devices)
    mesh = jax.sharding.Mesh(np.array(devices), ("x",))
    rows = jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec("x"))
    whole = jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec())
    w = jax.device_put(jnp.arange(16.0).reshape(8, 2), rows)
    out = []
    with tempfile.TemporaryDirectory() as d:
        ckpt = ocp.StandardCheckpointer()
        ckpt.save(Path(d) / "m", {"w": w})
        ckpt.wait_until_finished()
        for sharding in (rows, whole):
            target = {"w": jax.ShapeDtypeStruct((8, 2), jnp.float32, sharding=sharding)}
            back = ckpt.restore(Path(d) / "m", target)["w"]
            out += [*_flat(back), float(len(back.addressable_shards)),
                    *[float(s.data.shape[0]) for s in back.addressable_shards]]
    return out


def _flax_legacy() -> list[float]:
    # flax.training.checkpoints: save two steps (keeping both), restore the latest into a
    # target, and list the steps kept.
    state = {"w": jnp.arange(6.0).reshape(2, 3), "step": jnp.asarray(3),
             "b": jnp.ones(2, jnp.bfloat16)}
    with tempfile.TemporaryDirectory() as d:
        checkpoints.save_checkpoint(d, state, step=3, keep=2)
        checkpoints.save_checkpoint(d, jax.tree.map(lambda x: x * 2, state), step=5, keep=2)
        back = checkpoints.restore_checkpoint(d, target=state)
        latest = checkpoints.latest_checkpoint(d)
        assert latest is not None
        return [*_flat(back), *_kinds(back), float(latest.rsplit("_", 1)[1])]


def uses() -> dict[str, Callable[[], list[float]]]:
    """Each use's numbers."""
    return {"standard": _standard, "manager_training": _manager_training, "sharded": _sharded,
            "flax_legacy": _flax_legacy}


def main(names: list[str] | None = None) -> dict[str, list[float]]:
    """The numbers of the uses named (all by default)."""
    return {name: run() for name, run in uses().items() if not names or name in names}


if __name__ == "__main__":
    print(json.dumps({"jax": jax.__version__, "results": main(sys.argv[1:])}))

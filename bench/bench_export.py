"""plait.export and jax.export side by side (issue 15's figures): exporting an MLP
(fixed and shape-polymorphic batch), serializing and deserializing it, and calling
the deserialized function, eagerly and inside a jitted caller.

Prints the best time of each over several rounds and the ratio plait / jax (lower is
better).  Run it several times on a quiet machine, from the repository root:
python -m bench.bench_export
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax import export as jexport

import plait
import plait.numpy as pnp
from bench._timing import best_of, block, record
from plait import export as pexport

F32 = np.float32


def _mlp(np_: Any, nn: Any) -> Callable[..., Any]:
    def mlp(params: Any, x: Any) -> Any:
        h = np_.maximum(x @ params["w1"] + params["b1"], 0.0)
        h = np_.maximum(h @ params["w2"] + params["b2"], 0.0)
        return nn.log_softmax(h @ params["w3"] + params["b3"], axis=-1)
    return mlp


def _params() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(0)
    sizes = [(784, 512), (512, 256), (256, 10)]
    out = {}
    for i, (m, n) in enumerate(sizes, 1):
        out[f"w{i}"] = (rng.normal(size=(m, n)) / np.sqrt(m)).astype(F32)
        out[f"b{i}"] = np.zeros(n, F32)
    return out


def _measure(lib: Any, np_: Any, ex: Any, nn: Any, sds: Any, params: dict[str, np.ndarray],
             x: np.ndarray) -> dict[str, float]:
    """Seconds per operation of each figure."""
    t = {}
    f = _mlp(np_, nn)
    spec = sds((128, 784), F32)
    poly = sds(ex.symbolic_shape("b, 784"), F32)
    # A fresh jit each round: export traces and lowers every time.
    t["export an MLP, batch 128"] = best_of(
        lambda: ex.export(lib.jit(_mlp(np_, nn)))(params, spec), 3, repeat=5)
    t["export an MLP, batch b (shape-polymorphic)"] = best_of(
        lambda: ex.export(lib.jit(_mlp(np_, nn)))(params, poly), 3, repeat=5)
    exp = ex.export(lib.jit(f))(params, spec)
    t["serialize the MLP's export"] = best_of(lambda: exp.serialize(), 20)
    blob = exp.serialize()
    t["deserialize the MLP's export"] = best_of(lambda: ex.deserialize(blob), 20)
    loaded = ex.deserialize(blob)
    block(loaded.call(params, x))
    t["call the deserialized MLP (eager, cached)"] = best_of(
        lambda: block(loaded.call(params, x)), 50)
    caller = lib.jit(lambda p, x: loaded.call(p, x))
    block(caller(params, x))
    t["call the deserialized MLP inside jit (cached)"] = best_of(
        lambda: block(caller(params, x)), 50)
    loaded_poly = ex.deserialize(ex.export(lib.jit(f))(params, poly).serialize())
    block(loaded_poly.call(params, x))
    t["call the shape-polymorphic MLP at b=128 (eager, cached)"] = best_of(
        lambda: block(loaded_poly.call(params, x)), 50)
    expected = np.asarray(jax.jit(_mlp(jnp, jax.nn))(params, x))
    np.testing.assert_allclose(np.asarray(loaded_poly.call(params, x)), expected, rtol=1e-4,
                               atol=1e-5)
    return t


def main() -> None:
    params = _params()
    x = np.random.default_rng(1).normal(size=(128, 784)).astype(F32)
    ours = _measure(plait, pnp, pexport, plait.nn, plait.ShapeDtypeStruct, params, x)
    theirs = _measure(jax, jnp, jexport, jax.nn, jax.ShapeDtypeStruct, params, x)
    for label in ours:
        record(f"export: {label}", ours[label], theirs[label])


if __name__ == "__main__":
    main()

"""Lowering, jit-call and eager-op speed, plait and jax side by side.

Prints: lowering microseconds per equation for the 3000-equation chain
(``x = sin(x) * 1.5 + x``), the cached jit call of ``lambda a: a + 1.0`` on
``f32[8]`` (and with a Python scalar argument, and a pytree of arrays), eager
``sin`` on ``f32[8]``, and the raw PJRT call for reference.  Then the plait
figures again in a process without jax (there plait, not jax, owns jaxlib's jit
state, and the jax configs that key every dispatch are absent).
Run from the repository root: python -m bench.bench_runtime
"""

from __future__ import annotations

import pathlib
import subprocess
import sys
from collections.abc import Callable
from typing import Any

import numpy as np

from bench._timing import best_of, record

ROOT = pathlib.Path(__file__).resolve().parent.parent
"""The repository root (the subprocess imports this module as ``bench.bench_runtime``)."""


def chain(np_: Any, n: int = 1000) -> Callable[[Any], Any]:
    def f(x: Any) -> Any:
        for _ in range(n):
            x = np_.sin(x) * 1.5 + x
        return x
    return f


def calls(lib: Any, np_: Any) -> dict[str, float]:
    """Seconds per call of each dispatch benchmark, for plait or jax."""
    x = np_.asarray(np.ones(8, np.float32))
    tree = {"w": x, "b": (x, x)}
    add = lib.jit(lambda a: a + 1.0)
    scale = lib.jit(lambda a, s: a * s)
    tree_f = lib.jit(lambda t: {"w": t["w"] * 2.0, "b": t["b"][0] + t["b"][1]})
    params = [np_.asarray(np.full(8, i, np.float32)) for i in range(100)]
    step = lib.jit(lambda ps: [p * 0.5 for p in ps])
    for fn, args in ((add, (x,)), (scale, (x, 2.0)), (tree_f, (tree,)), (step, (params,))):
        fn(*args)
    np_.sin(x)
    return {"jit call a + 1.0 on f32[8]": best_of(lambda: add(x), 20000),
            "jit call a * s on f32[8], s a Python float": best_of(lambda: scale(x, 3.0), 20000),
            "jit call on a pytree of 3 f32[8]": best_of(lambda: tree_f(tree), 20000),
            "jit call on a list of 100 f32[8] (100 results)": best_of(lambda: step(params),
                                                                      1000),
            "eager sin on f32[8]": best_of(lambda: np_.sin(x), 20000)}


def main() -> None:
    import jax
    import jax.numpy as jnp

    import plait
    import plait.numpy as pnp
    from plait.lowering import lower_closed_jaxpr, parse_module

    x = np.ones(8, np.float32)
    closed = plait.make_jaxpr(chain(pnp))(x)
    n = len(closed.jaxpr.eqns)
    t_text = best_of(lambda: lower_closed_jaxpr(closed, "f"), 1, repeat=15)
    t_parse = best_of(lambda: parse_module(lower_closed_jaxpr(closed, "f").text), 1)
    # A fresh trace per measurement: JAX caches the lowering of a Traced.
    fresh = [jax.jit(chain(jnp)).trace(x) for _ in range(5)]
    t_jax = min(best_of(t.lower, 1, repeat=1) for t in fresh)
    record(f"runtime: lowering {n}-eqn chain to text (per eqn)", t_text / n, t_jax / n,
           unit="us", note="jax: jit(f).trace(x).lower()")
    record(f"runtime: lowering {n}-eqn chain to a parsed module (per eqn)", t_parse / n,
           t_jax / n, unit="us", note="jax: jit(f).trace(x).lower()")

    ours, theirs = calls(plait, pnp), calls(jax, jnp)
    for name, t in ours.items():
        record(f"runtime: {name}", t, theirs[name], unit="us")

    from plait.frontend.core.compile_cache import executable_for
    exe = executable_for(plait.make_jaxpr(lambda a: a + 1.0)(x), "f")
    buf = pnp.asarray(x).buffer()  # type: ignore[attr-defined]  # ArrayImpl only
    t_raw = best_of(lambda: exe.execute([buf]), 20000)
    print(f"raw PJRT call from Python (execute_sharded + result handlers): {t_raw * 1e6:.2f} us")
    sys.stdout.flush()

    alone = subprocess.run(
        [sys.executable, "-c", "import bench.bench_runtime as b, plait, plait.numpy as pnp;"
         " r = b.calls(plait, pnp);"
         " print('; '.join(f'{k} {v * 1e6:.2f} us' for k, v in r.items()))"],
        cwd=ROOT, capture_output=True, text=True, check=True)
    print("plait in a process without jax:", alone.stdout.strip())


if __name__ == "__main__":
    main()

"""Lowering, jit-call and eager-op speed, plait and jax side by side.

Prints: lowering microseconds per equation for the 3000-equation chain
(``x = sin(x) * 1.5 + x``), the cached jit call of ``lambda a: a + 1.0`` on
``f32[8]``, eager ``sin`` on ``f32[8]``, and the raw PJRT call for reference.
Run: python bench/bench_runtime.py
"""

from __future__ import annotations

import sys
import time

import numpy as np


def best_of(fn, number: int, repeat: int = 5) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        best = min(best, (time.perf_counter() - t0) / number)
    return best


def chain(np_, n: int = 1000):
    def f(x):
        for _ in range(n):
            x = np_.sin(x) * 1.5 + x
        return x
    return f


def main() -> None:
    import jax
    import jax.numpy as jnp

    import plait
    import plait.numpy as pnp
    from plait.lowering import lower_closed_jaxpr, parse_module

    x = np.ones(8, np.float32)
    closed = plait.make_jaxpr(chain(pnp))(x)
    n = len(closed.jaxpr.eqns)
    t_text = best_of(lambda: lower_closed_jaxpr(closed, "f"), 1)
    t_parse = best_of(lambda: parse_module(lower_closed_jaxpr(closed, "f").text), 1)
    # A fresh trace per measurement: JAX caches the lowering of a Traced.
    fresh = [jax.jit(chain(jnp)).trace(x) for _ in range(3)]
    t_jax = min(best_of(t.lower, 1, repeat=1) for t in fresh)
    print(f"lowering {n}-eqn chain: plait {t_text / n * 1e6:.2f} us/eqn to text, "
          f"{t_parse / n * 1e6:.2f} us/eqn to a parsed module; jax {t_jax / n * 1e6:.2f} us/eqn; "
          f"jax/plait = {t_jax / t_parse:.1f}x")

    pf = plait.jit(lambda a: a + 1.0)
    jf = jax.jit(lambda a: a + 1.0)
    pa, ja = pnp.asarray(x), jnp.asarray(x)
    pf(pa).block_until_ready()
    jf(ja).block_until_ready()
    t_p = best_of(lambda: pf(pa), 20000)
    t_j = best_of(lambda: jf(ja), 20000)
    print(f"cached jit call a + 1.0 on f32[8]: plait {t_p * 1e6:.2f} us, jax {t_j * 1e6:.2f} us, "
          f"plait/jax = {t_p / t_j:.2f}")

    pnp.sin(pa)
    jnp.sin(ja)
    t_p = best_of(lambda: pnp.sin(pa), 20000)
    t_j = best_of(lambda: jnp.sin(ja), 20000)
    print(f"eager sin on f32[8]: plait {t_p * 1e6:.2f} us, jax {t_j * 1e6:.2f} us, "
          f"plait/jax = {t_p / t_j:.2f}")

    from plait.frontend.compile_cache import executable_for
    exe = executable_for(plait.make_jaxpr(lambda a: a + 1.0)(x), "f")
    buf = pa._buf
    t_raw = best_of(lambda: exe.execute([buf]), 20000)
    print(f"raw PJRT call (execute_sharded + result handlers): {t_raw * 1e6:.2f} us")
    sys.stdout.flush()


if __name__ == "__main__":
    main()

"""The persistent compilation cache, plait and jax side by side: the first call of a
jitted 1000-equation chain in a new process, with the cache directory empty (a
compilation, then a write) and then holding the program (a read).  Each figure is
the best of several fresh processes; each process imports only its own library.
Run from the repository root: python -m bench.bench_compilation_cache
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile

from bench._timing import record

_CHILD = """
import sys, time
lib_name, cache = sys.argv[1], sys.argv[2]
if lib_name == "plait":
    import plait as lib, plait.numpy as np_
else:
    import jax as lib, jax.numpy as np_
lib.config.update("jax_compilation_cache_dir", cache)
lib.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)

def chain(x):
    for _ in range(500):
        x = np_.sin(x) * 1.5 + x
    return x

x = np_.ones(8)
t0 = time.perf_counter()
lib.jit(chain)(x).block_until_ready()
print(time.perf_counter() - t0)
"""


def first_call(lib: str, cache: str) -> float:
    """Seconds from ``jit(f)(x)`` to its result in a new process using ``cache``."""
    env = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"}
    out = subprocess.run([sys.executable, "-c", _CHILD, lib, cache], check=True,
                         capture_output=True, text=True, env=env)
    return float(out.stdout.split()[-1])


def main() -> None:
    cold: dict[str, float] = {}
    warm: dict[str, float] = {}
    for lib in ("plait", "jax"):
        cold_runs: list[float] = []
        warm_runs: list[float] = []
        for _ in range(3):
            with tempfile.TemporaryDirectory() as d:
                cold_runs.append(first_call(lib, d))
                warm_runs.extend(first_call(lib, d) for _ in range(2))
        cold[lib], warm[lib] = min(cold_runs), min(warm_runs)
    record("compilation cache: first jit call of a 1000-eqn chain, new process, empty cache",
           cold["plait"], cold["jax"], unit="ms", note="trace, lower, compile, write")
    record("compilation cache: first jit call of a 1000-eqn chain, new process, warm cache",
           warm["plait"], warm["jax"], unit="ms", note="trace, lower, read")


if __name__ == "__main__":
    main()

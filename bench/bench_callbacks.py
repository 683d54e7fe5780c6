"""Host callbacks, plait and jax side by side (issue 16's figures): the cost of a jitted
call whose program calls back into Python, for each kind of callback.

Prints the best time of each over several rounds and the ratio plait / jax (lower is
better).  Run it several times on a quiet machine, from the repository root:
python -m bench.bench_callbacks
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import jax
import numpy as np
from jax.experimental import io_callback as jax_io_callback

import plait
from bench._timing import best_of, block, record
from plait.experimental import io_callback

F32 = np.float32


def _host_sin(x: np.ndarray) -> np.ndarray:
    return np.sin(x)


def _noop(*_: Any) -> None:
    pass


def _programs(lib: Any, io: Any) -> dict[str, Callable[..., Any]]:
    def pure(x: Any) -> Any:
        return lib.pure_callback(_host_sin, lib.ShapeDtypeStruct(x.shape, x.dtype), x) * 2

    def io_ordered(x: Any) -> Any:
        return io(_host_sin, lib.ShapeDtypeStruct(x.shape, x.dtype), x, ordered=True) * 2

    def debug(x: Any) -> Any:
        lib.debug.callback(_noop, x)
        return x * 2

    def loop(x: Any) -> Any:
        def body(i: Any, c: Any) -> Any:
            io(_noop, None, i, ordered=True)
            return c + 1
        return lib.lax.fori_loop(0, 100, body, x)

    return {"pure_callback(sin), f32[1000]": pure,
            "ordered io_callback(sin), f32[1000]": io_ordered,
            "debug.callback (no-op), f32[1000]": debug,
            "100 ordered io_callbacks in a fori_loop": loop}


def _run(g: Callable[[Any], Any], arg: Any) -> Any:
    return block(g(arg))


def _measure(lib: Any, io: Any) -> dict[str, float]:
    """Seconds per jitted call of each program."""
    x = np.linspace(0, 1, 1000, dtype=F32)
    out = {}
    for label, f in _programs(lib, io).items():
        g = lib.jit(f)
        arg = x if "fori" not in label else np.int32(0)
        block(g(arg))
        out[label] = best_of(functools.partial(_run, g, arg), 200)
        if lib is jax:
            jax.effects_barrier()
    return out


def main() -> None:
    ours, theirs = _measure(plait, io_callback), _measure(jax, jax_io_callback)
    for label in ours:
        record(f"callbacks: {label}", ours[label], theirs[label], unit="us")


if __name__ == "__main__":
    main()

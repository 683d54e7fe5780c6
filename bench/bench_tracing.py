"""Tracing speed: microseconds per equation for a 3000-equation chain, plait and jax.

The chain is ``x = sin(x) * 1.5 + x`` repeated 1000 times (3 equations each).
Run from the repository root: python -m bench.bench_tracing
"""

from __future__ import annotations

from types import ModuleType

import numpy as np

from bench._timing import best_of, record


def chain(np_: ModuleType, n: int = 1000):
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

    x = np.ones(8, np.float32)
    n_eqns = 3000
    closed = plait.make_jaxpr(chain(pnp))(x)
    assert len(closed.jaxpr.eqns) == n_eqns, len(closed.jaxpr.eqns)
    # A fresh function each time: neither library may reuse a cached trace.
    t_plait = best_of(lambda: plait.make_jaxpr(chain(pnp))(x), 1, repeat=5)
    t_jax = best_of(lambda: jax.make_jaxpr(chain(jnp))(x), 1, repeat=3)
    record("tracing: 3000-eqn chain (per eqn)", t_plait / n_eqns, t_jax / n_eqns, unit="us")
    frozen_cost(closed.jaxpr.eqns[0], t_plait / n_eqns * 1e6)


class _PlainEqn:
    """The same fields as plait.ir.Eqn in a mutable slotted class: the baseline."""

    __slots__ = ("primitive", "invars", "params", "outvars", "effects", "source_info")

    def __init__(self, primitive, inputs, params, outvars, effects, source_info) -> None:
        self.primitive = primitive
        self.invars = inputs
        self.params = params
        self.outvars = outvars
        self.effects = effects
        self.source_info = source_info


def frozen_cost(e, us_per_eqn: float) -> None:
    """What attrs' frozen classes cost per equation on the tracing path."""
    import timeit

    from plait.ir import Eqn
    fields = (e.primitive, e.invars, e.params, e.outvars, e.effects, e.source_info)
    n = 200_000
    t_frozen = min(timeit.repeat(lambda: Eqn(*fields), number=n, repeat=5)) / n * 1e6
    t_plain = min(timeit.repeat(lambda: _PlainEqn(*fields), number=n, repeat=5)) / n * 1e6
    print(f"constructing an Eqn: frozen attrs {t_frozen:.3f} us, plain slots {t_plain:.3f} us; "
          f"frozen costs {t_frozen - t_plain:.3f} us/eqn "
          f"({(t_frozen - t_plain) / us_per_eqn * 100:.1f}% of tracing)")


if __name__ == "__main__":
    main()

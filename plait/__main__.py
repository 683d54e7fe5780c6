"""``python -m plait demo``: trace a small function and show what plait makes of it."""

from __future__ import annotations

import sys

import numpy as np

import plait
import plait.numpy as pnp


def _predict(params: dict[str, plait.Array], x: plait.Array) -> plait.Array:
    h = pnp.tanh(x @ params["w1"] + params["b1"])
    return pnp.sum(h * 3.0, axis=-1)


def demo() -> None:
    """Trace a two-layer function over a pytree of parameters and print its jaxpr."""
    rng = np.random.default_rng(0)
    params = {"w1": rng.normal(size=(4, 8)).astype(np.float32),
              "b1": np.zeros(8, np.float32)}
    x = rng.normal(size=(2, 4)).astype(np.float32)
    closed = plait.make_jaxpr(_predict)(params, x)
    print("# plait.make_jaxpr(predict)(params, x):")
    print(closed)
    print("# argument names:", closed.jaxpr.debug_info.arg_names)
    print("# round trip through the text format:",
          plait.ir.parse_jaxpr(str(closed)) == closed.jaxpr)
    print("# eager result:", _predict({k: pnp.asarray(v) for k, v in params.items()}, pnp.asarray(x)))


def main(argv: list[str]) -> int:
    """Entry point of ``python -m plait``."""
    if argv[1:2] == ["demo"]:
        demo()
        return 0
    print("usage: python -m plait demo", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))

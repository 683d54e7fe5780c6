"""``python -m plait demo``: trace, print, differentiate, compile and run a small function.

``python -m plait run script.py [args]`` (or ``run -m module [args]``): run a program
written for JAX on plait, ``import jax`` giving plait (:func:`plait.compat.alias_jax`).

``python -m plait bench [args]``: in a source checkout, run the side-by-side benchmarks
(``python -m bench.run_all [args]`` from the repository root; they need jax installed).
"""

from __future__ import annotations

import importlib.util
import os
import runpy
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

import numpy as np

import plait
import plait.numpy as pnp
from plait.typing import ArrayLike


def _predict(params: Mapping[str, ArrayLike], x: ArrayLike) -> plait.Array:
    h = pnp.tanh(pnp.matmul(x, params["w1"]) + params["b1"])
    return pnp.sum(h * 3.0, axis=-1)


def _loss(params: Mapping[str, ArrayLike], x: ArrayLike) -> plait.Array:
    return pnp.sum(_predict(params, x) ** 2)


def demo() -> None:
    """Trace, print, compile and run a two-layer function over a pytree of parameters."""
    rng = np.random.default_rng(0)
    params = {"w1": rng.normal(size=(4, 8)).astype(np.float32),
              "b1": np.zeros(8, np.float32)}
    x = rng.normal(size=(2, 4)).astype(np.float32)
    closed = plait.make_jaxpr(_predict)(params, x)
    print("# plait.make_jaxpr(predict)(params, x):")
    print(closed)
    info = closed.jaxpr.debug_info
    print("# argument names:", info.arg_names if info else None)
    print("# round trip through the text format:",
          plait.ir.parse_jaxpr(str(closed)) == closed.jaxpr)
    predict = plait.jit(_predict)
    lowered = predict.lower(params, x)
    print("# plait.jit(predict).lower(params, x).as_text():")
    print(lowered.as_text())
    compiled = lowered.compile()
    print("# compiled result:", compiled(params, x))
    print("# eager result:   ", _predict({k: pnp.asarray(v) for k, v in params.items()},
                                         pnp.asarray(x)))
    grads = plait.jit(plait.grad(_loss))(params, x)
    print("# jit(grad(loss)) shapes:", {k: v.shape for k, v in grads.items()})
    print("# make_jaxpr(grad(loss)):")
    print(plait.make_jaxpr(plait.grad(_loss))(params, x))


def bench(args: list[str], root: Path | None = None) -> int:
    """Run ``python -m bench.run_all *args`` from the repository root of a source checkout
    (``root``: the directory holding the ``plait`` package); its exit code."""
    if root is None:
        root = Path(__file__).resolve().parent.parent
    if not (root / "bench" / "run_all.py").is_file():
        print("python -m plait bench: the benchmarks need a source checkout of plait "
              f"(bench/run_all.py next to the plait package; none in {root}) with jax "
              "installed: run it from a clone of plait's repository installed with "
              "pip install -e '.[test]'", file=sys.stderr)
        return 2
    if importlib.util.find_spec("jax") is None:
        print("python -m plait bench: the benchmarks compare plait with jax, which is not "
              "installed: pip install -e '.[test]' in the source checkout", file=sys.stderr)
        return 2
    return subprocess.run([sys.executable, "-m", "bench.run_all", *args], cwd=root).returncode


def run(args: list[str]) -> int:
    """Run ``script.py [args]`` or ``-m module [args]`` as ``__main__`` with ``import jax``
    giving plait, and equations not merged (the ``merge_equations`` option, unless the
    environment sets it); 0 after the usage line for ``-h``/``--help``, 2 (and a message)
    if neither is given or the script does not exist."""
    usage = "usage: python -m plait run script.py [args] | run -m module [args]"
    if args[:1] in (["-h"], ["--help"]):
        print(usage)
        return 0
    if not args or args[0] == "-m" and len(args) < 2:
        print(usage, file=sys.stderr)
        return 2
    if args[0] != "-m" and not Path(args[0]).is_file():
        print(f"python -m plait run: can't open file {args[0]!r}: no such file", file=sys.stderr)
        return 2
    plait.compat.alias_jax()
    if "PLAIT_MERGE_EQUATIONS" not in os.environ:
        # JAX's programs, JAX's numbers: trace every operation, as JAX does.
        plait.config.update("merge_equations", False)
    if args[0] == "-m":
        sys.argv = [args[1], *args[2:]]
        runpy.run_module(args[1], run_name="__main__", alter_sys=True)
    else:
        sys.argv = list(args)
        sys.path.insert(0, str(Path(args[0]).resolve().parent))
        # (By its absolute path, as python script.py runs it: source lines name the file so.)
        runpy.run_path(os.path.abspath(args[0]), run_name="__main__")
    return 0


def main(argv: list[str]) -> int:
    """Entry point of ``python -m plait``."""
    if argv[1:2] == ["demo"]:
        demo()
        return 0
    if argv[1:2] == ["bench"]:
        return bench(argv[2:])
    if argv[1:2] == ["run"]:
        return run(argv[2:])
    print("usage: python -m plait demo\n"
          "       python -m plait run script.py [args] | run -m module [args]\n"
          "       python -m plait bench [--out PATH] [--only NAME ...]  "
          "(in a source checkout; --help for more)", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))

"""What JAX's tutorials on primitives and custom interpreters import from JAX's internals,
written for JAX: ``python tutorial_internals.py [names]`` prints the numbers of each use
(JSON).

``primitive`` defines a fused multiply-add primitive as the tutorial "How JAX primitives
work" does: ``jax._src.api``'s transformations, ``jax._src.lax.lax``, an MLIR lowering
built with ``jax._src.lib.mlir.dialects.hlo``, and JVP, transpose and batching rules in
``jax.interpreters``' tables.  ``interpreter`` evaluates a jaxpr with its own loop over the
equations, as "Writing custom interpreters in JAX" does with ``jax._src.util.safe_map``.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax._src import api
from jax._src.lax import lax
from jax._src.lib.mlir.dialects import hlo
from jax._src.util import safe_map
from jax.extend import core
from jax.interpreters import ad, batching, mlir

fma_p = core.Primitive("fma")


def fma(x: Any, y: Any, z: Any) -> Any:
    return fma_p.bind(x, y, z)


fma_p.def_impl(lambda x, y, z: np.add(np.multiply(x, y), z))
fma_p.def_abstract_eval(lambda x, y, z: jax.core.ShapedArray(x.shape, x.dtype))
mlir.register_lowering(
    fma_p, lambda ctx, x, y, z: [hlo.AddOp(hlo.MulOp(x, y).result, z).result],
    platform="cpu")


def _fma_jvp(primals: Any, tangents: Any) -> Any:
    x, y, z = primals
    tx, ty, tz = (lax.full_like(p, 0) if type(t) is ad.Zero else t
                  for p, t in zip(primals, tangents))
    return fma(x, y, z), fma(tx, y, fma(x, ty, tz))


def _fma_transpose(ct: Any, x: Any, y: Any, z: Any) -> Any:
    # Linear in whichever of x and y is undefined, and always in z.
    if ad.is_undefined_primal(x):
        ct_x = ad.Zero(x.aval) if type(ct) is ad.Zero else fma(ct, y, lax.full_like(y, 0))
        return ct_x, None, ct
    ct_y = ad.Zero(y.aval) if type(ct) is ad.Zero else fma(x, ct, lax.full_like(x, 0))
    return None, ct_y, ct


def _fma_batch(args: Any, dims: Any) -> Any:
    size = next(a.shape[d] for a, d in zip(args, dims) if d is not None)
    moved = [batching.bdim_at_front(a, d, size) for a, d in zip(args, dims)]
    return fma(*moved), 0


ad.primitive_jvps[fma_p] = _fma_jvp
ad.primitive_transposes[fma_p] = _fma_transpose
batching.primitive_batchers[fma_p] = _fma_batch


def _square_add(a: Any, b: Any) -> Any:
    return fma(a, a, b)


def _primitive() -> list[float]:
    x, y = np.float32(2.5), np.float32(-1.25)
    xs, ys = np.arange(4, dtype=np.float32), np.linspace(-1, 1, 4, dtype=np.float32)
    out = [_square_add(x, y), api.jit(_square_add)(x, y),
           *api.jvp(_square_add, (x, y), (np.float32(1), np.float32(0.5))),
           api.grad(_square_add)(x, y), api.jit(api.grad(_square_add, argnums=1))(x, y),
           *api.vmap(_square_add)(xs, ys), *api.jit(api.vmap(_square_add, (0, None)))(xs, y),
           *api.grad(lambda v: jnp.sum(api.vmap(_square_add)(v, ys) ** 2))(xs),
           *np.ravel(api.vmap(_square_add, (1, 0))(xs.reshape(2, 2), ys.reshape(2, 2)))]
    return [float(v) for v in out]


def _eval_jaxpr(jaxpr: Any, consts: Any, *args: Any) -> list[Any]:
    env: dict[Any, Any] = {}

    def read(v: Any) -> Any:
        return v.val if isinstance(v, core.Literal) else env[v]

    def write(v: Any, val: Any) -> None:
        env[v] = val

    safe_map(write, jaxpr.constvars, consts)
    safe_map(write, jaxpr.invars, args)
    for eqn in jaxpr.eqns:
        outs = eqn.primitive.bind(*safe_map(read, eqn.invars), **eqn.params)
        safe_map(write, eqn.outvars, outs if eqn.primitive.multiple_results else [outs])
    return safe_map(read, jaxpr.outvars)


def _interpreter() -> list[float]:
    def f(x: Any) -> Any:
        return jnp.exp(jnp.tanh(x)) * x + jnp.sum(x ** 2)
    x = np.linspace(-1, 1, 5, dtype=np.float32)
    closed = jax.make_jaxpr(f)(x)
    again = _eval_jaxpr(closed.jaxpr, closed.consts, x)[0]
    jitted = jax.jit(lambda v: _eval_jaxpr(closed.jaxpr, closed.consts, v)[0])(x)
    grads = jax.grad(lambda v: jnp.sum(_eval_jaxpr(closed.jaxpr, closed.consts, v)[0]))(x)
    return [float(v) for part in (again, jitted, grads) for v in np.ravel(part)]


def uses() -> dict[str, Callable[[], list[float]]]:
    """Each use, by name."""
    return {"primitive": _primitive, "interpreter": _interpreter}


def main(names: list[str] | None = None) -> dict[str, list[float]]:
    """The numbers of the uses named (all by default)."""
    return {name: run() for name, run in uses().items() if not names or name in names}


if __name__ == "__main__":
    print(json.dumps({"jax": jax.__version__, "results": main(sys.argv[1:])}))

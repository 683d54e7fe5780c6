"""vmap keeps unmapped what JAX keeps unmapped around loops and branches: a ``cond``
output no branch maps, and loop carries a user primitive's batching rule returns
unmapped (equinox's ``unvmap_any``, whose checkpointed ``while_loop`` asserts that its
step counters are never batched).  Compared with JAX 0.10.2."""

from __future__ import annotations

from typing import Any

import jax
import jax.extend.core as jcore
import jax.interpreters.batching as jbatching
import jax.interpreters.mlir as jmlir
import numpy as np

import plait
import plait.extend.core as pcore
import plait.interpreters.batching as pbatching
import plait.interpreters.mlir as pmlir
from tests.frontend.jax_oracle import assert_close

LIBS = {"jax": (jax, jcore, jbatching, jmlir), "plait": (plait, pcore, pbatching, pmlir)}
XS = np.linspace(-1.0, 1.0, 6, dtype=np.float32).reshape(3, 2)


def _primitives(lib: Any, core: Any, batching: Any, mlir: Any) -> tuple[Any, Any]:
    """``any_lane`` (an unmapped any over the batch) and ``unmapped`` (the identity,
    refusing a mapped operand)."""
    any_lane = core.Primitive(f"any_lane_{lib.__name__}")
    any_lane.def_impl(lambda x: x)
    any_lane.def_abstract_eval(lambda x: x)

    def any_rule(args: Any, dims: Any) -> Any:
        (x,), (d,) = args, dims
        return (lib.numpy.any(x, axis=d) if d is not None else x), None
    batching.primitive_batchers[any_lane] = any_rule
    unmapped = core.Primitive(f"unmapped_{lib.__name__}")
    unmapped.def_impl(lambda x: x)
    unmapped.def_abstract_eval(lambda x: x)

    def refuse(args: Any, dims: Any) -> Any:
        raise ValueError("a mapped operand")
    batching.primitive_batchers[unmapped] = refuse
    for p in (any_lane, unmapped):
        mlir.register_lowering(p, mlir.lower_fun(lambda x: x, multiple_results=False))
    return any_lane.bind, unmapped.bind


def _loop(name: str) -> Any:
    lib, *modules = LIBS[name]
    any_lane, unmapped = _primitives(lib, *modules)
    np_ = lib.numpy

    def cond(c: Any) -> Any:
        i, x, done = c
        return unmapped(np_.logical_and(i < 6, np_.logical_not(done)))

    def body(c: Any) -> Any:
        i, x, done = c
        x = np_.sin(x) * 1.5
        # the counter and the flag stay unmapped: any_lane unmaps what depends on x
        return unmapped(i + 1), x, any_lane(np_.all(np_.abs(x) > 5.0))

    def run(x: Any) -> Any:
        i, x, _ = lib.lax.while_loop(cond, body, (0, x, False))
        counter = lib.lax.cond(i > 2, lambda k, y: (k + 1, y * 2.0), lambda k, y: (k, y),
                               i, x)
        return unmapped(counter[0]), counter[1]
    return lib.vmap(run)(XS)


def test_loop_counters_stay_unmapped() -> None:
    # (the unmapped primitive refuses a mapped operand: plait mapped the counter)
    ours, theirs = _loop("plait"), _loop("jax")
    for o, t in zip(ours, theirs):
        assert_close(o, t)


def _branch_outputs(name: str) -> Any:
    lib, *modules = LIBS[name]
    _, unmapped = _primitives(lib, *modules)

    def f(k: Any, x: Any) -> Any:
        a, b = lib.lax.cond(k > 0, lambda a, b: (a + 1, b * 2.0), lambda a, b: (a - 1, -b),
                            k, x)
        return unmapped(a), b
    return lib.vmap(f, in_axes=(None, 0))(3, XS)


def test_a_cond_output_no_branch_maps_is_unmapped_as_jaxs() -> None:
    ours, theirs = _branch_outputs("plait"), _branch_outputs("jax")
    for o, t in zip(ours, theirs):
        assert_close(o, t)


def _linearized(lib: Any) -> list[Any]:
    f = lambda x: lib.numpy.sin(x) * x  # noqa: E731
    out, f_jvp = lib.jit(lambda x: lib.linearize(f, x))(XS[0])
    outs, f_jvps = lib.vmap(lambda x: lib.linearize(f, x))(XS)
    leaves = lib.tree_util.tree_leaves(f_jvp)
    return [out, f_jvp(np.ones(2, np.float32)), outs,
            lib.vmap(lambda g, t: g(t))(f_jvps, XS), len(leaves)]


def test_linearize_returns_a_pytree_of_its_residuals_as_jax() -> None:
    ours, theirs = _linearized(plait), _linearized(jax)
    for o, t in zip(ours[:4], theirs[:4]):
        assert_close(o, t, rtol=1e-6)
    assert ours[4] >= 1 and theirs[4] >= 1

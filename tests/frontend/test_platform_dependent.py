"""lax.platform_dependent against jax.lax 0.10.2: the branch for the CPU (or the default)
runs eagerly, under jit, grad and vmap; the staged form prints as JAX's; only the CPU
branch is compiled; a program without a CPU branch is refused."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax as jlax

import plait
import plait.lax as plax
import plait.numpy as pnp

jax.config.update("jax_platforms", "cpu")


def _programs(L: Any, N: Any) -> dict[str, Any]:
    return {
        "cpu_and_default": lambda x: L.platform_dependent(x, cpu=N.sin, default=N.cos),
        "default_only_fits": lambda x: L.platform_dependent(x, tpu=N.sin, default=N.cos),
        "two_platforms": lambda x: L.platform_dependent(x, cpu=N.tanh, tpu=N.cos),
        "shared_branch": lambda x: L.platform_dependent(x, tpu=N.sin, cpu=N.exp, cuda=N.sin),
        "pytree": lambda x: L.platform_dependent(
            {"a": x, "b": 2 * x}, cpu=lambda d: d["a"] * d["b"], default=lambda d: d["a"]),
    }


@pytest.mark.parametrize("name", sorted(_programs(plax, pnp)))
def test_matches_jax(name: str) -> None:
    ours, theirs = _programs(plax, pnp)[name], _programs(jlax, jnp)[name]
    x = np.array([0.3, -1.2, 2.0], np.float32)
    np.testing.assert_allclose(np.asarray(ours(x)), np.asarray(theirs(x)), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(plait.jit(ours)(x)), np.asarray(theirs(x)), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(plait.vmap(ours)(x)), np.asarray(jax.vmap(theirs)(x)),
                               rtol=1e-6)
    g_ours = plait.grad(lambda x: pnp.sum(ours(x)))
    g_theirs = jax.grad(lambda x: jnp.sum(theirs(x)))
    np.testing.assert_allclose(np.asarray(g_ours(x)), np.asarray(g_theirs(x)), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(plait.jit(g_ours)(x)), np.asarray(g_theirs(x)),
                               rtol=1e-6)
    assert str(plait.make_jaxpr(ours)(x)) == str(jax.make_jaxpr(theirs)(x))


def test_only_the_cpu_branch_is_compiled() -> None:
    f = plait.jit(lambda x: plax.platform_dependent(x, cpu=pnp.sin, tpu=pnp.cos))
    text = f.lower(np.float32(1.0)).as_text()
    assert "stablehlo.sine" in text and "stablehlo.cosine" not in text


def test_no_branch_for_the_cpu() -> None:
    def f(x: Any) -> Any:
        return plax.platform_dependent(x, tpu=pnp.sin, cuda=pnp.cos)
    msg = "expected a branch for platform cpu or a default, but got branches for tpu, cuda only"
    with pytest.raises(NotImplementedError, match=msg):
        f(1.0)
    with pytest.raises(NotImplementedError, match=msg):
        plait.jit(f)(1.0)


def test_bad_arguments() -> None:
    with pytest.raises(ValueError, match="Use 'cuda' or 'rocm' for lax.platform_dependent"):
        plax.platform_dependent(1.0, gpu=pnp.sin)
    with pytest.raises(TypeError, match="the 'cpu' branch must be a callable, got 3"):
        plax.platform_dependent(1.0, cpu=3)  # type: ignore[arg-type]

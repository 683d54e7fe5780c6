"""``vmap(spmd_axis_name=)`` and sharding constraints under ``vmap``, against JAX 0.10.2 on
8 CPU devices: the batch dimension of a constraint is split over the named mesh axes
(whole without a name), and the results are laid out as JAX lays them."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jjnp
import numpy as np
import pytest
from jax.sharding import NamedSharding as JNamedSharding
from jax.sharding import PartitionSpec as JP

import plait
import plait.numpy as pjnp
from plait.sharding import NamedSharding
from plait.sharding import PartitionSpec as P

pytestmark = pytest.mark.skipif(len(plait.devices()) < 8, reason="needs 8 CPU devices "
                                "(XLA_FLAGS=--xla_force_host_platform_device_count=8)")

X = np.arange(4 * 6 * 2, dtype=np.float32).reshape(4, 6, 2) / 10


def _run(lib: Any, np_: Any, named: Any, spec: Any, spmd: Any, in_axes: int = 0) -> Any:
    auto = lib.sharding.AxisType.Auto
    mesh = lib.make_mesh((4, 2), ("x", "y"), axis_types=(auto, auto))

    def f(v: Any) -> Any:
        w = lib.lax.with_sharding_constraint(np_.sin(v) * 2, named(mesh, spec(None, "y")))
        return w.sum(axis=0)

    x = np.moveaxis(X, 0, in_axes)
    return lib.jit(lib.vmap(f, in_axes=in_axes, spmd_axis_name=spmd))(x)


@pytest.mark.parametrize("spmd", [None, "x", ("x",)], ids=["none", "x", "tuple"])
@pytest.mark.parametrize("in_axes", [0, 1])
def test_constraints_under_vmap_are_laid_out_as_jaxs(spmd: Any, in_axes: int) -> None:
    ours = _run(plait, pjnp, NamedSharding, P, spmd, in_axes)
    theirs = _run(jax, jjnp, JNamedSharding, JP, spmd, in_axes)
    np.testing.assert_allclose(np.asarray(ours), np.asarray(theirs), rtol=1e-6)
    mesh = plait.make_mesh((4, 2), ("x", "y"), axis_types=(plait.sharding.AxisType.Auto,) * 2)
    their_spec = tuple(theirs.sharding.spec)
    assert ours.sharding.is_equivalent_to(NamedSharding(mesh, P(*their_spec)), ours.ndim)


def test_the_constraint_names_the_spmd_axis_at_the_batch_dimension() -> None:
    auto = plait.sharding.AxisType.Auto
    mesh = plait.make_mesh((4, 2), ("x", "y"), axis_types=(auto, auto))

    def f(v: Any) -> Any:
        return plait.lax.with_sharding_constraint(v * 2, NamedSharding(mesh, P("y")))

    closed = plait.make_jaxpr(plait.vmap(f, spmd_axis_name="x"))(X[:, :, 0])
    (eqn,) = [e for e in closed.jaxpr.eqns if e.primitive.name == "sharding_constraint"]
    assert eqn.params["sharding"].spec == P("x", "y")


def test_a_bad_spmd_axis_name_is_refused() -> None:
    with pytest.raises(TypeError, match=r"vmap spmd_axis_name: expected a mesh axis name or a "
                       r"tuple of them, but got 3"):
        plait.vmap(lambda v: v, spmd_axis_name=3)  # type: ignore[arg-type]  # (the error tested)

"""Small device-level names JAX programs use: ``Device``, ``process_indices``, the old
``host_*`` aliases (which warn, as JAX's do), ``copy_to_host_async`` and
``effects_barrier``; compared with JAX 0.10.2 in the same process."""

from __future__ import annotations

from typing import Any

import jax
import jax.lib
import numpy as np
import pytest

import plait
import plait.lib
import plait.numpy as pnp


def test_device_type_and_process_names() -> None:
    assert all(isinstance(d, plait.Device) for d in plait.devices())
    assert not isinstance("cpu", plait.Device)
    assert plait.process_indices() == jax.process_indices()
    for name in ("host_count", "host_id", "host_ids"):
        with pytest.warns(UserWarning, match="old name"):
            got = getattr(plait, name)()
        with pytest.warns(UserWarning):
            want = getattr(jax, name)()
        assert got == want


def test_copy_to_host_async_leaves_values_alone() -> None:
    tree: dict[str, Any] = {"a": pnp.arange(4.0), "b": (np.ones(2), 3, None)}
    out = plait.copy_to_host_async(tree)
    assert out is tree
    np.testing.assert_array_equal(np.asarray(out["a"]), np.arange(4.0, dtype=np.float32))
    assert jax.copy_to_host_async({"a": jax.numpy.arange(4.0), "b": (np.ones(2), 3, None)})


def test_effects_barrier_after_debug_print(capsys: pytest.CaptureFixture[str]) -> None:
    plait.jit(lambda x: plait.debug.print("x: {}", x) or x)(2.0)
    plait.effects_barrier()
    assert capsys.readouterr().out == "x: 2.0\n"


def test_committed_as_jax_where_plait_places_arrays_alike() -> None:
    # plait counts arrays on the default device as movable (uncommitted), also when
    # device_put there explicitly, where JAX commits them (docs/scaling.md).
    mesh = plait.make_mesh((2,), ("x",))
    jmesh = jax.make_mesh((2,), ("x",))

    def cases(lib: Any, m: Any) -> list[bool]:
        a = lib.numpy.arange(4.0)
        other = lib.device_put(a, lib.devices()[1])
        split = lib.device_put(a, lib.sharding.NamedSharding(m, lib.sharding.PartitionSpec("x")))
        return [a.committed, (a + 1).committed, lib.jit(lambda v: v * 2)(a).committed,
                other.committed, (other + 1).committed, split.committed,
                lib.jit(lambda v: v * 2)(split).committed]
    assert cases(plait, mesh) == cases(jax, jmesh) == [False] * 3 + [True] * 4


def test_lib_version_is_jaxlibs() -> None:
    assert plait.lib.__version__ == jax.lib.__version__

"""``plait.experimental.multihost_utils`` in one process, against JAX 0.10.2's."""

from __future__ import annotations

from typing import Any

import jax
import jax.experimental.multihost_utils as jmh
import numpy as np
import pytest

import plait
import plait.experimental.multihost_utils as mh
from plait.sharding import Mesh, NamedSharding, PartitionSpec

_TREE = {"a": np.arange(6, dtype=np.float32).reshape(2, 3), "b": (np.int32(7), [True, False])}


def _same_tree(ours: Any, theirs: Any) -> None:
    o, od = plait.tree_util.tree_flatten(ours)
    t, td = jax.tree_util.tree_flatten(theirs)
    assert str(od).replace("PyTreeDef", "") == str(td).replace("PyTreeDef", "")
    for x, y in zip(o, t):
        assert type(x) is type(y), (type(x), type(y))
        np.testing.assert_array_equal(x, y)
        assert np.asarray(x).dtype == np.asarray(y).dtype


def test_broadcast_one_to_all_gives_numpy_copies_as_jax() -> None:
    tree = {**_TREE, "c": plait.numpy.ones(3)}
    _same_tree(mh.broadcast_one_to_all(tree), jmh.broadcast_one_to_all(
        {**_TREE, "c": jax.numpy.ones(3)}))
    _same_tree(mh.broadcast_one_to_all(2.5, is_source=False),
               jmh.broadcast_one_to_all(2.5, is_source=False))


def test_assert_equal_passes_in_one_process() -> None:
    mh.assert_equal(_TREE, "differ")  # (no error: one process agrees with itself)
    jmh.assert_equal(_TREE, "differ")
    mh.assert_equal(plait.numpy.arange(4.0))


def test_preemption_sync_point_is_false_without_a_distributed_run() -> None:
    assert mh.reached_preemption_sync_point(3) is jmh.reached_preemption_sync_point(3) is False


def test_live_devices_needs_a_distributed_run() -> None:
    with pytest.raises(RuntimeError, match="not initialized"):
        with jmh.live_devices(jax.devices()):
            pass
    with pytest.raises(RuntimeError, match="not initialized: call plait.distributed.initialize"):
        with mh.live_devices(plait.devices()):
            pass


@pytest.mark.parametrize("spec", [("x",), (), (None, "x")])
def test_host_local_to_global_and_back_as_jax(spec: tuple[Any, ...]) -> None:
    local = np.arange(32, dtype=np.float32).reshape(8, 4)
    mesh = Mesh(np.array(plait.devices()[:4]), ("x",))
    jmesh = jax.sharding.Mesh(np.array(jax.devices()[:4]), ("x",))
    g = mh.host_local_array_to_global_array({"w": local}, mesh, PartitionSpec(*spec))["w"]
    jg = jmh.host_local_array_to_global_array({"w": local}, jmesh,
                                              jax.sharding.PartitionSpec(*spec))["w"]
    assert g.shape == jg.shape
    np.testing.assert_array_equal(np.asarray(g), np.asarray(jg))
    assert g.sharding == NamedSharding(mesh, PartitionSpec(*spec))
    assert [s.index for s in g.addressable_shards] == [s.index for s in jg.addressable_shards]
    back = mh.global_array_to_host_local_array(g, mesh, PartitionSpec(*spec))
    jback = jmh.global_array_to_host_local_array(jg, jmesh, jax.sharding.PartitionSpec(*spec))
    assert back is g and jback is jg  # (fully addressable: returned as they are, as in JAX)


def test_a_none_spec_is_refused_as_jax() -> None:
    mesh = Mesh(np.array(plait.devices()[:2]), ("x",))
    jmesh = jax.sharding.Mesh(np.array(jax.devices()[:2]), ("x",))
    with pytest.raises(ValueError, match="`None` is not a valid input to the pspecs"):
        jmh.host_local_array_to_global_array(np.ones(2), jmesh, None)
    with pytest.raises(ValueError, match=r"`None` is not a valid input to the pspecs argument. "
                       r"Please use plait.sharding.PartitionSpec\(\)"):
        mh.host_local_array_to_global_array(np.ones(2), mesh, None)

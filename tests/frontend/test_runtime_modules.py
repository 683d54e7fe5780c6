"""The parts of JAX's runtime API checkpointing libraries use, against JAX 0.10.2:
colocated Python on the CPU, the asynchronous checkpoint manager's interface, IFRT
programs, placing arrays with a ``Format``, and single-device shardings' shard shapes
and array assembly."""

from __future__ import annotations

from typing import Any

import jax
import jax.experimental.array_serialization.serialization as jax_serialization
import jax.extend.ifrt_programs as jax_ifrt
import ml_dtypes
import numpy as np
import pytest
from jax.experimental import colocated_python as jax_cp
from jax.experimental.layout import Format as JaxFormat
from jax.experimental.layout import Layout as JaxLayout

import plait
import plait.experimental.array_serialization.serialization as plait_serialization
from plait.experimental import colocated_python as plait_cp
from plait.experimental.layout import Format, Layout
from plait.extend import ifrt_programs as plait_ifrt

X = np.arange(6.0, dtype=np.float32).reshape(2, 3)


def test_colocated_python_runs_in_place_as_jaxs_runs_on_the_cpu() -> None:
    ours_devices = plait_cp.colocated_cpu_devices(plait.devices())
    theirs_devices = jax_cp.colocated_cpu_devices(jax.devices())
    assert [d.id for d in ours_devices] == [d.id for d in theirs_devices]
    assert ours_devices[0] is plait.devices()[0]

    def f(x: Any) -> Any:
        return x * 2 + 1
    ours = plait_cp.colocated_python(f)(plait.device_put(X, ours_devices[0]))
    theirs = jax_cp.colocated_python(f)(jax.device_put(X, theirs_devices[0]))
    np.testing.assert_array_equal(np.asarray(ours), np.asarray(theirs))
    special = plait_cp.colocated_python(f).specialize(devices=ours_devices)
    np.testing.assert_array_equal(np.asarray(special(X)), X * 2 + 1)
    with pytest.raises(TypeError, match="colocated_python: expected a function, but got 3"):
        plait_cp.colocated_python(3)  # type: ignore[arg-type]  # (the point)

    class Counter:
        pass
    assert plait_cp.colocated_python_class(Counter) is Counter


def test_the_checkpoint_manager_interface_is_abstract_as_jaxs() -> None:
    for base in (plait_serialization.GlobalAsyncCheckpointManagerBase,
                 jax_serialization.GlobalAsyncCheckpointManagerBase):
        with pytest.raises(TypeError, match="abstract"):
            base()  # type: ignore[abstract]  # (the point)

        class Done(base):  # type: ignore[misc, valid-type]  # (either library's)
            def check_for_errors(self) -> None:
                pass

            def wait_until_finished(self) -> None:
                pass

            def serialize(self, *args: Any, **kwargs: Any) -> None:
                pass

            def deserialize(self, *args: Any, **kwargs: Any) -> Any:
                return None
        assert isinstance(Done(), base)


def test_ifrt_programs_are_jaxlibs() -> None:
    assert plait_ifrt.ifrt_programs is jax_ifrt.ifrt_programs


def test_device_put_takes_a_format_as_jaxs() -> None:
    ours_dev, theirs_dev = plait.devices()[0], jax.devices()[0]
    for layout, jax_layout in [(None, None), (Layout((0, 1)), JaxLayout((0, 1)))]:
        ours = plait.device_put(X, Format(layout, plait.sharding.SingleDeviceSharding(ours_dev)))
        theirs = jax.device_put(X, JaxFormat(jax_layout,
                                             jax.sharding.SingleDeviceSharding(theirs_dev)))
        np.testing.assert_array_equal(np.asarray(ours), np.asarray(theirs))
        assert repr(ours.sharding) == repr(theirs.sharding)
    with pytest.raises(NotImplementedError, match=r"device_put: expected a Format with the "
                       r"default layout \(or None\), but got Layout\(major_to_minor=\(1, 0\)"):
        plait.device_put(X, Format(Layout((1, 0)),
                                   plait.sharding.SingleDeviceSharding(ours_dev)))


def test_single_device_shardings_shard_and_assemble_as_jaxs() -> None:
    ours = plait.sharding.SingleDeviceSharding(plait.devices()[0])
    theirs = jax.sharding.SingleDeviceSharding(jax.devices()[0])
    assert ours.shard_shape((4, 5)) == theirs.shard_shape((4, 5)) == (4, 5)
    assert [d.id for d in ours._addressable_device_assignment] == [
        d.id for d in theirs._addressable_device_assignment]  # type: ignore[attr-defined]  # (JAX's Device stub)
    made = plait.make_array_from_single_device_arrays(X.shape, ours, [plait.numpy.asarray(X)])
    jax_made = jax.make_array_from_single_device_arrays(X.shape, theirs, [jax.numpy.asarray(X)])
    np.testing.assert_array_equal(np.asarray(made), np.asarray(jax_made))
    assert made.sharding == ours and made.dtype == jax_made.dtype
    seen: list[Any] = []

    def piece(index: Any) -> Any:
        seen.append(index)
        return X[index]
    called = plait.make_array_from_callback(X.shape, ours, piece)
    jax_called = jax.make_array_from_callback(X.shape, theirs, piece)
    np.testing.assert_array_equal(np.asarray(called), np.asarray(jax_called))
    assert seen[0] == seen[1] == (slice(None), slice(None))
    with pytest.raises(ValueError, match=r"make_array_from_single_device_arrays: expected one "
                       r"array of shape \(3, 2\)"):
        plait.make_array_from_single_device_arrays((3, 2), ours, [X])


def test_tensorstore_specs_are_jaxs() -> None:
    for path in ("/tmp/ckpt/arr", "/tmp/ckpt/arr/", "gs://bucket/dir/arr", "s3://b/x/y",
                 "relative/arr"):
        assert plait_serialization.get_tensorstore_spec(path) == \
            jax_serialization.get_tensorstore_spec(path), path
    for kw in ({"ocdbt": True}, {"ocdbt": True, "process_idx": 2}, {"driver": "zarr3"}):
        assert plait_serialization.get_tensorstore_spec("/tmp/c/a", **kw) == \
            jax_serialization.get_tensorstore_spec("/tmp/c/a", **kw), kw
    with pytest.raises(ValueError, match="Checkpoint path should be absolute"):
        plait_serialization.get_tensorstore_spec("rel/a", ocdbt=True)


def test_checkpoint_managers_read_what_each_other_wrote(tmp_path: Any) -> None:
    # plait's manager writes JAX's files: each library reads what the other wrote, bit for
    # bit, with the dtypes and (for a padded global shape) the zeros JAX gives.
    values = [X, np.arange(5, dtype=np.int32), (X * 1.5).astype(ml_dtypes.bfloat16)]
    committed: list[str] = []
    for name, mod, lib in (("plait", plait_serialization, plait),
                           ("jax", jax_serialization, jax)):
        manager = mod.GlobalAsyncCheckpointManager()
        paths = [str(tmp_path / name / f"a{i}") for i in range(len(values))]
        manager.serialize_with_paths([lib.numpy.asarray(v) for v in values], paths,
                                     on_commit_callback=lambda n=name: committed.append(n))
        manager.wait_until_finished()
    assert sorted(committed) == ["jax", "plait"]
    for writer in ("plait", "jax"):
        paths = [str(tmp_path / writer / f"a{i}") for i in range(len(values))]
        for mod, lib in ((plait_serialization, plait), (jax_serialization, jax)):
            sharding = lib.sharding.SingleDeviceSharding(lib.devices()[0])
            got = mod.GlobalAsyncCheckpointManager().deserialize_with_paths(
                [sharding] * len(values), paths)
            for g, v in zip(got, values):
                assert np.asarray(g).dtype == v.dtype
                np.testing.assert_array_equal(np.asarray(g), v)
            padded = mod.GlobalAsyncCheckpointManager().deserialize_with_paths(
                [sharding], paths[1:2], global_shapes=[(7,)], dtypes=[np.float32])[0]
            np.testing.assert_array_equal(np.asarray(padded), [0, 1, 2, 3, 4, 0, 0])


def test_device_put_copy_semantics_as_jaxs() -> None:
    """``may_alias``, ``donate`` and ``src``: which results are new arrays, which inputs
    stay valid (JAX's donation is best effort: on the CPU the input stays), the refusal."""
    def run(L: Any) -> list[Any]:
        x = L.numpy.arange(3.0)
        tree = {"a": L.numpy.ones(2), "b": L.numpy.zeros(2)}
        put = L.device_put(tree, donate={"a": True, "b": False})
        return [L.device_put(x) is x, L.device_put(x, may_alias=False) is x,
                L.device_put(x, donate=True) is x, x.is_deleted(),
                put["a"] is tree["a"], put["b"] is tree["b"], tree["a"].is_deleted(),
                np.asarray(L.device_put(x, may_alias=False)).tolist(),
                np.asarray(L.device_put(np.ones(2), src=L.devices()[0])).tolist()]
    assert run(plait) == run(jax)
    with pytest.raises(ValueError, match="may_alias and donate cannot be True at the same "
                                         "time."):
        plait.device_put(plait.numpy.ones(2), donate=True, may_alias=True)

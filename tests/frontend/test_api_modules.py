"""The smaller public modules that mirror JAX's: ``plait.custom_derivatives``,
``plait.stages``, ``plait.dlpack``, ``plait.monitoring``, ``plait.profiler`` and
``plait.experimental.{shard_map, pjit, mesh_utils}``, each against its JAX namesake."""

from __future__ import annotations

import gzip
import json
import warnings
from pathlib import Path
from typing import Any

import jax
import jax.experimental.mesh_utils
import jax.experimental.pjit
import jax.experimental.shard_map
import jax.numpy as jnp
import numpy as np
import pytest

import plait
import plait.experimental.mesh_utils
import plait.experimental.pjit
import plait.experimental.shard_map
import plait.numpy as pnp
from plait.sharding import AxisType

EIGHT = pytest.mark.skipif(len(plait.devices()) < 8, reason="needs 8 CPU devices "
                           "(XLA_FLAGS=--xla_force_host_platform_device_count=8)")


def test_module_namespaces_hold_jaxs_names() -> None:
    # (JAX's extra names are internals: remat_opt_p, custom_vjp_primal_tree_values, ...)
    pairs = [(plait.custom_derivatives, jax.custom_derivatives), (plait.stages, jax.stages),
             (plait.dlpack, jax.dlpack), (plait.monitoring, jax.monitoring)]
    for ours, theirs in pairs:
        assert set(ours.__all__) <= set(dir(theirs)), ours.__name__
    assert plait.custom_derivatives.custom_jvp is plait.custom_jvp
    assert isinstance(plait.jit(lambda x: x).trace(1.0), plait.stages.Traced)
    assert isinstance(plait.jit(lambda x: x).lower(1.0).compile(), plait.stages.Compiled)


def test_every_jax_error_class_is_served_with_jaxs_bases() -> None:
    """Each class of ``jax.errors`` has a plait counterpart that is a subclass of the same
    builtin exceptions and of the same ``jax.errors`` bases, so an ``except`` written for
    JAX catches plait's; ``JaxRuntimeError`` is the very class (jaxlib's)."""
    import inspect

    import jax.errors

    import plait.errors
    for name, theirs in inspect.getmembers(jax.errors, inspect.isclass):
        ours = getattr(plait.errors, name)
        for base in theirs.__mro__[1:]:
            if base.__module__ == "builtins":
                assert issubclass(ours, base), (name, base)
            elif base.__module__ == "jax.errors":
                assert issubclass(ours, getattr(plait.errors, base.__name__)), (name, base)
    assert plait.errors.JaxRuntimeError is jax.errors.JaxRuntimeError
    with pytest.raises(TypeError):  # (a leaked tracer is a TypeError in JAX too)
        raise plait.errors.UnexpectedTracerError("leak")


@pytest.mark.parametrize("dtype", ["bool", "int8", "uint64", "float16", "bfloat16", "float64",
                                   "complex128", "float8_e4m3fn", "int4"])
def test_dlpack_supported_dtypes_are_jaxs(dtype: str) -> None:
    d = jnp.dtype(dtype)
    assert plait.dlpack.is_supported_dtype(d) == jax.dlpack.is_supported_dtype(d)


def _compile_events(lib: Any) -> list[tuple[str, str, dict[str, Any]]]:
    seen: list[tuple[str, str, dict[str, Any]]] = []
    listeners = [lambda e, v, **k: seen.append(("scalar", e, k)),
                 lambda e, d, **k: seen.append(("duration", e, k)),
                 lambda e, s, t, **k: seen.append(("span", e, k))]
    m = lib.monitoring
    m.register_scalar_listener(listeners[0])
    m.register_event_duration_secs_listener(listeners[1])
    m.register_event_time_span_listener(listeners[2])
    try:
        def scale_shift(x: Any) -> Any:  # a program no other test compiles
            return x * 1.2345678 - 9.87654
        lib.jit(scale_shift)(np.ones((5, 3, 2), np.float32))
    finally:
        m.unregister_scalar_listener(listeners[0])
        m.unregister_event_duration_listener(listeners[1])
        m.unregister_event_time_span_listener(listeners[2])
    return [s for s in seen if s[1].startswith("/jax/core/compile/")]


def test_monitoring_reports_the_compile_phases_as_jax() -> None:
    ours, theirs = _compile_events(plait), _compile_events(jax)
    assert ours == theirs
    assert len(ours) == 9  # trace, lower, compile: each a scalar, a duration and a span


def test_monitoring_listeners_and_events() -> None:
    for lib in (plait, jax):
        got: list[Any] = []

        def listener(e: str, got: list[Any] = got, **k: Any) -> None:
            got.append((e, k))
        lib.monitoring.register_event_listener(listener)
        lib.monitoring.record_event("/my/event", step=3)
        lib.monitoring.unregister_event_listener(listener)
        lib.monitoring.record_event("/my/event", step=4)
        assert got == [("/my/event", {"step": 3})]
        with pytest.raises(AssertionError):
            lib.monitoring.unregister_event_listener(listener)


def test_profiler_trace_holds_the_annotations(tmp_path: Path) -> None:
    @plait.profiler.annotate_function
    def matmul(x: Any) -> Any:
        return plait.jit(lambda a: a @ a)(x).block_until_ready()

    with plait.profiler.trace(tmp_path, create_perfetto_trace=True):
        with plait.profiler.TraceAnnotation("my_region", k=1):
            matmul(pnp.ones((16, 16)))
        with plait.profiler.StepTraceAnnotation("train", step_num=3):
            pass
    run, = (tmp_path / "plugins" / "profile").iterdir()
    assert len(list(run.glob("*.xplane.pb"))) == 1
    trace, = run.glob("*.trace.json.gz")
    names = {e.get("name") for e in json.loads(gzip.decompress(trace.read_bytes()))
             ["traceEvents"]}
    assert {"my_region", "train", matmul.__qualname__} <= names
    assert "metadata" not in json.loads(gzip.decompress(
        (run / "perfetto_trace.json.gz").read_bytes()))


def test_profiler_refusals_are_jaxs(tmp_path: Path) -> None:
    for lib in (plait, jax):
        with pytest.raises(RuntimeError, match="No profile started"):
            lib.profiler.stop_trace()
        lib.profiler.start_trace(tmp_path / lib.__name__)
        try:
            with pytest.raises(RuntimeError, match="Profile has already been started"):
                lib.profiler.start_trace(tmp_path / "again")
        finally:
            lib.profiler.stop_trace()
        with pytest.raises(ValueError, match="No active profiler server"):
            lib.profiler.stop_server()


def test_device_memory_profile_is_gzipped_pprof(tmp_path: Path) -> None:
    keep = pnp.ones((256, 256))
    profile = plait.profiler.device_memory_profile()
    assert gzip.decompress(profile)  # a gzipped protocol buffer, as JAX's
    plait.profiler.save_device_memory_profile(tmp_path / "memory.prof")
    assert gzip.decompress((tmp_path / "memory.prof").read_bytes())
    del keep


@EIGHT
def test_mesh_utils_lay_out_devices_as_jax() -> None:
    def ids(grid: Any) -> list[Any]:
        return np.vectorize(lambda d: d.id)(grid).tolist()

    assert ids(plait.experimental.mesh_utils.create_device_mesh((4, 2))) == \
        ids(jax.experimental.mesh_utils.create_device_mesh((4, 2)))
    assert ids(plait.experimental.mesh_utils.create_device_mesh((2, 2), plait.devices()[4:])) \
        == ids(jax.experimental.mesh_utils.create_device_mesh((2, 2), jax.devices()[4:]))
    assert ids(plait.experimental.mesh_utils.create_hybrid_device_mesh(
        (2, 4), (1, 1), process_is_granule=True)) == ids(
        jax.experimental.mesh_utils.create_hybrid_device_mesh((2, 4), (1, 1),
                                                              process_is_granule=True))
    for mu in (plait.experimental.mesh_utils, jax.experimental.mesh_utils):
        with pytest.raises(ValueError, match=r"Number of devices 8 must equal the product of "
                           r"mesh_shape \(3, 2\)"):
            mu.create_device_mesh((3, 2))
        with pytest.raises(ValueError, match="does not have attribute slice_index"):
            mu.create_hybrid_device_mesh((2, 2), (1, 1))
        with pytest.raises(ValueError, match="Number of slices 1 must equal the product"):
            mu.create_hybrid_device_mesh((2, 2), (2, 1), process_is_granule=True)


@EIGHT
def test_experimental_shard_map_and_pjit_as_jax() -> None:
    x = np.arange(32.0, dtype=np.float32).reshape(8, 4)

    def run(lib: Any, jnp_: Any) -> Any:
        mesh = lib.make_mesh((4, 2), ("i", "j"), (lib.sharding.AxisType.Auto,) * 2)
        P = lib.sharding.PartitionSpec
        # (JAX warns on the first read in a process only.)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            shard_map = lib.experimental.shard_map.shard_map
            pjit = lib.experimental.pjit.pjit
        if lib is plait:
            assert [str(w.message) for w in caught] == [
                "jax.experimental.shard_map is deprecated in v0.8.0. Used jax.shard_map "
                "instead.", "jax.experimental.pjit.pjit has been deprecated. Please use "
                "`jax.jit` instead."]
        f = shard_map(lambda b: lib.lax.psum(jnp_.sum(b, 0, keepdims=True), "i"), mesh,
                      in_specs=P("i", "j"), out_specs=P(None, "j"), check_rep=False)
        return f(x), pjit(lambda a: a * 2)(x)

    for ours, theirs in zip(run(plait, pnp), run(jax, jnp)):
        np.testing.assert_array_equal(np.asarray(ours), np.asarray(theirs))
    assert AxisType.Auto is plait.sharding.AxisType.Auto

"""Host callbacks in programs over several devices, against JAX 0.10.2 on the same 8 CPU
devices: in a sharded ``jit`` a callback runs once with the whole values, inside
``shard_map`` once per device with its part; the values and printed lines match."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jjnp
import numpy as np
import pytest
from jax.experimental import io_callback as jax_io_callback
from jax.sharding import AxisType as JAxisType

import plait
import plait.numpy as pjnp
from plait.errors import CallbackError
from plait.experimental import io_callback
from plait.sharding import AxisType

pytestmark = pytest.mark.skipif(len(plait.devices()) < 8, reason="needs 8 CPU devices "
                                "(XLA_FLAGS=--xla_force_host_platform_device_count=8)")


def _libs() -> list[tuple[Any, Any, Any, Any]]:
    """(library, numpy namespace, io_callback, mesh) for plait and JAX."""
    return [(plait, pjnp, io_callback, plait.make_mesh((8,), ("i",), (AxisType.Auto,))),
            (jax, jjnp, jax_io_callback, jax.make_mesh((8,), ("i",), (JAxisType.Auto,)))]


def _run(make: Callable[[Any, Any, Any, list[Any]], Any]) -> list[tuple[Any, list[Any]]]:
    """``make(lib, jnp, io_callback, calls)`` under each library's mesh: its value (on
    the host) and what the callbacks recorded."""
    out = []
    for lib, jnp, io, mesh in _libs():
        calls: list[Any] = []
        with lib.set_mesh(mesh):
            value = np.asarray(make(lib, jnp, io, calls))
        if lib is jax:
            jax.effects_barrier()
        out.append((value, calls))
    return out


def _doubled(lib: Any, calls: list[Any]) -> Callable[[Any], Any]:
    def host(x: np.ndarray) -> np.ndarray:
        calls.append(x.shape)
        return np.asarray(x) * 2

    def f(x: Any) -> Any:
        return lib.pure_callback(host, lib.ShapeDtypeStruct(x.shape, x.dtype), x)
    return f


def test_pure_callback_in_a_sharded_jit_runs_once_on_the_whole_value() -> None:
    def make(lib: Any, jnp: Any, io: Any, calls: list[Any]) -> Any:
        x = lib.device_put(jnp.arange(16.0).reshape(8, 2), lib.P("i"))
        return lib.jit(lambda x: _doubled(lib, calls)(x) + x)(x)
    (ours, our_calls), (theirs, their_calls) = _run(make)
    np.testing.assert_array_equal(ours, theirs)
    assert our_calls == their_calls == [(8, 2)]


def test_pure_callback_in_shard_map_runs_per_device_on_its_part() -> None:
    def make(lib: Any, jnp: Any, io: Any, calls: list[Any]) -> Any:
        x = lib.device_put(jnp.arange(16.0).reshape(8, 2), lib.P("i"))
        f = lib.shard_map(_doubled(lib, calls), in_specs=lib.P("i"), out_specs=lib.P("i"))
        return lib.jit(f)(x)
    (ours, our_calls), (theirs, their_calls) = _run(make)
    np.testing.assert_array_equal(ours, theirs)
    assert our_calls == their_calls == [(1, 2)] * 8


def test_io_callback_and_debug_print_in_a_sharded_jit(capsys: pytest.CaptureFixture[str]
                                                      ) -> None:
    def make(lib: Any, jnp: Any, io: Any, calls: list[Any]) -> Any:
        def f(x: Any) -> Any:
            io(lambda v: calls.append(float(v.sum())), None, x)
            lib.debug.print("total {t}", t=x.sum())
            return x * 3
        x = lib.device_put(jnp.arange(8.0), lib.P("i"))
        return lib.jit(f)(x)
    (ours, our_calls), (theirs, their_calls) = _run(make)
    np.testing.assert_array_equal(ours, theirs)
    assert our_calls == their_calls == [28.0]
    assert capsys.readouterr().out.splitlines() == ["total 28.0"] * 2


def test_a_callbacks_result_is_usable_after_the_call() -> None:
    # (JAX 0.10.2 returns it laid out on one device and refuses to add 1 to it.)
    with plait.set_mesh(plait.make_mesh((8,), ("i",))):
        x = plait.device_put(pjnp.arange(8.0), plait.P("i"))
        y = plait.jit(_doubled(plait, []))(x)
        np.testing.assert_array_equal(np.asarray(y + 1), np.arange(8.0) * 2 + 1)
        np.testing.assert_array_equal(np.asarray(plait.jit(lambda a: a * x)(y)),
                                      np.arange(8.0) ** 2 * 2)
        # With JAX imported (as here), jaxlib's sharding classes compare as JAX defines,
        # which took the one-device layout for a replicated one: the program then read
        # zeros on the other devices.
        for types in (AxisType.Auto, AxisType.Explicit):
            with plait.set_mesh(plait.make_mesh((8,), ("i",), types)):
                x = plait.device_put(pjnp.arange(8.0), plait.P("i"))
                y = plait.jit(_doubled(plait, []))(x)
                np.testing.assert_array_equal(np.asarray(plait.jit(lambda a, b: a * b)(y, x)),
                                              np.arange(8.0) ** 2 * 2)


def test_an_exception_in_a_sharded_programs_callback_is_raised() -> None:
    def fail(v: np.ndarray) -> np.ndarray:
        raise ZeroDivisionError("no")
    with plait.set_mesh(plait.make_mesh((8,), ("i",))):
        x = plait.device_put(pjnp.arange(8.0), plait.P("i"))
        with pytest.raises(CallbackError, match="a host callback raised ZeroDivisionError: no"):
            plait.jit(lambda x: plait.pure_callback(
                fail, plait.ShapeDtypeStruct(x.shape, x.dtype), x))(x)
        np.testing.assert_array_equal(np.asarray(x + 1), np.arange(8.0) + 1)


def test_ahead_of_time_compilation_places_the_callback_as_jit_does() -> None:
    calls: list[Any] = []
    with plait.set_mesh(plait.make_mesh((8,), ("i",))):
        x = plait.device_put(pjnp.arange(8.0), plait.P("i"))
        lowered = plait.jit(_doubled(plait, calls)).lower(x)
        assert "#sdy.sharding_per_value<[<@maximal_mesh_0, []>]>" in lowered.as_text()
        np.testing.assert_array_equal(np.asarray(lowered.compile()(x)), np.arange(8.0) * 2)
    assert calls == [(8,)]

"""The persistent compilation cache (``jax_compilation_cache_dir``): a program compiled
once is loaded from disk afterwards, in this process after the in-memory caches are
cleared and in a new process; results never change."""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys
from collections.abc import Iterator

import numpy as np
import pytest

import plait
import plait.numpy as pnp
from plait.experimental.compilation_cache import compilation_cache as cc
from plait.lowering import compilation_cache
from plait.lowering.runtime import compile_count


@pytest.fixture
def cache_dir(tmp_path: pathlib.Path) -> Iterator[pathlib.Path]:
    d = tmp_path / "cache"
    plait.config.update("jax_compilation_cache_dir", str(d))
    plait.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
    cc.reset_cache()
    plait.clear_caches()
    try:
        yield d
    finally:
        plait.config.update("jax_compilation_cache_dir", None)
        plait.config.update("jax_persistent_cache_min_compile_time_secs", 1.0)
        plait.clear_caches()


def test_a_program_is_written_once_then_loaded(cache_dir: pathlib.Path) -> None:
    x = np.linspace(0.0, 1.0, 7, dtype=np.float32)
    want = np.sin(x) * np.float32(1.25) + np.cumsum(x)
    first = plait.jit(lambda x: pnp.sin(x) * 1.25 + pnp.cumsum(x))(x)
    np.testing.assert_allclose(np.asarray(first), want, rtol=1e-6)
    assert compilation_cache.stats() == {"hits": 0, "misses": 1, "writes": 1}
    assert len(list(cache_dir.iterdir())) == 1
    plait.clear_caches()  # the in-memory caches: the next call must come from disk
    before = compile_count()
    again = plait.jit(lambda x: pnp.sin(x) * 1.25 + pnp.cumsum(x))(x)
    assert compile_count() == before
    assert compilation_cache.stats()["hits"] == 1
    np.testing.assert_array_equal(np.asarray(again), np.asarray(first))


def test_other_devices_and_programs_get_their_own_entries(cache_dir: pathlib.Path) -> None:
    x = np.arange(4, dtype=np.float32)
    f = plait.jit(lambda x: x * 3.0 - 1.0)
    outs = [f(plait.device_put(x, d)) for d in plait.devices()[:2]]
    plait.jit(lambda x: x * 3.0 + 1.0)(x)
    assert len(list(cache_dir.iterdir())) == 3
    assert [o.device for o in outs] == plait.devices()[:2]
    for o in outs:
        np.testing.assert_array_equal(np.asarray(o), x * 3 - 1)


def test_sharded_programs_are_cached(cache_dir: pathlib.Path) -> None:
    mesh = plait.make_mesh((4,), ("x",))
    s = plait.NamedSharding(mesh, plait.P("x"))
    x = plait.device_put(np.arange(8, dtype=np.float32), s)
    f = plait.jit(lambda x: pnp.tanh(x) * 2.0, out_shardings=s)
    first = f(x)
    plait.clear_caches()
    again = plait.jit(lambda x: pnp.tanh(x) * 2.0, out_shardings=s)(x)
    assert compilation_cache.stats()["hits"] == 1
    assert again.sharding == first.sharding
    np.testing.assert_array_equal(np.asarray(again), np.asarray(first))


def test_fast_compilations_and_callbacks_are_not_stored(cache_dir: pathlib.Path) -> None:
    plait.config.update("jax_persistent_cache_min_compile_time_secs", 60.0)
    plait.jit(lambda x: x + 2.0)(1.0)
    plait.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
    plait.jit(lambda x: plait.pure_callback(np.cos, plait.ShapeDtypeStruct.like(x), x))(1.0)
    assert not cache_dir.exists() or not list(cache_dir.iterdir())
    plait.config.update("jax_enable_compilation_cache", False)
    try:
        plait.jit(lambda x: x + 3.0)(1.0)
        assert not cache_dir.exists()
    finally:
        plait.config.update("jax_enable_compilation_cache", True)


def test_an_unreadable_entry_is_compiled_again_and_rewritten(cache_dir: pathlib.Path) -> None:
    f = lambda x: pnp.exp(x) - 4.0  # noqa: E731
    plait.jit(f)(2.0)
    (entry,) = cache_dir.iterdir()
    entry.write_bytes(b"not an executable")
    plait.clear_caches()
    with pytest.warns(UserWarning, match="could not load .* compiling again"):
        out = plait.jit(f)(2.0)
    assert float(out) == pytest.approx(np.exp(2.0) - 4.0, rel=1e-6)
    assert entry.read_bytes() != b"not an executable"


def test_a_new_process_loads_what_another_stored(tmp_path: pathlib.Path) -> None:
    code = f"""
import plait, plait.numpy as pnp
from plait.lowering import compilation_cache
from plait.lowering.runtime import compile_count
plait.config.update("jax_compilation_cache_dir", {str(tmp_path / "c")!r})
plait.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
y = plait.jit(lambda x: pnp.sin(x) @ pnp.cos(x).T)(pnp.ones((3, 3)))
print(compile_count(), compilation_cache.stats()["hits"], float(y[0, 0]))
"""
    env = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"}
    runs = [subprocess.run([sys.executable, "-c", code], check=True, capture_output=True,
                           text=True, env=env).stdout.split() for _ in range(2)]
    assert runs[0][:2] != runs[1][:2]
    assert runs[1][0] == "0" and int(runs[1][1]) >= 1  # nothing compiled the second time
    assert runs[0][2] == runs[1][2]


def test_option_errors() -> None:
    for name, value in [("jax_compilation_cache_dir", 3),
                        ("jax_persistent_cache_min_compile_time_secs", -1.0),
                        ("jax_enable_compilation_cache", "yes"),
                        ("jax_persistent_cache_min_entry_size_bytes", 1.5)]:
        with pytest.raises(ValueError, match="invalid value .* for config option"):
            plait.config.update(name, value)

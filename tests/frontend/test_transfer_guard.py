"""Transfer guards (``plait.transfer_guard`` and its three directions) against JAX's:
for each kind of transfer and each level, whether JAX raises or logs, and whether plait
does the same; the messages, the options, and bad levels."""

from __future__ import annotations

import functools
import itertools
import logging
import subprocess
import sys
from collections.abc import Callable, Iterator
from types import ModuleType
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import plait
import plait.numpy as pnp
from plait.errors import JaxRuntimeError

LEVELS = ["allow", "log", "disallow", "log_explicit", "disallow_explicit"]
Action = Callable[[], Any]
Setup = Callable[[ModuleType, ModuleType], Action]


@functools.cache
def _fns(lib: ModuleType) -> dict[str, Any]:
    """Jitted functions, one set per library, each called once (compiled) already."""
    mesh = lib.make_mesh((8,), ("x",))
    rows = lib.sharding.NamedSharding(mesh, lib.sharding.PartitionSpec("x"))
    fns = {"double": lib.jit(lambda a: a * 2), "rows": rows,
           "shard_in": lib.jit(lambda a: a + 1, in_shardings=rows),
           "closure": lib.jit(lambda a: a + np.ones(3, np.float32))}
    x = np.arange(3.0, dtype=np.float32)
    for arg in (x, 1.0, 3, True, np.float32(1.0)):
        fns["double"](arg)
    fns["closure"](x)
    fns["shard_in"](np.arange(8.0, dtype=np.float32))
    return fns


def _arr(lib: ModuleType, num: ModuleType, dtype: str = "float32") -> Any:
    """A fresh array of 3 elements computed on the device (nothing cached on the host)."""
    return lib.jit(lambda a: a * 2)(num.arange(3).astype(dtype))


H = np.arange(3.0, dtype=np.float32)
_sizes = itertools.count(100)

# Each case: (direction, setup); setup(lib, numpy namespace) prepares outside the guard
# and returns the action run inside it.
CASES: dict[str, tuple[str, Setup]] = {
    # host to device
    "jit numpy arg": ("host_to_device", lambda L, N: lambda: _fns(L)["double"](H)),
    "jit Python float": ("host_to_device", lambda L, N: lambda: _fns(L)["double"](1.0)),
    "jit Python int": ("host_to_device", lambda L, N: lambda: _fns(L)["double"](3)),
    "jit Python bool": ("host_to_device", lambda L, N: lambda: _fns(L)["double"](True)),
    "jit NumPy scalar": ("host_to_device",
                         lambda L, N: lambda: _fns(L)["double"](np.float32(1.0))),
    "eager op numpy": ("host_to_device", lambda L, N: (lambda x: lambda: x + H)(_arr(L, N))),
    "eager op Python scalar": ("host_to_device",
                               lambda L, N: (lambda x: lambda: x + 1.0)(_arr(L, N))),
    "asarray numpy": ("host_to_device", lambda L, N: lambda: N.asarray(H)),
    "array of a list": ("host_to_device", lambda L, N: lambda: N.array([1.0, 2.0])),
    "ones": ("host_to_device", lambda L, N: lambda: N.ones(3)),
    "device_put numpy": ("host_to_device", lambda L, N: lambda: L.device_put(H)),
    "device_put scalar": ("host_to_device", lambda L, N: lambda: L.device_put(1.0)),
    "device_put array": ("host_to_device",
                         lambda L, N: (lambda x: lambda: L.device_put(x))(_arr(L, N))),
    "jit closure constant": ("host_to_device",
                             lambda L, N: (lambda x: lambda: _fns(L)["closure"](x))(_arr(L, N))),
    "jit numpy to a sharding": ("host_to_device", lambda L, N: lambda: _fns(L)["shard_in"](
        np.arange(8.0, dtype=np.float32))),
    "random key": ("host_to_device", lambda L, N: lambda: L.random.key(0)),
    "scan of a Python scalar": ("host_to_device", lambda L, N: (
        lambda x: lambda: L.lax.scan(lambda c, v: (c + v, c), 0.0, x))(_arr(L, N))),
    "make_array_from_callback": ("host_to_device", lambda L, N: lambda: (
        L.make_array_from_callback((8,), _fns(L)["rows"], lambda i: np.arange(8.0)[i]))),
    "make_array_from_process_local_data": ("host_to_device", lambda L, N: lambda: (
        L.make_array_from_process_local_data(_fns(L)["rows"], np.arange(8.0)))),
    "make_array_from_single_device_arrays": ("host_to_device", lambda L, N: (
        lambda parts: lambda: L.make_array_from_single_device_arrays(
            (8,), _fns(L)["rows"], parts))(
                [L.device_put(N.arange(1.0), d) for d in L.devices()])),
    "pure_callback": ("host_to_device", lambda L, N: (
        lambda f, x: (f(x), lambda: f(x))[1])(L.jit(lambda a: L.pure_callback(
            lambda v: np.asarray(v) * 2, L.ShapeDtypeStruct((3,), np.float32), a)),
            _arr(L, N))),
    # device to host: on the CPU only the sub-byte dtypes are copied
    "asarray": ("device_to_host", lambda L, N: (lambda x: lambda: np.asarray(x))(_arr(L, N))),
    "float": ("device_to_host", lambda L, N: (lambda x: lambda: float(x[1]))(_arr(L, N))),
    "item": ("device_to_host", lambda L, N: (lambda x: lambda: x[1].item())(_arr(L, N))),
    "tolist": ("device_to_host", lambda L, N: (lambda x: lambda: x.tolist())(_arr(L, N))),
    "repr": ("device_to_host", lambda L, N: (lambda x: lambda: repr(x))(_arr(L, N))),
    "device_get": ("device_to_host",
                   lambda L, N: (lambda x: lambda: L.device_get(x))(_arr(L, N))),
    "bfloat16 asarray": ("device_to_host", lambda L, N: (
        lambda x: lambda: np.asarray(x))(_arr(L, N, "bfloat16"))),
    "int4 asarray": ("device_to_host",
                     lambda L, N: (lambda x: lambda: np.asarray(x))(N.zeros(4, "int4"))),
    "int4 repr": ("device_to_host",
                  lambda L, N: (lambda x: lambda: repr(x))(N.zeros(4, "int4"))),
    "int4 device_get": ("device_to_host",
                        lambda L, N: (lambda x: lambda: L.device_get(x))(N.zeros(4, "int4"))),
    "int4 copy_to_host_async": ("device_to_host", lambda L, N: (
        lambda x: lambda: x.copy_to_host_async())(N.zeros(4, "int4"))),
    "uint2 asarray": ("device_to_host",
                      lambda L, N: (lambda x: lambda: np.asarray(x))(N.zeros(4, "uint2"))),
    "float4_e2m1fn item": ("device_to_host", lambda L, N: (
        lambda x: lambda: x[0].item())(N.zeros(4, "float4_e2m1fn"))),
    # device to device (eight CPU devices)
    "device_put to another device": ("device_to_device", lambda L, N: (
        lambda x: lambda: L.device_put(x, L.devices()[1]))(_arr(L, N))),
    "device_put between devices": ("device_to_device", lambda L, N: (
        lambda x: lambda: L.device_put(x, L.devices()[2]))(
            L.device_put(N.arange(3.0), L.devices()[1]))),
    "device_put to a sharding": ("device_to_device", lambda L, N: (
        lambda x: lambda: L.device_put(x, _fns(L)["rows"]))(N.arange(8.0) * 2)),
    # (JAX's cached dispatch of an operation moves its operands unguarded: a new shape
    # each time keeps JAX on its guarded path)
    "eager op on two devices": ("device_to_device", lambda L, N: (
        lambda n: (lambda x, y: lambda: x + y)(L.device_put(N.arange(n), L.devices()[1]),
                                               N.arange(n) * 2))(next(_sizes))),
    "jit in_shardings": ("device_to_device",
                         lambda L, N: (lambda x: lambda: _fns(L)["shard_in"](x))(
                             N.arange(8.0) * 2)),
    "asarray of a sharded array": ("device_to_device", lambda L, N: (
        lambda x: lambda: np.asarray(x))(L.device_put(N.arange(8.0), _fns(L)["rows"]))),
}


def _outcome(lib: ModuleType, num: ModuleType, case: str, level: str,
             capfd: pytest.CaptureFixture[str],
             caplog: pytest.LogCaptureFixture) -> tuple[bool, bool]:
    """Whether ``case`` raises a transfer guard's error under ``level``, and whether it
    logs a transfer (jaxlib logs to stderr; plait's device-to-device moves to logging)."""
    direction, setup = CASES[case]
    action = setup(lib, num)
    capfd.readouterr()
    caplog.clear()
    guard = getattr(lib, f"transfer_guard_{direction}")
    raised = False
    with caplog.at_level(logging.WARNING):
        try:
            with guard(level):
                action()
        except Exception as e:  # (a host callback's failure: each library's own type)
            if f"Disallowed {direction.replace('_', '-')} transfer" not in str(e):
                raise
            assert isinstance(e, JaxRuntimeError) or "callback" in case
            raised = True
    logged = "transfer: " in capfd.readouterr().err or \
        any("transfer: " in r.getMessage() for r in caplog.records)
    return raised, logged


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("case", list(CASES))
def test_guard_matches_jax(case: str, level: str, capfd: pytest.CaptureFixture[str],
                           caplog: pytest.LogCaptureFixture) -> None:
    expected = _outcome(jax, jnp, case, level, capfd, caplog)
    assert _outcome(plait, pnp, case, level, capfd, caplog) == expected


@pytest.fixture
def restore_options() -> Iterator[None]:
    names = ["transfer_guard", "transfer_guard_host_to_device",
             "transfer_guard_device_to_host", "transfer_guard_device_to_device"]
    saved = [plait.config.read(n) for n in names]
    yield
    for n, v in zip(names, saved):
        plait.config.update(n, v)


def test_messages_name_the_transfer_the_type_and_what_to_do() -> None:
    f = plait.jit(lambda a: a * 2)
    with plait.transfer_guard("disallow"), pytest.raises(
            JaxRuntimeError, match=r"Disallowed host-to-device transfer: aval=ShapedArray\("
                                   r"float32\[3\]\).*transfer explicitly with plait.device_put"):
        f(H)
    with plait.transfer_guard("disallow_explicit"), pytest.raises(
            JaxRuntimeError, match=r"host-to-device.*'disallow_explicit' here, which refuses "
                                   r"explicit transfers too"):
        plait.device_put(H)
    x = pnp.zeros(4, "int4")
    with plait.transfer_guard_device_to_host("disallow"), pytest.raises(
            JaxRuntimeError, match=r"Disallowed device-to-host transfer.*plait.device_get"):
        np.asarray(x)
    y = plait.device_put(pnp.arange(3.0), plait.devices()[1])
    with plait.transfer_guard_device_to_device("disallow"), pytest.raises(
            JaxRuntimeError, match=r"Disallowed device-to-device transfer: aval=ShapedArray\("
                                   r"float32\[3\]\), sharding=.*id=0.*dst_sharding=.*id=1"):
        y + pnp.arange(3.0)


def test_device_to_device_moves_log_to_plait_logger(caplog: pytest.LogCaptureFixture) -> None:
    x = pnp.arange(3.0) * 2
    with caplog.at_level(logging.WARNING, "plait.transfer_guard"), \
            plait.transfer_guard_device_to_device("log_explicit"):
        plait.device_put(x, plait.devices()[1])
    (record,) = caplog.records
    assert record.name == "plait.transfer_guard" and record.levelno == logging.WARNING
    assert record.getMessage().startswith("device-to-device transfer: aval=ShapedArray(float32")


@pytest.mark.usefixtures("restore_options")
def test_transfer_guard_option_sets_the_three_directions() -> None:
    plait.config.update("jax_transfer_guard", "log")
    assert [plait.config.read(f"jax_transfer_guard_{d}") for d in
            ("host_to_device", "device_to_host", "device_to_device")] == ["log"] * 3
    assert plait.config.jax_transfer_guard == "log"
    plait.config.update("jax_transfer_guard_host_to_device", "disallow")
    with plait.transfer_guard("allow"):
        assert plait.config.jax_transfer_guard_host_to_device == "allow"
        assert plait.config.jax_transfer_guard_device_to_host == "allow"
    # (each direction gets its own value back, as with JAX's)
    assert plait.config.jax_transfer_guard_host_to_device == "disallow"
    assert plait.config.jax_transfer_guard_device_to_host == "log"
    with pytest.raises(JaxRuntimeError, match="host-to-device"):
        pnp.asarray(H)


@pytest.mark.usefixtures("restore_options")
def test_option_set_globally_guards_like_jax() -> None:
    f = plait.jit(lambda a: a + 1)
    f(H)
    plait.config.update("jax_transfer_guard_host_to_device", "disallow")
    with pytest.raises(JaxRuntimeError, match="host-to-device"):
        f(H)
    plait.device_put(H)  # (explicit)
    plait.config.update("jax_transfer_guard_host_to_device", None)
    f(H)


@pytest.mark.parametrize("name", ["transfer_guard", "transfer_guard_host_to_device",
                                  "transfer_guard_device_to_host",
                                  "transfer_guard_device_to_device"])
def test_bad_level(name: str) -> None:
    with pytest.raises(ValueError) as jax_error, getattr(jax, name)("sometimes"):
        pass
    assert "'allow', 'log', 'disallow', 'log_explicit', 'disallow_explicit'" in \
        str(jax_error.value)
    allowed = r"expected None or one of \['allow', 'log', 'disallow', 'log_explicit', " \
              r"'disallow_explicit'\] for config option '" + name + r"', but got 'sometimes'"
    with pytest.raises(ValueError, match=allowed), getattr(plait, name)("sometimes"):
        pass
    with pytest.raises(ValueError, match=allowed):
        plait.config.update(f"jax_{name}", "sometimes")


def test_levels_none_and_allow_change_nothing() -> None:
    f = plait.jit(lambda a: a * 3)
    for level in (None, "allow"):
        with plait.transfer_guard(level):
            np.testing.assert_array_equal(np.asarray(f(H)), H * 3)
            np.testing.assert_array_equal(plait.device_get(pnp.asarray(H) + 1.0), H + 1)


def test_guarded_transfers_do_not_import_jax() -> None:
    # jaxlib imports jax to copy a buffer to the host unless plait prevents it.
    script = """if True:
        import sys
        import numpy as np
        import plait, plait.numpy as pnp
        from plait.errors import JaxRuntimeError
        (pnp.arange(3.0) + 1).copy_to_host_async()
        codes = pnp.zeros(4, "int4")
        codes.copy_to_host_async()
        with plait.transfer_guard("disallow"):
            try:
                np.asarray(pnp.zeros(4, "int4"))
            except JaxRuntimeError:
                pass
            plait.device_get(codes)
        assert "jax" not in sys.modules, sorted(m for m in sys.modules if "jax" in m)
    """
    subprocess.run([sys.executable, "-c", script], check=True, timeout=120)

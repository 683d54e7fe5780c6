"""``no_tracing``, ``no_execution``, ``array_garbage_collection_guard`` and
``thread_guard``, against JAX's (the transfer guards: test_transfer_guard.py)."""

from __future__ import annotations

import gc
import os
import socket
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import plait
import plait.numpy as pnp
from plait.errors import JaxRuntimeError

Setup = Callable[[ModuleType, ModuleType], Callable[[], Any]]


def _warm(fn: Callable[[], Any]) -> Callable[[], Any]:
    fn()
    return fn


def _jitted(lib: ModuleType, num: ModuleType) -> Callable[[], Any]:
    f = lib.jit(lambda a: a * 2)
    x = num.arange(3.0)
    return _warm(lambda: f(x))


def _new_shape(lib: ModuleType, num: ModuleType) -> Callable[[], Any]:
    f = lib.jit(lambda a: a * 2)
    f(num.arange(3.0))
    return lambda: f(num.ones(4))


def _compiled_call(lib: ModuleType, num: ModuleType) -> Callable[[], Any]:
    x = num.arange(3.0)
    compiled = lib.jit(lambda a: a - 1).lower(x).compile()
    return lambda: compiled(x)


CASES: dict[str, Setup] = {
    "cached jit call": _jitted,
    "jit call of new shapes": _new_shape,
    "new jitted function": lambda L, N: (lambda x: lambda: L.jit(lambda a: a + 1)(x))(
        N.arange(3.0)),
    "jit of a new Python scalar type": lambda L, N: (lambda f: (f(N.arange(3.0)),
                                                                lambda: f(1.0))[1])(
        L.jit(lambda a: a * 2)),
    "eager op": lambda L, N: (lambda x: lambda: x * x)(N.arange(3.0)),
    "grad": lambda L, N: (lambda x: lambda: L.grad(lambda a: N.sum(a * a))(x))(N.arange(3.0)),
    "vmap": lambda L, N: (lambda x: lambda: L.vmap(lambda a: a * 2)(x))(N.arange(3.0)),
    "cond": lambda L, N: lambda: L.lax.cond(True, lambda: 1.0, lambda: 2.0),
    "new make_jaxpr": lambda L, N: (lambda x: lambda: L.make_jaxpr(lambda a: a + 1)(x))(
        N.arange(3.0)),
    "eval_shape": lambda L, N: (lambda x: lambda: L.eval_shape(lambda a: a + 1, x))(
        N.arange(3.0)),
    "lower": lambda L, N: (lambda x: lambda: L.jit(lambda a: a - 1).lower(x))(N.arange(3.0)),
    "compiled call": _compiled_call,
    "device_put": lambda L, N: lambda: L.device_put(np.ones(3, np.float32)),
    "asarray": lambda L, N: (lambda x: lambda: np.asarray(x))(N.arange(3.0) * 2),
}


def _raises(lib: ModuleType, num: ModuleType, context: str, case: str) -> str | None:
    action = CASES[case](lib, num)
    try:
        with getattr(lib, context)(True):
            action()
    except RuntimeError as e:
        return str(e)
    return None


# JAX runs eager operations as jitted programs (traced on their first use), and its grad
# and vmap trace them; plait runs primitives without tracing, and its grad and vmap trace
# the function once (raising too): the rows where the two agree are compared.
_NO_TRACING_DIFFERENT = {"eager op"}


@pytest.mark.parametrize("case", [c for c in CASES if c not in _NO_TRACING_DIFFERENT])
def test_no_tracing_matches_jax(case: str) -> None:
    expected = _raises(jax, jnp, "no_tracing", case)
    got = _raises(plait, pnp, "no_tracing", case)
    assert (got is None) == (expected is None), (got, expected)
    if got is not None:
        assert "re-tracing function" in got and "but 'no_tracing' is set" in got


def test_no_tracing_eager_operations_run() -> None:
    # (JAX traces an eager operation the first time it runs: plait never does.)
    x = pnp.arange(3.0)
    with plait.no_tracing():
        np.testing.assert_array_equal(np.asarray(x * x), np.arange(3.0) ** 2)


def test_no_tracing_message_names_function_and_purpose() -> None:
    def step(a: Any) -> Any:
        return a + 1

    with plait.no_tracing(), pytest.raises(
            RuntimeError, match=r"re-tracing function step for `jit`, but 'no_tracing' is set"
                                r".*trace it outside the plait.no_tracing block first"):
        plait.jit(step)(pnp.ones(2))


@pytest.mark.parametrize("case", list(CASES))
def test_no_execution_matches_jax(case: str) -> None:
    expected = _raises(jax, jnp, "no_execution", case)
    got = _raises(plait, pnp, "no_execution", case)
    assert (got is None) == (expected is None), (got, expected)
    if got is not None:
        assert "tried to execute function" in got
        assert "but the no_execution config option is set" in got


def test_no_execution_message_names_the_program() -> None:
    f = plait.jit(lambda a: a + 1)
    x = pnp.ones(2)
    f(x)
    with plait.no_execution(), pytest.raises(
            RuntimeError, match=r"plait tried to execute function jit\(<lambda>\), but the "
                                r"no_execution config option is set: leave"):
        f(x)
    with plait.no_execution(), pytest.raises(RuntimeError, match=r"function jit\(sin\)"):
        pnp.sin(x)
    np.testing.assert_allclose(np.asarray(f(x)), 2.0)  # (the fast path works again after)


def test_options_read_and_set() -> None:
    for name in ("jax_no_tracing", "jax_no_execution", "jax_thread_guard"):
        assert getattr(plait.config, name) is getattr(jax.config, name) is False
        with pytest.raises(ValueError, match=f"invalid value 1 for config option "
                                             f"'{name[4:]}'"):
            plait.config.update(name, 1)
    assert plait.config.jax_array_garbage_collection_guard is None


class _Box:
    self: Any
    x: Any


def _cycle(x: Any) -> None:
    b = _Box()
    b.self, b.x = b, x


def _gc_log(lib: ModuleType, num: ModuleType, level: str,
            capfd: pytest.CaptureFixture[str]) -> bool:
    """Whether an array freed by the cycle collector under ``level`` is reported."""
    gc.collect()
    capfd.readouterr()
    with lib.array_garbage_collection_guard(level):
        _cycle(num.arange(3.0) + 1)
        freed = num.arange(3.0) + 1
        del freed  # (by reference counting: never reported)
        gc.collect()
    return "was deleted by the Python garbage collector" in capfd.readouterr().err


@pytest.mark.parametrize("level", ["allow", "log"])
def test_array_garbage_collection_guard_matches_jax(
        level: str, capfd: pytest.CaptureFixture[str]) -> None:
    expected = _gc_log(jax, jnp, level, capfd)
    assert _gc_log(plait, pnp, level, capfd) == expected == (level == "log")


def test_array_garbage_collection_guard_bad_level() -> None:
    with pytest.raises(ValueError, match=r"'allow', 'log', 'fatal'"):
        jax.array_garbage_collection_guard("loud")
    with pytest.raises(ValueError, match=r"expected None or one of \['allow', 'log', 'fatal'\] "
                                         r"for config option 'array_garbage_collection_guard', "
                                         r"but got 'loud'"):
        plait.array_garbage_collection_guard("loud")


def _thread_guard_in_two_threads(lib: ModuleType, num: ModuleType) -> list[Any]:
    """What a second thread sees: entering the guard while this thread holds it, and a
    computation (a single process: allowed)."""
    seen: list[Any] = []

    def other() -> None:
        try:
            with lib.thread_guard(True):
                seen.append("entered")
        except JaxRuntimeError as e:
            seen.append(str(e))
        seen.append(float(lib.jit(lambda a: a + 1)(num.float32(1.0))))

    with lib.thread_guard(True):
        t = threading.Thread(target=other)
        t.start()
        t.join()
    t = threading.Thread(target=other)  # (the guard released: the other thread may take it)
    t.start()
    t.join()
    return seen


def test_thread_guard_matches_jax() -> None:
    expected = _thread_guard_in_two_threads(jax, jnp)
    assert "Nested thread guards in different threads are not supported" in expected[0]
    assert _thread_guard_in_two_threads(plait, pnp) == expected


# Each of two processes (two CPU devices each) runs a program over all four devices, then
# the same from a second thread while the first holds the thread guard.
_THREAD_GUARD_CHILD = r"""
import os, sys, threading
import numpy as np
import plait, plait.numpy as pnp
from plait.sharding import NamedSharding, PartitionSpec as P
pid, port = int(sys.argv[1]), sys.argv[2]
plait.distributed.initialize(f"127.0.0.1:{port}", 2, pid, local_device_count=2)
mesh = plait.make_mesh((4,), ("i",))
x = plait.make_array_from_process_local_data(NamedSharding(mesh, P("i")),
                                             np.arange(2, dtype=np.float32) + 2 * pid)
total = plait.jit(pnp.sum, out_shardings=NamedSharding(mesh, P()))
total(x)
seen = []
def other():
    try:
        total(x).block_until_ready()
        seen.append("ran")
    except Exception as e:
        seen.append(str(e))
with plait.thread_guard():
    total(x)
    t = threading.Thread(target=other)
    t.start()
    t.join()
print(seen[0], flush=True)
os._exit(0)
"""


def test_thread_guard_refuses_other_threads_in_a_multi_process_run(tmp_path: Path) -> None:
    # (jaxlib's check, which JAX's thread_guard turns on too, with this message)
    script = tmp_path / "child.py"
    script.write_text(_THREAD_GUARD_CHILD)
    env = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"}
    env["TF_CPP_MIN_LOG_LEVEL"] = "2"
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = str(sock.getsockname()[1])
    children = [subprocess.Popen([sys.executable, str(script), str(pid), port], env=env,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                for pid in (0, 1)]
    try:
        outputs = [c.communicate(timeout=120) for c in children]
    finally:
        for c in children:
            c.kill()
    for c, (out, err) in zip(children, outputs):
        assert c.returncode == 0, err[-3000:]
        assert "A multi-process JAX operation was called from thread" in out, out
        assert "because the thread guard was set in thread" in out

"""JAX's option context managers ``enable_checks``, ``allow_f16_reductions``,
``softmax_custom_jvp``, ``remove_size_one_mesh_axis_from_type``, ``auto_pcast`` and
``jax2tf_associative_scan_reductions``, against JAX's."""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import plait
import plait.numpy as pnp


def test_enable_checks_is_check_jaxprs() -> None:
    saved = plait.config.read("check_jaxprs")
    try:
        plait.config.update("jax_enable_checks", False)
        assert plait.config.read("check_jaxprs") is plait.config.jax_enable_checks is False
        with plait.enable_checks(True):
            assert plait.config.read("check_jaxprs") is True
            assert plait.config.jax_enable_checks is True
        assert plait.config.read("check_jaxprs") is False
        plait.config.update("check_jaxprs", True)
        assert plait.config.jax_enable_checks is True
    finally:
        plait.config.update("check_jaxprs", saved)


F16_CASES: dict[str, Callable[[ModuleType, ModuleType], Any]] = {
    "lax.reduce_sum f16": lambda L, N: L.lax.reduce_sum(N.ones((4, 3), N.float16), (0,)),
    "lax.reduce_sum bf16 all": lambda L, N: L.lax.reduce_sum(N.ones((4, 3), N.bfloat16),
                                                             (0, 1)),
    "lax.reduce_sum size-1 axis": lambda L, N: L.lax.reduce_sum(N.ones((1, 3), N.float16),
                                                                (0,)),
    "lax.reduce_sum f32": lambda L, N: L.lax.reduce_sum(N.ones((4, 3)), (0,)),
    "numpy sum f16": lambda L, N: N.sum(N.ones((4, 3), N.float16)),
    "numpy mean bf16": lambda L, N: N.mean(N.ones((4, 3), N.bfloat16), axis=0),
    "make_jaxpr": lambda L, N: L.make_jaxpr(lambda a: L.lax.reduce_sum(a, (1,)))(
        N.ones((4, 3), N.float16)),
    "jit": lambda L, N: L.jit(lambda a: L.lax.reduce_sum(a, (1,)))(N.ones((2, 5), N.float16)),
}


def _f16_outcome(lib: ModuleType, num: ModuleType, allow: bool, case: str) -> str | None:
    try:
        with lib.allow_f16_reductions(allow):
            F16_CASES[case](lib, num)
    except ValueError as e:
        return str(e)
    return None


@pytest.mark.parametrize("allow", [True, False])
@pytest.mark.parametrize("case", list(F16_CASES))
def test_allow_f16_reductions_matches_jax(case: str, allow: bool) -> None:
    expected = _f16_outcome(jax, jnp, allow, case)
    got = _f16_outcome(plait, pnp, allow, case)
    assert (got is None) == (expected is None), (got, expected)
    if got is not None:
        assert expected is not None and got.startswith(expected.rstrip("."))
        assert "plait.allow_f16_reductions(True)" in got


def test_allow_f16_reductions_applies_to_cached_programs() -> None:
    f = plait.jit(lambda a: plait.lax.reduce_sum(a, (0,)))
    x = pnp.ones((4, 3), pnp.float16)
    f(x)
    plait.lax.reduce_sum(x, (0,))
    with plait.allow_f16_reductions(False):
        with pytest.raises(ValueError, match=r"reduce_sum on operand f16\[4,3\]"):
            f(x)
        with pytest.raises(ValueError, match=r"reduce_sum on operand f16\[4,3\]"):
            plait.lax.reduce_sum(x, (0,))
    np.testing.assert_array_equal(np.asarray(f(x)), np.full(3, 4, np.float16))


X = np.array([[1.0, 2.0, 3.5], [0.1, -2.0, 30.0]], np.float32)
W = np.array([[0.3, -1.0, 2.0], [1.0, 0.5, -0.25]], np.float32)


def _softmax_derivatives(lib: ModuleType, num: ModuleType, mode: bool) -> list[np.ndarray]:
    with lib.softmax_custom_jvp(mode):
        grad = lib.grad(lambda a: num.sum(lib.nn.softmax(a) * W))(X)
        jac = lib.jacfwd(lambda a: lib.nn.softmax(a, where=a > 0.5))(X)
        jitted = lib.jit(lib.grad(lambda a: num.sum(lib.nn.softmax(a, axis=0) * W)))(X)
    return [np.asarray(grad), np.asarray(jac), np.asarray(jitted)]


@pytest.mark.parametrize("mode", [False, True])
def test_softmax_custom_jvp_matches_jax(mode: bool) -> None:
    for got, expected in zip(_softmax_derivatives(plait, pnp, mode),
                             _softmax_derivatives(jax, jnp, mode), strict=True):
        np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-7)


def test_softmax_custom_jvp_retraces() -> None:
    # The option is part of the trace key: a program traced without it is not reused.
    f = plait.jit(plait.grad(lambda a: pnp.sum(plait.nn.softmax(a) * W)))
    off = plait.make_jaxpr(f)(X)
    with plait.softmax_custom_jvp(True):
        on = plait.make_jaxpr(f)(X)
    assert str(on) != str(off)


def _size_one_types(lib: ModuleType, num: ModuleType) -> list[str]:
    sharding = lib.sharding
    mesh = lib.make_mesh((4, 1), ("x", "y"),
                         axis_types=(sharding.AxisType.Explicit,) * 2)
    spec = sharding.NamedSharding(mesh, sharding.PartitionSpec("x", "y"))
    host = np.arange(8.0, dtype=np.float32).reshape(4, 2)
    before = lib.device_put(host, spec)
    with lib.remove_size_one_mesh_axis_from_type(True):
        x = lib.device_put(host, spec)
        y = x * 2
        with lib.set_mesh(mesh):
            text = str(lib.make_jaxpr(lambda a: a * 2)(x))
        inside = [str(lib.typeof(x)), str(lib.typeof(y)), str(y.sharding.spec), text]
    return [str(lib.typeof(before)), *inside, str(lib.typeof(y))]


def test_remove_size_one_mesh_axis_from_type_matches_jax() -> None:
    assert _size_one_types(plait, pnp) == _size_one_types(jax, jnp)


@pytest.mark.parametrize("name", ["auto_pcast", "jax2tf_associative_scan_reductions"])
@pytest.mark.parametrize("value", [False, True])
def test_accepted_options_change_nothing(name: str, value: bool) -> None:
    option = name if name.startswith("jax2tf") else f"jax_{name}"
    assert getattr(plait.config, option) is getattr(jax.config, option)
    f = plait.jit(lambda a: pnp.cumsum(a) * 2)
    expected = np.asarray(f(X))
    with getattr(plait, name)(value):
        assert plait.config.read(option) is value
        np.testing.assert_array_equal(np.asarray(f(X)), expected)
    with getattr(jax, name)(value):
        np.testing.assert_array_equal(np.asarray(jax.jit(lambda a: jnp.cumsum(a) * 2)(X)),
                                      expected)


def test_x64_enabled_reads_as_jaxs() -> None:
    # (jaxopt and jax-md read jax.config.x64_enabled.)
    flag = "x64_enabled"  # (an attribute JAX's Config type does not declare)
    assert plait.config.x64_enabled is getattr(jax.config, flag) is False
    with plait.enable_x64(), jax.enable_x64():
        assert plait.config.x64_enabled is getattr(jax.config, flag) is True


def test_command_line_flags_are_parsed_as_jaxs(monkeypatch: pytest.MonkeyPatch) -> None:
    # (flax's tests call jax.config.parse_flags_with_absl() at import)
    saved = plait.config.read("jax_enable_x64"), plait.config.read("jax_debug_nans")
    try:
        monkeypatch.setattr("sys.argv", ["prog", "--jax_enable_x64", "--nojax_debug_nans",
                                         "--jax_not_a_plait_option=3", "--other", "--",
                                         "--jax_debug_nans"])
        plait.config.parse_flags_with_absl()
        assert plait.config.read("jax_enable_x64") is True
        assert plait.config.read("jax_debug_nans") is False
        monkeypatch.setattr("sys.argv", ["prog", "--jax_enable_x64=false"])
        plait.config.config_with_absl()
        assert plait.config.read("jax_enable_x64") is False
        monkeypatch.setattr("sys.argv", ["prog", "--jax_enable_x64=maybe"])
        with pytest.raises(ValueError, match="expected true or false, but got 'maybe'"):
            plait.config.parse_flags_with_absl()
    finally:
        plait.config.update("jax_enable_x64", saved[0])
        plait.config.update("jax_debug_nans", saved[1])

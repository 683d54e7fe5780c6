"""Eager elementwise operations through jaxlib's C++ dispatcher, and computations
following their data onto the device it was placed on.

The oracles are JAX 0.10.2 and NumPy.  Whether a call left C++ is observed by
counting calls of plait's eager implementation (the Python path).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import plait
import plait.numpy as pnp
from plait.errors import ArgumentError
from plait.frontend.core import tracing


@pytest.fixture
def eager_calls(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """The primitive names of every eager application that ran through Python."""
    calls: list[str] = []
    original = tracing._eager_impl
    assert original is not None

    def spy(prim: Any, args: Any, params: Any) -> Any:
        calls.append(prim.name)
        return original(prim, args, params)

    monkeypatch.setattr(tracing, "_eager_impl", spy)
    yield calls


UNARY = ["sin", "cos", "tanh", "exp", "log1p", "sqrt", "negative", "abs", "floor", "sign"]
BINARY = ["add", "subtract", "multiply", "true_divide", "maximum", "minimum", "arctan2"]
DTYPES = [np.float32, np.int32, np.float16]


def _same(ours: Any, theirs: Any) -> None:
    assert (ours.dtype, ours.shape, ours.weak_type) == (theirs.dtype, theirs.shape,
                                                        theirs.weak_type)
    np.testing.assert_allclose(np.asarray(ours), np.asarray(theirs), rtol=2e-3, atol=1e-6)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", UNARY)
def test_unary_repeated_calls_match_jax(name: str, dtype: Any) -> None:
    v = np.array([0.5, 2.0, 3.5], dtype)
    x, jx = pnp.asarray(v), jnp.asarray(v)
    for _ in range(3):  # the first call caches the signature, the others hit it
        _same(getattr(pnp, name)(x), getattr(jnp, name)(jx))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", BINARY)
def test_binary_repeated_calls_match_jax(name: str, dtype: Any) -> None:
    a, b = np.array([1, 5, 3], dtype), np.array([2, 2, 7], dtype)
    for x, y, jx, jy in [(pnp.asarray(a), pnp.asarray(b), jnp.asarray(a), jnp.asarray(b)),
                         (pnp.asarray(a), pnp.asarray(b[0]), jnp.asarray(a), jnp.asarray(b[0])),
                         (pnp.asarray(2.0), pnp.asarray(a), jnp.asarray(2.0), jnp.asarray(a))]:
        for _ in range(3):
            _same(getattr(pnp, name)(x, y), getattr(jnp, name)(jx, jy))


def test_a_repeated_call_stays_in_cpp(eager_calls: list[str]) -> None:
    x = pnp.asarray(np.linspace(0.0, 1.0, 5, dtype=np.float32))
    y = pnp.asarray(np.ones(5, np.float32))
    for _ in range(3):
        pnp.sin(x)
        x * y  # noqa: B018 (the operator: pnp.multiply)
        pnp.add(x, y)
    assert eager_calls.count("sin") == 1 and eager_calls.count("mul") == 1
    assert eager_calls.count("add") == 1
    i = pnp.asarray(np.arange(5, dtype=np.int32))
    for _ in range(3):
        pnp.sin(i)  # promoted to float first: not one primitive on its operand
        x + i  # noqa: B018
    assert eager_calls.count("sin") == 4 and eager_calls.count("convert_element_type") >= 6


def test_nan_checks_apply_to_cached_signatures() -> None:
    x = pnp.asarray(np.array([-1.0, 1.0], np.float32))
    for _ in range(3):
        pnp.log(x)  # cached with checks off
    with plait.debug_nans(True):
        with pytest.raises(FloatingPointError):
            pnp.log(x)
    assert np.isnan(np.asarray(pnp.log(x))[0])


def test_x64_switch_is_part_of_the_key() -> None:
    x = pnp.asarray(np.ones(2, np.float32))
    for _ in range(2):
        assert pnp.sin(x).dtype == np.float32
    with plait.enable_x64(True):
        y = pnp.asarray(np.ones(2))
        assert pnp.sin(y).dtype == np.float64 and pnp.sin(x).dtype == np.float32
    assert pnp.asarray(np.ones(2)).dtype == np.float32


def test_a_donated_array_is_refused_with_plait_message() -> None:
    x = pnp.asarray(np.ones(3, np.float32))
    for _ in range(2):
        pnp.sin(x)
    plait.jit(lambda a: a * 2.0, donate_argnums=0)(x)
    with pytest.raises(RuntimeError, match="donated to a jitted call"):
        pnp.sin(x)
    with pytest.raises(RuntimeError, match="donated to a jitted call"):
        pnp.add(x, x)


def test_concrete_operands_inside_a_trace_are_staged() -> None:
    c = pnp.asarray(np.arange(3, dtype=np.float32))
    pnp.sin(c), pnp.sin(c)  # cached eagerly first
    ours = plait.make_jaxpr(lambda a: pnp.sin(c) + a)(np.ones(3, np.float32))
    jc = jnp.arange(3, dtype=np.float32)
    theirs = jax.make_jaxpr(lambda a: jnp.sin(jc) + a)(np.ones(3, np.float32))
    assert str(ours) == str(theirs)


# -- computation follows data -------------------------------------------------------

def _device_of(x: Any) -> int:
    return int(next(iter(x.sharding.device_set)).id)


def test_jit_eager_and_grad_run_where_the_data_is(eager_calls: list[str]) -> None:
    v = np.array([1.0, 2.0, 3.0], np.float32)
    ours = plait.device_put(v, plait.devices()[3])
    theirs = jax.device_put(v, jax.devices()[3])
    other, j_other = pnp.asarray(v), jnp.asarray(v)  # on the default device
    f, g = plait.jit(lambda a, b, s: a * s + b), jax.jit(lambda a, b, s: a * s + b)
    for _ in range(3):
        r, jr = f(ours, other, 2.0), g(theirs, j_other, 2.0)
        _same(r, jr)
        assert _device_of(r) == _device_of(jr) == 3
    for fn in (pnp.sin, lambda a: a + other, lambda a: a * 2.0):
        r = fn(ours)
        assert _device_of(r) == 3
        np.testing.assert_allclose(np.asarray(r), np.asarray(fn(other)))
    dg = plait.grad(lambda a: (a ** 2).sum())(ours)
    assert _device_of(dg) == 3
    np.testing.assert_allclose(np.asarray(dg), 2 * v)


def test_repeated_calls_on_another_device_stay_in_cpp_and_there(eager_calls: list[str]
                                                                ) -> None:
    v = np.linspace(0.5, 2.0, 6, dtype=np.float32)
    x, y = (plait.device_put(a, plait.devices()[2]) for a in (v, v[::-1].copy()))
    jx, jy = (jax.device_put(a, jax.devices()[2]) for a in (v, v[::-1].copy()))
    for _ in range(3):
        r, s = pnp.sin(x), pnp.multiply(x, y)
        _same(r, jnp.sin(jx))
        _same(s, jnp.multiply(jx, jy))
        assert _device_of(r) == _device_of(s) == _device_of(jnp.sin(jx)) == 2
    assert eager_calls.count("sin") == 1 and eager_calls.count("mul") == 1
    d = pnp.asarray(v)  # the default device: its own entries, its own device
    for _ in range(2):
        assert _device_of(pnp.sin(d)) == 0
    assert eager_calls.count("sin") == 2


def test_arrays_on_two_devices_are_refused() -> None:
    a = plait.device_put(np.ones(2, np.float32), plait.devices()[1])
    b = plait.device_put(np.ones(2, np.float32), plait.devices()[2])
    msg = "arrays on cpu:1 and on cpu:2: move them to one device"
    with pytest.raises(ArgumentError, match=msg):
        plait.jit(lambda x, y: x + y)(a, b)
    with pytest.raises(ArgumentError, match=msg):
        a + b  # noqa: B018

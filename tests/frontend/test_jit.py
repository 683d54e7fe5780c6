"""jit, its caches, the AOT stages (seed 004) and eager execution, against JAX."""

from __future__ import annotations

import logging
import re
import subprocess
import sys
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import plait
import plait.numpy as pnp
from plait import errors
from plait.lowering import compile_count


def f(x, y):
    return 2 * x + y


def _ops(text: str) -> list[str]:
    return sorted(re.findall(r"\b(?:stablehlo|chlo|func)\.[a-z_]+|\bcall\b|\breturn\b", text))


def test_seed_aot_example_matches_jax() -> None:
    traced = plait.jit(f).trace(3, 4)
    assert str(traced.jaxpr) == str(jax.jit(f).trace(3, 4).jaxpr)
    lowered = traced.lower()
    text = lowered.as_text()
    jax_text = jax.jit(f).lower(3, 4).as_text()
    assert text == jax_text
    assert _ops(text) == _ops(jax_text)
    compiled = lowered.compile()
    assert compiled.cost_analysis()["flops"] == 2.0
    out = compiled(3, 4)
    assert int(out) == 10 and out.dtype == np.int32 and out.weak_type
    assert repr(out) == "Array(10, dtype=int32, weak_type=True)"


def test_static_argnums_fold_into_the_module() -> None:
    lowered = plait.jit(f, static_argnums=0).trace(7, 8).lower()
    assert lowered.as_text() == jax.jit(f, static_argnums=0).lower(7, 8).as_text()
    assert "dense<14>" in lowered.as_text()
    assert int(lowered.compile()(5)) == 19
    i32 = plait.ShapeDtypeStruct((), np.dtype("int32"))
    assert int(plait.jit(f, static_argnums=0).trace(10, i32).lower().compile()(5)) == 25


def test_shape_dtype_struct_signature_and_mismatch_errors() -> None:
    i32 = plait.ShapeDtypeStruct((), np.dtype("int32"))
    compiled = plait.jit(f).trace(i32, i32).lower().compile()
    out = compiled(3, 4)
    assert repr(out) == "Array(10, dtype=int32)"
    with pytest.raises(TypeError) as info:
        compiled(pnp.arange(3), pnp.arange(3))
    assert str(info.value) == (
        "Argument types differ from the types for which this computation was compiled. "
        "The mismatches are:\n"
        "Argument 'x' compiled with int32[] and called with int32[3]\n"
        "Argument 'y' compiled with int32[] and called with int32[3]")
    with pytest.raises(TypeError, match="Argument 'x' compiled with int32\\[\\] and called with "
                                        "float32\\[\\]"):
        compiled(np.float32(72.0), np.float32(72.0))


def test_compiled_refuses_tracers() -> None:
    z = pnp.arange(6.0).reshape(3, 2)
    g_aot = plait.jit(lambda x: x @ pnp.ones(2)).trace(z).lower().compile()
    with pytest.raises(TypeError, match="Cannot apply transformations to a function lowered and "
                                        "compiled for a particular signature. Detected argument "
                                        "of Tracer type"):
        plait.make_jaxpr(g_aot)(z)


def test_retracing_an_equal_program_compiles_once() -> None:
    def g(x):
        return pnp.tanh(x) * 7.25 - x

    x = pnp.ones(5)
    before = compile_count()
    plait.jit(g)(x)
    plait.jit(g)(x)  # a new wrapper: traces again, same structure, no compile
    plait.jit(lambda x: pnp.tanh(x) * 7.25 - x)(x)
    assert compile_count() == before + 1


def test_trace_cache_hits_and_keys() -> None:
    calls = []

    def g(x, n):
        calls.append(1)
        return x * n

    jg = plait.jit(g, static_argnums=1)
    jg(pnp.ones(3), 2)
    jg(pnp.ones(3), 2)
    assert len(calls) == 1
    jg(pnp.ones(4), 2)
    jg(pnp.ones(3), 3)
    jg(1.0, 2)
    assert len(calls) == 4


def test_explain_cache_misses(caplog: pytest.LogCaptureFixture) -> None:
    def h(x, scale):
        return x * scale

    jh = plait.jit(h, static_argnames="scale")
    plait.config.update("explain_cache_misses", True)
    try:
        with caplog.at_level(logging.WARNING, logger="plait.cache"):
            jh(pnp.ones(3), scale=2.0)
            jh(pnp.ones(4), scale=2.0)
            jh(pnp.ones(4, dtype=np.int32), scale=2.0)
            jh(pnp.ones(4, dtype=np.int32), scale=3.0)
    finally:
        plait.config.update("explain_cache_misses", False)
    text = caplog.text
    assert "trace cache miss for jit(h): first call" in text
    assert "x: shape changed from float32[3] to float32[4]" in text
    assert "x: dtype changed from float32 to int32" in text
    assert "static argument 'scale' changed from 2.0 to 3.0" in text
    assert "executable cache miss: compiling h" in text


def test_jit_inside_a_trace_stages_a_call_printed_like_jax() -> None:
    def func12(arg, np_, jit_):
        @jit_
        def inner(x):
            return x + arg * np_.ones(1)
        return arg + inner(arg - 2.0)

    ours = plait.make_jaxpr(lambda a: func12(a, pnp, plait.jit))(1.0)
    theirs = jax.make_jaxpr(lambda a: func12(a, jnp, jax.jit))(1.0)
    assert str(ours) == str(theirs)
    lowered = plait.jit(lambda a: func12(a, pnp, plait.jit)).lower(1.0).as_text()
    expected = jax.jit(lambda a: func12(a, jnp, jax.jit)).lower(1.0).as_text()
    # The same kinds of ops; plait emits no stablehlo.convert for a cast that only
    # drops the weak type (JAX emits a no-op convert for it).
    assert set(_ops(lowered)) == set(_ops(expected)) - {"stablehlo.convert"}
    np.testing.assert_allclose(np.asarray(plait.jit(lambda a: func12(a, pnp, plait.jit))(1.0)),
                               np.asarray(jax.jit(lambda a: func12(a, jnp, jax.jit))(1.0)))


def test_eager_equals_jit_bit_for_bit() -> None:
    rng = np.random.default_rng(0)
    x = pnp.asarray(rng.normal(size=(4, 5)).astype(np.float32))

    def g(x):
        return pnp.sum(pnp.exp(pnp.sin(x) * 1.7) / (1 + x * x), axis=0) + pnp.tanh(x)[0]

    eager = np.asarray(g(x))
    jitted = np.asarray(plait.jit(g)(x))
    assert eager.tobytes() == jitted.tobytes()


def test_donated_arguments_are_deleted() -> None:
    x = pnp.ones(4)
    out = plait.jit(lambda a: a * 2.0, donate_argnums=0)(x)
    np.testing.assert_array_equal(np.asarray(out), np.full(4, 2.0, np.float32))
    assert x.is_deleted()
    with pytest.raises(RuntimeError, match="deleted"):
        np.asarray(x)


def test_static_arguments_are_completed_from_the_signature_as_jax_does() -> None:
    def scale(x: Any, n: int = 2) -> Any:
        return x * n

    for lib in (plait, jax):
        by_position = lib.jit(scale, static_argnums=1)
        assert [float(by_position(1.0)), float(by_position(1.0, 3)),
                float(by_position(1.0, n=4))] == [2.0, 3.0, 4.0]
        by_name = lib.jit(lambda x, axis: x.sum(axis), static_argnames="axis")
        assert by_name(np.ones((2, 3)), 1).shape == (2,)
        assert by_name(np.ones((2, 3)), axis=0).shape == (3,)


def test_jit_errors_name_the_argument() -> None:
    with pytest.raises(errors.ArgumentError, match=r"str .* at y"):
        plait.jit(f)(1.0, "two")
    for kwargs in ({"static_argnums": 3}, {"static_argnames": "z"}):
        with pytest.raises(ValueError) as theirs_bad:
            jax.jit(f, **kwargs)
        with pytest.raises(ValueError) as ours_bad:
            plait.jit(f, **kwargs)
        assert str(ours_bad.value) == str(theirs_bad.value)
    with pytest.raises(ValueError) as theirs:
        jax.jit(f, static_argnums=0)([1], 2.0)
    with pytest.raises(ValueError, match="Non-hashable static arguments") as ours:
        plait.jit(f, static_argnums=0)([1], 2.0)
    assert str(ours.value) == str(theirs.value)
    # The AOT path checks in Python, in the same words.
    with pytest.raises(errors.StaticArgumentError) as aot:
        plait.jit(f, static_argnums=0).trace([1], 2.0)
    assert str(aot.value) == str(theirs.value)


def test_array_api() -> None:
    a = pnp.asarray(np.arange(6, dtype=np.float32).reshape(2, 3))
    assert a.shape == (2, 3) and a.ndim == 2 and a.size == 6 and a.dtype == np.float32
    assert a.block_until_ready() is a
    assert repr(a) == repr(jnp.arange(6, dtype=jnp.float32).reshape(2, 3))
    assert float(a[1, 2]) == 5.0
    assert [float(v) for v in a[0]] == [0.0, 1.0, 2.0]
    assert {d.platform for d in plait.devices()} == {"cpu"}
    b = plait.device_put({"w": np.ones(2, np.float32)})
    assert isinstance(b["w"], plait.Array)


def test_plait_never_imports_jax() -> None:
    code = ("import sys, numpy as np, plait, plait.numpy as pnp\n"
            "x = pnp.ones(3)\n"
            "y = plait.jit(lambda a: pnp.sin(a) * 2)(x) + pnp.cos(x)\n"
            "plait.jit(lambda a: a + 1).lower(1.0).as_text()\n"
            "np.asarray(y)\n"
            "assert not [m for m in sys.modules if m == 'jax' or m.startswith('jax.')]\n")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_bfloat16_arrays_reach_numpy_without_jax() -> None:
    import ml_dtypes
    values = np.array([[1.5, -2.25, 3.0], [0.0, 1e-3, 65504.0]], ml_dtypes.bfloat16)
    ours = plait.jit(lambda a: a * 2)(pnp.asarray(values))
    theirs = jax.jit(lambda a: a * 2)(jnp.asarray(values))
    assert np.asarray(ours).dtype == ml_dtypes.bfloat16
    np.testing.assert_array_equal(np.asarray(ours).view(np.uint16),
                                  np.asarray(theirs).view(np.uint16))
    assert repr(ours) == repr(theirs)
    assert ours.tolist() == theirs.tolist()


def test_donate_argnames_donate_by_name_as_jax_does() -> None:
    def step(params: Any, grads: Any) -> Any:
        return params - 0.1 * grads

    for lib, ones in ((plait, pnp.ones), (jax, jnp.ones)):
        jitted = lib.jit(step, donate_argnames="params")
        p, g = ones(3), ones(3)
        out = jitted(p, grads=g)
        assert np.asarray(out).tolist() == pytest.approx([0.9] * 3)
        assert p.is_deleted() and not g.is_deleted()
        p, g = ones(3), ones(3)
        jitted(params=p, grads=g)
        assert p.is_deleted() and not g.is_deleted()
    with pytest.raises(ValueError) as theirs:
        jax.jit(step, donate_argnames="w")
    with pytest.raises(ValueError) as ours:
        plait.jit(step, donate_argnames="w")
    assert str(ours.value) == str(theirs.value)


def test_inline_jit_adds_its_equations_to_the_enclosing_trace() -> None:
    def outer(lib: Any, inline: bool) -> str:
        inner = lib.jit(lambda x: lib.numpy.sin(x) * 2.0, inline=inline)
        return str(lib.make_jaxpr(lambda x: inner(x) + 1.0)(1.0))

    for inline in (True, False):
        assert outer(plait, inline) == outer(jax, inline)
    assert "jit" not in outer(plait, True)
    inlined = plait.jit(lambda x: x * 3.0, inline=True)
    assert float(inlined(2.0)) == 6.0  # called outside a trace, it compiles as any jit
    assert float(plait.grad(lambda x: inlined(x) ** 2)(1.0)) == 18.0


def test_inline_jit_gives_its_function_arrays_for_host_arguments() -> None:
    # (blackjax's linear_map reads .dtype of a Python float passed to an inline jit)
    def outer(lib: Any) -> Any:
        @lib.jit
        def f(x: Any) -> Any:
            def g(a: Any, b: Any, *, n: int) -> Any:
                assert (a.dtype.name, b.shape, type(n)) == ("float32", (3,), int)
                return a * b * n
            return lib.jit(g, inline=True, static_argnames="n")(2.0, np.ones(3, np.float32),
                                                                 n=3) + x
        return f(1.0)

    np.testing.assert_array_equal(outer(plait), outer(jax))


def test_jit_backend_is_cpu_or_refused() -> None:
    assert float(plait.jit(lambda x: x + 1, backend="cpu")(1.0)) == 2.0
    with pytest.raises(errors.ArgumentError, match="expected backend None or 'cpu'.*'gpu'"):
        plait.jit(lambda x: x, backend="gpu")
